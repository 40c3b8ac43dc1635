"""Codex CLI (developers.openai.com/codex/hooks; ``SessionEnd`` since 0.145.0).
Every fact vaultmem knows about it is here; ``adapters.py`` registers it."""

from __future__ import annotations

import re
from pathlib import Path

from .base import Adapter

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping
    from os import PathLike
    from typing import Any, ClassVar

    from ..events import Event
    from ..transcripts.history import Transcript


class Codex(Adapter):
    """Codex CLI: Claude Code's event names and output shapes, and nothing else (its output
    structs deny unknown fields); the transcript is a rollout. SessionEnd hooks get 1 s (3 s at
    most), so the summary is written by a detached process."""

    name, label, title = "codex", "codex", "Codex CLI"
    hooks_note = (
        "The whole loop (Codex's hooks are on by default; `[features] hooks = false` turns them off): "
        "SessionStart and UserPromptSubmit add memory as developer context, Stop asks once to save, "
        "PreCompact checkpoints, SessionEnd (Codex 0.145+) has the session summary written from the rollout "
        "by a detached process (Codex gives it 3 s at most). Codex runs new or changed hooks only once you "
        "trust them in `/hooks`, and reads a project's .codex/ only in a trusted project. --write merges them"
        " into hooks.json."
    )
    setup_note = (
        "a project's .codex/config.toml and .codex/hooks.json are read only when Codex trusts the project; "
        "`--user` writes ~/.codex/ instead"
    )
    detach_end = True
    whole_id = True  # UUIDv7: the first 8 hex digits change only every ~65 s
    default_timeouts: ClassVar[dict[str, float]] = {"end": 1.0}
    end_timeout = 3  # Codex's cap for SessionEnd

    def files(
        self, home: Path, project: Path, user: bool, env: Mapping[str, str]
    ) -> tuple[Path, str, Path, Path]:
        base = (
            (Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex")
            if user
            else project / ".codex"
        )
        return base / "config.toml", "toml", base / "hooks.json", (base if user else project) / "AGENTS.md"

    def http_entry(self, url: str, headers: dict[str, str]) -> dict[str, Any]:
        return {"url": url, "http_headers": headers}

    trust_step = ("Codex runs no hook until you trust it: open Codex and trust the vaultmem hooks in /hooks "
                  "(a project's .codex/ is read only in a trusted project)")  # fmt: skip
    trust_required = True

    def claims(self, raw: Mapping[str, Any], env: Mapping[str, str], event: Any, path: str) -> bool:
        return (
            "turn_id" in raw
            or "/.codex/" in path
            or re.search(r"(^|/)rollout-[^/]*\.jsonl$", path) is not None
        )

    def read_log(self, path: str | PathLike[str] | None, max_bytes: int) -> list[Event]:
        """Its rollout (``transcripts/rollouts.py``: the one Codex reader, for the hooks and the importer)."""
        from ..transcripts import rollouts

        return rollouts.read_tail(path, max_bytes)

    def line_events(self, obj: dict[str, Any]) -> Iterable[Event]:
        from ..transcripts import rollouts

        return rollouts.line_events(obj)

    def history_root(self) -> Path | None:
        """``$CODEX_HOME`` (``~/.codex``): its ``sessions/`` and ``archived_sessions/``."""
        from ..transcripts import rollouts

        return rollouts.default_root()

    def history_files(self, root: Path, project: str | None) -> tuple[list[Path], list[str]]:
        """The rollouts under ``root``; compressed ones only with ``zstandard`` installed."""
        from ..transcripts import rollouts

        files, zst = rollouts.rollout_files(root)
        return files, [f"{len(zst)} compressed rollout(s) (.jsonl.zst) skipped: install zstandard "
                       "(pip install 'vaultmem-md[codex]') to read them"] if zst else []  # fmt: skip

    def read_session(self, path: Path) -> Transcript:
        from ..transcripts import rollouts

        return rollouts.read_rollout(path)
