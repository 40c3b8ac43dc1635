"""GitHub Copilot CLI (docs.github.com hooks reference, CLI about 1.0.6x-1.0.8x).
Every fact vaultmem knows about it is here; ``adapters.py`` registers it."""

from __future__ import annotations

from pathlib import Path

from ...core import environment
from .base import SAFE_ID, Adapter, text_or_none

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping
    from os import PathLike
    from typing import Any, ClassVar

    from ..events import Event


class Copilot(Adapter):
    """GitHub Copilot CLI. Hooks named in camelCase (``sessionStart``, ``userPromptSubmitted``,
    ``agentStop``, ...) get camelCase payloads (``sessionId``, ``transcriptPath``, epoch-ms
    ``timestamp``); hooks named in PascalCase, and Claude Code's own hooks that Copilot also
    runs, get snake_case ones. The answer is a flat ``additionalContext``. Only ``agentStop``
    and ``preCompact`` carry the transcript's path; the others get it from the session id:
    ``$COPILOT_HOME/session-state/<id>/events.jsonl`` (default ``~/.copilot``)."""

    name, label, title = "copilot", "copilot-cli", "Copilot CLI"
    hooks_note = (
        "The whole loop: sessionStart adds the [MEMORY] block (only the last sessionStart hook's context is "
        "kept; CLI 1.0.8 and older dropped it), userPromptSubmitted the memories relevant to each prompt (the"
        " docs say command hooks' output is dropped there, the 1.0.65 changelog that it is used: it depends "
        "on the version), agentStop asks once to save, preCompact checkpoints, sessionEnd writes the summary "
        "from events.jsonl. Copilot reads hooks when it starts. --write merges them into the hooks file."
    )
    setup_note = (
        "the instruction file still tells the agent to call `wake` when no [MEMORY] block arrived (Copilot "
        "versions differ in what hooks may add)"
    )
    events: ClassVar[dict[str, str]] = {"start": "sessionStart", "prompt": "userPromptSubmitted", "stop": "agentStop",
              "pre-compact": "preCompact", "end": "sessionEnd"}  # fmt: skip
    detach_end = True
    default_timeouts: ClassVar[dict[str, float]] = {}
    trust_step = "start Copilot CLI again in the project (it reads hooks when it starts)"
    end_timeout = 10
    versioned = True

    def hook_group(self, hook: str, command: str, seconds: int) -> dict[str, Any]:
        return {"type": "command", "bash": command, "timeoutSec": seconds}

    def files(
        self, home: Path, project: Path, user: bool, env: Mapping[str, str]
    ) -> tuple[Path, str, Path, Path]:
        if user:
            base = Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else home / ".copilot"
            return (
                base / "mcp-config.json",
                "json",
                base / "hooks" / "vaultmem.json",
                base / "copilot-instructions.md",
            )
        github = project / ".github"
        return (
            github / "mcp.json",
            "json",
            github / "hooks" / "vaultmem.json",
            github / "copilot-instructions.md",
        )

    def also_runs(self, home: Path, project: Path) -> list[Path]:
        """Claude Code's hooks files (seen in CLI 1.0.102: a repository set up for both runs each hook twice)."""
        return [project / ".claude" / "settings.local.json", project / ".claude" / "settings.json",
                home / ".claude" / "settings.json"]  # fmt: skip

    def server_entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {"type": "local", **entry, "tools": ["*"]}

    def extra(self, raw: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
        sid = text_or_none(raw.get("sessionId")) or text_or_none(raw.get("session_id"))
        path = text_or_none(raw.get("transcriptPath")) or text_or_none(raw.get("transcript_path"))
        if not path and sid and SAFE_ID.match(sid):
            home = Path(env.get("COPILOT_HOME") or Path(env.get("HOME") or environment.home()) / ".copilot")
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

    def claims(self, raw: Mapping[str, Any], env: Mapping[str, str], event: Any, path: str) -> bool:
        return "sessionId" in raw or "stop_reason" in raw or "/.copilot/session-state/" in path

    def claims_weakly(self, raw: Mapping[str, Any]) -> bool:
        """A ``timestamp`` (Claude Code and Codex send none) without a ``transcript_path``."""
        return isinstance(raw.get("timestamp"), str) and "transcript_path" not in raw

    def read_log(self, path: str | PathLike[str] | None, max_bytes: int) -> list[Event]:
        """Its session's ``events.jsonl`` (``transcripts/copilot.py``)."""
        from ..transcripts import copilot

        return copilot.read_events_log(path, max_bytes)

    def line_events(self, obj: dict[str, Any]) -> Iterable[Event]:
        from ..transcripts import copilot

        return copilot.line_events(obj)
