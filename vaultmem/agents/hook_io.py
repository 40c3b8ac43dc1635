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

from .adapters import adapter_for

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every prompt)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

PROMPT_BUDGET = 400


def err(message: str) -> None:
    sys.stderr.write(f"vaultmem: {message}\n")


def hook_output(fn: Callable[[], dict[str, Any] | None]) -> int:
    """Run a hook and print its JSON response; an error is one line on stderr and exit code 1,
    never 2 (for Claude Code 2 means "block", which on UserPromptSubmit erases the prompt)."""
    from ..core.errors import VaultError

    try:
        out = fn()
    except VaultError as e:
        err(str(e))
        return 1
    except OSError as e:
        err(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
        return 1
    if out is not None:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


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
                                stderr=err_to, start_new_session=True, close_fds=True, text=True)  # fmt: skip
    finally:
        if err_to is not subprocess.DEVNULL:
            err_to.close()
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()


def prompt(vault: str | None, budget: int = PROMPT_BUDGET, agent: str | None = None) -> dict[str, Any] | None:
    """`vaultmem hook prompt`: recall through the memory service (or a vault's watcher). It never
    waits for a service to start: meanwhile it answers from keywords (``recall.keywords``), and says so."""

    def go(payload: dict[str, Any]) -> dict[str, Any] | None:
        from .. import api
        from ..memory.projects import scope_hits
        from .hooks import prompt_hook

        with api.Session(
            [vault] if vault else [], cwd=payload.get("cwd") or None, wait=False
        ) as session:  # its code branch scopes recall, its project what is shown (memory.projects)
            recall = lambda query, k: scope_hits(
                session.recall(query, explain=True, k=k, log=False), session.named, payload.get("cwd")
            )
            degraded = lambda: session.degraded
            log = lambda ids: session.log_shown(ids, "hook")
            return prompt_hook(session.root, payload, recall, budget, log=log, degraded=degraded)

    return adapted(agent, "prompt", go)
