"""The registry of coding agents (one line per agent; each agent is one module in ``kinds/``), and
which agent sent a payload (each agent's ``claims``). One adapter per coding agent: its hook payload read into the fields vaultmem's hooks use, and
their answer put in the shape that agent reads. The behaviours themselves (``hooks.py``) are
written once.

vaultmem's five hooks map onto each agent's events as follows (docs/agents.md has the sources and
the versions read):

============  ================  ============  ================  ====================  ====================
vaultmem      Claude Code       Gemini CLI    Codex CLI         Cursor                Copilot CLI
============  ================  ============  ================  ====================  ====================
start         SessionStart      SessionStart  SessionStart      sessionStart          sessionStart
prompt        UserPromptSubmit  BeforeAgent   UserPromptSubmit  beforeSubmitPrompt    userPromptSubmitted
stop          Stop              AfterAgent    Stop              stop                  agentStop
pre-compact   PreCompact        PreCompress   PreCompact        preCompact            preCompact
end           SessionEnd        SessionEnd    SessionEnd        sessionEnd            sessionEnd
============  ================  ============  ================  ====================  ====================

A normalised payload is a dict with Claude Code's field names (``session_id``,
``transcript_path``, ``cwd``, ``prompt``, ``source``, ``stop_hook_active``, ``trigger``), every
value a string, a bool or None whatever the agent sent, plus ``agent`` (the adapter's name: the
session state is keyed by it), ``agent_label`` (the ``source`` written on notes) and
``transcript_format`` (which reader ``transcript.read_events`` uses). Hook results come in
Claude Code's shape (``hookSpecificOutput.additionalContext``, ``decision``/``reason``) and each
adapter reshapes them; Codex refuses any key it does not know, so each shape holds only the
agent's own keys. Light: imported by the ``hook prompt`` fast path.
"""

from __future__ import annotations

from ..core import environment
from ..core.errors import BadInput
from .kinds.base import HOOKS, Adapter, text_or_none
from .kinds.claude import Claude
from .kinds.codex import Codex
from .kinds.copilot import Copilot
from .kinds.cursor import Cursor
from .kinds.gemini import Gemini

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping
    from typing import Any

__all__ = ["ADAPTERS", "HOOKS", "Adapter", "adapter_for", "detect", "session_source", "text_or_none"]

# one line per agent, in the order ``detect`` asks them (Claude Code, the baseline, last)
REGISTRY: tuple[Adapter, ...] = (
    Cursor(),
    Copilot(),
    Gemini(),
    Codex(),
    Claude(),
)
ADAPTERS: dict[str, Adapter] = {
    a.name: a for a in (REGISTRY[-1], *REGISTRY[:-1])
}  # by name, Claude Code first


def session_source(agent: str, session_id: str) -> str:
    """The ``source`` of a session of ``agent`` (an adapter's name or label, e.g. ``codex`` or
    ``claude-code``); another tool's sessions (chat exports): ``<agent>-<whole id>``."""
    by_label = {a.label: a for a in ADAPTERS.values()}
    adapter = ADAPTERS.get(agent) or by_label.get(agent)
    return adapter.source(session_id) if adapter else f"{agent}-{session_id}"


def detect(raw: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """The agent that sent a payload, from its fields (and the hook's environment): Claude Code
    unless another agent's marks are there."""
    env = environment.declared() if env is None else env
    event = raw.get("hook_event_name")
    path = str(raw.get("transcript_path") or raw.get("transcriptPath") or "")
    for adapter in REGISTRY:
        if adapter.claims(raw, env, event, path):
            return adapter.name
    if isinstance(
        raw.get("timestamp"), str
    ):  # Claude Code and Codex send none; Gemini always a transcript_path
        return "gemini" if "transcript_path" in raw else "copilot"
    return "claude"


def adapter_for(agent: str | None, raw: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Adapter:
    """The adapter of ``--agent`` (else detected). ``--agent claude`` still looks at the payload:
    Cursor and Copilot CLI also run the hooks of ``.claude/settings.json``, with their own
    payloads, and must be answered in their own shape."""
    if agent is not None and agent not in ADAPTERS:
        raise BadInput(f"unknown agent {agent!r}; choose one of {', '.join(ADAPTERS)}")
    if agent is None or agent == "claude":
        return ADAPTERS[detect(raw, env)]
    return ADAPTERS[agent]
