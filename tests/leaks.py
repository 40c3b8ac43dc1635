"""The suite leaves nothing behind: no process (a memory service, a watcher, any child) outlives
the test that started it, and no folder outside the run's temp folder outlives the run.

A test's processes are found by a tag in their environment (``VMTEST_OWNER``, inherited by every
child and grandchild, detached services included): a test gets its own tag, a module- or
session-scoped fixture the tag of its scope, so what a test started and did not stop is named
at its teardown, and what a fixture started and did not stop at the end of the run (with the
processes that still hold the run's temp folder in their environment, and this process's
children). Each is given a few seconds to exit, then killed, and the test (or the run) fails.
Linux only (``/proc``); elsewhere the check is skipped.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

OWNER = "VMTEST_OWNER"
PROC = Path("/proc")
# seconds a process has to exit after its test (a service stopping, a detached hook)
GRACE = float(os.environ.get("VMTEST_LEAK_GRACE") or 10)
_count = itertools.count(1)


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    owner: str
    environ: tuple[str, ...]
    cmdline: str

    def __str__(self) -> str:
        return f"pid {self.pid}: {self.cmdline[:200]}"


def supported() -> bool:
    return (PROC / "self" / "environ").exists()


def run_tag() -> str:
    """This process's prefix of every tag it hands out."""
    return f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}"


def new_tag(kind: str) -> str:
    return f"{run_tag()}:{kind}{next(_count)}"


def processes() -> list[Proc]:
    """Every live process but this one (zombies are dead: not listed)."""
    out = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] in ("Z", "X"):
            continue
        env = tuple(environ.decode("utf-8", "replace").split("\0"))
        owner = next((e[len(OWNER) + 1 :] for e in env if e.startswith(OWNER + "=")), "")
        out.append(Proc(int(entry.name), int(fields[1]), owner, env,
                        cmdline.replace(b"\0", b" ").decode("utf-8", "replace").strip()))  # fmt: skip
    return out


def children_of(pid: int, procs: list[Proc]) -> list[Proc]:
    """``pid``'s descendants among ``procs``."""
    kids: dict[int, list[Proc]] = {}
    for p in procs:
        kids.setdefault(p.ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for p in kids.get(todo.pop(), []):
            out.append(p)
            todo.append(p.pid)
    return out


def of_test(tag: str) -> list[Proc]:
    """The processes a test started that still run: its tag, or children of this process that
    carry no fixture's tag (an earlier test's were killed at its end)."""
    procs = processes()
    mine = {p.pid: p for p in procs if p.owner == tag}
    by_pid = {p.pid: p for p in procs}
    for p in children_of(os.getpid(), procs):
        if not p.owner.startswith(run_tag() + ":") and not _under_fixture(p, by_pid, tag):
            mine.setdefault(p.pid, p)
    return list(mine.values())


def _under_fixture(p: Proc, by_pid: dict[int, Proc], tag: str) -> bool:
    """Whether ``p`` descends from a process a fixture started (its tag names another scope):
    Chromium's zygotes and renderers drop the environment they were started with, yet belong to
    the module's browser, not to the test that loaded a page."""
    parent = by_pid.get(p.ppid)
    while parent is not None:
        if parent.owner.startswith(run_tag() + ":") and parent.owner != tag:
            return True
        parent = by_pid.get(parent.ppid)
    return False


def of_run(basetemp: Path) -> list[Proc]:
    """Every process this run started that still runs: any of its tags, a child of this process,
    or the run's temp folder in its environment."""
    procs = processes()
    prefix, base = run_tag() + ":", str(basetemp)
    mine = {p.pid: p for p in procs if p.owner.startswith(prefix)}
    mine.update({p.pid: p for p in procs if any(base in e for e in p.environ)})
    mine.update({p.pid: p for p in children_of(os.getpid(), procs)})
    return list(mine.values())


def left_running(find: Callable[[], list[Proc]]) -> list[Proc]:
    """What ``find`` still lists after GRACE seconds (polled); those are killed."""
    deadline = time.monotonic() + GRACE
    while True:
        found = find()
        if not found or time.monotonic() >= deadline:
            break
        time.sleep(0.05)  # polling the process table: no event tells a stranger's exit
    for p in found:
        _kill(p.pid)
    return found


def _kill(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        for _ in range(40):
            if not _alive(pid):
                return
            time.sleep(0.05)  # the same: a stranger's exit has no event to wait on


def _alive(pid: int) -> bool:
    try:
        state = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    if state[state.rindex(")") + 2] in "ZX":
        try:  # our own child: reap it
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        return False
    return True


def report(what: str, procs: list[Proc]) -> str:
    return f"{what} left {len(procs)} process(es) running (killed now):\n" + "\n".join(
        f"  {p}" for p in procs
    )


def remove_folders(folders: list[Path]) -> list[Path]:
    """Remove the run's own folders outside its temp folder; those that are still there after."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return [f for f in folders if os.path.lexists(f)]
