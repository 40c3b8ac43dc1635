"""Every command warm (issue 34): `doctor` and `hook start|stop|end` through a ready memory
service answer without typer, numpy or the graph library (``cli/fast.py``, ``cli/main.py`` ->
``agents/hook_io.py``) and print what the in-process commands print, warnings and exit codes
too, for every agent. The real CLI in subprocesses, a private HOME and runtime folder, the
small hash embedder in every process (``service_site``), as in ``test_one_door.py``."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import wait_for, write
from test_agent_hooks import FIXTURES, session_fields
from test_one_door import serve
from test_service import EXE, cli, vault  # noqa: F401  (fixtures)

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "hooks"
AGENTS = ("claude", "codex", "gemini", "cursor", "copilot")
OFF = {"VAULTMEM_NO_SERVICE": "1"}
TYPED = "import sys; from vaultmem.cli.app import main; sys.argv = ['vaultmem', *sys.argv[1:]]; main()"
LIGHT = (
    "import sys; from vaultmem.cli.main import main; sys.argv = ['vaultmem', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in ('whoosh', 'numpy', 'networkx', 'typer', "
    "'click', 'fastembed') or m == 'vaultmem.vault' or m.startswith('vaultmem.cli.')), file=sys.stderr)"
)


def typed(cli, *args: str, input: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:  # noqa: F811
    """The typer command (``cli/app.py``), as `vaultmem ARGS` ran it before the typer-free door."""
    return subprocess.run([sys.executable, "-c", TYPED, *args], input=input, capture_output=True, text=True,
                          env={**cli.env, **(env or {})}, timeout=180)  # fmt: skip


def loaded(cli, *args: str, input: str | None = None) -> list[str]:  # noqa: F811
    """The heavy modules and the CLI modules `vaultmem ARGS` loads through the console entry."""
    env = {k: v for k, v in cli.env.items() if not k.startswith("VAULTMEM_TEST_")}
    env["PYTHONPATH"] = str(HERE.parent)  # no test embedder patch: it would import the embedding module
    done = subprocess.run([sys.executable, "-c", LIGHT, *args], input=input, capture_output=True, text=True,
                          env=env, timeout=180)  # fmt: skip
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("LOADED "), done.stderr
    return eval(line[len("LOADED ") :])  # a list of module names printed by the line above


def never_ran(home: Path, root: Path) -> None:
    """Claude Code set up with a hook for ``root`` that never ran: a finding the client reads."""
    hook = {"type": "command", "command": f"vaultmem hook start --vault {root}"}
    write(home, ".claude/settings.json", json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}}))


# ---------------------------------------------------------------------- doctor


@pytest.mark.parametrize("args", [[], ["--json"]], ids=["text", "json"])
def test_doctor_without_typer_prints_what_the_typer_command_prints(cli, vault, args):  # noqa: F811
    """`vaultmem doctor` through a ready service runs the checks where the index is (the
    ``doctor`` operation), adds the hooks' findings read here, and prints, warns and exits as
    the typer command does, loading no typer, numpy or networkx."""
    pid = serve(cli, vault)
    never_ran(Path(cli.env["HOME"]), vault)
    argv = ["doctor", *args, "--vault", str(vault)]
    fast = cli(*argv, check=False)
    slow = typed(cli, *argv)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.returncode == 1  # the demo's broken links, and the hook that never ran
    if args:
        report = json.loads(fast.stdout)
        assert report["watcher"]["by"] == "service" and report["watcher"]["pid"] == pid
        assert report["counts"]["hook_never_ran"] == 1 and report["findings"][-1]["check"] == "hook_never_ran"
    else:
        assert f"indexed by: the memory service, pid {pid}" in fast.stdout
        assert "[warning] hook never ran: the hooks of claude" in fast.stdout
    assert loaded(cli, *argv) == [
        "vaultmem.cli.argv",
        "vaultmem.cli.fast",
        "vaultmem.cli.main",
        "vaultmem.cli.render",
    ]


def test_doctor_with_fix_or_help_takes_the_typer_command(cli, vault):  # noqa: F811
    """--fix writes in this process, --help is typer's: the small parser leaves both to typer."""
    serve(cli, vault)
    assert "Usage: " in cli("doctor", "--help").stdout
    assert "typer" in " ".join(loaded(cli, "doctor", "--fix", "--vault", str(vault)))


BROKEN = "facts/Broken note.md"


@pytest.mark.parametrize("backend", ["process", "service"])
def test_doctor_finds_and_exits_alike_on_both_backends(cli, vault, backend):  # noqa: F811
    """The same findings, in the same order, the same warnings on stderr and exit code, whether
    the service answers or this process does."""
    if backend == "service":
        serve(cli, vault)
    write(vault, BROKEN, "---\ntitle: [unclosed\n---\nbody\n")
    write(vault, "facts/Dangling.md", "---\ntitle: Dangling\ntype: fact\n---\nSee [[Nowhere at all]].\n")
    env = OFF if backend == "process" else {}
    done = cli("doctor", "--json", "--vault", str(vault), env=env, check=False)
    assert (done.returncode, done.stderr) == (1, "")
    report = json.loads(done.stdout)
    found = [
        (f["check"], f["path"]) for f in report["findings"] if f["check"] in ("parse_error", "broken_link")
    ]
    assert found[0] == ("parse_error", BROKEN) and ("broken_link", "facts/Dangling.md") in found
    assert report["watcher"]["by"] == ("service" if backend == "service" else None)
    text = cli("doctor", "--vault", str(vault), env=env, check=False)
    assert text.returncode == 1 and f"[error] parse error: {BROKEN}: cannot be read as a note" in text.stdout


# ---------------------------------------------------------------------- hook start, stop, end


class Payloads:
    """One agent's start, stop and end payloads (Claude Code's: tests/data/hooks; the others':
    tests/fixtures/agents/<agent>/), its transcript where the agent keeps it."""

    def __init__(self, agent: str, tmp: Path, env: dict[str, str]):
        self.agent, self.env = agent, env
        tmp.mkdir(parents=True, exist_ok=True)
        if agent == "claude":
            self.folder, self.names = (
                DATA,
                {"start": "session_start.json", "stop": "stop.json", "end": "session_end.json"},
            )
            self.transcript = tmp / "claude.jsonl"
            shutil.copy(DATA / "coding_session.jsonl", self.transcript)
            return
        self.folder, self.names = FIXTURES / agent, {h: f"{h}.json" for h in ("start", "stop", "end")}
        self.transcript = tmp / f"{agent}.jsonl"
        if agent == "copilot":  # its start and end payloads name no transcript: found by session id
            env["COPILOT_HOME"] = str(tmp / "copilot-home")
            sid = json.loads((self.folder / "prompt.json").read_text())["sessionId"]
            self.transcript = tmp / "copilot-home" / "session-state" / sid / "events.jsonl"
            self.transcript.parent.mkdir(parents=True)
        shutil.copy(self.folder / "transcript.jsonl", self.transcript)

    def __call__(self, hook: str, session: str) -> str:
        raw = json.loads(
            (self.folder / self.names[hook]).read_text().replace("TRANSCRIPT", str(self.transcript))
        )
        return json.dumps({**raw, **session_fields(self.agent, session)})


def notes(root: Path) -> dict[str, str]:
    """The vault's notes, each as its body (ids and times of day left out)."""
    out = {}
    for path in sorted(root.rglob("*.md")):
        if ".vaultmem" in path.parts or ".trash" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        out[path.relative_to(root).as_posix()] = re.sub(r"\b(id|created|updated): .*\n", "", text)
    return out


def same(out: str, root: Path, before: dict[str, str]) -> str:
    """An answer with its fence and the ids of the notes this test wrote named alike in both
    vaults (a new note's id is random; the same note has the same path in both)."""
    for n, path in enumerate(sorted(set(notes(root)) - set(before))):
        found = re.search(r"^id: (\S+)$", (root / path).read_text(encoding="utf-8"), re.M)
        if found:
            out = out.replace(found.group(1), f"new{n}")
    return re.sub(r"MEMORY [0-9a-f]+", "MEMORY fence", out)


def test_hooks_through_the_service_answer_as_in_process_for_every_agent(cli, vault, tmp_path):  # noqa: F811
    """`hook start`, `stop` and `end --wait` of each agent's payloads: through the service
    (the console entry, no typer) on one copy of the vault, in process (the typer command,
    no service) on another; the same answers, exit codes, stderr and notes written."""
    alone = shutil.copytree(
        vault, tmp_path / "alone", ignore=shutil.ignore_patterns(".vaultmem", ".vaultmem-usage")
    )
    cli("index", "--vault", str(alone), env=OFF)
    cli("recall", "warm", "--vault", str(alone), env=OFF)  # as serve() recalls on the other copy
    serve(cli, vault)
    before = notes(vault)
    for agent in AGENTS:
        env = dict(cli.env)
        payload = Payloads(agent, tmp_path / agent, env)
        session = f"sess-{agent}-0001"
        for hook, extra in (("start", []), ("stop", []), ("end", ["--wait"])):
            args = ["hook", hook, "--agent", agent, *extra]
            fast = subprocess.run([EXE, *args, "--vault", str(vault)], input=payload(hook, session),
                                  capture_output=True, text=True, env=env, timeout=180)  # fmt: skip
            slow = typed(cli, *args, "--vault", str(alone), input=payload(hook, session), env={**env, **OFF})
            got, want = same(fast.stdout, vault, before), same(slow.stdout, alone, before)
            # notes written in the same second (the candidates) are ordered by their random ids: as lines
            assert (fast.returncode, sorted(got.split("\\n")), fast.stderr) == (
                slow.returncode, sorted(want.split("\\n")), slow.stderr), (
                agent, hook, "\n".join(difflib.unified_diff(want.split("\\n"), got.split("\\n"), lineterm="")))  # fmt: skip
            assert fast.returncode == 0 and (fast.stdout or hook == "end"), (agent, hook, fast.stderr)
    assert notes(vault) == notes(alone)
    assert len(set(notes(vault)) - set(before)) >= len(AGENTS)  # each agent's session summary


def test_hook_end_keeps_its_detach_rule_through_the_fast_path(cli, vault, tmp_path):  # noqa: F811
    """An agent that does not wait for SessionEnd (Codex) gets its answer at once and the summary
    is written by a detached `hook end --wait` (through the service); Claude Code's is written
    before the hook returns."""
    serve(cli, vault)
    env = dict(cli.env)
    before = set(notes(vault))
    codex = Payloads("codex", tmp_path / "codex", env)
    done = subprocess.run([EXE, "hook", "end", "--agent", "codex", "--vault", str(vault)],
                          input=codex("end", "019a7c3e-0000-7a12-9c4e-2b1f6e8d0a93"), capture_output=True, text=True,
                          env=env, timeout=180)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    wait_for(lambda: set(notes(vault)) - before, timeout=120, what="the detached hook end's summary")
    claude = Payloads("claude", tmp_path / "claude", env)
    made = set(notes(vault))
    done = subprocess.run([EXE, "hook", "end", "--vault", str(vault), "--json"], input=claude("end", "c-1"),
                          capture_output=True, text=True, env=env, timeout=180)  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["summary"]["path"] in set(notes(vault)) - made


def test_doctor_finds_a_secret_added_to_a_note_it_scanned_before(demo, tmp_path):
    """The long-running service remembers each note's secret scan by its content: a note changed
    since is scanned again (and one mended stops being reported)."""
    from vaultmem.doctor import diagnose

    def secrets() -> list[str]:
        demo.sync()
        return [f.path for f in diagnose(demo).findings if f.check == "secret"]

    path = "facts/Token.md"
    write(demo.root, path, "---\ntitle: Token\ntype: fact\n---\nNothing here.\n")
    assert path not in secrets()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    write(demo.root, path, f"---\ntitle: Token\ntype: fact\n---\nThe token is {token}.\n")
    assert path in secrets() and path in secrets()
    write(demo.root, path, "---\ntitle: Token\ntype: fact\n---\nNothing here.\n")
    assert path not in secrets()
