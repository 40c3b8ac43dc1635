"""What every agent module (``kinds/<agent>.py``) builds on: ``Adapter``, whose defaults are
Claude Code's (the baseline the others are written against): its hook payload read into the
fields vaultmem's hooks use, their answer in the agent's shape, its session ``source`` rule, the
files and hook entries ``vaultmem setup`` writes, the reader of its session log and, for an agent
whose past sessions ``import --from <label>`` reads, where they are. Light: imported by the
``hook prompt`` fast path (the readers are imported when called).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...core import environment

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping
    from os import PathLike
    from typing import Any, ClassVar

    from ..events import Event
    from ..transcripts.history import Transcript

HOOKS = ("start", "prompt", "stop", "pre-compact", "end")
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # a session id that may name a folder


def text_or_none(value: Any) -> str | None:
    """A payload field as a string (numbers too), None for anything else (objects, lists, null)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def event_time(value: Any) -> int | None:
    """When the agent says the event happened, in epoch milliseconds: Copilot's number, or an
    ISO time (Gemini's; Copilot's in its snake_case payloads): one event told to two hooks
    carries the same instant in either spelling. None without one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value if value > 1e11 else value * 1000)
    if isinstance(value, str) and value:
        from datetime import datetime

        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            return None
    return None


class Adapter:
    """One agent's facts; the defaults are Claude Code's (``kinds/claude.py`` names it)."""

    name = "claude"
    label = "claude-code"
    title = "Claude Code"
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
    trust_required = False  # the agent runs no hook until trusted: setup lists ``trust_step`` as REQUIRED

    # ------------------------------------------------------------------ sessions

    def source(self, session_id: str) -> str:
        """The ``source`` written on a session's notes, the one rule hooks and importers share:
        the agent's label and its session id (8 characters, or all of it where ids are
        time-ordered and 8 characters name every session of a minute)."""
        return f"{self.label}-{session_id if self.whole_id else session_id[:8]}"

    def compacting(self, payload: Mapping[str, Any]) -> bool:
        """Whether a pre-compact event means the context is being compacted (a checkpoint is due)."""
        return True

    # ------------------------------------------------------------------ its session log

    def read_log(self, path: str | PathLike[str] | None, max_bytes: int) -> list[Event]:
        """The events of the last ``max_bytes`` of its live session log (``transcripts/claude.py``),
        for the hooks; [] when there is none."""
        from ..transcripts import claude

        return claude.read_tail(path, max_bytes)

    def line_events(self, obj: dict[str, Any]) -> Iterable[Event]:
        """The events of one parsed line of its log on its own (the prompt hook reads only some)."""
        from ..transcripts import claude

        return claude.line_events(obj)

    # ------------------------------------------------------------------ its history (import --from)

    def history_root(self) -> Path | None:
        """Where its past sessions are kept, read by ``import --from <label>`` when no path is
        given; None: vaultmem imports none of this agent's sessions (``importers/histories.py``)."""
        return None

    def history_files(self, root: Path, project: str | None) -> tuple[list[Path], list[str]]:
        """(The main session files under ``root``, notes for the import's report); with
        ``project``, files that cannot be that folder's sessions may be left out (the sessions'
        own ``cwd`` decides after)."""
        from ..transcripts import claude

        return claude.history_files(root, project), []

    def read_session(self, path: Path) -> Transcript:
        """One past session, whole (``transcripts.history.NotATranscript`` when it is none)."""
        from ..transcripts import claude

        return claude.read_session(path)

    # ------------------------------------------------------------------ setting up

    end_timeout = (
        30  # seconds setup declares on the end hook (Claude Code kills an undeclared one after 1.5 s)
    )
    matchers: ClassVar[
        dict[str, str]
    ] = {}  # vaultmem hook -> matcher (none on start: every source, fork too)
    versioned = False  # the hooks file holds ``version: 1``
    timeout_scale = 1  # a hook entry's ``timeout`` units per second (Gemini: milliseconds)
    rules_header = ""  # what the rules file setup writes starts with (Cursor: its rule's frontmatter)
    # Claude Code's local scope (not a default: a new agent's project files are shared): the
    # project's MCP server under ``projects.<folder>`` of the user's config file, its hooks in a
    # git-ignored file, so they may name this machine's paths
    local_scope = False

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

    def also_runs(self, home: Path, project: Path) -> list[Path]:
        """Other agents' hooks files this agent runs too: a vaultmem hook in one of them runs
        twice for each event of this agent's sessions (``setup`` says so; the hooks answer the
        first run of an event only)."""
        return []

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
            "event_at": event_time(raw.get("timestamp")),
        }
        out.update(self.extra(raw, env if env is not None else environment.declared()))
        out.update({"agent": self.name, "agent_label": self.label})
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

    def claims_weakly(self, raw: Mapping[str, Any]) -> bool:
        """Whether a payload no agent claims is likely this agent's (``detect`` asks this second)."""
        return False
