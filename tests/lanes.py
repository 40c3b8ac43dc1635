"""The suite's lanes, and its check that a test names its lane truly (hooks called from conftest).

Every test is in one lane, by marker: ``agents_e2e`` (the real agent CLIs; opt-in), else
``model`` (loads the real embedding model, in this process or a child), else ``integration``
(starts processes: the CLI, a memory service, a browser), else ``unit`` (in process: no
Python subprocess, service, browser or shell; git, which vaultmem itself runs, is allowed; the
marker is added at collection). ``--lane unit,integration`` runs only those lanes. A unit test
that starts a process fails with the reason (an audit hook sees every process start), as a test
not marked ``model`` that loads the model does (conftest's ``_model_only_when_marked``).

With ``--durations=N`` the summary lists each lane's N slowest tests and its totals, wall and
CPU (this process and the children it waited for), instead of one list for all.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
from dataclasses import dataclass, field

import pytest

LANES = ("agents_e2e", "model", "integration", "unit")  # the first marker a test has is its lane
PROCESS_EVENTS = {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.system", "os.exec",
                  "os.spawn"}  # fmt: skip


def lane_of(item: pytest.Item) -> str:
    return next(lane for lane in LANES if lane == "unit" or item.get_closest_marker(lane))


# ---------------------------------------------------------------- which test starts processes


@dataclass
class Guard:
    """What the audit hook watches: the running test, whether it may start processes, and what
    it started (read by the leak check)."""

    test: str | None = None
    refuse: bool = False
    started: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    lane: str = "unit"
    lock: threading.Lock = field(default_factory=threading.Lock)


GUARD = Guard()


class StartsProcess(RuntimeError):
    """A unit-lane test tried to start a process."""


def _audit(event: str, args: tuple) -> None:
    if event not in PROCESS_EVENTS or GUARD.test is None or _library_lookup():
        return
    argv = _argv(event, args)
    what = f"{event} {argv}".strip()
    refuse = GUARD.refuse and not _git(argv)
    with GUARD.lock:
        GUARD.started.append(what)
        if refuse:
            GUARD.refused.append(what)
    if refuse:
        raise StartsProcess(f"{GUARD.test} starts a process ({what}): mark it @pytest.mark.integration")


def _library_lookup() -> bool:
    """ctypes.util.find_library runs ``ldconfig -p`` (watchdog's inotify binding, at import): a
    way of loading a library, not a process the test starts."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith(os.path.join("ctypes", "util.py")):
            return True
        frame = frame.f_back
    return False


def _git(argv: str) -> bool:
    """git is a quick tool vaultmem itself runs (every ``remember`` asks it for the branch): the
    unit lane may run it. What it may not start is Python (the CLI, a service), a browser, a shell."""
    return os.path.basename(argv.split(" ", 1)[0]) == "git"


def _argv(event: str, args: tuple) -> str:
    if event == "subprocess.Popen":
        argv = args[1]
    elif event in ("os.posix_spawn", "os.exec"):
        argv = args[1]
    elif event == "os.system":
        argv = args[0]
    else:
        return ""
    text = argv if isinstance(argv, str | bytes) else " ".join(map(str, argv or ()))
    return str(text)[:160]


def install_guard() -> None:
    sys.addaudithook(_audit)


RECORD = os.environ.get("VMTEST_LANES_RECORD")  # a file: list who starts processes instead of refusing


def begin(item: pytest.Item) -> None:
    """Called before a test's setup: watch it (and refuse processes in the unit lane)."""
    with GUARD.lock:
        GUARD.test, GUARD.lane = item.nodeid, lane_of(item)
        GUARD.refuse = GUARD.lane == "unit" and (not RECORD or bool(os.environ.get("VMTEST_LANES_REFUSE")))
        GUARD.started, GUARD.refused = [], []


def end() -> None:
    """Called after a test's teardown."""
    with GUARD.lock:
        python = [w for w in GUARD.started if not _git(w.split(" ", 1)[-1])]
        if RECORD and python:
            with open(RECORD, "a", encoding="utf-8") as f:
                f.write(f"{GUARD.lane}\t{GUARD.test}\t{' '.join(python[0].split())}\n")
        GUARD.test, GUARD.refuse = None, False


# ---------------------------------------------------------------- collection and selection


def addoption(parser: pytest.Parser) -> None:
    parser.addoption("--lane", default="", help=f"run only these lanes (comma-separated: {', '.join(LANES)})")


def configure(config: pytest.Config) -> None:
    # the lanes' durations replace pytest's one list (same option, same meaning of N)
    config.stash[_DURATIONS] = config.option.durations
    config.option.durations = None


FIRST = ("model", "agents_e2e", "integration", "unit")  # the order the lanes run in
MODEL_FIXTURES = {"real_model", "_shared_model"}  # conftest: the model loaded in the test process
AGENTS = "VAULTMEM_AGENTS_E2E"  # =1: run the real-agents lane too


def collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The unit marker on every test without another lane; ``--lane`` deselects the others; the
    real-agents lane (~6 minutes, ~1 GB of CLIs) is skipped unless asked for (``--lane
    agents_e2e``, ``-m agents_e2e`` or ``VAULTMEM_AGENTS_E2E=1``)."""
    wanted = {lane.strip() for lane in config.getoption("--lane").split(",") if lane.strip()}
    unknown = wanted - set(LANES)
    if unknown:
        raise pytest.UsageError(
            f"--lane: unknown lane(s) {', '.join(sorted(unknown))} (lanes: {', '.join(LANES)})"
        )
    agents = bool(os.environ.get(AGENTS) or "agents_e2e" in wanted
                  or "agents_e2e" in (config.getoption("markexpr") or ""))  # fmt: skip
    skip = pytest.mark.skip(reason=f"the real-agents lane: pytest -m agents_e2e (or {AGENTS}=1)")
    kept, dropped = [], []
    for item in items:
        lane = lane_of(item)
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("model"))  # one worker, one model load a run
        if lane == "unit":
            item.add_marker("unit")
        elif lane == "agents_e2e" and not agents:
            item.add_marker(skip)
        (kept if not wanted or lane in wanted else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # the slow lanes first, each in collection order: the workers end together on short unit tests
    # instead of one worker running a long test after the other has finished
    items[:] = sorted(kept, key=lambda item: FIRST.index(lane_of(item)))


# ---------------------------------------------------------------- the lanes' durations

_DURATIONS = pytest.StashKey[int | None]()
# lane: test: (wall, CPU, [(seconds, phase, CPU seconds)])
TIMES: dict[str, dict[str, tuple[float, float, list[tuple[float, str, float]]]]] = {}
_CPU = pytest.StashKey[float]()


def cpu_now() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def phase_started(item: pytest.Item) -> None:
    item.stash[_CPU] = cpu_now()


def phase_report(item: pytest.Item, report: pytest.TestReport) -> None:
    """Put the phase's CPU seconds on its report (it travels from an xdist worker)."""
    started = item.stash.get(_CPU, None)
    if started is not None:
        report.user_properties.append(("cpu", round(cpu_now() - started, 3)))
    report.user_properties.append(("lane", lane_of(item)))


def logreport(report: pytest.TestReport) -> None:
    props = dict(report.user_properties)
    lane, cpu = props.get("lane", "unit"), props.get("cpu", 0.0)
    times = TIMES.setdefault(lane, {})
    wall, used, phases = times.get(report.nodeid, (0.0, 0.0, []))
    phases.append((report.duration, report.when, float(cpu)))
    times[report.nodeid] = (wall + report.duration, used + float(cpu), phases)


def terminal_summary(terminalreporter, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    n = config.stash.get(_DURATIONS, None)
    if n is None:
        return
    tr = terminalreporter
    for lane in LANES:
        times = TIMES.get(lane)
        if not times:
            continue
        wall = sum(t[0] for t in times.values())
        cpu = sum(t[1] for t in times.values())
        tr.write_sep("=", f"lane {lane}: {len(times)} tests, {wall:.1f} s summed wall, {cpu:.1f} s CPU")
        rows = sorted(((d, when, cpu, nodeid) for nodeid, (_, _, phases) in times.items()
                       for d, when, cpu in phases), reverse=True)  # fmt: skip
        for d, when, cpu, nodeid in rows[: n or None]:
            if d < 0.005:
                break
            tr.write_line(f"{d:.2f}s {when:<8} (CPU {cpu:.2f}s) {nodeid}")
