"""Running an agent hook without typer: the payload from stdin, read by the agent's adapter
(``adapters.py``), the JSON response on stdout in that agent's shape, errors as one line on
stderr and exit code 1. Shared by ``cli/hooks.py`` (the typer commands) and ``cli/main.py``
(the typer-free entry for ``hook prompt``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..core import environment
from .adapters import adapter_for

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every prompt)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

PROMPT_BUDGET = 400
ANSWER_SECONDS = 10.0  # the longest a hook waits for the memory service (setup declares 30 s): then silent
CURRENT: HookRun | None = None  # this process's hook run (one a process)


def begin(hook: str, agent: str | None, vault: str | None) -> HookRun:
    """Record that ``hook`` starts (``agent``: ``--agent``; the payload may tell another)."""
    global CURRENT
    CURRENT = HookRun(hook, agent, vault)
    return CURRENT


def err(message: str) -> None:
    sys.stderr.write(f"vaultmem: {message}\n")


def hook_output(fn: Callable[[], dict[str, Any] | None], run: HookRun | None = None) -> int:
    """Run a hook and print its JSON response; an error is one line on stderr and exit code 1,
    never 2 (for Claude Code 2 means "block", which on UserPromptSubmit erases the prompt).
    ``run``: the hook run's record, ended here (ok or error)."""
    from ..core.errors import VaultError, os_message

    try:
        out = fn()
    except VaultError as e:
        return _failed(str(e), run)
    except OSError as e:
        return _failed(os_message(e), run)
    if out is not None:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    if run is not None:
        run.end("ok")
    return 0


def _failed(message: str, run: HookRun | None) -> int:
    err(message)
    if run is not None:
        run.end("error", message)
    return 1


# ---------------------------------------------------------------------- hook runs

RUNS_FILE = "hook-runs.jsonl"
RUNS_MAX = 1 << 20  # moved to hook-runs.jsonl.1 when larger
DETACHED_ENV = environment.VAULTMEM_HOOK_DETACHED  # set for the detached `hook end` a hook started


def runs_path() -> Path:
    """The user's log of hook runs (``$XDG_STATE_HOME/vaultmem/hook-runs.jsonl``)."""
    from ..service.control import state_dir

    return state_dir() / RUNS_FILE


def _append(record: dict[str, Any]) -> None:
    """One line appended (one write, O_APPEND); a log that cannot be written costs the hook nothing."""
    try:
        path = runs_path()
        try:
            if path.stat().st_size > RUNS_MAX and "end" not in record:
                os.replace(path, path.with_name(RUNS_FILE + ".1"))
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass


class HookRun:
    """One run of a hook: a line when it starts, one when it ends (ok or error); a start
    without an end is a run the agent killed. ``agents/hook_runs.py`` reads them. How long it
    took is measured on a monotonic clock inside the hook, from this process's own start
    (Python's start-up included): ``seconds`` on the end line."""

    def __init__(self, hook: str, agent: str | None, vault: str | None) -> None:
        import time

        self.id = f"{os.getpid()}-{time.time_ns()}"
        self.agent = agent
        self.ended = False
        self.clock = time.monotonic()
        self.age = _process_age()  # seconds this process ran before this line (0 where unknown)
        _append({"run": self.id, "hook": hook, "agent": agent or "", "pid": os.getpid(),
                 "start": round(time.time() - self.age, 3), "vault": _vault_ref(vault),
                 "detached": DETACHED_ENV.get()})  # fmt: skip

    def end(self, outcome: str, error: str = "") -> None:
        import time

        if self.ended:
            return
        self.ended = True
        seconds = self.age + time.monotonic() - self.clock
        record = {"run": self.id, "end": round(time.time(), 3), "seconds": round(seconds, 4), "outcome": outcome,
                  "agent": self.agent or ""}  # fmt: skip
        _append({**record, "error": error[:300]} if error else record)


def _vault_ref(vault: str | None) -> str:
    """``--vault`` as recorded: a path made absolute, a registered name as it is."""
    if not vault:
        return ""
    looks_like_path = os.sep in vault or vault.startswith(("~", ".")) or os.path.isdir(vault)
    return os.path.abspath(os.path.expanduser(vault)) if looks_like_path else vault


def _process_age() -> float:
    """How long ago this process started, on the boot clock (Linux: its start in clock ticks
    since boot, from /proc, against CLOCK_BOOTTIME; /proc/stat's boot time is in whole seconds,
    up to a second off); 0 where it cannot be told."""
    import time

    try:
        with open("/proc/self/stat", "rb") as f:
            ticks = int(f.read().rsplit(b")", 1)[1].split()[19])
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


MAX_PAYLOAD = 1 << 20


def read_payload() -> dict[str, Any]:
    """The hook's JSON object from stdin, read up to one character past the limit (so a larger
    payload is refused as too large, not cut into "not JSON")."""
    from .hooks import parse_payload

    return parse_payload(sys.stdin.read(MAX_PAYLOAD + 1), MAX_PAYLOAD)


def adapted(agent: str | None, hook: str, go: Callable[[dict[str, Any]], dict[str, Any] | None],
            raw: dict[str, Any] | None = None) -> dict[str, Any] | None:  # fmt: skip
    """Run one hook behaviour (``go``, on the normalised payload, answering in Claude Code's
    shape) for the agent of ``--agent`` (else detected) and answer in that agent's shape."""
    raw = read_payload() if raw is None else raw
    adapter = adapter_for(agent, raw)
    if CURRENT is not None:
        CURRENT.agent = adapter.name  # the agent the payload told (`--agent claude` may be Cursor's)
    payload = adapter.payload(raw)
    return adapter.output(hook, go(payload), payload)


def self_command() -> list[str]:
    """The command that runs this same vaultmem program again: ``python -m vaultmem`` with this
    Python (for the console script too, whatever wraps it), or the Python script that called
    the console entry (a test's wrapper)."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0.endswith(".py") and not argv0.endswith("__main__.py") and os.path.isfile(argv0):
        return [sys.executable, argv0]
    return [sys.executable, "-m", "vaultmem"]


def detach(args: list[str], stdin: str, log: Path | None) -> None:
    """Run ``vaultmem ARGS`` with ``stdin`` in its own session and return at once (an agent
    that gives its session-end hook a second or two, or does not wait at all, must not cut the
    summary short). Its errors go to ``log`` (when given)."""
    import subprocess  # here, not at the top: the prompt hook's fast path never detaches

    err_to: Any = subprocess.DEVNULL
    if log is not None:
        try:
            mode = "w" if log.exists() and log.stat().st_size > 64 << 10 else "a"
            err_to = log.open(mode, encoding="utf-8")
        except OSError:
            err_to = subprocess.DEVNULL
    try:
        proc = subprocess.Popen([*self_command(), *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=err_to, start_new_session=True, close_fds=True, text=True,
                                env=environment.for_child({DETACHED_ENV.name: "1"}))  # fmt: skip
    finally:
        if err_to is not subprocess.DEVNULL:
            err_to.close()
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()


def prompt(
    vault: str | None = None, budget: int = PROMPT_BUDGET, agent: str | None = None
) -> dict[str, Any] | None:
    """`vaultmem hook prompt`: recall through the memory service. It never waits for a service to
    start: meanwhile it answers from keywords (``recall.keywords``), and says so. Its code branch
    and its project (``memory.projects``) filter the hits where the index is, before the top k."""

    def go(payload: dict[str, Any]) -> dict[str, Any] | None:
        from .hooks import prompt_hook

        with hook_session(vault, payload) as session:
            recall = lambda query, k: session.recall(
                query, explain=True, k=k, log=False, project=payload.get("cwd") or None
            )
            degraded = lambda: session.degraded
            log = lambda ids: _logged(lambda: session.log_shown(ids, "hook"))
            return silent_if_late(lambda: prompt_hook(session.root, payload, recall, budget, log=log,
                                                      degraded=degraded))  # fmt: skip

    return adapted(agent, "prompt", go)


def _logged(log: Callable[[], None]) -> None:
    """Log what the prompt hook showed, when it can be: a read-only vault or a full disk costs
    the log, never the answer."""
    import sqlite3

    from ..core.errors import VaultError

    try:
        log()
    except (VaultError, OSError, sqlite3.Error):
        pass


def silent_if_late(answer: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
    """A hook's answer, or nothing when the memory service did not answer in ANSWER_SECONDS
    (a vault it is indexing, a loaded machine): the agent goes on, never kills the hook; the
    hook run's record says so."""
    from ..service.client import NoAnswer

    try:
        return answer()
    except NoAnswer as e:
        if CURRENT is not None:
            CURRENT.end("late", str(e))
        return None


def anchor_of(anchor: str | None) -> str | None:
    """``--anchor``, else $VAULTMEM_ANCHOR."""
    return anchor or environment.VAULTMEM_ANCHOR.get()


def hook_session(vault: str | None, payload: dict[str, Any]) -> Any:
    """The hook's session; the payload's ``cwd`` (the agent's working directory) decides the
    code branch scope of what it shows and writes. A hook never waits for the memory service to
    start (it starts it, and works in its own process meanwhile); what the hooks run on an open
    vault (``hooks.TASKS``) runs in this process then."""
    from .. import api
    from .hooks import TASKS  # the prompt hook has loaded it already

    return api.Session([vault] if vault else [], cwd=payload.get("cwd") or None, wait=False, tasks=TASKS,
                       timeout=ANSWER_SECONDS)  # fmt: skip


def start(vault: str | None = None, anchor: str | None = None, budget: int = 2000,
          agent: str | None = None) -> dict[str, Any] | None:  # fmt: skip
    """`vaultmem hook start`: the wake block, where the index is (the memory service, started
    now if none runs so it is warm by the first prompt; meanwhile this process)."""

    def go(payload: dict[str, Any]) -> dict[str, Any] | None:
        with hook_session(vault, payload) as session:
            return silent_if_late(
                lambda: session.hook("hook_start", payload, anchor_of(anchor), budget=budget)
            )

    return adapted(agent, "start", go)


def stop(vault: str | None = None, agent: str | None = None) -> dict[str, Any] | None:
    """`vaultmem hook stop`: ask once to save (reads the transcript; needs no index)."""

    def go(payload: dict[str, Any]) -> dict[str, Any] | None:
        from .. import api
        from .hooks import stop_hook

        return stop_hook(api.vault_root(vault), payload)

    return adapted(agent, "stop", go)


def end(vault: str | None = None, anchor: str | None = None, as_json: bool = False, agent: str | None = None,
        wait: bool = False) -> dict[str, Any] | None:  # fmt: skip
    """`vaultmem hook end`: the session summary and candidates, written where the index is (the
    memory service while it runs, else this process); for an agent that does not wait for it
    (``Adapter.detach_end``), by a detached process unless ``wait`` or ``as_json``."""
    from .hooks import parse_payload

    text = sys.stdin.read(MAX_PAYLOAD + 1)
    raw = parse_payload(text, MAX_PAYLOAD)
    adapter = adapter_for(agent, raw)
    if CURRENT is not None:
        CURRENT.agent = adapter.name
    if adapter.detach_end and not (wait or as_json):
        detach(end_args(vault, anchor, adapter.name), text, end_log(vault))
        return None

    def go(payload: dict[str, Any]) -> dict[str, Any] | None:
        with hook_session(vault, payload) as session:
            result = session.hook("hook_end", payload, anchor_of(anchor), start=False)
        return result if as_json else None

    return adapted(adapter.name, "end", go, raw)


def end_args(vault: str | None, anchor: str | None, agent: str) -> list[str]:
    """`hook end` as the detached process runs it: the same vault and anchor, and --wait."""
    args = ["hook", "end", "--agent", agent, "--wait"]
    return args + (["--vault", vault] if vault else []) + (["--anchor", anchor] if anchor else [])


def end_log(vault: str | None) -> Path | None:
    """Where a detached `hook end` writes its errors: ``<vault>/.vaultmem/hook-end.log`` (a
    missing vault is an error here, before detaching)."""
    from .. import api
    from ..core.discovery import STATE_DIR

    folder = api.vault_root(vault) / STATE_DIR
    return folder / "hook-end.log" if folder.is_dir() else None


HOOKS: dict[str, Callable[..., dict[str, Any] | None]] = {"prompt": prompt, "start": start, "stop": stop,
                                                          "end": end}  # fmt: skip
