"""Cursor (cursor.com/docs/agent/hooks; a read of the Cursor 3.20.17 client).
Every fact vaultmem knows about it is here; ``adapters.py`` registers it."""

from __future__ import annotations

from pathlib import Path

from .base import Adapter, text_or_none

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping
    from os import PathLike
    from typing import Any, ClassVar

    from ..events import Event


class Cursor(Adapter):
    """Cursor: camelCase events, snake_case ``additional_context``; the session is the
    ``conversation_id``, the project the first workspace root; stop answers with a
    ``followup_message`` (sent as the next user message), never after a turn the user aborted
    or that failed, nor when ``loop_count > 0`` (already continuing). ``sessionEnd`` is
    fire-and-forget."""

    name, label, title = "cursor", "cursor", "Cursor"
    hooks_note = (
        "The whole loop: sessionStart adds the [MEMORY] block to the conversation, beforeSubmitPrompt the "
        "memories relevant to each prompt (`additional_context`, read by Cursor 3.20 though documented only "
        "for sessionStart), stop sends one follow-up asking to save (loop_limit 1), preCompact checkpoints, "
        "sessionEnd writes the summary from the agent transcript (which has no tool results: failed commands "
        "are not in it). Open a new chat after --write merges them into hooks.json."
    )
    events: ClassVar[dict[str, str]] = {"start": "sessionStart", "prompt": "beforeSubmitPrompt", "stop": "stop",
              "pre-compact": "preCompact", "end": "sessionEnd"}  # fmt: skip
    detach_end = True
    default_timeouts: ClassVar[dict[str, float]] = {}
    trust_step = "open a new chat in Cursor (it reloads hooks.json on save; Settings > Hooks lists them)"
    end_timeout = 10
    versioned = True
    rules_header = "---\ndescription: How to use long-term memory (vaultmem)\nalwaysApply: true\n---\n\n"

    def also_runs(self, home: Path, project: Path) -> list[Path]:
        """Claude Code's hooks files (cursor.com/docs/reference/third-party-hooks, with third-party configs on)."""
        return [project / ".claude" / "settings.local.json", project / ".claude" / "settings.json",
                home / ".claude" / "settings.json"]  # fmt: skip

    def hook_group(self, hook: str, command: str, seconds: int) -> dict[str, Any]:
        """A flat ``{command, timeout}``; stop asks once (``loop_limit: 1``)."""
        return {"command": command, "timeout": seconds, **({"loop_limit": 1} if hook == "stop" else {})}

    def files(
        self, home: Path, project: Path, user: bool, env: Mapping[str, str]
    ) -> tuple[Path, str, Path, Path]:
        base = (home if user else project) / ".cursor"
        return base / "mcp.json", "json", base / "hooks.json", project / ".cursor" / "rules" / "vaultmem.mdc"

    def http_entry(self, url: str, headers: dict[str, str]) -> dict[str, Any]:
        return {"url": url, "headers": headers}

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

    EVENTS: ClassVar[set[str]] = {"sessionStart", "beforeSubmitPrompt", "stop", "preCompact", "sessionEnd",
                                  "afterAgentResponse", "preToolUse", "postToolUse", "beforeShellExecution",
                                  "afterShellExecution", "afterFileEdit"}  # fmt: skip

    def claims(self, raw: Mapping[str, Any], env: Mapping[str, str], event: Any, path: str) -> bool:
        marks = ("cursor_version", "conversation_id", "workspace_roots")
        return bool(env.get("CURSOR_VERSION")) or any(k in raw for k in marks) or event in self.EVENTS

    def read_log(self, path: str | PathLike[str] | None, max_bytes: int) -> list[Event]:
        """Its agent transcript (``transcripts/cursor.py``)."""
        from ..transcripts import cursor

        return cursor.read_transcript(path, max_bytes)

    def line_events(self, obj: dict[str, Any]) -> Iterable[Event]:
        from ..transcripts import cursor

        return cursor.line_events(obj)
