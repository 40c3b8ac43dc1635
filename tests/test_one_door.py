"""The service is invisible: what a user sees through the memory service is what they see in
process (issue 34's findings). The real CLI in subprocesses, a private HOME and runtime folder,
the small hash embedder in every process (``service_site``), as in ``test_service.py``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import wait_for, write
from test_service import EXE, QUERY, cli, vault  # noqa: F401  (fixtures)

HERE = Path(__file__).resolve().parent
IMPORTERS = HERE / "fixtures" / "importers"
ADVISORY = "yx66znwj"
OFF = {"VAULTMEM_NO_SERVICE": "1"}
BACKENDS = ["process", "service"]


def env_of(backend: str) -> dict:
    return OFF if backend == "process" else {}


def serve(cli, root: Path) -> int:  # noqa: F811
    """Start the service and have it serve ``root``; its pid."""
    cli("service", "start")
    cli("recall", "warm", "--vault", str(root))
    assert str(root.resolve()) in cli.status()["vaults"]
    return cli.status()["pid"]


def test_doctor_and_status_know_the_service(cli, vault):  # noqa: F811
    """Before: doctor called the service "a watcher that holds the lock but does not answer",
    advised killing it and exited 1."""
    pid = serve(cli, vault)
    doctor = cli("doctor", "--vault", str(vault), check=False)
    assert "does not answer" not in doctor.stdout and "kill PID" not in doctor.stdout
    assert f"memory service, pid {pid}" in doctor.stdout
    assert "] watcher:" not in doctor.stdout
    status = cli("status", "--vault", str(vault)).stdout
    assert f"indexed by: the memory service, pid {pid}" in status


def test_import_into_a_served_vault_finds_its_new_project_note(cli, empty_vault, tmp_path):  # noqa: F811
    """Before: the import wrote every note, then exited 3 ("no note 'Project: ...'") and skipped
    its aging step: the service had not indexed the notes this process had just written."""
    serve(cli, empty_vault)
    data = shutil.copytree(IMPORTERS / "claude-code", tmp_path / "cc")
    old = 1_700_000_000
    for p in data.rglob("*"):
        os.utime(p, (old, old))
    done = cli("import", "--from", "claude-code", str(data / "projects"), "--vault", str(empty_vault), "--json",
               check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert len(out["written"]) == 2 and out["anchors_created"] == ["Project: shop_api.v2"]


def ids(cli, root: Path, query: str) -> list[str]:  # noqa: F811
    out = cli("recall", query, "--vault", str(root), "--json", "-k", "10").stdout
    return [h["id"] for h in json.loads(out)["results"]]


def test_a_write_is_visible_to_the_next_recall(cli, vault):  # noqa: F811
    """Before: a recall right after `vaultmem resolve X` still returned X (the service had not
    seen the change yet)."""
    serve(cli, vault)
    assert ADVISORY in ids(cli, vault, QUERY)
    for _ in range(3):
        cli("resolve", ADVISORY, "--vault", str(vault))
        assert ADVISORY not in ids(cli, vault, QUERY)
        cli("reopen", ADVISORY, "--vault", str(vault))
        assert ADVISORY in ids(cli, vault, QUERY)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_broken_config_fails_every_command_alike(cli, vault, backend):  # noqa: F811
    """Before: through the service, recall ignored a broken .vaultmem.toml (exit 0) while list
    failed with exit 2."""
    if backend == "service":
        serve(cli, vault)
    (vault / ".vaultmem.toml").write_text("[recall\n", encoding="utf-8")
    env = env_of(backend)
    results = {
        cmd: cli(*args, "--vault", str(vault), env=env, check=False)
        for cmd, args in (("recall", ["recall", QUERY]), ("list", ["list"]), ("wake", ["wake"]))
    }
    for cmd, done in results.items():
        assert done.returncode == 2, (cmd, done.stdout, done.stderr)
        assert ".vaultmem.toml" in done.stderr and done.stderr.count("\n") == 1, (cmd, done.stderr)


BROKEN = "facts/Broken note.md"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_broken_note_is_named_by_list_recall_and_index(cli, vault, backend):  # noqa: F811
    """Before: a note with broken frontmatter silently dropped out of list, recall and index."""
    if backend == "service":
        serve(cli, vault)
    write(vault, BROKEN, "---\ntitle: [unclosed\n---\nadvisory locks body\n")
    env = env_of(backend)
    for args in (["recall", QUERY], ["list"], ["index"], ["list"], ["recall", QUERY]):
        done = cli(*args, "--vault", str(vault), env=env, check=False)
        assert done.returncode == 0, (args, done.stderr)
        assert f"skipped {BROKEN}: " in done.stderr, (args, done.stderr)


def test_watch_follows_a_running_service(cli, vault):  # noqa: F811
    """Before: `vaultmem watch` refused to start ("another vaultmem process ... watch"): the
    service held the vault."""
    pid = serve(cli, vault)
    proc = subprocess.Popen([EXE, "watch", "--vault", str(vault)], env=cli.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        line = proc.stderr.readline()
        assert f"the memory service (pid {pid}) serves {vault.resolve()}" in line, line
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert cli.status()["pid"] == pid  # the service keeps serving


def test_watch_runs_the_service_in_the_foreground(cli, vault):  # noqa: F811
    proc = subprocess.Popen([EXE, "watch", "--vault", str(vault)], env=cli.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_for(
            lambda: cli.status().get("ready") and cli.status().get("vaults"), what="the foreground service"
        )
        assert cli.status()["pid"] == proc.pid
        assert ADVISORY in ids(cli, vault, QUERY)
        assert cli.loaders() == [proc.pid]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert cli.holder() is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_folder_never_initialised_keeps_its_state_out_of_git(cli, tmp_path, backend):  # noqa: F811
    """Before: `recall --vault DIR` on a folder never init-ed made .vaultmem/ and .vaultmem-usage/
    there with no .gitignore entry (git then offered to commit them); then (issue 48) it changed
    the folder's own .gitignore. Now each state folder ignores itself."""
    root = tmp_path / "notes"
    write(root, "Harbour cranes.md", "# Harbour cranes\n\nThe cranes use advisory locks.\n")
    write(root, ".gitignore", "*.tmp\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    done = cli("recall", "advisory locks", "--vault", str(root), env=env_of(backend))
    assert "Harbour cranes" in done.stdout
    assert (root / ".vaultmem").is_dir()
    assert (root / ".gitignore").read_text() == "*.tmp\n"
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "-uall"], capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    assert ".vaultmem" not in status.replace(".gitignore", ""), status


def test_recall_brings_k_hits_when_other_branches_memories_rank_first(
    tmp_path, monkeypatch, backend, fake_model
):
    """Before: the branch filter ran on the client after the top k were chosen, so two memories
    of another branch ranking first left recall -k 2 with nothing."""
    from gitcluster import git_env
    from typer.testing import CliRunner

    from vaultmem.cli.app import app

    for k, v in git_env(tmp_path).items():
        monkeypatch.setenv(k, v)
    code = tmp_path / "code"
    code.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(code)], check=True)
    (code / "README").write_text("x")
    subprocess.run(["git", "-C", str(code), "add", "README"], check=True)
    subprocess.run(["git", "-C", str(code), "commit", "-qm", "seed"], check=True)
    root = tmp_path / "vault"
    CliRunner().invoke(app, ["init", str(root)])
    monkeypatch.chdir(code)

    def vm(*args: str) -> str:
        done = CliRunner().invoke(app, [*args, "--vault", str(root)])
        assert done.exit_code == 0, done.output
        return done.stdout

    subprocess.run(["git", "-C", str(code), "checkout", "-qb", "feature-x"], check=True)
    for i in range(2):  # the best matches, scoped to feature-x
        vm("remember", "fact", f"Zebra crossing {i}", "zebra zebra zebra crossing crossing.")
    subprocess.run(["git", "-C", str(code), "checkout", "-q", "main"], check=True)
    for i in range(2):  # weaker matches, on main
        vm("remember", "fact", f"Main note {i}", "a zebra was seen once.")
    hits = json.loads(vm("recall", "zebra crossing", "-k", "2", "--json", "--no-adaptive"))["results"]
    assert len(hits) == 2 and all(h["title"].startswith("Main note") for h in hits)


def test_remember_fields_are_declared_once(empty_vault, fake_embedder):
    """The CLI options, the MCP tool's arguments and the operation's keywords of `remember` are
    the one declaration (``memory.fields``)."""
    import inspect

    import anyio

    from vaultmem.agents.mcp_server import build_server
    from vaultmem.cli.remember import remember as cli_remember
    from vaultmem.memory import ops
    from vaultmem.memory.fields import FIELDS

    declared = [f.name for f in FIELDS]
    options = [n for n in inspect.signature(cli_remember).parameters if n not in ("type", "title", "content")]
    assert options == [*declared, "vault", "agent", "as_json"]
    own = set(inspect.signature(ops.remember).parameters)
    assert {f.name for f in FIELDS if f.name != "shared"} <= own
    assert "shared" not in own  # where the memory goes is the session's
    tools = anyio.run(build_server(str(empty_vault), embedder=fake_embedder).list_tools)
    schema = next(t for t in tools if t.name == "remember").input_schema["properties"]
    assert list(schema) == ["type", "title", "content", *declared]
    assert all(schema[f.name]["description"] == f.help for f in FIELDS)


FAST = [["show", ADVISORY], ["show", ADVISORY, "--json"], ["list", "-n", "5"], ["list", "--type", "decision", "--json"],
        ["stats"], ["stats", "--json"], ["resolve", ADVISORY], ["reopen", ADVISORY, "--json"],
        ["edit", ADVISORY, "--add-tag", "leases", "--set", "importance=7"], ["wake", "--budget", "300"],
        ["show", "zzzzzzzz"], ["list", "--since", "yesterday"]]  # fmt: skip


@pytest.mark.parametrize("argv", FAST, ids=[" ".join(a) for a in FAST])
def test_commands_without_typer_answer_exactly_as_the_typer_commands(cli, vault, argv):  # noqa: F811
    """`show`, `list`, `stats`, `edit`, `resolve`, `reopen` and `wake` through a ready service
    skip typer (``cli/fast.py``) and the heavy libraries, and print what the typer command prints."""
    import sys

    serve(cli, vault)
    args = [*argv, "--vault", str(vault)]
    fast = cli(*args, check=False)
    if argv[0] in ("resolve", "reopen", "edit"):  # the typer command then changes it back and again
        undo = {"resolve": ["reopen", ADVISORY], "reopen": ["resolve", ADVISORY]}.get(argv[0])
        if undo:
            cli(*undo, "--vault", str(vault))
        else:
            cli("edit", ADVISORY, "--set", "importance=8", "--set", "tags=[jobs, postgres, leasing, concurrency]",
                "--vault", str(vault))  # fmt: skip
    code = "import sys; from vaultmem.cli.app import main; sys.argv = ['vaultmem', *sys.argv[1:]]; main()"
    typed = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=cli.env,
                           timeout=120)  # fmt: skip
    import re

    def same(out: str) -> str:  # a [MEMORY] block's fence is new each time, so is an undo batch's id
        return re.sub(
            r"(edit|import|maintain)-\d{8}-\d{6}-[0-9a-f]{4}",
            r"\1-BATCH",
            re.sub(r"MEMORY [0-9a-f]+", "MEMORY fence", out),
        )

    assert (fast.returncode, same(fast.stdout), fast.stderr) == (
        typed.returncode,
        same(typed.stdout),
        typed.stderr,
    )
    light = (
        "import sys; from vaultmem.cli.main import main; sys.argv = ['vaultmem', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in ('whoosh', 'numpy', 'networkx', "
        "'typer', 'click', 'fastembed') or m == 'vaultmem.vault'), file=sys.stderr)"
    )
    env = {k: v for k, v in cli.env.items() if not k.startswith("VAULTMEM_TEST_")}
    env["PYTHONPATH"] = str(HERE.parent)
    done = subprocess.run(
        [sys.executable, "-c", light, *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.stderr.strip().splitlines()[-1] == "HEAVY []", done.stderr


def test_watch_sync_every_refreshes_agents_md_like_sync(tmp_path):
    """Before: `watch --sync-every` skipped the [agents_md] refresh `vaultmem sync` does after a
    pull. The sync loop now runs in the service with the same post-sync steps."""
    from gitcluster import Cluster
    from test_agents_md_refresh import HEAD, TAIL, _configure, _keep, _note

    c = Cluster(tmp_path)
    try:
        laptop = c.first("laptop")
        desk = c.clone("desk")
        project = tmp_path / "shop"
        project.mkdir()
        (project / "AGENTS.md").write_text(HEAD + TAIL)
        _keep(laptop, project / "AGENTS.md")  # outside the vault: this machine's own list (issue 39)
        _configure(laptop, refresh_on='["sync"]')
        c.watch("laptop", "--sync-every", "5s")
        _note(desk, "projects/Project - Shop.md", "proj0001", "Project: Shop", "project", 8)
        _note(desk, "preferences/Cents.md", "pref0001", "Always use integer cents for money", "preference",
              extra="anchor: '[[Project: Shop]]'\n")  # fmt: skip
        c.vm("desk", "sync", real=True)
        wait_for(lambda: "integer cents" in (project / "AGENTS.md").read_text(), timeout=120,
                 what="the periodic sync's AGENTS.md refresh")  # fmt: skip
        assert (project / "AGENTS.md").read_text().startswith(HEAD + TAIL + "\n<!-- vaultmem:begin -->")
    finally:
        c.stop_watchers()


def test_reads_from_the_files_do_not_make_the_service_open_a_vault(cli, vault):  # noqa: F811
    """`show`, `list` and `stats` need no index: through a running service that does not serve
    the vault yet they read it here, and the service does not open (and index) it for them."""
    cli("service", "start")
    for args in (["list", "-n", "2"], ["show", ADVISORY], ["stats"]):
        assert cli(*args, "--vault", str(vault)).stdout
    assert cli.status()["vaults"] == []
