"""Claude Code (code.claude.com/docs/en/hooks): the baseline; every fact is ``Adapter``'s default."""

from __future__ import annotations

from pathlib import Path

from .base import Adapter


class Claude(Adapter):
    """Claude Code: ``Adapter``'s defaults. Its payloads carry no other agent's marks, so
    ``adapters.detect`` falls back to it."""

    name, label, title = "claude", "claude-code", "Claude Code"
    local_scope = True  # ~/.claude.json's projects.<folder> and .claude/settings.local.json
    hooks_note = ("SessionStart prints the [MEMORY] block, UserPromptSubmit the few memories relevant to each prompt, "
                  "Stop asks once to save what the session did, PreCompact checkpoints, SessionEnd writes a session "
                  "summary from the transcript (`vaultmem hook ...`). --write merges them into the settings file.")  # fmt: skip

    def history_root(self) -> Path | None:
        """``~/.claude/projects`` (``$CLAUDE_CONFIG_DIR/projects``)."""
        from ..transcripts import claude

        return claude.default_root()
