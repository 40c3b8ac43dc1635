"""Every command and hook in every state, one result (issue 44): the harness (``seams.py``) run
against each state, what shows it covers every operation and command with no test code of their
own, and the failures the issue reproduces, each on its own."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import seams
from conftest import runtime_room
from helpers import buffered

from vaultmem.service.protocol import OPS, Op


@pytest.fixture
def sweep(tmp_path, fake_model, monkeypatch, socket_tmp, fake_embedder):
    """The harness on this test's folders, with the small test embedder in process and in the
    service; no real service process is ever started."""
    return seams.Sweep(tmp_path, socket_tmp(runtime_room() + 8) / "run", monkeypatch, fake_embedder)


def report(grid: seams.Grid) -> str:
    return f"{len(grid.problems)} problem(s) in state {grid.state!r}:\n" + "\n".join(grid.problems)


# ---------------------------------------------------------------------- what the harness runs


def test_the_harness_runs_every_command_and_hook_of_the_cli():
    """Generated from the typer app and the typer-free paths: every command runs (or is left out
    by name, with the reason), every fast path with the options that keep it on it."""
    found = seams.typer_commands()
    runs = {c.path for c in seams.commands()}
    assert set(found) == runs | set(seams.NOT_RUN)
    assert not runs & set(seams.NOT_RUN) and set(seams.NOT_RUN) <= set(found)  # no stale exclusion
    argv = {c.argv for c in seams.commands()}
    from vaultmem.agents.hook_io import HOOKS as RUN
    from vaultmem.cli.fast import SPECS
    from vaultmem.cli.main import FAST, HOOKS

    assert FAST == set(SPECS) and set(HOOKS) <= set(RUN)
    for name in [*FAST, "recall", "remember"]:
        assert any(a[0] == name for a in argv), name
        if name in FAST and "--json" in SPECS[name][1]:
            assert any(a[0] == name and "--json" in a for a in argv), name
    for hook in RUN:
        assert any(a[:2] == ("hook", hook) and a[-2:] == ("--agent", "claude") for a in argv), hook
        assert any(a[:2] == ("hook", hook) and a[-2:] == ("--agent", "claude-code") for a in argv), hook
        assert all("--vault" not in a for a in argv)  # the vault comes from VAULTMEM_VAULT


def test_the_harness_runs_every_operation_of_the_table(tmp_path):
    assert {c.name for c in seams.operations(OPS, tmp_path)} == set(OPS)


def test_a_new_operation_is_covered_with_no_new_test_code(sweep, monkeypatch):
    """Two operations added to a copy of the table: the harness runs both in process and through
    the service, passes the one written once, and catches the one whose answer depends on the host."""
    from vaultmem.service import daemon, ops, protocol, server

    table = {**OPS, "seams_count": Op("seams_count", {"root": str}, "notes", optional={"served": (bool, False)}),
             "seams_host": Op("seams_host", {"root": str}, "which host")}  # fmt: skip

    def count(host, args):
        with host.entry(args["root"]).reading() as vault:
            return {"notes": len(vault.records())}

    handlers = {**ops.HANDLERS, "seams_count": count, "seams_host": lambda host, args: type(host).__name__}
    for module in (protocol, server):
        monkeypatch.setattr(module, "OPS", table)
    for module in (ops, daemon):  # where the table's names are bound
        monkeypatch.setattr(module, "HANDLERS", handlers)
    grid = sweep.run(seams.STATES[3], [], table)  # warm: no command line, every operation
    assert {"op seams_count", "op seams_host"} <= set(grid.cells)
    assert json.loads(grid.cells["op seams_count"][1].out) == {"notes": 4}
    assert [p.split(":")[0] for p in grid.problems] == ["[warm] op seams_host"], report(grid)


# ---------------------------------------------------------------------- every cell of every state


@pytest.mark.integration  # mounts (a read-only bind, a full tmpfs) or the CLI in subprocesses
@pytest.mark.parametrize("state", seams.STATES, ids=[s.name for s in seams.STATES])
def test_every_command_and_hook_in_every_state_gives_one_result(state, sweep):
    if state.read_only and not seams.can_mount():
        pytest.skip("no read-only vault can be made here")
    grid = sweep.run(state, seams.commands(), OPS)
    assert len(grid.cells) > 100
    assert not grid.problems, report(grid)


# ---------------------------------------------------------------------- the failures the issue reproduces


@pytest.fixture
def vault(tmp_path, monkeypatch, fake_model):
    """The harness's small vault, indexed, found by $VAULTMEM_VAULT; commands run in process
    (``seams.run_cli``) from a folder of their own."""
    root = seams.make_vault(tmp_path / "vault")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("VAULTMEM_VAULT", str(root))
    assert seams.run_cli(["index"]).code == 0
    return root


def ok(argv: list[str], stdin: str = "") -> seams.Outcome:
    """A command that must end without a traceback (any exit code); its outcome."""
    got = seams.run_cli(argv, stdin)
    assert got.crash is None and "internal error" not in got.err, got.shown()
    return got


def one_line(got: seams.Outcome, code: int) -> str:
    """A failure said in one line on stderr, with this exit code; that line."""
    assert got.crash is None and got.code == code and got.out == "", got.shown()
    lines = got.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultmem: "), got.shown()
    return lines[0]


def prompt_payload(root: Path) -> str:
    return seams.payload("prompt", root, seams.TRANSCRIPT)


READS = [["recall", "advisory locks"], ["list"], ["show", seams.NOTE], ["stats"], ["wake"], ["status"],
         ["history", seams.NOTE], ["gaps"], ["export"], ["graph", "links", seams.NOTE], ["doctor"]]  # fmt: skip


# ---------------------------------------------------------------------- front ends only through operations

GRAPH = [
    ["graph", "links", seams.OTHER],
    ["graph", "backlinks", "Project: Seams"],
    ["graph", "neighbours", "Project: Seams", "--depth", "2", "--json"],
    ["graph", "path", seams.NOTE, "Retry with jitter"],  # none: exit 1, said on stderr
    ["graph", "path", seams.OTHER, seams.NOTE, "--json"],
    ["graph", "orphans"],
    ["graph", "unresolved", "--json"],
    ["graph", "anchors"],
    ["graph", "export", "--format", "mermaid", "--anchor", "Project: Seams", "--depth", "1"],
    ["graph", "export", "--format", "png"],  # an unknown format: one line
    ["graph", "links", "No such note"],  # an unknown note: one line
]


def opened_here(monkeypatch) -> list[Path]:
    """The vaults this thread opens as ``Vault`` objects from now on (the service's threads aside)."""
    from vaultmem.vault import Vault

    opened: list[Path] = []
    me, real = threading.get_ident(), Vault.__init__

    def init(self, root, *args, **kwargs):
        if threading.get_ident() == me:
            opened.append(Path(root))
        real(self, root, *args, **kwargs)

    monkeypatch.setattr(Vault, "__init__", init)
    return opened


def test_the_graph_commands_go_through_one_operation(vault, service_thread, monkeypatch):
    """`vaultmem graph ...` opened the vault in its own process (``session.vault``) even while
    the memory service served it; now each command is one ``graph`` call: the service answers
    it, with the same stdout, stderr and exit code as in process."""
    from vaultmem.service import client

    here = {tuple(argv): seams.run_cli(argv) for argv in GRAPH}  # the service does not serve it yet
    assert client.call("open", {"roots": [str(vault.resolve())]})["ok"]
    opened = opened_here(monkeypatch)
    with seams.recording_ops() as called:
        there = {tuple(argv): seams.run_cli(argv) for argv in GRAPH}
    assert opened == [] and set(called) == {"graph"}, (opened, called)
    for argv, mine in here.items():
        got = there[argv]
        assert mine.crash is None and got.crash is None, got.shown()
        assert (got.code, got.out, got.err) == (mine.code, mine.out, mine.err), (argv, got.shown())
    assert "Project: Seams  (projects/Project: Seams.md)  [frontmatter]" in here[tuple(GRAPH[0])].out
    assert here[tuple(GRAPH[3])].code == 1 and "no chain of links" in here[tuple(GRAPH[3])].err
    assert here[tuple(GRAPH[8])].out.startswith("```mermaid")
    for bad, code in ((GRAPH[-2], 2), (GRAPH[-1], 3)):
        got = here[tuple(bad)]
        assert (got.code, got.out, len(got.err.splitlines())) == (code, "", 1), got.shown()
        assert got.err.startswith("vaultmem: ")


@pytest.mark.integration  # mounts (a read-only bind, a full tmpfs) or the CLI in subprocesses
@pytest.mark.parametrize("argv", [["list"], ["list", "--json"], ["doctor"], ["show", seams.NOTE], ["wake"]],
                         ids=" ".join)  # fmt: skip
def test_a_reader_that_leaves_early_ends_a_command_through_the_service_quietly(argv, vault, service_thread):
    """`vaultmem list | head -1` through the memory service printed "vaultmem: Broken pipe" and
    exited 1 (cli/fast.py caught the OSError before the console entry's quiet handler); now 141
    and nothing on stderr, as `recall | head` and every typer command end. Run with stdout
    buffered, as from a user's shell: the write that fails may be the flush at exit, which
    printed "Exception ignored ... BrokenPipeError" and exited 120."""
    from vaultmem.service import client

    assert client.call("open", {"roots": [str(vault.resolve())]})[
        "ok"
    ]  # the service serves it: the fast path
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first line is written
    try:
        done = subprocess.run([sys.executable, "-m", "vaultmem", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, env=buffered(os.environ))  # fmt: skip
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_config_typo_is_named_in_one_line_with_the_nearest_setting(vault, monkeypatch):
    """`[recal]` and `kk = 10` were accepted silently: the command that reads the config names
    them (once, one line) and doctor lists each, with the setting meant."""
    config = vault / ".vaultmem.toml"
    config.write_text(config.read_text().replace("# k = 10", "kk = 10") + "\n[recal]\nk = 3\n")
    got = ok(["recall", "advisory locks"])
    assert got.code == 0 and got.out.startswith(" 1. ")
    [line] = [x for x in got.err.splitlines() if "not a setting" in x]
    assert line == (f"vaultmem: {config}: ignored, not a setting vaultmem knows: recall.kk (did you mean "
                    "recall.k?), [recal] (did you mean [recall]?)")  # fmt: skip
    report = json.loads(ok(["doctor", "--json"]).out)
    unknown = sorted(f["message"] for f in report["findings"] if f["check"] == "config_unknown")
    assert unknown == ["[recal] (did you mean [recall]?): not a setting vaultmem knows; ignored",
                       "recall.kk (did you mean recall.k?): not a setting vaultmem knows; ignored"]  # fmt: skip


def test_a_config_value_out_of_its_choices_is_refused_naming_the_file_and_the_nearest(vault):
    config = vault / ".vaultmem.toml"
    text = config.read_text()
    config.write_text(text.replace('# title_from = "filename"', 'title_from = "nonsense"'))
    line = one_line(ok(["list"]), 2)
    assert line == f'vaultmem: {config}: vault.title_from = "nonsense": must be one of filename, heading'
    config.write_text(text.replace('# combine = "sum"', 'combine = "learn"'))
    assert one_line(ok(["recall", "queue"]), 2).endswith(
        'must be one of sum, learned (did you mean "learned"?)'
    )


def test_a_typo_in_the_users_service_config_is_named(vault, monkeypatch):
    from vaultmem.service import control

    monkeypatch.delenv("VAULTMEM_NO_SERVICE")  # the user's config is read to ask whether the service may run
    control.config_file().parent.mkdir(parents=True, exist_ok=True)
    control.config_file().write_text("[servce]\nenabled = false\n")
    got = ok(["list"])
    assert got.code == 0 and got.err == (f"vaultmem: {control.config_file()}: ignored, not a setting vaultmem "
                                         "knows: [servce] (did you mean [service]?)\n")  # fmt: skip


def test_a_note_with_an_impossible_date_is_read_with_the_date_as_written(vault):
    """`created: 2026-13-45` made index, recall, list, doctor and the prompt hook exit 1 with a
    traceback; the note is kept, its date as the text it is (as Obsidian shows it)."""
    (vault / "facts" / "Moved.md").write_text("---\ntype: fact\ncreated: 2026-13-45\n---\n\nThe job queue moved "
                                              "to advisory locks on an impossible day.\n")  # fmt: skip
    for argv in (["index"], ["recall", "advisory locks"], ["list"], ["doctor"]):
        assert ok(argv).code in (0, 1) if argv == ["doctor"] else ok(argv).code == 0
    assert json.loads(ok(["show", "Moved", "--json"]).out)["created"] == "2026-13-45"
    hook = ok(["hook", "prompt", "--agent", "claude"], prompt_payload(vault))
    assert hook.code == 0 and "advisory" in json.loads(hook.out)["hookSpecificOutput"]["additionalContext"]


def test_a_file_name_that_is_not_utf8_is_skipped_and_said(vault):
    """Such a name broke index, recall and doctor (a traceback): no index or reply can hold it,
    so it is left out, and every command that reports skipped notes names it, escaped."""
    with open(os.path.join(os.fsencode(vault), b"facts", b"Caf\xe9 queue.md"), "wb") as f:
        f.write(b"---\ntype: fact\n---\n\nThe queue leases with advisory locks.\n")
    said = "facts/Caf\\xe9 queue.md: its file name is not valid UTF-8 (rename it to use it)"
    for argv in (["index"], ["recall", "advisory locks"]):
        got = ok(argv)
        assert got.code == 0 and f"vaultmem: skipped {said}" in got.err.splitlines(), got.shown()
    doctor = json.loads(ok(["doctor", "--json"]).out)
    assert any(f["path"] == "facts/Caf\\xe9 queue.md" for f in doctor["findings"]), doctor["findings"]


@pytest.fixture
def read_only_vault(vault):
    if not seams.can_mount():
        pytest.skip("no read-only vault can be made here")
    with seams.read_only(vault):
        yield vault


@pytest.mark.integration  # mounts (a read-only bind, a full tmpfs) or the CLI in subprocesses
@pytest.mark.parametrize("argv", READS, ids=" ".join)
def test_a_read_only_vault_answers_every_read(argv, read_only_vault):
    """Every read failed on a read-only vault (the index's writer lock, the usage store); it is
    read from its indexes as they are."""
    got = ok(argv)
    assert got.code in ((0, 1) if argv == ["doctor"] else (0,)), got.shown()
    assert "Read-only file system" not in got.err and got.out


@pytest.mark.integration  # mounts (a read-only bind, a full tmpfs) or the CLI in subprocesses
def test_a_read_only_vault_refuses_a_write_in_one_line_and_the_hooks_answer(read_only_vault):
    before = seams.files_of(read_only_vault)
    for argv in (["remember", "fact", "Seams note", "A note."], ["edit", seams.NOTE, "--add-tag", "x"],
                 ["resolve", seams.NOTE], ["checkpoint", "saving"]):  # fmt: skip
        line = one_line(ok(argv), 1)
        assert line == f"vaultmem: {read_only_vault.resolve()} is read-only: nothing can be written to it", (
            line
        )
    assert seams.files_of(read_only_vault) == before
    for hook in ("prompt", "start", "stop"):
        got = ok(["hook", hook, "--agent", "claude"], seams.payload(hook, read_only_vault, seams.TRANSCRIPT))
        assert got.code == 0, got.shown()
    assert "advisory" in ok(["hook", "prompt", "--agent", "claude"], prompt_payload(read_only_vault)).out


@pytest.mark.integration  # mounts (a read-only bind, a full tmpfs) or the CLI in subprocesses
def test_the_prompt_hook_answers_on_a_full_disk(vault, tmp_path, monkeypatch):
    """A full disk failed the prompt hook (it writes what the session was shown, and logs it):
    it answers, and keeps what it could not write for another time."""
    full = tmp_path / "full"
    full.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(full)],
                                                   capture_output=True).returncode == 0  # fmt: skip
    try:
        root = full / "vault" if mounted else vault
        if mounted:
            shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".vaultmem*"))
            monkeypatch.setenv("VAULTMEM_VAULT", str(root))
            assert ok(["index"]).code == 0
            with open(full / "filler", "wb", buffering=0) as f:  # the disk fills up (unbuffered:
                with contextlib.suppress(OSError):  # nothing left for the close to fail on)
                    while True:
                        f.write(b"\0" * 65536)
        else:  # no tmpfs here: every write of the hook's fails as on a full disk
            _disk_full(monkeypatch)
        got = ok(["hook", "prompt", "--agent", "claude"], prompt_payload(root))
        assert got.code == 0, got.shown()
        assert "advisory" in json.loads(got.out)["hookSpecificOutput"]["additionalContext"]
    finally:
        if mounted:
            subprocess.run(["umount", "--lazy", str(full)], check=True)


def _disk_full(monkeypatch) -> None:
    """The writes the prompt hook makes (its session state, the usage log) failing as SQLite
    fails on a full disk."""
    import sqlite3

    from vaultmem.agents.hooks import SessionState
    from vaultmem.index.usage import UsageStore

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SessionState, "_mark_shown", full)
    monkeypatch.setattr(SessionState, "_touch", full)
    monkeypatch.setattr(UsageStore, "log_retrievals", full)


def test_the_prompt_hook_finds_the_vault_it_runs_in_and_names_an_unknown_agent(vault, monkeypatch):
    """Without --vault inside the vault (the fast path had no default: a TypeError traceback),
    and `--agent claude-code` (the traceback instead of the "unknown agent" line)."""
    monkeypatch.delenv("VAULTMEM_VAULT")
    monkeypatch.chdir(vault)
    got = ok(["hook", "prompt", "--agent", "claude"], prompt_payload(vault))
    assert got.code == 0 and "advisory" in json.loads(got.out)["hookSpecificOutput"]["additionalContext"]
    line = one_line(ok(["hook", "prompt", "--agent", "claude-code"], prompt_payload(vault)), 1)
    assert line.startswith("vaultmem: unknown agent 'claude-code'; choose one of claude,")


@pytest.mark.parametrize("where", ["process", "service"])
def test_a_bug_is_said_in_one_line_with_exit_70_in_process_and_through_the_service(where, vault, request,
                                                                                   monkeypatch):  # fmt: skip
    """An error nobody foresaw was a traceback in process and "bad request: ..." (exit 2) through
    the service; now the same line and exit code either way (VAULTMEM_DEBUG=1: the traceback)."""
    from vaultmem.vault import Vault

    def boom(self):
        raise ValueError("boom")

    monkeypatch.setattr(Vault, "stats", boom)
    if where == "service":
        from vaultmem.service import client

        request.getfixturevalue("service_thread")
        assert client.call("open", {"roots": [str(vault.resolve())]})["ok"]
    line = one_line(seams.run_cli(["stats"]), 70)
    assert (
        line == "vaultmem: internal error: ValueError: boom (please report it; VAULTMEM_DEBUG=1 shows where)"
    )
    if where == "process":  # through the service, its log holds the traceback
        monkeypatch.setenv("VAULTMEM_DEBUG", "1")
        assert "ValueError: boom" in (seams.run_cli(["stats"]).crash or "")
