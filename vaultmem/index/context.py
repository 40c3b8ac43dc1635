"""Contextual vectors (issue 37): a note that says where it lives is embedded a second time,
with the lines of the notes it links to in its frontmatter (pure planning; the indexer embeds).

A conversation turn ("Yes, I went there last week") means little alone; its session note
("Session 3 of the conversation between A and B, 8 May 2023") and the turn it follows say what
it is about. A note with frontmatter links to other notes (``session: [[S3]]``, ``follows:
[[previous]]``, ``project: [[X]]``) gets a second vector of::

    the first line of each note it links to in its frontmatter (at most MAX_LINKED, in order)
    its own first chunk (title and text, as its plain vector)
    the first line of each note that links to it in its frontmatter (the reply; none for a
    note more than MAX_REPLIES notes link to: a session or project note, a hub)

Recall keeps the plain vector and takes the better of the two for the question shapes where
that helps (``recall/contextual.py``). A note's ``key`` is the hash of everything its context
text is made of (its content hash and title, the linked notes' first lines), so a sync
re-embeds exactly the notes whose context changed, and the result equals a full rebuild.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from .chunking import plain_text

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from .manifest import Record

LEAD_CHARS = 400  # a linked note's first line, at most (a context line, not its whole text)
MAX_LINKED = 4  # frontmatter links read per note
MAX_REPLIES = 2  # a note more notes than this link to is a hub: its linkers are not its context
FRONTMATTER = "frontmatter"


def lead(body: str) -> str:
    """A note's first non-empty body line (links as their text), at most LEAD_CHARS."""
    for line in plain_text(body).splitlines():
        if line.strip():
            return line.strip()[:LEAD_CHARS]
    return ""


@dataclass(frozen=True)
class Context:
    """What a note's contextual vector is made of, besides the note itself."""

    before: tuple[str, ...]  # first lines of the notes it links to
    after: tuple[str, ...]  # first lines of the notes that link to it (its replies)
    key: str  # hash of the note's content, title and both lists

    def text(self, own: str) -> str:
        """The text embedded: the context lines around the note's own first chunk."""
        return "\n".join([*self.before, own, *self.after])


def _linked(g: nx.DiGraph, path: str, out: bool) -> list[str]:
    edges = g.out_edges(path, data="kinds") if out else g.in_edges(path, data="kinds")
    ends = [(b if out else a) for a, b, kinds in edges if FRONTMATTER in (kinds or ())]
    return [p for p in ends if not g.nodes[p].get("dangling")]


def plan(records: dict[str, Record], g: nx.DiGraph) -> dict[str, Context]:
    """The context of every note that links to another note in its frontmatter."""
    out: dict[str, Context] = {}
    for path, rec in records.items():
        if path not in g:
            continue
        targets = [p for p in _linked(g, path, True) if p in records][:MAX_LINKED]
        if not targets:
            continue
        linkers = [p for p in _linked(g, path, False) if p in records]
        replies = sorted(linkers) if len(linkers) <= MAX_REPLIES else []
        before = tuple(records[p].lead for p in targets if records[p].lead)
        after = tuple(records[p].lead for p in replies if records[p].lead)
        out[path] = Context(before, after, _key(rec, before, after))
    return out


def _key(rec: Record, before: Iterable[str], after: Iterable[str]) -> str:
    parts = [rec.hash, rec.title, *before, "\x00", *after]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]
