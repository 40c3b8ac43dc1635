"""Gemini CLI (read in the source of gemini-cli 0.56.0; hooks since 0.26).
Every fact vaultmem knows about it is here; ``adapters.py`` registers it."""

from __future__ import annotations

from pathlib import Path

from .base import Adapter

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping
    from os import PathLike
    from typing import Any, ClassVar

    from ..events import Event


class Gemini(Adapter):
    """Gemini CLI: ``BeforeAgent`` for the prompt, ``AfterAgent`` for stop (its ``reason`` is
    sent back as a new prompt), ``PreCompress``; the CLI does not wait for ``SessionEnd``."""

    name, label, title = "gemini", "gemini-cli", "Gemini CLI"
    hooks_note = (
        "The whole loop: SessionStart and BeforeAgent add memory as hook context, AfterAgent asks once to "
        "save (Gemini sends the reason back as a prompt), PreCompress checkpoints, SessionEnd has the summary"
        " written from the chat recording by a detached process (the CLI does not wait). Gemini runs a "
        "project's hooks only in a trusted folder and warns once about new ones. --write merges them into "
        "settings.json."
    )
    events: ClassVar[dict[str, str]] = {"start": "SessionStart", "prompt": "BeforeAgent", "stop": "AfterAgent",
              "pre-compact": "PreCompress", "end": "SessionEnd"}  # fmt: skip
    detach_end = True
    default_timeouts: ClassVar[dict[str, float]] = {}
    end_timeout = 10
    matchers: ClassVar[dict[str, str]] = {
        "pre-compact": "manual"
    }  # PreCompress (auto) fires before every model call
    trust_step = ("Gemini runs no settings hook, user-level ones too, in an untrusted folder: trust the project "
                  "folder (Gemini asks when it starts there; /permissions)")  # fmt: skip
    trust_required = True
    timeout_scale = 1000  # milliseconds

    def hook_group(self, hook: str, command: str, seconds: int) -> dict[str, Any]:
        """Gemini's timeout is in milliseconds; a ``name`` shows in ``/hooks``."""
        group: dict[str, Any] = {"matcher": self.matchers[hook]} if hook in self.matchers else {}
        entry = {
            "type": "command",
            "name": f"vaultmem-{hook}",
            "command": command,
            "timeout": seconds * self.timeout_scale,
        }
        return {**group, "hooks": [entry]}

    def files(
        self, home: Path, project: Path, user: bool, env: Mapping[str, str]
    ) -> tuple[Path, str, Path, Path]:
        base = home if user else project
        settings = base / ".gemini" / "settings.json"  # one file holds the MCP server and the hooks
        return settings, "json", settings, (base / ".gemini" / "GEMINI.md" if user else project / "GEMINI.md")

    def http_entry(self, url: str, headers: dict[str, str]) -> dict[str, Any]:
        return {"httpUrl": url, "headers": headers}

    def compacting(self, payload: Mapping[str, Any]) -> bool:
        """Gemini fires ``PreCompress`` before every model call, before it checks whether the
        history needs compressing: only ``trigger: manual`` (``/compress``) is a compaction."""
        return payload.get("trigger") == "manual"

    EVENTS: ClassVar[set[str]] = {"BeforeAgent", "AfterAgent", "PreCompress", "BeforeModel", "AfterModel", "BeforeTool",
                                  "AfterTool", "BeforeToolSelection", "Notification"}  # fmt: skip

    def claims(self, raw: Mapping[str, Any], env: Mapping[str, str], event: Any, path: str) -> bool:
        return (event in self.EVENTS or bool(env.get("GEMINI_SESSION_ID")) or bool(env.get("GEMINI_PROJECT_DIR"))
                or "/.gemini/tmp/" in path)  # fmt: skip

    def claims_weakly(self, raw: Mapping[str, Any]) -> bool:
        """A ``timestamp`` (Claude Code and Codex send none) with a ``transcript_path`` (Gemini's always has one)."""
        return isinstance(raw.get("timestamp"), str) and "transcript_path" in raw

    def read_log(self, path: str | PathLike[str] | None, max_bytes: int) -> list[Event]:
        """Its chat recording (``transcripts/gemini.py``)."""
        from ..transcripts import gemini

        return gemini.read_chat(path, max_bytes)

    def line_events(self, obj: dict[str, Any]) -> Iterable[Event]:
        from ..transcripts import gemini

        return gemini.line_events(obj)
