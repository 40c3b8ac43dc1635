"""Whole session histories for the importers, read into one shape (``Transcript``): Claude Code
sessions (``claude.py``), Codex CLI rollouts (``rollouts.py``) and chat exports (``importers/chats.py``),
read defensively and streamed line by line with a cap on each line, so a large folder costs
bounded memory. (The hooks' readers of the last 32 MB of a live log are the other modules here.)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..events import Event


class NotATranscript(ValueError):
    """A file that holds no line of the expected format (binary, another tool's JSON, ...)."""


@dataclass
class Transcript:
    """One agent session: its identity, where it ran, and its events in order."""

    agent: str  # "claude-code", "codex"
    id: str  # the session (thread) id the agent gave it
    path: str
    events: list[Event] = field(default_factory=list)
    cwd: str = ""
    title: str = ""
    parent: str = ""  # the parent session of a subagent thread
    subagents: list[str] = field(default_factory=list)  # a line per subagent folded in
    lines: int = 0  # lines read
    known: int = 0  # lines of the expected format
    bad: int = 0  # lines that were not JSON objects, or too long
    skipped: Counter = field(default_factory=Counter)  # unknown line types, by name

    @property
    def start(self) -> str:
        return min((e.ts for e in self.events if e.ts), default="")

    @property
    def end(self) -> str:
        return max((e.ts for e in self.events if e.ts), default="")
