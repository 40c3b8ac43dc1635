"""One adapter per coding agent: its hook payload read into the fields vaultmem's hooks use, and
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

import os
import re
from pathlib import Path

from ..core.errors import BadInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping
    from typing import Any, ClassVar

HOOKS = ("start", "prompt", "stop", "pre-compact", "end")
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # a session id that may name a folder


def text_or_none(value: Any) -> str | None:
    """A payload field as a string (numbers too), None for anything else (objects, lists, null)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


class Adapter:
    """Claude Code's hooks (the baseline the others are written against)."""

    name = "claude"
    label = "claude-code"
    title = "Claude Code"
    transcript = "claude"
    events: ClassVar[dict[str, str]] = {"start": "SessionStart", "prompt": "UserPromptSubmit", "stop": "Stop",
              "pre-compact": "PreCompact", "end": "SessionEnd"}  # fmt: skip
    detach_end = False  # Claude Code waits for SessionEnd hooks (setup declares a timeout: 1.5 s without one)
    whole_id = False  # the ``source`` names a session by 8 characters of its id (random: unique enough)

    # ------------------------------------------------------------------ sessions

    def source(self, session_id: str) -> str:
        """The ``source`` written on a session's notes, the one rule hooks and importers share:
        the agent's label and its session id (8 characters, or all of it where ids are
        time-ordered and 8 characters name every session of a minute)."""
        return f"{self.label}-{session_id if self.whole_id else session_id[:8]}"

    def compacting(self, payload: Mapping[str, Any]) -> bool:
        """Whether a pre-compact event means the context is being compacted (a checkpoint is due)."""
        return True

    # ------------------------------------------------------------------ reading

    def payload(self, raw: Mapping[str, Any], env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The normalised payload (see the module's docstring)."""
        out = {
            "session_id": text_or_none(raw.get("session_id")),
            "transcript_path": text_or_none(raw.get("transcript_path")),
            "cwd": text_or_none(raw.get("cwd")),
            "prompt": text_or_none(raw.get("prompt")),
            "source": text_or_none(raw.get("source")),
            "stop_hook_active": raw.get("stop_hook_active") is True,
            "trigger": text_or_none(raw.get("trigger")),
            "hook_event_name": text_or_none(raw.get("hook_event_name")),
        }
        out.update(self.extra(raw, env if env is not None else os.environ))
        out.update({"agent": self.name, "agent_label": self.label, "transcript_format": self.transcript})
        return out

    def extra(self, raw: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
        """The agent's own fields, in the normalised names (none for Claude Code)."""
        return {}

    # ------------------------------------------------------------------ answering

    def output(
        self, hook: str, result: dict[str, Any] | None, payload: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """A hook's result (Claude Code's shape) in this agent's shape; None prints nothing."""
        if result is None:
            return None
        if hook in ("start", "prompt"):
            return self.context(hook, result["hookSpecificOutput"]["additionalContext"], payload)
        if hook == "stop":
            return self.block(result["reason"])
        return result  # `hook end --json`: what it wrote, asked for by hand

    def context(self, hook: str, text: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": self.events[hook], "additionalContext": text}}

    def block(self, reason: str) -> dict[str, Any]:
        """Stop: ask for one more turn, with ``reason`` as what the agent is told."""
        return {"decision": "block", "reason": reason}


class Codex(Adapter):
    """Codex CLI: Claude Code's event names and output shapes, and nothing else (its output
    structs deny unknown fields); the transcript is a rollout. SessionEnd hooks get 1 s (3 s at
    most), so the summary is written by a detached process."""

    name, label, title, transcript = "codex", "codex", "Codex CLI", "codex"
    detach_end = True
    whole_id = True  # UUIDv7: the first 8 hex digits change only every ~65 s


class Gemini(Adapter):
    """Gemini CLI: ``BeforeAgent`` for the prompt, ``AfterAgent`` for stop (its ``reason`` is
    sent back as a new prompt), ``PreCompress``; the CLI does not wait for ``SessionEnd``."""

    name, label, title, transcript = "gemini", "gemini-cli", "Gemini CLI", "gemini"
    events: ClassVar[dict[str, str]] = {"start": "SessionStart", "prompt": "BeforeAgent", "stop": "AfterAgent",
              "pre-compact": "PreCompress", "end": "SessionEnd"}  # fmt: skip
    detach_end = True

    def compacting(self, payload: Mapping[str, Any]) -> bool:
        """Gemini fires ``PreCompress`` before every model call, before it checks whether the
        history needs compressing: only ``trigger: manual`` (``/compress``) is a compaction."""
        return payload.get("trigger") == "manual"


class Cursor(Adapter):
    """Cursor: camelCase events, snake_case ``additional_context``; the session is the
    ``conversation_id``, the project the first workspace root; stop answers with a
    ``followup_message`` (sent as the next user message), never after a turn the user aborted
    or that failed, nor when ``loop_count > 0`` (already continuing). ``sessionEnd`` is
    fire-and-forget."""

    name, label, title, transcript = "cursor", "cursor", "Cursor", "cursor"
    events: ClassVar[dict[str, str]] = {"start": "sessionStart", "prompt": "beforeSubmitPrompt", "stop": "stop",
              "pre-compact": "preCompact", "end": "sessionEnd"}  # fmt: skip
    detach_end = True

    def extra(self, raw: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
        roots = raw.get("workspace_roots")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
        loops = raw.get("loop_count")
        return {
            "session_id": text_or_none(raw.get("conversation_id")) or text_or_none(raw.get("session_id")),
            "cwd": root or env.get("CURSOR_PROJECT_DIR") or text_or_none(raw.get("cwd")),
            # already continuing, or the user stopped the turn: a follow-up would be sent unasked
            "stop_hook_active": (isinstance(loops, int) and not isinstance(loops, bool) and loops > 0)
            or raw.get("status") in ("aborted", "error"),  # fmt: skip
        }

    def context(self, hook: str, text: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        # beforeSubmitPrompt documents only `continue`; Cursor 3.20 also reads `additional_context`
        return (
            {"continue": True, "additional_context": text}
            if hook == "prompt"
            else {"additional_context": text}
        )

    def block(self, reason: str) -> dict[str, Any]:
        return {"followup_message": reason}


class Copilot(Adapter):
    """GitHub Copilot CLI. Hooks named in camelCase (``sessionStart``, ``userPromptSubmitted``,
    ``agentStop``, ...) get camelCase payloads (``sessionId``, ``transcriptPath``, epoch-ms
    ``timestamp``); hooks named in PascalCase, and Claude Code's own hooks that Copilot also
    runs, get snake_case ones. The answer is a flat ``additionalContext``. Only ``agentStop``
    and ``preCompact`` carry the transcript's path; the others get it from the session id:
    ``$COPILOT_HOME/session-state/<id>/events.jsonl`` (default ``~/.copilot``)."""

    name, label, title, transcript = "copilot", "copilot-cli", "Copilot CLI", "copilot"
    events: ClassVar[dict[str, str]] = {"start": "sessionStart", "prompt": "userPromptSubmitted", "stop": "agentStop",
              "pre-compact": "preCompact", "end": "sessionEnd"}  # fmt: skip
    detach_end = True

    def extra(self, raw: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
        sid = text_or_none(raw.get("sessionId")) or text_or_none(raw.get("session_id"))
        path = text_or_none(raw.get("transcriptPath")) or text_or_none(raw.get("transcript_path"))
        if not path and sid and SAFE_ID.match(sid):
            home = Path(env.get("COPILOT_HOME") or Path(env.get("HOME") or Path.home()) / ".copilot")
            path = str(home / "session-state" / sid / "events.jsonl")
        source = text_or_none(raw.get("source"))
        return {"session_id": sid, "transcript_path": path, "source": "startup" if source == "new" else source,
                "trigger": text_or_none(raw.get("trigger"))}  # fmt: skip

    def context(self, hook: str, text: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"additionalContext": text}
        if payload.get(
            "hook_event_name"
        ):  # the snake_case ("VS Code compatible") format: Claude Code's shape too
            out["hookSpecificOutput"] = {
                "hookEventName": payload["hook_event_name"],
                "additionalContext": text,
            }
        return out


ADAPTERS: dict[str, Adapter] = {a.name: a for a in (Adapter(), Gemini(), Codex(), Cursor(), Copilot())}
GEMINI_EVENTS = {"BeforeAgent", "AfterAgent", "PreCompress", "BeforeModel", "AfterModel", "BeforeTool", "AfterTool",
                 "BeforeToolSelection", "Notification"}  # fmt: skip
CURSOR_EVENTS = {"sessionStart", "beforeSubmitPrompt", "stop", "preCompact", "sessionEnd", "afterAgentResponse",
                 "preToolUse", "postToolUse", "beforeShellExecution", "afterShellExecution", "afterFileEdit"}  # fmt: skip


def session_source(agent: str, session_id: str) -> str:
    """The ``source`` of a session of ``agent`` (an adapter's name or label, e.g. ``codex`` or
    ``claude-code``); another tool's sessions (chat exports): ``<agent>-<whole id>``."""
    by_label = {a.label: a for a in ADAPTERS.values()}
    adapter = ADAPTERS.get(agent) or by_label.get(agent)
    return adapter.source(session_id) if adapter else f"{agent}-{session_id}"


def detect(raw: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """The agent that sent a payload, from its fields (and the hook's environment): Claude Code
    unless another agent's marks are there."""
    env = os.environ if env is None else env
    event = raw.get("hook_event_name")
    path = str(raw.get("transcript_path") or raw.get("transcriptPath") or "")
    if env.get("CURSOR_VERSION") or any(k in raw for k in ("cursor_version", "conversation_id", "workspace_roots")) \
            or event in CURSOR_EVENTS:  # fmt: skip
        return "cursor"
    if "sessionId" in raw or "stop_reason" in raw or "/.copilot/session-state/" in path:
        return "copilot"
    if (
        event in GEMINI_EVENTS
        or env.get("GEMINI_SESSION_ID")
        or env.get("GEMINI_PROJECT_DIR")
        or "/.gemini/tmp/" in path
    ):
        return "gemini"
    if "turn_id" in raw or "/.codex/" in path or re.search(r"(^|/)rollout-[^/]*\.jsonl$", path):
        return "codex"
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
