"""The ranking's parts and stages, written once (no numpy, no networkx): what ``search.search``
composes, through whichever ``Reader`` it is given.

A reader is what a recall reads of one vault: the hybrid pipeline's (``pipeline.VaultReader``:
every note in memory, numpy arrays of the query's scores, the link graph) or the keyword
answer's while the memory service warms up (``keywords.ManifestReader``: the manifest and the
BM25 postings on disk, links read as far as needed). They differ in what they read, never in
how a note is ranked.

A note's parts (``--explain``) are its ``Text`` parts (standardised bm25 and vector, learned
``length``, and the raw scores), ``context`` (``context_weight`` x the best ``fused`` score
among the notes it links with either way, floored at 0) and what later stages add
(``graph``, ``anchor``, ``subject``, ``session``, ``turn``); ``base`` is their sum.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import islice
from typing import Any, Protocol

from ..core.filters import Filters, parse_time
from ..index.manifest import Record
from ..index.usage import Usage
from . import floor
from .adaptive import Weights, adaptive, blend_factor, evidence, importance_factor

GRAPH_WEIGHT = 0.3  # share of a strong hit's score it passes to the notes it links with
BASELINE = 0.0  # the standardised score of an average note (see standard.standardise)
CANDIDATE_WEIGHT = 0.5  # an unconfirmed (status: candidate) memory ranks low until confirmed
PARTS = (
    "bm25",
    "bm25_raw",
    "vector",
    "vector_raw",
    "context",
    "graph",
    "anchor",
    "subject",
    "session",
    "turn",
    "feedback",
)
Parts = dict[str, Any]  # part name -> value (floats; ``*_via`` and flags for --explain)


class Text(Protocol):
    """One query's text scores over a vault."""

    context_weight: float  # the weight of a note's best neighbour's ``fused`` score (its context)
    best: float  # the best ``fused`` score of any note (how much context can add at most)
    matched: bool  # some note holds a keyword of the query
    vectors: bool  # the parts hold the query's cosines (``vector_raw``; the relevance floor reads them)

    def parts(self, path: str) -> dict[str, float]:
        """A note's weighted text parts (bm25, vector, [length]) and raw scores (bm25_raw, vector_raw)."""
        ...

    def fused(self, path: str) -> float:
        """The score a note lends its neighbours as context (bm25 + vector parts)."""
        ...

    def ranked(self) -> Iterator[tuple[str, float]]:
        """(path, sum of its text parts) of every note that may be a candidate (in BM25 mode,
        those holding a keyword), best first, ties by path."""
        ...

    def similar(self, seeds: list[str], weight: float, count: int) -> list[tuple[str, float]]:
        """(path, standardised cosine) of the ``count`` notes nearest the query's vector moved
        towards the best of ``seeds`` (``feedback.py``), best first; [] without vectors."""
        ...


class Reader(Protocol):
    """What a recall reads of one vault."""

    records: dict[str, Record]  # the records read so far (``fetch`` adds to it)

    def fetch(self, paths: Iterable[str]) -> None:
        """Have the records of ``paths`` (those indexed) in ``records``."""
        ...

    def every(self) -> dict[str, Record] | None:
        """Every note's record (time expressions are resolved against them); None: this reader
        reads notes as needed, and a query's time expression is plain words."""
        ...

    def text(self, query: str, opt: Any, vector_query: str | None = None) -> Text:
        """The query's text scores under ``opt`` (``options.Options``); ``vector_query``: what
        the vectors embed instead of the query."""
        ...

    def follow(self, paths: Iterable[str], back: bool = False) -> None:
        """Make ``near`` hold the links of ``paths`` (``back``: and every link to them)."""
        ...

    def near(self, path: str) -> Collection[str]:
        """The notes ``path`` links with either way (not itself, no attachment or dangling target)."""
        ...

    def resolve(self, target: str, source: str) -> str | None:
        """The note a link from ``source`` to ``target`` names."""
        ...

    def anchor(self, anchor: str, depth: int, decay: float) -> dict[str, float]:
        """Notes within ``depth`` hops of the note ``anchor`` names -> ``decay ** hops``."""
        ...

    def usage(self, keys: list[str]) -> dict[str, Usage]: ...

    def body(self, path: str) -> str: ...

    def memo(self, name: str) -> dict:
        """A cache of per-note values (kept per content hash by ``search``)."""
        ...

    def terms(self, text: str) -> list[str]:
        """The analysed terms of a text (a snippet's highlights)."""
        ...

    def outdated_by(self, path: str) -> list[str]: ...


def base(parts: Parts) -> float:
    """The sum of a note's additive parts (the raw score before time, profile, importance, blend)."""
    return (parts["bm25"] + parts["vector"] + parts.get("length", 0.0) + parts["context"] + parts["graph"]
            + parts["anchor"] + parts["subject"] + parts["session"] + parts.get("turn", 0.0)
            + parts.get("feedback", 0.0))  # fmt: skip


def above_average(parts: Parts) -> bool:
    """Whether a note shares a keyword with the query, or its parts (text, links, anchor,
    speaker; not the turn prior) sum above the vault's average note (0)."""
    return parts["bm25_raw"] > 0 or base(parts) - parts.get("turn", 0.0) > BASELINE


def meaning(parts: Parts, vectors: bool) -> bool:
    """Whether a note shares meaning with the query beyond chance on its own (``floor.py``;
    ``vectors``: its ``vector_raw`` is the query's cosine, else a keyword decides)."""
    return floor.meaningful(parts["vector_raw"], parts["bm25_raw"] > 0, vectors)


def sources(scored: dict[str, Parts], records: dict[str, Record], vectors: bool) -> frozenset[str]:
    """The keys of the notes that share meaning with the query on their own (``meaning``)."""
    return frozenset(records[p].key for p, parts in scored.items() if meaning(parts, vectors))


def evident(parts: Parts, vectors: bool = True, linked_from: frozenset[str] = frozenset()) -> bool:
    """Whether a note is evidence for the query: it shares meaning with the query beyond chance
    (``floor.py``: a keyword, or a cosine unrelated texts do not reach), or is linked with a
    note in ``linked_from`` (keys of notes that do: ``sources``) that lifted it; and, without a
    keyword, ``above_average``. A hit below the average (a keyword in common, little else) is
    shown at 0 with why it is there: no score shown is negative (``score``)."""
    if not above_average(parts):
        return False
    linked = {parts.get("graph_via"), None if parts["context"] <= 0 else parts.get("context_via")}
    return meaning(parts, vectors) or bool(linked & linked_from)


def relevant(parts: Parts, vectors: bool = True, linked_from: frozenset[str] = frozenset()) -> bool:
    """``evident``, with no context from a hidden note (resolved, superseded: a note that was a
    hit only for its link with it is no hit once it is resolved)."""
    return evident({**parts, "context": 0.0} if parts.get("context_hidden") else parts, vectors, linked_from)


def weigh(
    parts: Parts, rec: Record, profile: float, weights: Weights, used: Usage | None, now: float
) -> None:
    """A note's multipliers: ``profile`` (x ``CANDIDATE_WEIGHT`` for an unconfirmed memory),
    ``importance`` and ``blend``, the adaptive factor from its usage (``used``; None: no
    adaptive scoring, 1), with the adaptive parts for --explain."""
    parts["profile"] = profile * (CANDIDATE_WEIGHT if rec.status == "candidate" else 1.0)
    parts["importance"] = importance_factor(rec.importance, weights)
    parts["blend"] = 1.0
    if used is not None:
        written = parse_time(rec.updated)
        ev = evidence(used, weights)
        a = adaptive(ev, now, written.timestamp() if written else None, weights)
        parts.update(a, ratings=ev.ratings, min_ratings=weights.min_ratings)  # --explain: why 0.5
        parts["blend"] = blend_factor(a["adaptive"], weights)


def score(parts: Parts) -> float:
    """``raw * profile * importance * blend``, raw = ``base`` + ``time`` (set in ``parts``):
    multipliers lift what stands out, never a below-average score (a raw score <= 0 is left
    as it is)."""
    raw = base(parts) + parts.get("time", 0.0)
    parts["score"] = raw * parts["profile"] * parts["importance"] * parts["blend"] if raw > 0 else raw
    return parts["score"]


class Round:
    """One retrieval round: the query's ``Text`` scores plus each note's neighbour context."""

    def __init__(self, reader: Reader, text: Text, filters: Filters):
        self.reader, self.text, self.filters = reader, text, filters

    def context(self, path: str) -> tuple[float, str | None]:
        """(context part, the neighbour it comes from: the best-scoring one, ties the later
        path; None without links or below the average note)."""
        weight, fused = self.text.context_weight, self.text.fused
        if weight <= 0:
            return 0.0, None
        best, via = max(((fused(q), q) for q in self.reader.near(path)), default=(0.0, None))
        return (weight * best, via) if best > 0 else (0.0, None)

    def parts_of(self, path: str, context: tuple[float, str | None] | None = None) -> Parts:
        """The parts of any note (a note pulled in by a later stage keeps its own text scores);
        ``context``: its context, when known."""
        parts: Parts = dict.fromkeys(PARTS, 0.0)
        parts.update(self.text.parts(path))
        parts["context"], via = context or self.context(path)
        if via is not None:
            self.reader.fetch([via])
            rec = self.reader.records[via]
            parts["context_via"] = rec.key
            if not self.filters.visible(rec):  # resolved, superseded: no evidence (``relevant``)
                parts["context_hidden"] = True
        return parts

    def retrieve(self, count: int, ok: Callable[[str], bool] | None) -> dict[str, Parts]:
        """The ``count`` notes ``ok`` lets through with the best text parts plus context (ties
        by path), best first."""
        weight = self.text.context_weight
        reach = weight * max(self.text.best, 0.0) if weight > 0 else 0.0  # the most context adds
        pool = self._pool(count, reach, ok)
        self.reader.follow(pool)
        context = {path: self.context(path) for path in pool}
        total = {path: dense + context[path][0] for path, dense in pool.items()}
        kept = sorted(total, key=lambda p: (-total[p], p))[:count]
        self.reader.fetch(kept)
        return {path: self.parts_of(path, context[path]) for path in kept if path in self.reader.records}

    def _pool(self, count: int, reach: float, ok: Callable[[str], bool] | None) -> dict[str, float]:
        """The notes (best text first) that may be among the ``count`` best with context: down
        to the ``count``-th one's text less the most context can add."""
        pool: dict[str, float] = {}
        floor: float | None = None
        ranked = self.text.ranked()
        while part := list(islice(ranked, max(50, 2 * count))):
            if ok is not None:
                self.reader.fetch(p for p, _ in part)
                part = [(p, d) for p, d in part if ok(p)]
            for path, dense in part:
                if floor is not None and dense < floor:
                    return pool
                pool[path] = dense
                if len(pool) == count:
                    floor = dense - reach
        return pool


def lifecycle(reader: Reader, scored: dict[str, Parts], filters: Filters, keep: Collection[str] = ()) -> None:
    """Drop hidden notes (except those in ``keep``); a superseded one hands its parts to its
    live replacement (when it has none there, or a lower one)."""
    records = reader.records
    for path in [p for p in scored if not filters.visible(records[p]) and p not in keep]:
        parts = scored.pop(path)
        new = _replacement(reader, path, filters) if records[path].status == "superseded" else None
        if new is None or not filters.metadata_match(records[new]):
            continue
        if new not in scored or base(scored[new]) < base(parts):
            scored[new] = {**parts, "redirect_from": records[path].key}


def _replacement(reader: Reader, path: str, filters: Filters) -> str | None:
    """Follow ``superseded_by`` from a hidden note to the first visible note, if any."""
    seen, current = {path}, reader.records[path]
    while current.superseded_by:
        nxt = reader.resolve(current.superseded_by, current.path)
        if nxt is not None:
            reader.fetch([nxt])
        if nxt is None or nxt in seen or nxt not in reader.records:
            return None
        seen.add(nxt)
        current = reader.records[nxt]
        if filters.visible(current):
            return nxt
    return None


def expand(reader: Reader, scored: dict[str, Parts], seeds: int, decay: float,
           parts_of: Callable[[str], Parts], ok: Callable[[str], bool]) -> None:  # fmt: skip
    """Notes linked to the strongest hits get a decaying share of how far those stand out.

    A seed passes ``GRAPH_WEIGHT * seed score * decay`` (an average note scores 0) to the
    notes it links with either way (those ``ok`` lets through); seeds are the top ``seeds``
    hits scoring at least half as much as the best. A note keeps the best share it gets.
    """
    if not scored or seeds <= 0:
        return
    top = sorted(scored.items(), key=lambda kv: (-base(kv[1]), kv[0]))[:seeds]
    best = base(top[0][1]) - BASELINE
    if best <= 0:
        return
    strong = {p: base(parts) - BASELINE for p, parts in top if base(parts) - BASELINE >= 0.5 * best}
    reader.follow(strong, back=True)
    passed: dict[str, tuple[float, str]] = {}
    for seed, score in strong.items():
        value = score * decay
        for path in sorted(reader.near(seed)):
            if path not in strong and (path not in passed or value > passed[path][0]):
                passed[path] = (value, seed)
    reader.fetch(passed)
    reader.follow(passed)
    for path, (value, seed) in passed.items():
        if not ok(path):
            continue
        parts = scored.setdefault(path, parts_of(path))
        if GRAPH_WEIGHT * value > parts["graph"]:
            parts["graph"], parts["graph_via"] = GRAPH_WEIGHT * value, reader.records[seed].key


def top(scores: dict[str, float], k: int, shown: Callable[[str], bool] | None = None) -> list[str]:
    """The best ``k`` notes by score (ties by path) that ``shown`` lets through (tested lazily,
    best first: the test may read a note), so a filter never leaves recall short of k."""
    ranked = sorted(scores, key=lambda p: (-scores[p], p))
    if shown is None:
        return ranked[:k]
    return list(islice((p for p in ranked if shown(p)), k))
