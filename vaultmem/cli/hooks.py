"""CLI commands for agent hooks (`vaultmem hook ...`) and `vaultmem confirm`, registered on the app.

Each hook reads the agent's JSON payload on stdin and prints the agent's JSON response (or
nothing), both through the agent's adapter (``--agent``, else detected from the payload; see
``agents/adapters.py``). A failing hook exits 1 with one line on stderr, never 2: for Claude
Code exit code 2 means "block", which on UserPromptSubmit would erase the user's prompt (for
Gemini CLI it blocks too). Which vault, and recall through the running watcher or in this
process, is ``api.Session``'s job. ``prompt``, ``start``, ``stop`` and ``end`` run in
``agents/hook_io.py``, which the console entry calls without typer (``cli/main.py``); these
commands are their --help and the path for anything that parser does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from .. import api
from ..agents import hook_io
from ..agents.hook_io import PROMPT_BUDGET, adapted, begin, hook_output, prompt
from ..core.fence import printable
from .common import APP_SETTINGS, JsonOpt, VaultOpt, app, echo_json

hook_app = typer.Typer(
    help="Agent hooks (Claude Code, Gemini CLI, Codex CLI, Cursor, Copilot CLI): read the hook's JSON on stdin, "
    "print the agent's JSON (`vaultmem setup AGENT --write` sets them up).\n\n"
    'Example: echo \'{"prompt": "how do we deploy?"}\' | vaultmem hook prompt --agent claude',
    **APP_SETTINGS,
)
app.add_typer(hook_app, name="hook")

BudgetOpt = Annotated[int, typer.Option(help="Token budget of the context added (1 token ~ 4 characters).")]
AnchorOpt = Annotated[
    str | None,
    typer.Option(
        help="Anchor note (default: $VAULTMEM_ANCHOR, else the project note named like the project folder)."
    ),
]
HookAgentOpt = Annotated[
    str | None,
    typer.Option(
        "--agent",
        help="The agent running the hook: claude, gemini, codex, cursor or copilot (default: told by the payload).",
    ),
]


def _run(hook: str, agent: str | None, vault: str | None, fn: Callable[[], dict[str, Any] | None]) -> None:
    """Run a hook and print its JSON response; errors exit 1 (see hook_io.hook_output). Its
    start and end are recorded (``hook_io.HookRun``: what `status` and `doctor` report)."""
    code = hook_output(fn, begin(hook, agent, vault))
    if code:
        raise typer.Exit(code)


def _anchor(anchor: str | None) -> str | None:
    return hook_io.anchor_of(anchor)


@hook_app.command("prompt")
def hook_prompt(
    vault: VaultOpt = None, budget: BudgetOpt = PROMPT_BUDGET, agent: HookAgentOpt = None
) -> None:
    """UserPromptSubmit (Gemini: BeforeAgent, Cursor: beforeSubmitPrompt, Copilot:
    userPromptSubmitted): print the few memories relevant to the prompt (as the agent's
    additional context), nothing below the relevance floor, nothing this session was already shown.

    Example (stdin from Claude Code): vaultmem hook prompt --vault ~/memory --budget 400
    """
    _run("prompt", agent, vault, lambda: prompt(vault, budget, agent))


@hook_app.command("start")
def hook_start(vault: VaultOpt = None, anchor: AnchorOpt = None, budget: BudgetOpt = 2000,
               agent: HookAgentOpt = None) -> None:  # fmt: skip
    """SessionStart (Cursor, Copilot: sessionStart): the wake [MEMORY] block as the agent's
    additional context (replaces a bare `wake` hook).

    Example (stdin from Gemini CLI): vaultmem hook start --agent gemini --vault ~/memory
    """

    _run("start", agent, vault, lambda: hook_io.start(vault, anchor, budget, agent))


@hook_app.command("stop")
def hook_stop(vault: VaultOpt = None, agent: HookAgentOpt = None) -> None:
    """Stop (Gemini: AfterAgent, Cursor: stop, Copilot: agentStop): once per session, when the
    transcript shows work and no memory saved since, ask the agent to save what is worth keeping
    (decision: block; Cursor: a followup_message). Never loops (stop_hook_active, loop_count).

    Example (stdin from Claude Code): vaultmem hook stop --vault ~/memory
    """

    _run("stop", agent, vault, lambda: hook_io.stop(vault, agent))


@hook_app.command("pre-compact")
def hook_pre_compact(vault: VaultOpt = None, anchor: AnchorOpt = None, agent: HookAgentOpt = None) -> None:
    """PreCompact (Gemini: PreCompress, Cursor, Copilot: preCompact): a checkpoint of the
    session so far in its handoff note (prints nothing).

    Example (stdin from Claude Code): vaultmem hook pre-compact --vault ~/memory
    """

    def go(payload: dict[str, Any]) -> None:
        from ..agents.adapters import ADAPTERS

        if not ADAPTERS[payload["agent"]].compacting(payload):
            return None  # Gemini's PreCompress before every model call: nothing is compacted
        with hook_io.hook_session(vault, payload) as session:
            session.hook("hook_precompact", payload, _anchor(anchor))
        return None

    _run("pre-compact", agent, vault, lambda: adapted(agent, "pre-compact", go))


@hook_app.command("end")
def hook_end(vault: VaultOpt = None, anchor: AnchorOpt = None, as_json: JsonOpt = False, agent: HookAgentOpt = None,
             wait: Annotated[bool, typer.Option("--wait", help="Write the summary before returning (the default for Claude Code; the other agents give this hook a second or two, or do not wait, so it is written by a detached process).")] = False) -> None:  # fmt: skip
    """SessionEnd: a session summary from the transcript (requests, files changed, failed
    commands and their fixes, memories saved and recalled) and each rule the user stated as a
    candidate memory. Prints nothing unless --json.

    Example (stdin from Claude Code): vaultmem hook end --vault ~/memory
    """

    _run("end", agent, vault, lambda: hook_io.end(vault, anchor, as_json, agent, wait))


@app.command()
def confirm(
    ref: Annotated[
        str, typer.Argument(help="Id, title or path of a candidate or unconfirmed synced memory.")
    ],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Confirm a candidate memory (a rule captured from a session): it becomes active and
    recall stops ranking it low. Editing its `status:` to active does the same. A note a
    teammate or a sync brought (shown "unconfirmed") is vouched for: it counts as yours.

    Example: vaultmem confirm k7f3x9q2
    """
    with api.Session([vault] if vault else []) as session:
        result = session.confirm(ref)
    if as_json:
        echo_json(result)
    else:
        typer.echo(printable(f"confirmed {result['id']}  {result['title']}"))
        if result.get("changed"):
            typer.echo(f"undo: vaultmem edit {result['id']} --set status=candidate")
