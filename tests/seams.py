"""Every command and hook in every state, one result (issue 44): the harness.

What it runs is generated, never listed by hand: the CLI's commands from the typer app (each
group walked, each argument given a value by its name, ``ARGS``), the variants that keep the
typer-free fast paths on them (``cli.fast.SPECS``, ``cli.quick.OWN``, ``cli.main.HOOKS``), and
every operation of ``protocol.OPS`` (its arguments from their names and wire types). A new
command or operation is so covered with no new test code; only one that cannot run in a test
(it serves until stopped, or starts a real process) is left out, by name, with the reason
(``NOT_RUN``).

Each runs in process (``vaultmem.cli.main.main`` with argv, its output captured; an operation on
``host.LocalHost``), the reference, and then in the state under test (``STATES``): through the
real memory service in a thread of the test (``service_thread.ServiceThread``), one still
loading its model, one in a vault's first index, a stale socket, none at all; a read-only vault,
broken notes. Every cell is checked (``check``): the same stdout, stderr and exit code as in
process, never a traceback, a failure said in one line, a hook answering (or silent) without
waiting for the model or the index, and no file of the vault changed by a call that does not write.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------- what runs

NOTE = "Use advisory locks for job leasing"
OTHER = "Queue runs on Postgres"
NOTE_PATH = f"decisions/{NOTE}.md"
# a value for each argument name of the commands (optional ones too); a required one not here: "alpha"
ARGS: dict[str, str] = {
    "ref": NOTE, "note": NOTE, "a": NOTE, "b": OTHER, "old": OTHER, "new": NOTE, "query": "advisory locks",
    "text": "the queue leases jobs with advisory locks", "type": "fact", "title": "Seams note",
    "content": "A note the harness wrote.", "shell": "bash", "agent": "claude", "name": "seams",
    "verdict": "useful",
}  # fmt: skip
# commands that cannot run in a test: (typer path) -> why
NOT_RUN: dict[tuple[str, ...], str] = {
    ("serve",): "serves the web view until stopped (tests/test_web.py)",
    ("mcp",): "serves MCP on stdin until it closes (tests/test_mcp.py)",
    ("watch",): "runs the memory service in the foreground until stopped",
    (
        "service",
        "run",
    ): "runs the memory service until stopped (the harness runs the same Service in a thread)",
    ("service", "start"): "starts a real service process (the harness runs the same Service in a thread)",
    ("service", "restart"): "starts a real service process",
    ("service", "install"): "writes a systemd or launchd unit and starts it",
    ("merge-driver",): "git's merge driver: runs on the three files git hands it (tests/test_mergedriver.py)",
    ("demo",): "copies the demo vault and indexes it with the real model (tests/test_publish.py)",
}
# options a command needs to do its work here (no terminal, no detached process)
EXTRA: dict[tuple[str, ...], list[str]] = {
    ("hook", "end"): ["--wait"],  # written by this call, not by a detached process
    ("edit",): ["--add-tag", "seams"],  # an edit that needs no editor (and stays on the fast path)
    ("sleep",): ["--summary", "Leased jobs with advisory locks."],
    ("delete",): ["--force"],
    # a real import, of a file named relative to the caller's folder (the service runs elsewhere)
    ("import",): ["--from", "claude-code", "old-session.jsonl"],
}
# what a command's output says about where it ran (the service or this process): only its exit
# code is compared
DIFFERS: dict[tuple[str, ...], str] = {
    ("status",): "says who keeps the indexes (the service, or each command)",
    ("service", "status"): "the service's pid, calls and vaults",
    ("service", "stop"): "the pid stopped",
}
LAST = [("index",), ("service", "stop")]  # run after the others (they end the state under test)
LAST_OPS = ["reindex", "stop"]  # the same for operations (``index`` waits for every vector)
# a command whose exit code 1 is its answer (the report on stdout says why)
REPORTS = {("doctor",): "exits 1 when its report needs attention"}


@dataclass(frozen=True)
class Command:
    """One command line of the harness: ``path`` (the typer command) and its whole argv."""

    path: tuple[str, ...]
    argv: tuple[str, ...]

    @property
    def hook(self) -> str | None:
        return self.path[1] if self.path[0] == "hook" else None

    @property
    def name(self) -> str:
        return " ".join(self.argv)


def typer_commands() -> dict[tuple[str, ...], list[tuple[str, bool]]]:
    """Every command of the typer app (``vaultmem ...``, groups walked): its path and its
    arguments (name, required), in order."""
    import typer.main

    from vaultmem.cli.app import app

    out: dict[tuple[str, ...], list[tuple[str, bool]]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
            return
        out[path] = [(p.name, p.required) for p in command.params if type(p).__name__.endswith("Argument")]

    walk(typer.main.get_command(app), ())
    return out


def fast_variants() -> dict[tuple[str, ...], list[list[str]]]:
    """The options that keep each typer-free path's command on it, beside its plain form:
    ``--json`` where its parser takes it (``cli.fast.SPECS``, ``cli.quick.OWN``); for each hook
    (``cli.main.HOOKS``, ``hook_io.HOOKS``) ``--agent claude`` and the agent's wrong name."""
    from vaultmem.agents.hook_io import HOOKS as HOOK_RUN
    from vaultmem.cli import fast, quick
    from vaultmem.cli.main import FAST, HOOKS

    out: dict[tuple[str, ...], list[list[str]]] = {(name,): [] for name in FAST}
    for name in FAST:
        if "--json" in fast.SPECS[name][1]:
            out[(name,)].append(["--json"])
    out[("recall",)] = [["--json"]] if "--json" in quick.OWN else []
    for hook in set(HOOKS) | set(HOOK_RUN):
        out[("hook", hook)] = [["--agent", "claude-code"]]
    return out


def commands() -> list[Command]:
    """Every command line the harness runs: each typer command not in ``NOT_RUN`` with its
    arguments (``ARGS``: every required one, an optional one it names) and ``EXTRA`` (a hook
    with ``--agent claude``), then each fast path's variants; ``LAST`` at the end."""
    out: list[Command] = []
    variants = fast_variants()
    for path, params in sorted(typer_commands().items()):
        if path in NOT_RUN:
            continue
        args = [ARGS.get(name, "alpha") for name, required in params if required or name in ARGS]
        base = [*path, *args, *EXTRA.get(path, [])]
        out.append(Command(path, tuple(base + (["--agent", "claude"] if path[0] == "hook" else []))))
        out += [Command(path, tuple(base + extra)) for extra in variants.get(path, [])]
    return sorted(out, key=lambda c: LAST.index(c.path) + 1 if c.path in LAST else 0)


# ---------------------------------------------------------------------- one run in process


@dataclass
class Outcome:
    """What one call did: its exit code, stdout, stderr, the traceback of an exception that
    escaped (None: none did), the operations it called."""

    code: int
    out: str
    err: str
    crash: str | None = None
    ops: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # the vault's files it changed (put back after)
    wrote: bool = False  # it called an operation that writes
    seconds: float = 0.0  # how long it took (wall)

    def shown(self) -> str:
        text = f"exit {self.code}; stdout: {self.out[-800:]!r}; stderr: {self.err[-800:]!r}"
        return text + (f"\n{self.crash[-2500:]}" if self.crash else "")


class _Thread(logging.Filter):
    """Records of one thread only (the command's: not the service's, which logs to its file)."""

    def __init__(self, ident: int):
        super().__init__()
        self.ident = ident

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread == self.ident


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    return stream.buffer.getvalue().decode("utf-8", errors="replace")


@contextlib.contextmanager
def recording_ops() -> Iterator[list[str]]:
    """The operations this thread calls, through the service or in process."""
    from vaultmem.service import client, host

    called: list[str] = []
    me = threading.get_ident()
    real_call, real_run = client.call, host.LocalHost.run

    def call(op: str, args: dict | None = None, timeout: float = 600.0, on_progress: Any = None) -> Any:
        if threading.get_ident() == me:
            called.append(op)
        return real_call(op, args, timeout, on_progress)

    def run(self: Any, name: str, args: dict[str, Any], emit: Any = None) -> Any:
        if threading.get_ident() == me:
            called.append(name)
        return real_run(self, name, args, emit)

    client.call, host.LocalHost.run = call, run  # type: ignore[assignment,method-assign]
    try:
        yield called
    finally:
        client.call, host.LocalHost.run = real_call, real_run  # type: ignore[method-assign]


@contextlib.contextmanager
def built_once() -> Iterator[None]:
    """typer builds its click commands once a process; the harness runs hundreds of command
    lines in one: each app's commands built once (~35 ms a run otherwise)."""
    import typer.main

    real = typer.main.get_command
    built: dict[int, Any] = {}

    def get_command(app: Any) -> Any:
        if id(app) not in built:
            built[id(app)] = (app, real(app))
        return built[id(app)][1]

    typer.main.get_command = get_command
    try:
        yield
    finally:
        typer.main.get_command = real


def run_cli(argv: tuple[str, ...] | list[str], stdin: str = "") -> Outcome:
    """``vaultmem ARGV`` in this process, as its console entry runs it: stdout, stderr and what
    logging's last resort prints (warnings, on stderr) captured; an exception that escapes is a
    crash (the user would see a traceback)."""
    from vaultmem.agents import hook_io
    from vaultmem.cli.main import main

    out, err = _stream(), _stream()
    handler = logging.StreamHandler(err)  # logging.lastResort's: the message, warnings and up
    handler.setLevel(logging.WARNING)
    handler.addFilter(_Thread(threading.get_ident()))
    root = logging.getLogger()
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr
    sys.argv, sys.stdin, sys.stdout, sys.stderr = ["vaultmem", *argv], io.StringIO(stdin), out, err
    root.addHandler(handler)
    crash, code = None, 0
    try:
        with recording_ops() as ops:
            try:
                main()
            except SystemExit as e:
                code = _exit_code(e.code, err)
            except BaseException:  # what the user would see: a traceback
                crash, code = traceback.format_exc(), 1
    finally:
        root.removeHandler(handler)
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
        hook_io.CURRENT = None
    return Outcome(code, _text(out), _text(err), crash, ops)


def _exit_code(code: Any, err: io.TextIOWrapper) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    err.write(f"{code}\n")  # sys.exit("message"): printed, exit 1
    return 1


# ---------------------------------------------------------------------- operations


@dataclass(frozen=True)
class OpCall:
    """One operation of the table with the arguments the harness gives it."""

    name: str
    args: dict[str, Any]
    writes: bool


def op_value(name: str, kind: Any, root: Path) -> Any:
    """A value for an operation's argument, by its name, else by its wire type."""
    payload = {"session_id": "seams-1", "cwd": str(root), "prompt": "how do we lease jobs?", "agent": "claude",
               "agent_label": "claude", "transcript_path": str(root.parent / "work" / "session.jsonl")}  # fmt: skip
    by_name: dict[str, Any] = {
        "roots": {"vault": str(root)}, "root": str(root), "ref": NOTE, "old": OTHER, "new": NOTE,
        "query": "advisory locks", "path": "notes/Seams op.md", "ids": [NOTE_PATH], "paths": [NOTE_PATH],
        "content": "---\ntype: fact\n---\n\nWritten by the harness.\n", "cwd": str(root), "via": "hook",
        "file": str(root / "AGENTS.md"), "event": "sync", "ratings": [[NOTE, True]], "payload": payload,
    }  # fmt: skip
    if name in by_name:
        return by_name[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return {str: ARGS.get(name, "alpha"), list: [], dict: {}, int: 1, float: 1.0, bool: False}[kinds[0]]


def operations(table: dict[str, Any], root: Path) -> list[OpCall]:
    """Every operation of ``table`` (``protocol.OPS``) with its required arguments; ``stop``
    last (it ends the service)."""
    from vaultmem.service.protocol import WRITE

    calls = [OpCall(op.name, {name: op_value(name, kind, root) for name, kind in op.args.items()},
                    op.gate == WRITE) for op in table.values()]  # fmt: skip
    return sorted(calls, key=lambda c: c.name == "stop")


OP_DIFFERS = {"ping": "the host's pid and vaults", "stop": "the pid stopped", "status": "who keeps the indexes",
              "doctor": "who keeps the indexes (the report's service line)"}  # fmt: skip


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1, default=str) + "\n"


# ---------------------------------------------------------------------- the vault

NOTES = {
    "projects/Project: Seams.md": "---\ntype: project\n---\n\n# Project: Seams\n\nThe job queue service.\n",
    NOTE_PATH: "---\ntype: decision\nanchor: '[[Project: Seams]]'\ntags: [queue]\nimportance: 8\n---\n\n"
    "We lease jobs with Postgres advisory locks, never SELECT FOR UPDATE.\n",
    f"facts/{OTHER}.md": "---\ntype: fact\nanchor: '[[Project: Seams]]'\n---\n\nThe job queue lives in "
    "Postgres 16; see [[Use advisory locks for job leasing]].\n",
    "lessons/Retry with jitter.md": "---\ntype: lesson\n---\n\nRetries without jitter stampede the queue.\n",
}
TRANSCRIPT = Path(__file__).parent / "data" / "hooks" / "saved_session.jsonl"


def make_vault(root: Path) -> Path:
    """A small vault of four notes around one project (no index yet), each file dated at a fixed time."""
    from vaultmem.core.scaffold import init_vault

    init_vault(root)
    for i, (rel, text) in enumerate(NOTES.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (1_780_000_000 + i * 3600, 1_780_000_000 + i * 3600))
    return root


Files = dict[bytes, tuple[bytes, int]]  # path (bytes: a name that is no UTF-8 too) -> content, mtime


def files_of(root: Path) -> Files:
    """Every file of the vault but its derived state (``.vaultmem/``, the usage store): what a
    call must not lose or change unless it writes."""
    out: Files = {}
    base = os.fsencode(root)
    for folder, dirs, names in os.walk(base):
        if folder == base:
            dirs[:] = [d for d in dirs if not d.startswith(b".vaultmem")]
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, base)] = (f.read(), os.stat(path).st_mtime_ns)
    return out


def put_back(root: Path, files: Files) -> list[str]:
    """The vault's files as they were (``files_of``), their times too; returns the paths that
    were changed, added or removed."""
    now = files_of(root)
    base = os.fsencode(root)
    changed = []
    for rel in sorted(set(now) | set(files)):
        if now.get(rel) == files.get(rel):
            continue
        changed.append(os.fsdecode(rel))
        path = os.path.join(base, rel)
        if rel in files:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(files[rel][0])
            os.utime(path, ns=(files[rel][1], files[rel][1]))
        else:
            os.unlink(path)
    for folder, dirs, _ in os.walk(base, topdown=False):  # the folders a write made, left empty
        for d in dirs:
            path = os.path.join(folder, d)
            if not os.path.relpath(path, base).startswith(b".vaultmem"):
                with contextlib.suppress(OSError):
                    os.rmdir(path)
    return changed


# ---------------------------------------------------------------------- the states


class Gate:
    """Holds the embedding model back: while closed, an embedding (of the threads it holds)
    waits; ``waited`` tells that one did. ``release`` opens it when a call waits on it (a command
    may wait for the model; a hook may not)."""

    def __init__(self, threads: str = "") -> None:
        self.open = threading.Event()
        self.waited = threading.Event()
        self.threads = threads  # the names of the threads held (a prefix; "": every thread)
        self.release = False

    def holds(self) -> bool:
        return not self.open.is_set() and threading.current_thread().name.startswith(self.threads)

    def wait(self) -> None:
        self.waited.set()
        if self.release:
            self.open.set()
        self.open.wait()


class GatedEmbedder:
    """The test embedder behind a gate: the model still loading, or a first index that takes
    longer than any hook's budget."""

    def __init__(self, inner: Any, gate: Gate):
        self.inner, self.gate = inner, gate
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens

    def embed(self, texts: Any) -> Any:
        if self.gate.holds():
            self.gate.wait()
        return self.inner.embed(texts)

    def embed_query(self, texts: Any) -> Any:
        if self.gate.holds():
            self.gate.wait()
        return self.inner.embed_query(texts)


def stale_service() -> None:
    """What a service killed with SIGKILL leaves: its socket file (nobody listens) and its lock
    file naming a pid that is gone."""
    from vaultmem.service import client, control

    control.private_runtime_dir()
    path = client.service_socket()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()
    control.lock_path().write_text(json.dumps({"pid": 2**22 + 17, "version": "0.0.1"}))


@contextlib.contextmanager
def read_only(root: Path) -> Iterator[None]:
    """``root`` read-only for everyone, root too: a read-only bind mount of it over itself
    (root; else, for a user, its modes)."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [root, *root.rglob("*")]}
        for p in modes:
            p.chmod(modes[p] & ~0o222)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    subprocess.run(["mount", "--bind", str(root), str(root)], check=True, capture_output=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(root)], check=True, capture_output=True)
        yield
    finally:
        subprocess.run(
            ["umount", "--lazy", str(root)], check=True, capture_output=True
        )  # files still open: detached


def can_mount() -> bool:
    """Whether a read-only vault can be made here (a user: its modes; root: a bind mount)."""
    if os.geteuid() != 0:
        return True
    return shutil.which("mount") is not None and os.access("/proc/self/mountinfo", os.R_OK)


def add_note(rel: str | bytes, text: str) -> Callable[[Path], None]:
    def alter(root: Path) -> None:
        path = os.path.join(os.fsencode(root), os.fsencode(rel))
        with open(path, "wb") as f:
            f.write(text.encode())

    return alter


@dataclass(frozen=True)
class State:
    """One state a command runs in: how its memory service stands (``service``), what the vault
    holds (``alter``), whether it is indexed first and read-only."""

    name: str
    service: str = "warm"  # none | starting | first-index | warm | stale
    alter: Callable[[Path], None] | None = None
    read_only: bool = False
    differs: tuple[str, ...] = ()  # cells whose answer is this state's own (``FIRST_INDEX``)

    @property
    def indexed(self) -> bool:
        return self.service != "first-index"


BAD = "---\ntype: fact\n---\n\nThe job queue's retry rule, kept with the broken note.\n"
STATES = [
    State("no service", service="none"),
    State("service starting", service="starting"),
    State("first index", service="first-index", differs=("op reindex",)),  # the call indexes the vectors then
    State("warm"),
    State("stale socket", service="stale"),
    State("read-only vault", read_only=True),
    State(
        "broken frontmatter",
        alter=add_note("facts/Broken.md", "---\ntype: [fact\ntitle: x: y\n---\n\nBroken.\n"),
    ),
    State(
        "impossible date",
        alter=add_note(
            "facts/Dated.md",
            "---\ntype: fact\ncreated: 2026-13-45\n---\n\nThe job queue moved on an impossible day.\n",
        ),
    ),  # fmt: skip
    State("non-UTF-8 name", alter=add_note(b"facts/Caf\xe9 queue.md", BAD)),
]
HOOK_PAYLOADS = {
    "prompt": {"hook_event_name": "UserPromptSubmit", "prompt": "how do we lease jobs with advisory locks?"},
    "start": {"hook_event_name": "SessionStart", "source": "startup"},
    "stop": {"hook_event_name": "Stop", "stop_hook_active": False},
    "pre-compact": {"hook_event_name": "PreCompact", "trigger": "manual"},
    "end": {"hook_event_name": "SessionEnd", "reason": "exit"},
}


def payload(hook: str, root: Path, transcript: Path) -> str:
    """The hook's JSON on stdin (Claude Code's), from the agent working in the vault's folder."""
    base = {"session_id": "seams-session", "transcript_path": str(transcript), "cwd": str(root)}
    return json.dumps({**base, **HOOK_PAYLOADS.get(hook, {})})


# ---------------------------------------------------------------------- the checks

VARYING = [
    (re.compile(r"\[(/?)MEMORY [0-9a-f]+\]"), r"[\1MEMORY #]"),  # the fence's nonce, new each call
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<time>"),  # now
    (re.compile(r"(\d{4}-\d\d-\d\d) \d{4}\b"), r"\1 <hhmm>"),  # now, in a handoff's or a summary's title
    (re.compile(r"- \d\d:\d\d "), "- <hh:mm> "),  # now, in a handoff's line
    (re.compile(r"\b1[789]\d{8}\.\d+"), "<timestamp>"),  # now, as the usage store's times
    (re.compile(r"\d{8}-\d{6}-[0-9a-f]{4}"), "<batch>"),  # an undo batch's id (its time)
    (re.compile(r"(indexes |\"index_bytes\": )\d+"), r"\1<n>"),  # the indexes' size on disk (their history)
    (re.compile(r" in \d+\.\d\d? s\b|(\"seconds\": )\d+\.\d+"), r" in <n> s\1"),  # how long it took
    (
        re.compile(r"^disk: .*$|(\"(?:\.vaultmem[^\"]*|total_state)\": )\d+", re.M),
        r"\1<size>",
    ),  # derived state's size
    (re.compile(r"^applied by the running watcher: ", re.M), ""),  # `index`: who applied it
    (re.compile(r"^vaultmem: indexing \d+/\d+ \(\d+%\)\n", re.M), ""),  # progress of work done here
    (
        re.compile(r"^(watcher|indexed by): .*$|\"watcher\": \{[^}]*\}|\"disk\": \{[^}]*\}", re.M),
        "<state>",
    ),  # doctor
    (
        re.compile(r"\"after\": \"[0-9a-f]{32}\""),
        '"after": <hash>',
    ),  # an undo batch: a note's hash after (its time)
    (
        re.compile(r'(?ms)^( *)"retrievals": \[.*?^\1\]'),
        '"retrievals": <log>',
    ),  # what was shown: keyword answers show more
]


def normalised(text: str) -> str:
    """``text`` without what differs between two runs of one call (a fence's nonce, the time)."""
    for pattern, into in VARYING:
        text = pattern.sub(into, text)
    return text


def _diff(theirs: tuple[int, str, str], mine: tuple[int, str, str]) -> str:
    """Where two outcomes' outputs part (in process first)."""
    import difflib

    out = []
    for label, a, b in (("stdout", theirs[1], mine[1]), ("stderr", theirs[2], mine[2])):
        lines = list(difflib.unified_diff(a.splitlines(), b.splitlines(), f"{label} in process", f"{label} here",
                                          n=1, lineterm=""))  # fmt: skip
        out += lines[:40]
    return "\n".join("    " + line[:300] for line in out)


def check(name: str, got: Outcome, *, hook: str | None = None, wrote: bool = False,
          changed: list[str] | None = None, reference: Outcome | None = None, compare: bool = True,
          report: bool = False, read_only: bool = False) -> list[str]:  # fmt: skip
    """What is wrong with one cell: a traceback; a failure not said in one last line (``vaultmem:
    ...``, or click's usage ``Error: ...``); a hook that did not answer or failed (but for an agent
    it does not know); a file changed by a call that does not write, or by one that failed; not
    the reference's stdout, stderr and exit code (``compare``)."""
    problems = []
    if got.crash:
        problems.append(f"{name}: a traceback\n{got.crash[-2000:]}")
    elif "internal error:" in got.err:
        problems.append(f"{name}: a bug said in one line: {got.shown()}")
    elif got.code != 0 and not (report and got.code == 1):
        last = got.err.rstrip("\n").splitlines()[-1:] or [""]
        if not (last[0].startswith("vaultmem: ") or last[0].startswith("Error: ")):
            problems.append(f"{name}: failed without a line saying why: {got.shown()}")
        if hook in ANSWER_ALWAYS and "unknown agent" not in got.err:
            problems.append(f"{name}: the hook failed: {got.shown()}")
    if hook and got.code == 0 and got.out.strip():
        try:
            json.loads(got.out)
        except ValueError:
            problems.append(f"{name}: the hook's answer is not JSON: {got.out[:300]!r}")
    if read_only and not wrote and "Read-only file system" in got.err:
        problems.append(f"{name}: a read failed on a read-only vault: {got.shown()}")
    if changed and (not wrote or got.code != 0):
        problems.append(f"{name}: changed {changed} (exit {got.code}, operations {got.ops})")
    if reference is not None and compare:
        mine = (got.code, normalised(got.out), normalised(got.err))
        theirs = (reference.code, normalised(reference.out), normalised(reference.err))
        if mine != theirs:
            problems.append(
                f"{name}: not as in process (exit {reference.code}, here {got.code}):\n{_diff(theirs, mine)}"
            )
    return problems


# ---------------------------------------------------------------------- one state, every cell

HOOK_BUDGET = 30.0  # seconds: the longest timeout `vaultmem setup` declares on a hook (setups.TIMEOUTS)
HANG = 120.0  # seconds a command may take here before it counts as hung
NEVER_WAIT = ("prompt", "start")  # hooks that answer without the model (from keywords meanwhile)
# how an answer from keywords alone says so (while the service starts, in a first index): it may
# differ from the full answer in process
KEYWORD_MARKS = (
    "keyword search only while",
    "keywords first:",
    '"degraded": "first-index"',
    '"degraded": "bm25"',
)
# hooks that answer (or stay silent) in every state; the others save the session and may fail
# (one line) where it cannot be saved
ANSWER_ALWAYS = ("prompt", "start", "stop")


@dataclass
class Grid:
    """One state's cells: name -> (the reference's outcome, this state's), and what is wrong."""

    state: str
    cells: dict[str, tuple[Outcome, Outcome]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def run_op(name: str, args: dict[str, Any]) -> Outcome:
    """One operation through the one door (``api.Session.call``): the memory service, or this
    process; a refusal is an exit code and one line, as a command shows it."""
    from vaultmem import api
    from vaultmem.cli.service import tasks
    from vaultmem.core.errors import VaultError, os_message

    with recording_ops() as ops:
        try:
            with api.Session([args.get("root") or next(iter(args.get("roots", {"": None}).values()), None) or ""],
                             tasks=tasks()) as session:  # fmt: skip
                return Outcome(0, _json(session.call(name, args)), "", ops=ops)
        except VaultError as e:
            return Outcome(e.exit_code, "", f"vaultmem: {e}\n", ops=ops)
        except OSError as e:  # as every front end says it (``cli.common.guarded``)
            return Outcome(1, "", f"vaultmem: {os_message(e)}\n", ops=ops)
        except Exception:
            return Outcome(1, "", "", traceback.format_exc(), ops=ops)


def says_keywords(got: Outcome) -> bool:
    """Whether an answer says it came from keywords alone (``KEYWORD_MARKS``)."""
    return any(mark in got.out or mark in got.err for mark in KEYWORD_MARKS)


class Sweep:
    """Runs every command and operation in one state (``run``): first in process on the state's
    vault (the reference), then, on the same vault made again, in the state itself.

    ``tmp``: a folder of the test's own; ``runtime``: a short folder for the service's socket;
    ``embedder``: the test embedder (the in-process runs get it through ``fake_model``)."""

    def __init__(self, tmp: Path, runtime: Path, monkeypatch: Any, embedder: Any):
        self.tmp, self.runtime, self.mp, self.embedder = tmp, runtime, monkeypatch, embedder
        self.root = tmp / "vault"
        self.work = tmp / "work"
        self.spawned: list[str] = []
        self.service: Any = None
        self.gate: Gate | None = None
        self.starting = False
        self._guard()

    def _guard(self) -> None:
        """No real memory service is ever started: a client that starts one finds none coming
        up (``START_GRACE`` 0) and works in its own process, as with a service that died at start."""
        from vaultmem.service import control

        self.mp.setattr(control, "spawn", lambda reap=True: self.spawned.append("spawn") or 0)
        self.mp.setattr(control, "_spawn_at_exit", lambda: self.spawned.append("at exit"))
        self.mp.setattr(control, "START_GRACE", 0.0)

    # ------------------------------------------------------------------ the vault

    def build(self, state: State) -> Outcome | None:
        """The state's vault made afresh (and indexed in process unless it is in its first index),
        an empty working folder, the user's folders emptied: each pass starts from the same."""
        for folder in (self.root, self.work):
            shutil.rmtree(folder, ignore_errors=True)
        for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
            shutil.rmtree(os.environ[var], ignore_errors=True)
        make_vault(self.root)
        if state.alter is not None:
            state.alter(self.root)
        self.work.mkdir()
        shutil.copy(TRANSCRIPT, self.work / "session.jsonl")
        old = shutil.copy(TRANSCRIPT, self.work / "old-session.jsonl")  # `import`'s: a session that ended
        os.utime(old, (1_780_000_000, 1_780_000_000))
        self.mp.setenv("VAULTMEM_VAULT", str(self.root))
        self.mp.chdir(self.work)
        self.mp.setenv("VAULTMEM_NO_SERVICE", "1")
        return run_cli(["index"]) if state.indexed else None

    # ------------------------------------------------------------------ the memory service

    def _start(self, state: State) -> None:
        """The memory service as ``state`` has it."""
        from service_thread import ServiceThread

        self.runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.mp.setenv("XDG_RUNTIME_DIR", str(self.runtime))
        self.mp.setenv("VAULTMEM_SERVICE_KEY", "seams")
        self.mp.delenv("VAULTMEM_NO_SERVICE", raising=False)
        if state.service in ("none", "stale"):
            if state.service == "stale":
                stale_service()
            return
        if state.service == "first-index":  # a big vault's: keywords first, the vectors behind
            from vaultmem.service.watch import Watcher

            self.mp.setattr(Watcher, "INLINE", 0)  # (a few notes would get theirs at once)
        self.gate = Gate("watch-" if state.service == "first-index" else "")
        self.starting = state.service == "starting"
        if not self.starting:
            self.gate.open.set()  # the model loads at once
        self.service = ServiceThread(
            self.runtime, GatedEmbedder(self.embedder, self.gate), ready=not self.starting
        )
        if state.service == "first-index":
            self.gate.open.clear()  # the model is loaded; the vault's vectors take longer than any budget
            self._ask("recall", {"roots": {"vault": str(self.root)}, "query": "queue",
                                 "options": {"mode": "bm25", "log": False}})  # fmt: skip
            assert self.gate.waited.wait(30), "the first index did not start"
        elif state.service == "warm":
            self._ask("open", {"roots": [str(self.root)]})

    def _ask(self, op: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """One request to the service as the state's set-up (what it answers is the state's)."""
        from vaultmem.service import client

        return client.call(op, args)

    def stop(self) -> None:
        if self.gate is not None:
            self.gate.open.set()
        if self.service is not None:
            self.service.stop()
            self.service = None
        self.gate, self.starting = None, False

    # ------------------------------------------------------------------ one pass

    def one_pass(self, cmds: list[Command], ops: list[OpCall]) -> dict[str, Outcome]:
        """Every command, then every operation, then the commands that end the state (``LAST``);
        the vault's files put back after each, and reconciled through the door (``sync``)."""
        from vaultmem.service.protocol import OPS, WRITE

        results: dict[str, Outcome] = {}
        before = files_of(self.root)
        ids = iter(f"seams{n:03d}" for n in range(1000))  # new notes' ids, the same in every pass
        self.mp.setattr("vaultmem.core.store.new_id", lambda taken=frozenset(): next(ids))
        self.mp.setattr("vaultmem.memory.ops.new_id", lambda taken=frozenset(): next(ids))

        def command(cmd: Command) -> None:
            stdin = payload(cmd.hook, self.root, self.work / "session.jsonl") if cmd.hook else ""
            waits = cmd.hook not in NEVER_WAIT
            got = self._timed(lambda: run_cli(cmd.argv, stdin), HOOK_BUDGET if cmd.hook else HANG, waits)
            got.wrote = any(OPS[o].gate == WRITE for o in got.ops if o in OPS)
            got.changed = self._put_back(before)
            results["$ vaultmem " + cmd.name] = got

        def operation(call: OpCall) -> None:
            got = self._timed(lambda: run_op(call.name, call.args), HANG, True)
            got.wrote = call.writes
            got.changed = self._put_back(before)
            results["op " + call.name] = got

        for cmd in [c for c in cmds if c.path not in LAST]:
            command(cmd)
        for call in [c for c in ops if c.name not in LAST_OPS]:
            operation(call)
        if self.gate is not None:  # what follows ends the state (a stopping service lets its model go)
            self.gate.open.set()
            self.starting = False
        for call in [c for c in ops if c.name in LAST_OPS[:-1]]:
            operation(call)
        for cmd in [c for c in cmds if c.path in LAST]:
            command(cmd)
        for call in [c for c in ops if c.name == LAST_OPS[-1]]:  # the service's own stop: the very last
            operation(call)
        return results

    def _timed(self, fn: Callable[[], Outcome], budget: float, may_wait: bool) -> Outcome:
        """``fn`` with a watchdog: past ``budget`` seconds the model is let go (so that it ends)
        and the outcome says it ran over; one that ``may_wait`` lets it go at once when it waits."""
        gate = self.gate
        if gate is not None:
            gate.release = may_wait
            gate.waited.clear()
        late = threading.Event()

        def overrun() -> None:
            late.set()
            if gate is not None:
                gate.open.set()

        timer = threading.Timer(budget, overrun)
        timer.start()
        started = time.monotonic()
        try:
            got = fn()
        finally:
            timer.cancel()
        got.seconds = time.monotonic() - started
        if late.is_set():
            waited = gate is not None and gate.waited.is_set()
            got.crash = (
                f"{got.crash or ''}\nran over its budget of {budget:g} s (waited for the model: {waited})"
            )
        if gate is not None and self.starting and gate.open.is_set():  # the model loading again for the next
            assert self.service.service.opened.wait(30)
            gate.open.clear()
            self.service.service.ready_event.clear()
        return got

    def _put_back(self, before: Files) -> list[str]:
        """The vault's files as before the call, reconciled where its index is (the service, or
        this process); the paths that had changed."""
        try:
            changed = put_back(self.root, before)
        except OSError:  # a read-only vault: nothing was changed
            return []
        if changed:
            done = run_op("sync", {"root": str(self.root.resolve()), "paths": changed})
            assert done.code == 0 and not done.crash, done.shown()
        return changed

    # ------------------------------------------------------------------ a state

    def run(self, state: State, cmds: list[Command], ops_table: dict[str, Any]) -> Grid:
        """Both passes of ``state`` and the checks of every cell."""
        grid = Grid(state.name)
        ops = operations(ops_table, self.root.resolve())
        passes = []
        with built_once():
            for where in ("in process", state.name):
                made = self.build(state)
                with read_only(self.root) if state.read_only else contextlib.nullcontext():
                    try:
                        if where != "in process":
                            self._start(state)
                        results = self.one_pass(cmds, ops)
                    finally:
                        self.stop()
                passes.append({**({"$ vaultmem index (made)": made} if made else {}), **results})
        reference, here = passes
        for name, got in here.items():
            ref = reference[name]
            path = tuple(name.split()[2:])
            hook = path[1] if path[:1] == ("hook",) else None
            keywords = state.service != "warm" and says_keywords(got)
            differs = keywords or name in state.differs or any(path[: len(p)] == p for p in DIFFERS) or (
                name.startswith("op ") and name[3:] in OP_DIFFERS)  # fmt: skip
            report = any(path[: len(p)] == p for p in REPORTS)
            for kind, outcome, against in (("in process", ref, None), (state.name, got, ref)):
                grid.problems += check(f"[{kind}] {name}", outcome, hook=hook, wrote=outcome.wrote,
                                       changed=outcome.changed, reference=against, compare=not differs,
                                       report=report, read_only=state.read_only)  # fmt: skip
            grid.cells[name] = (ref, got)
        return grid
