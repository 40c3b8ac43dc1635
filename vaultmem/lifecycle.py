"""Memory lifecycle: resolve, supersede, reopen, auto-supersede and duplicate detection.

Every transition is a guarded, atomic frontmatter change: only ``status``,
``superseded_by`` and ``supersedes`` are written, every other byte of the file stays.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from .chunking import chunk, plain_text
from .note import content_hash, set_fields

if TYPE_CHECKING:  # pragma: no cover
    from .manifest import Record
    from .vault import Vault


def memory_text(title: str, content: str) -> str:
    """The text the index embeds for a note written by ``remember`` (its first chunk)."""
    return chunk(title, plain_text(f"# {title}\n\n{content.strip()}\n"))[0]


def link_to(path: str) -> str:
    """A wiki-link to a note by its file name (how Obsidian writes links)."""
    stem = posixpath.basename(path)
    return f"[[{stem[:-3] if stem.endswith('.md') else stem}]]"
