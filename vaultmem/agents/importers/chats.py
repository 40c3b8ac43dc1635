"""What the importers of chat exports share (``ChatExport``): an export's
``conversations*.json`` files, each a JSON array of conversations, streamed with ``ijson`` when
it is installed, else loaded whole (``MAX_FILE`` bounds that); each conversation is read as a
``Transcript`` of prompts and answers (no tools, no project folder) by ``chatgpt.py`` or
``claude_ai.py``. A conversation is never "still being written".
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.errors import BadInput
from ..transcripts.history import NotATranscript, Transcript
from .base import Found, Importer, existing

MAX_FILE = 1 << 30  # loaded whole without ijson: refuse beyond 1 GB


def export_files(root: Path, name: str = "conversations") -> list[Path]:
    """The export's conversation files: the file itself, or ``conversations*.json`` in a folder."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.glob(f"{name}*.json") if p.is_file())


def items(path: Path) -> Iterator[Any]:
    """The elements of a JSON array file, streamed when ``ijson`` is there."""
    try:
        import ijson
    except ImportError:
        ijson = None
    with open(path, "rb") as f:
        if ijson is not None:
            try:
                yield from ijson.items(f, "item")
            except ijson.JSONError as e:
                raise NotATranscript(f"{path}: not a JSON array of conversations ({e})") from None
            return
        if path.stat().st_size > MAX_FILE:
            raise BadInput(f"{path}: larger than 1 GB; install ijson to stream it; nothing was imported")
        try:
            data = json.load(f)
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            raise NotATranscript(f"{path}: not JSON ({str(e)[:80]})") from None
    if not isinstance(data, list):
        raise NotATranscript(f"{path}: not a JSON array of conversations")
    yield from data


def iso(epoch: Any) -> str:
    if not isinstance(epoch, (int, float)) or isinstance(epoch, bool):
        return ""
    try:
        return dt.datetime.fromtimestamp(float(epoch), dt.UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return ""


class ChatExport(Importer):
    """A chat export's conversations as conversation summaries."""

    label = "Conversation"
    settle = 0
    product = "chat"  # whose export it is, as its error names it
    missing = "conversation"  # what each file of it holds, named when one holds none

    def read(self, path: Path) -> list[Transcript]:
        """Every conversation of an export file; NotATranscript when it holds none."""
        out = [t for item in items(path) if isinstance(item, dict) for t in [self.one(path, item)] if t]
        if not out:
            raise NotATranscript(f"{path}: not a {self.product} export (no {self.missing})")
        return out

    def one(self, path: Path, conv: dict[str, Any]) -> Transcript | None:
        """One conversation of the export as a transcript (None: nothing to read in it)."""
        raise NotImplementedError

    def find(self, paths: list[str], project: str | None) -> Found:
        if not paths:
            raise BadInput(f"--from {self.name} needs the export's conversations.json (or its folder)")
        roots = list(existing(paths, Path("."), "the export"))
        return Found([f for r in roots for f in export_files(r)], roots)
