"""CLI commands for agent hooks (`vaultmem hook ...`) and `vaultmem confirm`, registered on the app.

Each hook reads the agent's JSON payload on stdin and prints the agent's JSON response (or
nothing). A failing hook exits 1 with one line on stderr, never 2: for Claude Code exit code 2
means "block", which on UserPromptSubmit would erase the user's prompt. Which vault, and
recall through the running watcher or in this process, is ``api.Session``'s job.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Optional

import typer

from .. import api
from ..agents.hook_io import PROMPT_BUDGET, hook_output, prompt, read_payload
from .common import APP_SETTINGS, JsonOpt, VaultOpt, app, echo_json

hook_app = typer.Typer(
    help="Agent hooks (Claude Code's hook events): read the hook's JSON on stdin, print the agent's JSON.",
    **APP_SETTINGS,
)
app.add_typer(hook_app, name="hook")

BudgetOpt = Annotated[int, typer.Option(help="Token budget of the context added (1 token ~ 4 characters).")]
AnchorOpt = Annotated[Optional[str], typer.Option(help="Anchor note (default: $VAULTMEM_ANCHOR, else the project note named like the project folder).")]


def _payload() -> dict[str, Any]:
    return read_payload()


def _run(fn: Callable[[], dict[str, Any] | None]) -> None:
    """Run a hook and print its JSON response; errors exit 1 (see hook_io.hook_output)."""
    code = hook_output(fn)
    if code:
        raise typer.Exit(code)


def _anchor(anchor: str | None) -> str | None:
    import os

    return anchor or os.environ.get("VAULTMEM_ANCHOR") or None


def _session(vault: str | None, payload: dict[str, Any] | None = None) -> api.Session:
    """The hook's session; the payload's ``cwd`` (the agent's working directory) decides the
    code branch scope of what it shows and writes."""
    return api.Session([vault] if vault else [], cwd=(payload or {}).get("cwd") or None)


@hook_app.command("prompt")
def hook_prompt(vault: VaultOpt = None, budget: BudgetOpt = PROMPT_BUDGET) -> None:
    """UserPromptSubmit: print the few memories relevant to the prompt (as additionalContext),
    nothing below the relevance floor, nothing this session was already shown.

    Example (stdin from Claude Code): vaultmem hook prompt --vault ~/memory --budget 400
    """
    _run(lambda: prompt(vault, budget))


@hook_app.command("start")
def hook_start(vault: VaultOpt = None, anchor: AnchorOpt = None, budget: BudgetOpt = 2000) -> None:
    """SessionStart: the wake [MEMORY] block as additionalContext (replaces a bare `wake` hook).

    Example (stdin from Claude Code): vaultmem hook start --vault ~/memory
    """

    def go() -> dict[str, Any] | None:
        from ..agents.hooks import start_hook

        payload = _payload()
        with _session(vault, payload) as session:
            return start_hook(session.fresh(), payload, _anchor(anchor), budget, shown=session.shown())

    _run(go)


@hook_app.command("stop")
def hook_stop(vault: VaultOpt = None) -> None:
    """Stop: once per session, when the transcript shows work and no memory saved since, ask
    the agent to save what is worth keeping (decision: block). Never loops (stop_hook_active).

    Example (stdin from Claude Code): vaultmem hook stop --vault ~/memory
    """

    def go() -> dict[str, Any] | None:
        from ..agents.hooks import stop_hook

        payload = _payload()
        return stop_hook(api.vault_root(vault), payload)

    _run(go)


@hook_app.command("pre-compact")
def hook_pre_compact(vault: VaultOpt = None, anchor: AnchorOpt = None) -> None:
    """PreCompact: a checkpoint of the session so far in its handoff note (prints nothing).

    Example (stdin from Claude Code): vaultmem hook pre-compact --vault ~/memory
    """

    def go() -> None:
        from ..agents.hooks import precompact_hook

        payload = _payload()
        with _session(vault, payload) as session:
            fresh = session.fresh()
            precompact_hook(fresh, payload, _anchor(anchor), scope=session.write_scope(fresh))
        return None

    _run(go)


@hook_app.command("end")
def hook_end(vault: VaultOpt = None, anchor: AnchorOpt = None, as_json: JsonOpt = False) -> None:
    """SessionEnd: a session summary from the transcript (requests, files changed, failed
    commands and their fixes, memories saved and recalled) and each rule the user stated as a
    candidate memory. Prints nothing unless --json.

    Example (stdin from Claude Code): vaultmem hook end --vault ~/memory
    """

    def go() -> dict[str, Any] | None:
        from ..agents.hooks import end_hook

        payload = _payload()
        with _session(vault, payload) as session:
            fresh = session.fresh()
            result = end_hook(fresh, payload, _anchor(anchor), scope=session.write_scope(fresh))
        return result if as_json else None

    _run(go)


@app.command()
def confirm(
    ref: Annotated[str, typer.Argument(help="Id, title or path of a candidate memory.")],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Confirm a candidate memory (a rule captured from a session): it becomes active and
    recall stops ranking it low. Editing its `status:` to active does the same.

    Example: vaultmem confirm k7f3x9q2
    """
    with _session(vault) as session:
        result = session.vault.confirm(ref)
    if as_json:
        echo_json(result)
    else:
        typer.echo(f"confirmed {result['id']}  {result['title']}")
