"""Readers of the session logs other agents keep on disk, each turning its agent's lines into
``transcript.Event``s with Claude Code's tool names (a shell call is ``Bash`` with
``input.command``, a file change ``Edit``/``Write`` with ``input.file_path``, a vaultmem MCP tool
``mcp__vaultmem__<tool>``), so that ``summarise``, ``unsaved_work`` and ``shown_by_tools`` work
unchanged. The reading rules are ``events.py``'s: regular files only, the last 32 MB at most,
a line that is too long, not JSON or of an unknown shape skipped, never fatal.

The helpers the readers share are in ``common.py`` (no reader imports this package's
``__init__``). Each format module has ``line_events(obj)`` (the events of one parsed line, on its own) and a
reader of the whole file (which may need more than one line at a time: Gemini rewrites and
rewinds records, Codex logs each prompt twice). Codex has one reader (``rollouts.py``) for the
hooks and the importer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..events import MAX_BYTES, Event, load_line, memory_action, shown_by_tools, tail


def _formats() -> dict[str, tuple[Callable[[str | os.PathLike | None, int], list[Event]],
                                  Callable[[dict[str, Any]], Iterable[Event]]]]:  # fmt: skip
    from . import claude, copilot, cursor, gemini, rollouts

    return {"claude": (claude.read_tail, claude.line_events), "gemini": (gemini.read_chat, gemini.line_events), "codex": (rollouts.read_tail, rollouts.line_events),
            "cursor": (cursor.read_transcript, cursor.line_events),
            "copilot": (copilot.read_events_log, copilot.line_events)}  # fmt: skip


FORMATS = ("claude", "gemini", "codex", "cursor", "copilot")


def read(path: str | os.PathLike | None, fmt: str, max_bytes: int = MAX_BYTES) -> list[Event]:
    """The events of an agent's session log in format ``fmt``; [] for an unknown format."""
    reader = _formats().get(fmt)
    return reader[0](path, max_bytes) if reader else []


def shown(path: str | os.PathLike | None, fmt: str, max_bytes: int) -> set[str]:
    """Memory ids the agent's own vaultmem tool calls showed it, from the last ``max_bytes`` of
    its log: only the lines naming vaultmem and those holding these calls' results are parsed."""
    reader = _formats().get(fmt)
    if reader is None:
        return set()
    lines = tail(path, max_bytes).splitlines()

    def events(raws: Iterable[bytes]) -> list[Event]:
        return [e for raw in raws if (obj := load_line(raw)) is not None for e in reader[1](obj)]

    uses = events(raw for raw in lines if b"vaultmem" in raw)
    asked = {e.id.encode() for e in uses if e.kind == "tool" and e.id and memory_action(e) == "recall"}
    if not asked:
        return set()
    results = events(raw for raw in lines if any(a in raw for a in asked))
    return shown_by_tools(uses + results)
