"""One recall result (``Hit``) and its snippet: what the hybrid pipeline and the keyword answer
given while the memory service warms up (``keywords.py``) both return. Light to import: no
numpy, no networkx."""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from ..core.filters import is_expired
from ..index.chunking import plain_text


@dataclass
class Hit:
    """One recall result. ``id`` is the frontmatter id, else the vault-relative path."""

    id: str
    title: str
    path: str
    type: str | None
    status: str
    score: float
    snippet: str
    rank: int = 0
    tags: list[str] = field(default_factory=list)
    importance: int = 5
    updated: str = ""
    via: str | None = None
    highlights: list[str] = field(default_factory=list)
    vault: str | None = None  # set when several vaults are searched together
    source: str | None = None  # the frontmatter ``source``: the agent or session that wrote it
    outdated_by: list[str] = field(default_factory=list)  # titles of active notes that may update this one
    explain: dict[str, Any] = field(default_factory=dict)

    def as_dict(self, explain: bool = False) -> dict[str, Any]:
        """The hit as a dict (fields in order; lists and ``explain`` copied): what ``asdict``
        gives, built directly (``asdict`` deep-copies field by field, ~0.2 ms a hit)."""
        data = {name: getattr(self, name) for name in _HIT_FIELDS}
        for name in ("tags", "highlights", "outdated_by"):
            data[name] = list(data[name])
        if explain:
            data["explain"] = copy.deepcopy(self.explain)
        else:
            data.pop("explain")
        return data


_HIT_FIELDS = tuple(f.name for f in dataclasses.fields(Hit))


def shown_status(rec: Any) -> str:
    """The status a hit shows: ``expired`` for an active memory past its ``expires``."""
    return "expired" if rec.status == "active" and is_expired(rec) else rec.status


WORD_RE = re.compile(r"\w+", re.UNICODE)


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    from whoosh.lang.porter import stem

    return stem(word.lower())


SNIPPET_CACHE = (
    512  # bodies whose words are kept (each up to SNIPPET_CACHE_CHARS: the service's memory stays flat)
)
SNIPPET_CACHE_CHARS = 32 << 10


@functools.lru_cache(maxsize=SNIPPET_CACHE)
def _snippet_words(body: str) -> tuple[tuple[str, ...], tuple[frozenset[str], ...]]:
    """The words a snippet is cut from (the heading line and code fences left out) and each
    word's stems; cached by body text, as the same notes come back query after query."""
    body = plain_text(body)
    lines = [
        ln.lstrip("#> ").strip()
        for ln in body.splitlines()
        if ln.strip() and not ln.lstrip().startswith("# ")
    ]
    lines = [ln for ln in lines if ln and not ln.startswith(("```", "~~~"))]
    words = tuple(" ".join(lines).split())
    return words, tuple(frozenset(_stem(w) for w in WORD_RE.findall(word)) for word in words)


SNIPPET_SCAN = 16 << 10  # characters of a body the snippet is cut from: a huge note costs little
MAX_MATCHES = 256  # term occurrences looked at to place that window in a longer body


def _term_starts(body: str, terms: list[str]) -> list[int]:
    """Where words starting with a query term begin (case-folded), the first ``MAX_MATCHES``
    of each term, sorted: plain substring search, a few milliseconds for a 23 MB note."""
    low = body.lower()
    if len(low) != len(body):  # lowering moved text (a few special letters): positions from the body
        low = body
    found: list[int] = []
    for term in {t.lower() for t in terms if t}:
        pos, n = low.find(term), 0
        while pos >= 0 and n < MAX_MATCHES:
            if not pos or not low[pos - 1].isalnum():
                found.append(pos)
                n += 1
            pos = low.find(term, pos + len(term))
    return sorted(found)


def _window(body: str, terms: list[str]) -> tuple[str, bool, bool]:
    """The part of a long ``body`` (``SNIPPET_SCAN`` characters) around its densest run of
    query terms (``_term_starts``), cut at whitespace; and whether text was cut before and
    after it."""
    starts = _term_starts(body, terms)
    centre, span, most, j = 0, SNIPPET_SCAN // 4, 0, 0
    for i, pos in enumerate(starts):  # the match with most others in the span before it
        while starts[j] < pos - span:
            j += 1
        if i - j + 1 > most:
            most, centre = i - j + 1, starts[j]
    lo = max(0, centre - SNIPPET_SCAN // 8)
    hi = min(len(body), lo + SNIPPET_SCAN)
    if lo:
        lo = body.find(" ", lo, hi) + 1 or lo
    if hi < len(body):
        cut = body.rfind(" ", lo, hi)
        hi = cut if cut > lo else hi
    return body[lo:hi], lo > 0, hi < len(body)


def make_snippet(body: str, terms: list[str], width: int = 32) -> tuple[str, list[str]]:
    """The window of ``width`` words with the most query-term matches, and the matched words.

    Words match when their stem equals a query term; the heading line is skipped. A body longer
    than ``SNIPPET_SCAN`` is first cut to that many characters around its query terms
    (``_window``): a 23 MB note no longer costs seconds and a gigabyte per recall.
    """
    before = after = False
    if len(body) > SNIPPET_SCAN:
        body, before, after = _window(body, terms)
    words, stems = (_snippet_words if len(body) <= SNIPPET_CACHE_CHARS else _snippet_words.__wrapped__)(body)
    if not words:
        return "", []
    wanted = set(terms)
    hits = [not wanted.isdisjoint(s) for s in stems]
    best, best_n = 0, -1
    window = sum(hits[:width])
    for start in range(0, max(1, len(words) - width + 1)):
        if start:
            window += hits[start + width - 1] if start + width - 1 < len(hits) else 0
            window -= hits[start - 1]
        if window > best_n:
            best, best_n = start, window
    chosen = words[best : best + width]
    matched = sorted({w.strip(".,;:!?()[]*_`\"'").lower() for w, h in zip(chosen, hits[best:]) if h})
    text = " ".join(chosen)
    prefix = "… " if best > 0 or before else ""
    suffix = " …" if best + width < len(words) or after else ""
    return prefix + text + suffix, [m for m in matched if m]
