"""What every agent module (``kinds/<agent>.py``) builds on: ``Adapter``, whose defaults are
Claude Code's (the baseline the others are written against): its hook payload read into the
fields vaultmem's hooks use, their answer in the agent's shape, its session ``source`` rule, and
the files and hook entries ``vaultmem setup`` writes. Light: imported by the ``hook prompt``
fast path.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...core import environment

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
    """One agent's facts; the defaults are Claude Code's (``kinds/claude.py`` names it)."""

    name = "claude"
    label = "claude-code"
    title = "Claude Code"
    transcript = "claude"  # the reader of its session log (``transcripts.FORMATS``)
    hooks_note = ""  # what ``setup`` says its hooks do
    setup_note: str | None = None  # a note ``setup`` adds
    events: ClassVar[dict[str, str]] = {"start": "SessionStart", "prompt": "UserPromptSubmit", "stop": "Stop",
              "pre-compact": "PreCompact", "end": "SessionEnd"}  # fmt: skip
    detach_end = False  # Claude Code waits for SessionEnd hooks (setup declares a timeout: 1.5 s without one)
    whole_id = False  # the ``source`` names a session by 8 characters of its id (random: unique enough)
    default_timeouts: ClassVar[dict[str, float]] = {
        "end": 1.5
    }  # seconds an undeclared hook gets (SessionEnd: 1.5)
    trust_step = (
        "start a new Claude Code session in the project (hooks are read when it starts; /hooks lists them)"
    )

    # ------------------------------------------------------------------ sessions

    def source(self, session_id: str) -> str:
        """The ``source`` written on a session's notes, the one rule hooks and importers share:
        the agent's label and its session id (8 characters, or all of it where ids are
        time-ordered and 8 characters name every session of a minute)."""
        return f"{self.label}-{session_id if self.whole_id else session_id[:8]}"

    def compacting(self, payload: Mapping[str, Any]) -> bool:
        """Whether a pre-compact event means the context is being compacted (a checkpoint is due)."""
        return True

    # ------------------------------------------------------------------ setting up

    end_timeout = (
        30  # seconds setup declares on the end hook (Claude Code kills an undeclared one after 1.5 s)
    )
    matchers: ClassVar[
        dict[str, str]
    ] = {}  # vaultmem hook -> matcher (none on start: every source, fork too)
    versioned = False  # the hooks file holds ``version: 1``

    def hook_group(self, hook: str, command: str, seconds: int) -> dict[str, Any]:
        """One entry of the agent's hooks file for ``hook`` (``{matcher?, hooks: [{type, command, timeout}]}``)."""
        group: dict[str, Any] = {"matcher": self.matchers[hook]} if hook in self.matchers else {}
        return {**group, "hooks": [{"type": "command", "command": command, "timeout": seconds}]}

    def files(
        self, home: Path, project: Path, user: bool, env: Mapping[str, str]
    ) -> tuple[Path, str, Path, Path]:
        """(MCP config file, its format, hooks file, rules file), the project's or the user's:
        Claude Code's personal ones (the MCP server under the project in ``~/.claude.json``,
        the hooks in ``.claude/settings.local.json``)."""
        if user:
            return (
                home / ".claude.json",
                "json",
                home / ".claude" / "settings.json",
                home / ".claude" / "CLAUDE.md",
            )
        return (
            home / ".claude.json",
            "json",
            project / ".claude" / "settings.local.json",
            project / "CLAUDE.md",
        )

    def http_entry(self, url: str, headers: dict[str, str]) -> dict[str, Any]:
        """The MCP entry of ``vaultmem mcp --http`` at ``url`` (each agent spells it its way)."""
        return {"type": "http", "url": url, "headers": headers}

    def server_entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The stdio MCP entry (``command``, ``args``) in the agent's shape."""
        return entry

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
        out.update(self.extra(raw, env if env is not None else environment.declared()))
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

    # ------------------------------------------------------------------ detection

    def claims(self, raw: Mapping[str, Any], env: Mapping[str, str], event: Any, path: str) -> bool:
        """Whether a payload (its ``hook_event_name`` ``event``, its transcript ``path``) and the
        hook's environment carry this agent's marks (``adapters.detect`` asks each agent)."""
        return False
