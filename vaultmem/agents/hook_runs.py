"""Whether each agent's hooks run, read from the log every hook run writes (``hook_io.HookRun``:
a line when it starts, one when it ends): when they last ran, how long the agent waited (p50,
p95), what failed (an error, or killed: a start without an end), and an agent set up for the
vault whose hooks never ran (an untrusted Codex or Gemini folder), with the step that fixes it.
``vaultmem status`` and ``doctor`` show it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import environment
from .adapters import ADAPTERS
from .hook_io import RUNS_FILE, runs_path

if TYPE_CHECKING:  # pragma: no cover
    from ..doctor import Finding

KILLED_AFTER = 900  # seconds: a run with no end this old is dead even when its pid was reused


@dataclass
class Run:
    """One hook run: its start line joined with its end line (when there is one)."""

    id: str
    hook: str
    agent: str
    vault: str
    pid: int
    start: float
    detached: bool = False
    end: float | None = None
    outcome: str = ""  # ok, error, killed, running
    error: str = ""

    @property
    def seconds(self) -> float | None:
        return None if self.end is None else max(0.0, self.end - self.start)


@dataclass
class SetUp:
    """An agent whose hooks name this vault in one of its settings files."""

    agent: str
    path: str
    timeouts: dict[str, float] = field(default_factory=dict)  # vaultmem hook -> seconds declared


def read_runs(path: Path | None = None, now: float | None = None) -> list[Run]:
    """Every run in the log (and its rotated part), oldest first, each with its outcome."""
    path = path or runs_path()
    now = time.time() if now is None else now
    runs: dict[str, Run] = {}
    for part in (path.with_name(RUNS_FILE + ".1"), path):
        try:
            lines = part.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            _add(runs, line)
    for run in runs.values():
        if run.end is None:
            run.outcome = "running" if now - run.start < KILLED_AFTER and _alive(run.pid) else "killed"
    return sorted(runs.values(), key=lambda r: r.start)


def _add(runs: dict[str, Run], line: str) -> None:
    try:
        rec = json.loads(line)
    except ValueError:
        return
    if not isinstance(rec, dict) or not isinstance(rec.get("run"), str):
        return
    if "start" in rec:
        runs[rec["run"]] = Run(rec["run"], str(rec.get("hook") or ""), str(rec.get("agent") or ""),
                               str(rec.get("vault") or ""), int(rec.get("pid") or 0), float(rec["start"]),
                               bool(rec.get("detached")))  # fmt: skip
    elif rec["run"] in runs and "end" in rec:
        run = runs[rec["run"]]
        run.end, run.outcome, run.error = (
            float(rec["end"]),
            str(rec.get("outcome") or "ok"),
            str(rec.get("error") or ""),
        )
        run.agent = str(rec.get("agent") or run.agent)


def vault_path(ref: str) -> str:
    """The real path of a ``--vault`` value: a path, or a name in the user's registry."""
    if os.sep in ref or ref.startswith(("~", ".")):
        return os.path.realpath(os.path.expanduser(ref))
    from ..core.errors import VaultError
    from ..core.registry import Registry

    try:
        return os.path.realpath(Registry().resolve(ref))
    except VaultError:
        return os.path.realpath(ref)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


# ---------------------------------------------------------------------- which agents are set up


def hooks_files(home: Path, project: Path) -> list[tuple[str, Path]]:
    """(agent, file) of every settings file that may hold an agent's vaultmem hooks: the
    project's (and Claude Code's local one), the user's, and those ``setup --write`` recorded."""
    from .setups import default_paths, recorded_setups

    found: list[tuple[str, Path]] = []
    for agent in ADAPTERS:
        for user in (False, True):
            found.append((agent, default_paths(agent, home, project, user)[2]))
    found.append(("claude", project / ".claude" / "settings.json"))
    found += [(agent, Path(path)) for agent, path in recorded_setups()]
    return list(dict.fromkeys(found))


def set_up(root: Path, home: Path | None = None, project: Path | None = None) -> dict[str, SetUp]:
    """The agents whose hooks name the vault at ``root``, by agent (the first file found)."""
    home, project = home or environment.home(), project or Path.cwd()
    out: dict[str, SetUp] = {}
    for _agent, path in hooks_files(home, project):
        for agent, hook, timeout in _vaultmem_hooks(path, root):
            entry = out.setdefault(agent, SetUp(agent, str(path)))
            if timeout is not None:
                entry.timeouts.setdefault(hook, timeout)
    return out


def _vaultmem_hooks(path: Path, root: Path) -> list[tuple[str, str, float | None]]:
    """(agent, vaultmem hook, declared timeout in seconds) of the hooks in a settings file that
    run ``vaultmem hook ... --vault <root>``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    out = []
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            listed = group.get("hooks") if isinstance(group, dict) else None
            entries = listed if isinstance(listed, list) else [group]
            for entry in entries:
                found = _hook_of(entry, root)
                if found:
                    out.append(found)
    return out


def _hook_of(entry: Any, root: Path) -> tuple[str, str, float | None] | None:
    from .setups import hook_words

    words = hook_words(entry)
    if len(words) < 3 or Path(words[0]).name != "vaultmem" or words[1] != "hook":
        return None
    opts = {words[i]: words[i + 1] for i in range(3, len(words) - 1)}
    vault = opts.get("--vault")
    if not vault or vault_path(vault) != os.path.realpath(root):
        return None
    agent = opts.get("--agent", "claude")
    raw = entry.get("timeoutSec", entry.get("timeout"))
    scale = ADAPTERS[agent].timeout_scale if agent in ADAPTERS else 1
    seconds = float(raw) / scale if isinstance(raw, (int, float)) else None
    return agent, words[2], seconds


# ---------------------------------------------------------------------- the report


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def health(root: Path, runs: list[Run] | None = None, setups: dict[str, SetUp] | None = None,
           now: float | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Per agent set up for the vault (or whose hooks ran for it): ``last`` (epoch of the last
    run), ``runs``, ``p50``/``p95`` (seconds the agent waited), ``failures`` (hook, outcome,
    count, since, error, timeout) and ``never_ran`` with the ``step`` that fixes it."""
    now = time.time() if now is None else now
    runs = read_runs(now=now) if runs is None else runs
    setups = set_up(root) if setups is None else setups
    real = os.path.realpath(root)
    mine = [r for r in runs if r.vault and vault_path(r.vault) == real]
    out = []
    for agent in sorted(set(setups) | {r.agent for r in mine if r.agent in ADAPTERS}):
        theirs = [r for r in mine if r.agent == agent]
        waits = [r.seconds for r in theirs if not r.detached and r.seconds is not None]
        item: dict[str, Any] = {"agent": agent, "set_up": setups[agent].path if agent in setups else None,
                                "runs": len(theirs), "last": max((r.start for r in theirs), default=None),
                                "p50": percentile(waits, 0.5) if waits else None,
                                "p95": percentile(waits, 0.95) if waits else None,
                                "failures": _failures(agent, theirs, setups.get(agent)), "never_ran": not theirs}  # fmt: skip
        if not theirs:
            item["step"] = ADAPTERS[agent].trust_step
        out.append(item)
    return out


def _failures(agent: str, runs: list[Run], setup: SetUp | None) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, bool], list[Run]] = {}
    for r in runs:
        if r.outcome in ("error", "killed"):
            groups.setdefault((r.hook, r.outcome, r.detached), []).append(r)
    out = []
    for (hook, outcome, detached), rs in groups.items():
        declared = setup.timeouts.get(hook) if setup else None
        timeout = declared if declared is not None else ADAPTERS[agent].default_timeouts.get(hook)
        out.append({"hook": hook, "event": ADAPTERS[agent].events.get(hook, hook), "outcome": outcome,
                    "detached": detached, "count": len(rs), "since": rs[0].start, "error": rs[-1].error,
                    "timeout": timeout})  # fmt: skip
    return out


def _when(epoch: float, now: float) -> str:
    day = dt.datetime.fromtimestamp(epoch)
    if day.date() == dt.datetime.fromtimestamp(now).date():
        return "today"
    if now - epoch < 6 * 86400:
        return day.strftime("%A")
    return day.strftime("%Y-%m-%d")


def _ago(epoch: float, now: float) -> str:
    s = max(0, now - epoch)
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if s >= size:
            n = int(s // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def failure_line(agent: str, f: dict[str, Any], now: float) -> str:
    """ "SessionEnd hook of claude was killed 4 times since Monday: its timeout is 1.5 s"."""
    what = "the detached summary of the " if f["detached"] else ""
    verb = "was killed" if f["outcome"] == "killed" else "failed"
    line = f"{what}{f['event']} hook of {agent} {verb} {f['count']} time{'s' if f['count'] != 1 else ''} since {_when(f['since'], now)}"
    if f["outcome"] == "killed" and f["timeout"] is not None:
        from .setups import planned_timeout

        line += f": its timeout is {_ms(f['timeout'])}"
        if f["timeout"] < planned_timeout(agent, f["hook"]):
            line += f" (`vaultmem setup {agent} --write` declares {_ms(planned_timeout(agent, f['hook']))})"
    elif f["error"]:
        line += f": {f['error']}"
    return line[:1].upper() + line[1:]


def lines(root: Path, now: float | None = None, **kw: Any) -> list[str]:
    """The hooks' health as lines for ``vaultmem status``."""
    now = time.time() if now is None else now
    out = []
    for item in health(root, now=now, **kw):
        agent = item["agent"]
        if item["never_ran"]:
            out.append(f"hooks of {agent}: set up ({item['set_up']}) but never ran: {item['step']}")
            continue
        wait = (
            f"; the agent waited p50 {_ms(item['p50'])}, p95 {_ms(item['p95'])}"
            if item["p50"] is not None
            else ""
        )
        out.append(f"hooks of {agent}: last ran {_ago(item['last'], now)} ({item['runs']} runs){wait}")
        out += [f"  {failure_line(agent, f, now)}" for f in item["failures"]]
    return out


def findings(root: Path, now: float | None = None, **kw: Any) -> list[tuple[str, str, str]]:
    """(check, message, hint) of each problem, for ``vaultmem doctor``."""
    now = time.time() if now is None else now
    out = []
    for item in health(root, now=now, **kw):
        agent = item["agent"]
        if item["never_ran"]:
            out.append(("hook_never_ran", f"the hooks of {agent} ({item['set_up']}) never ran", item["step"]))
        for f in item["failures"]:
            hint = (f"run `vaultmem setup {agent} --write` again" if f["outcome"] == "killed"
                    else "run the hook by hand with the payload to see why")  # fmt: skip
            out.append((f"hook_{f['outcome']}", failure_line(agent, f, now), hint))
    return out


def doctor_findings(root: Path) -> list[Finding]:
    """The hooks' problems as the health report's findings (``doctor.Finding``)."""
    from ..doctor import Finding

    return [Finding(check, None, message, hint) for check, message, hint in findings(root)]


def doctor_report(session: Any, fix: bool = False) -> dict[str, Any]:
    """The health report (``doctor.Report.as_dict``) of an ``api.Session``'s vault: read where its
    index is (the ``doctor`` operation: the memory service, when it serves the vault, else this
    process; with ``fix``, the safe repairs first, in ``changes``), then the hooks' findings, read
    here (this user's home, hook log and project)."""
    from ..doctor import with_findings

    found = session.doctor(fix)
    changes = found.pop("changes", [])
    report = with_findings(found, doctor_findings(session.root))
    return {**report, "changes": changes} if fix else report
