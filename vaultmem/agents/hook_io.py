"""Running an agent hook without typer: the payload from stdin, the JSON response on stdout,
errors as one line on stderr and exit code 1. Shared by ``cli_hooks.py`` (the typer commands)
and ``cli_fast.py`` (the typer-free entry for ``hook prompt``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

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


def read_payload() -> dict[str, Any]:
    from .hooks import parse_payload

    return parse_payload(sys.stdin.read(1 << 20))


def log_shown(root: Path) -> Callable[[list[str]], None]:
    """Log the memories a prompt hook showed as retrieved (the durable usage store)."""

    def log(ids: list[str]) -> None:
        from ..index.usage import UsageStore

        store = UsageStore.of(root)
        try:
            store.log_retrievals(ids, "hook")
        finally:
            store.close()

    return log


def prompt(vault: str | None, budget: int = PROMPT_BUDGET) -> dict[str, Any] | None:
    """`vaultmem hook prompt`: recall through the running watcher (else in this process)."""
    from .. import api
    from .hooks import prompt_hook

    payload = read_payload()
    with api.Session([vault] if vault else [], cwd=payload.get("cwd") or None) as session:  # its code branch scopes recall
        recall = lambda query, k: session.recall(query, explain=True, k=k, log=False)  # noqa: E731
        return prompt_hook(session.root, payload, recall, budget, log=log_shown(session.root))


