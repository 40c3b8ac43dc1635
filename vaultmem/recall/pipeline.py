"""Hybrid recall: BM25 + vectors fused, lifecycle redirects, graph expansion, profiles.

Score of a hit (every part is reported by ``--explain``)::

    raw   = bm25 + vector [+ length] + context + graph + anchor + subject + session + turn [+ time]
    score = raw * profile * importance * blend      (a raw score <= 0 is left as it is)

A note is a hit only with evidence (``evident``): a keyword in common with the query, or a raw
score above the vault's average note (0); recall returns fewer than k hits rather than pad
them with notes that have none. ``time`` (a time expression in the query, ``--time boost``)
goes to the notes dated in its range that share a keyword with the query; one that shares
none gets the share of it its raw score earns against the best note's (``_time_share``): time
re-ranks relevant notes and never lifts one the query's words leave out. When the rest of the
query names nothing (no note has any of its keywords: "decisions last week", "what happened
yesterday"), the range is the evidence and every note dated in it gets the whole boost (with
``--time filter`` too). A hit whose score is still at or below the average note's (a keyword in
common, little else) says so in its ``via``.

``bm25`` and ``vector`` are the weighted, standardised parts (every note is scored by both;
an average note scores 0): with ``[recall] combine = "learned"`` (default "sum") the weights
come from ``learned.py``, which adds one more part to the sum, ``length`` (a short-note
prior); with ``"sum"`` they are ``fusion.hybrid``'s;
``context`` is a share of the best fused score among the notes a note links with
(``neighbours.py``; BM25 scores a question without its question words, ``question.py``): it
ranks, but is no evidence when that note is hidden (resolved, superseded: a note that was a hit
only for its link with it is no hit once it is resolved);
``graph`` is what a strong hit passes to the notes it links with (decaying per hop);
``subject`` lifts a speaker's own notes when the question is about that speaker (a second
round, ``subject.py``); ``session`` lifts a question's notes by the best match among the notes
dated on their day (``spread.py``); ``turn`` lifts a conversation turn that tells and lowers
one that only asks, for a question (``turns.py``; a prior: no note is a hit by it alone);
``anchor`` lifts notes near an explicit ``--anchor``; ``profile`` re-weights types;
``importance`` lifts high-importance memories; ``blend`` is the adaptive factor from usage
(``adaptive.py``; 1 with ``--no-adaptive``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..core.config import DEFAULTS
from ..core.errors import BadInput
from ..core.filters import Filters, now_utc, parse_time
from ..core.timeexpr import DateRange, parse_query
from ..index import neighbours
from ..index.bm25 import BM25Index
from ..index.embed import Embedder, similarity
from ..index.graph import outdated_by
from ..index.manifest import Record
from ..index.traverse import anchor_weights, expand
from ..index.usage import Usage
from ..index.vectors import VectorIndex
from . import contextual, datemath, feedback, floor, fusion, learned, spread, subject, timefilter, turns
from .adaptive import Weights, adaptive, blend_factor, evidence, importance_factor
from .hit import Hit, make_snippet, shown_status
from .question import content_query, is_question

MODES = ("hybrid", "bm25", "vector")
PROFILES: dict[str, dict[str, float]] = {
    "default": {},
    "planning": {"decision": 1.4, "architecture": 1.4, "project": 1.3, "tech_context": 1.3,
                 "trade_off": 1.2, "pattern": 1.1, "commitment": 1.1},
    "incident": {"gotcha": 1.5, "bug_fix": 1.5, "lesson": 1.4, "discovery": 1.2, "pattern": 1.1},
    "handoff": {"handoff": 1.6, "progress": 1.5, "session_summary": 1.4, "commitment": 1.2},
}  # fmt: skip
RECENT_TYPES = {"handoff": ("handoff", "progress", "session_summary")}
GRAPH_WEIGHT = 0.3
TIME_MODES = ("boost", "filter", "off")
TIME_BOOST = DEFAULTS["recall"][
    "time_boost"
]  # added to the raw score of a note dated in a query's time range
ANCHOR_WEIGHT = 0.15
BASELINE = 0.0  # the standardised score of an average note (see fusion.standardise)
CANDIDATE_WEIGHT = 0.5  # an unconfirmed (status: candidate) memory ranks low until confirmed


@dataclass
class Options:
    """Everything a recall call can ask for."""

    k: int = DEFAULTS["recall"]["k"]
    filters: Filters = field(default_factory=Filters)
    anchor: str | None = None
    depth: int = DEFAULTS["recall"]["anchor_depth"]
    profile: str = "default"
    mode: str = "hybrid"
    bm25_weight: float = DEFAULTS["recall"]["bm25_weight"]
    context_weight: float = DEFAULTS["recall"]["context_weight"]  # neighbour context (neighbours.py)
    question_words: bool = DEFAULTS["recall"]["question_words"]  # True: BM25 scores question words too
    subject: bool = DEFAULTS["recall"][
        "subject"
    ]  # a question about a speaker gets a second round (subject.py)
    session_weight: float = DEFAULTS["recall"]["session_weight"]  # a session's best notes (spread.py)
    date_arithmetic: bool = DEFAULTS["recall"]["date_arithmetic"]  # "the week before X" (datemath.py)
    turn_weight: float = DEFAULTS["recall"][
        "turn_weight"
    ]  # a conversation turn that tells, not asks (turns.py)
    context_vectors: bool = DEFAULTS["recall"]["context_vectors"]  # contextual vectors (contextual.py)
    feedback_weight: float = DEFAULTS["recall"][
        "feedback_weight"
    ]  # list questions' third round (feedback.py)
    feedback_part: float = DEFAULTS["recall"]["feedback_part"]
    candidates: int = DEFAULTS["recall"]["candidates"]
    combine: str = DEFAULTS["recall"]["combine"]  # "learned" (learned.py) or "sum" (the hand-set formula)
    learned_weights: str = DEFAULTS["recall"]["learned_weights"]  # "": the shipped weights
    graph_decay: float = DEFAULTS["recall"]["graph_decay"]
    graph_seeds: int = DEFAULTS["recall"]["graph_seeds"]
    adaptive: bool = True
    weights: Weights = field(default_factory=Weights)
    stats: tuple[fusion.Stats, fusion.Stats] | None = None  # pooled over vaults searched together
    snippets: bool = True  # off when a caller builds them only for the hits it keeps
    now: dt.datetime | None = None  # what "today" is for time expressions (None: the clock)
    time_mode: str = "boost"  # a time expression in the query boosts or filters; "off": plain text
    time_boost: float = TIME_BOOST
    as_of: dt.date | None = None  # only notes valid on that day, superseded or not
    shown: Callable[[str], bool] | None = (
        None  # a path test the hits must pass (other code branches' memories)
    )

    @classmethod
    def build(cls, call: dict[str, Any], config: dict[str, Any], root: Any, **extra: Any) -> Options:
        """The options of one call: ``call`` holds every declared recall parameter (``params.resolve``),
        the vault's ``[recall]`` section tunes the rest, ``extra`` sets fields no caller declares."""
        rc = config["recall"]
        tuned = {key: type(getattr(cls, key))(value) for key, value in rc.items() if key in _TUNED}
        tuned["learned_weights"] = learned.weights_file(root, str(rc["learned_weights"]))
        filters = Filters.build(call["types"], call["tags"], since=call["since"], scope=call["scope"],
                                include_hidden=call["include_resolved"])  # fmt: skip
        return cls(
            **tuned, k=call["k"], filters=filters, anchor=call["anchor"], depth=call["depth"], profile=call["profile"],
            mode=call["mode"], adaptive=call["adaptive"], weights=Weights.from_config(config["adaptive"]),
            now=timefilter.parse_now(call["now"]), time_mode=call["time"],
            as_of=timefilter.parse_day(call["as_of"], "--as-of"), **extra,
        )  # fmt: skip

    def check(self) -> None:
        if self.mode not in MODES:
            raise BadInput(f"--mode: {self.mode!r} is not one of {', '.join(MODES)}")
        if self.profile not in PROFILES:
            raise BadInput(f"--profile: {self.profile!r} is not one of {', '.join(PROFILES)}")
        if self.k < 1:
            raise BadInput("-k must be at least 1")
        if self.depth < 0:
            raise BadInput("--depth must be 0 or more")
        if self.time_mode not in TIME_MODES:
            raise BadInput(f"--time: {self.time_mode!r} is not one of {', '.join(TIME_MODES)}")
        learned.check_combine(self.combine)


# the [recall] keys that tune Options directly (k and anchor_depth are call parameters' defaults: params.py)
_TUNED = {f.name for f in dataclasses.fields(Options)} & set(DEFAULTS["recall"]) - {"k", "learned_weights"}


@dataclass
class Sources:
    """The indexes recall reads (provided by the Vault)."""

    records: dict[str, Record]
    bm25: BM25Index
    vectors: Callable[[], VectorIndex]
    embedder: Embedder
    graph: nx.DiGraph
    read_body: Callable[[str], str]
    universe: list[str] = field(default_factory=list)  # every indexed note, sorted
    index: dict[str, int] = field(default_factory=dict)  # path -> position in universe
    usage: Callable[[list[str]], dict[str, Usage]] | None = None  # key -> usage data
    memo: dict = field(default_factory=dict)  # recent raw scores (a multi-vault recall asks twice)
    contexts: Callable[[], VectorIndex] | None = None  # contextual vectors (index/context.py)


def _parts() -> dict[str, float]:
    return {
        "bm25": 0.0,
        "bm25_raw": 0.0,
        "vector": 0.0,
        "vector_raw": 0.0,
        "context": 0.0,
        "graph": 0.0,
        "anchor": 0.0,
        "subject": 0.0,
        "session": 0.0,
        "turn": 0.0,
        "feedback": 0.0,
    }


def raw_scores(src: Sources, query: str, mode: str, question_words: bool = False,
               vector_query: str | None = None, context: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    """(BM25 score, cosine) of every note in universe order, and the query vector.

    BM25 scores the query without its question words unless ``question_words``; vectors
    embed ``vector_query`` when given, else the query; ``context``: a note's cosine is the
    better of its plain and its contextual vector's."""
    key = (query, mode, question_words, vector_query, context)
    if key in src.memo:
        return src.memo[key]
    if len(src.memo) > 8:
        src.memo.clear()
    src.memo[key] = _raw_scores(src, query, mode, question_words, vector_query, context)
    return src.memo[key]


def _raw_scores(src: Sources, query: str, mode: str, question_words: bool,
                vector_query: str | None = None, context: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    n = len(src.universe)
    text = query if question_words else content_query(query)
    bm25 = src.bm25.score_all(text, src.index, n) if mode in ("hybrid", "bm25") else np.zeros(n)
    if mode not in ("hybrid", "vector"):
        return bm25, np.zeros(n), None
    qvec = src.embedder.embed_query([vector_query or query])[0]
    vec = src.vectors().aligned_scores(qvec, src.index, n)
    if context and src.contexts is not None:
        vec = src.contexts().better(qvec, src.index, vec)
    return bm25, similarity(src.embedder, vec), qvec  # one scale for every model (embed.similarity)


def _retrieve(
    src: Sources, query: str, opt: Options, allowed: set[str] | None, vector_query: str | None = None
):
    """Score every note with BM25 and/or vectors, fuse, and keep the top candidates.

    Returns (path -> parts, query vector or None).
    """
    universe, index = src.universe, src.index
    n = len(universe)
    ctx = _with_context(opt, query)
    bm25, vec, qvec = raw_scores(src, query, opt.mode, opt.question_words, vector_query, ctx)
    pairs = neighbours.edges(src.graph, index)
    arrays = _combine(src, opt, bm25, vec, pairs)
    c_part = arrays["context"]
    fused = arrays["bm25"] + arrays["vector"]  # what a neighbour's context comes from
    total: np.ndarray = sum(arrays.values())  # type: ignore[assignment]  # never empty
    eligible = np.ones(n, dtype=bool) if opt.mode != "bm25" else bm25 > 0
    if allowed is not None:
        mask = np.zeros(n, dtype=bool)
        mask[[index[p] for p in allowed if p in index]] = True
        eligible &= mask
    idx = np.flatnonzero(eligible)
    if len(idx) > opt.candidates:
        idx = idx[np.argpartition(-total[idx], opt.candidates - 1)[: opt.candidates]]

    def parts_of(path: str) -> dict[str, float]:
        """Score parts of any note (a note pulled in by the graph keeps its own text scores)."""
        parts = _parts()
        i = index.get(path)
        if i is not None:
            parts.update({name: float(a[i]) for name, a in arrays.items()})
            parts.update(bm25_raw=float(bm25[i]), vector_raw=float(vec[i]))
            j = neighbours.via(i, fused, pairs) if c_part[i] > 0 else None
            if j is not None:
                parts["context_via"] = src.records[universe[j]].key  # type: ignore[assignment]
                if not opt.filters.visible(src.records[universe[j]]):  # resolved, superseded: no evidence
                    parts["context_hidden"] = True
        return parts

    return {universe[i]: parts_of(universe[i]) for i in idx}, qvec, parts_of


def _combine(src: Sources, opt: Options, bm25: np.ndarray, vec: np.ndarray,
             pairs: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:  # fmt: skip
    """Name -> part of every note; the parts' sum ranks. ``combine = "sum"``: bm25 + vector
    (``fusion.hybrid``) + context; ``"learned"`` (hybrid mode): ``learned.parts``. ``pairs``:
    the link pairs (``neighbours.edges``) context comes through."""
    if opt.combine == "sum" or opt.mode != "hybrid":
        weight = {"hybrid": opt.bm25_weight, "bm25": 1.0, "vector": 0.0}[opt.mode]
        b_part, v_part = fusion.hybrid(bm25, vec, weight, opt.stats)
        return {
            "bm25": b_part,
            "vector": v_part,
            "context": neighbours.lift(b_part + v_part, pairs, opt.context_weight),
        }
    b_stats, v_stats = opt.stats if opt.stats is not None else (None, None)
    return learned.parts(learned.load(opt.learned_weights or None), fusion.standardise(bm25, b_stats),
                         fusion.standardise(vec, v_stats), _sizes(src), pairs)  # fmt: skip


def _sizes(src: Sources) -> np.ndarray:
    """File size of every note in universe order (kept in the memo, which a change clears)."""
    cached = src.memo.get("sizes")
    if cached is None or cached[0] is not src.index:
        cached = (src.index, np.array([float(src.records[p].size) for p in src.universe]))
        src.memo["sizes"] = cached
    return cached[1]


def _base(parts: dict[str, float]) -> float:
    return (parts["bm25"] + parts["vector"] + parts.get("length", 0.0) + parts["context"] + parts["graph"]
            + parts["anchor"] + parts["subject"] + parts["session"] + parts.get("turn", 0.0)
            + parts.get("feedback", 0.0))  # fmt: skip


def _of_body(src: Sources, name: str, path: str, read: Callable[[str], Any]) -> Any:
    """``read(body)`` of a note, cached on the graph under ``name`` per content hash."""
    cache = src.graph.graph.setdefault(name, {})
    rec = src.records[path]
    hit = cache.get(path)
    if hit is None or hit[0] != rec.hash:
        hit = cache[path] = (rec.hash, read(src.read_body(path)))
    return hit[1]


def _speaker(src: Sources, path: str) -> str | None:
    """The speaker a note opens with (``Name: ...``), cached per content hash."""
    return _of_body(src, "speakers", path, subject.speaker)


def _subject_round(src: Sources, query: str, opt: Options, allowed: set[str] | None, scored: dict, parts_of):
    """A question naming a speaker of the first round's top hits: search again with the
    name out of the vector query, and lift that speaker's own notes (``subject.py``)."""
    if not opt.subject or opt.mode == "bm25" or not subject.names_in(query):
        return scored, parts_of
    ranked = sorted(scored, key=lambda p: -_base(scored[p]))
    subj = subject.find(query, [(src.records[p].key, _speaker(src, p)) for p in ranked[: subject.FIRST]])
    if subj is None:
        return scored, parts_of
    first = {p: rank for rank, p in enumerate(ranked, start=1)}
    scored, qvec, parts_of = _retrieve(src, query, opt, allowed, subj.vector_query)
    for path, parts in scored.items():
        parts["first_round_rank"] = first.get(path, 0)  # 0: not among the first round's candidates
        if _speaker(src, path) in subj.names:
            parts["subject"] = subj.lift
            parts["subject_via"] = subj.reason()
    if opt.feedback_weight > 0 and subj.lift > subject.WEIGHT and qvec is not None:
        _feedback_round(src, opt, subj, qvec, scored, parts_of, allowed)
    return scored, parts_of


def _feedback_round(src: Sources, opt: Options, subj: subject.Subject, qvec: np.ndarray, scored: dict,
                    parts_of, allowed: set[str] | None) -> None:  # fmt: skip
    """A list question about a speaker: the speaker's notes scored by the question's vector
    moved towards the speaker's best notes so far (``feedback.py``)."""
    own = [p for p in sorted(scored, key=lambda p: -_base(scored[p])) if _speaker(src, p) in subj.names]
    vectors = src.vectors()
    seeds = [v for p in own[: feedback.SEEDS] if (v := vectors.note_vector(p)) is not None]
    if not seeds:
        return
    cos = vectors.aligned_scores(
        feedback.expanded(qvec, seeds, opt.feedback_weight), src.index, len(src.universe)
    )
    z = fusion.standardise(cos)
    top = np.argsort(-z)[: opt.candidates]
    for i in top:
        path = src.universe[i]
        if _speaker(src, path) not in subj.names or (allowed is not None and path not in allowed):
            continue
        parts = scored.setdefault(path, parts_of(path))
        parts["subject"] = subj.lift
        parts["feedback"] = opt.feedback_part * float(z[i])


def _turn_value(src: Sources, path: str) -> tuple[str | None, float]:
    """``turns.value`` of a note (speaker, value), cached per content hash."""
    return _of_body(src, "turn_values", path, turns.value)


def _with_context(opt: Options, query: str) -> bool:
    """Whether this query's notes score by the better of their two vectors (``contextual.py``)."""
    return opt.context_vectors and contextual.applies(query)


def _turn_part(src: Sources, query: str, scored: dict, opt: Options) -> None:
    """A question (hybrid and vector modes): each conversation turn that tells gets
    ``turn_weight``, one that only asks loses it (``turns.py``); a prior, never evidence."""
    if opt.turn_weight <= 0 or opt.mode == "bm25" or not is_question(query):
        return
    values = {path: _turn_value(src, path) for path in scored}
    talking = turns.conversational([who for who, _ in values.values()])
    for path, parts in scored.items():
        who, value = values[path]
        parts["turn"] = opt.turn_weight * value if who in talking else 0.0


def _session_part(src: Sources, query: str, scored: dict, opt: Options) -> None:
    """A question not asking for a list (hybrid and vector modes): each candidate gets
    ``session_weight`` x the best score among its session's candidates (``spread.py``)."""
    if opt.session_weight <= 0 or opt.mode == "bm25" or not scored or not spread.applies(query):
        return  # bm25 mode stays what the keyword answer (linkrank.py) reproduces
    groups = {p: spread.session_of(src.records[p]) for p in scored}
    best = spread.session_best(groups, {p: _base(parts) for p, parts in scored.items()})
    for path, parts in scored.items():
        group = groups[path]
        if group is not None:
            parts["session"] = opt.session_weight * best[group]
            parts["session_via"] = group  # --explain: the session's day


def _replacement(src: Sources, path: str, opt: Options) -> str | None:
    """Follow ``superseded_by`` from a hidden note to the first visible note, if any."""
    resolver = src.graph.graph["resolver"]
    seen = {path}
    current = src.records[path]
    while current.superseded_by:
        nxt = resolver.resolve(current.superseded_by, current.path)
        if nxt is None or nxt in seen or nxt not in src.records:
            return None
        seen.add(nxt)
        current = src.records[nxt]
        if opt.filters.visible(current):
            return nxt
    return None


def _lifecycle(src: Sources, scored: dict[str, dict[str, float]], opt: Options,
               keep: frozenset | set = frozenset()) -> None:  # fmt: skip
    """Drop hidden notes (except those in ``keep``); a superseded one hands its score to its
    live replacement."""
    for path in [p for p in scored if not opt.filters.visible(src.records[p]) and p not in keep]:
        parts = scored.pop(path)
        new = _replacement(src, path, opt) if src.records[path].status == "superseded" else None
        if new is None or not opt.filters.metadata_match(src.records[new]):
            continue
        if new not in scored or _base(scored[new]) < _base(parts):
            moved = dict(parts)
            moved["redirect_from"] = src.records[path].key  # type: ignore[assignment]
            scored[new] = moved


def _graph(src: Sources, scored: dict[str, dict[str, float]], opt: Options,
           parts_of: Callable[[str], dict[str, float]], ok: Callable[[str], bool]) -> None:  # fmt: skip
    """Notes linked to the strongest hits get a decaying share of how far those stand out.

    A seed passes ``GRAPH_WEIGHT * seed score * decay ** hops`` (an average note scores 0);
    seeds are the top hits scoring at least half as much as the best.
    """
    if not scored or opt.graph_seeds <= 0:
        return
    top = sorted(scored.items(), key=lambda kv: -_base(kv[1]))[: opt.graph_seeds]
    best = _base(top[0][1]) - BASELINE
    if best <= 0:
        return
    seeds = {p: _base(parts) - BASELINE for p, parts in top if _base(parts) - BASELINE >= 0.5 * best}
    for path, (value, seed, _hops) in expand(src.graph, seeds, opt.graph_decay, 1).items():
        if not ok(path):
            continue
        parts = scored.setdefault(path, parts_of(path))
        bonus = GRAPH_WEIGHT * value
        if bonus > parts["graph"]:
            parts["graph"] = bonus
            parts["graph_via"] = src.records[seed].key  # type: ignore[assignment]


def _profile(rec: Record, profile: str, now: dt.datetime) -> float:
    weight = PROFILES[profile].get(rec.type or "", 1.0)
    if rec.type in RECENT_TYPES.get(profile, ()):
        when = parse_time(rec.updated) or parse_time(rec.created)
        if when is not None:
            age_days = max(0.0, (now - when).total_seconds() / 86400)
            weight *= 1.0 + 0.5 * math.exp(-age_days / 14)
    return weight


def resolve_anchor(graph: nx.DiGraph, records: dict[str, Record], anchor: str) -> str:
    """The path of the note an ``--anchor`` names; BadInput when there is none."""
    path = graph.graph["resolver"].resolve(anchor)
    if path is None or path not in records:
        raise BadInput(f"--anchor: no note called {anchor!r}")
    return path


def time_query(
    src: Sources, query: str, opt: Options, now: dt.datetime
) -> tuple[str, DateRange | None, set[str]]:
    """(the text to search, the time range in use or None, the notes dated in it).

    A range is used only when it tells notes apart: some but not all of the vault's notes
    are dated in it; otherwise the query is searched as written."""
    if opt.time_mode == "off":
        return query, None, set()
    records = src.records.values()
    parsed = parse_query(query, now, timefilter.event_resolver(records, now.date()))
    if opt.date_arithmetic:  # "the week before X": the 7 days up to X, not every day before it
        parsed = datemath.shift(query, parsed)
    if parsed.range is None:
        return query, None, set()
    inside = timefilter.in_range(records, parsed.range)
    if not inside and opt.time_mode == "filter":  # only notes dated then, and there are none
        return parsed.text or query, parsed.range, inside
    if not inside or len(inside) == len(src.records):
        return query, None, set()
    return parsed.text or query, parsed.range, inside


def _first_shown(ranked: list[tuple[str, float]], opt: Options) -> list[tuple[str, float]]:
    """The best ``opt.k`` (path, score) that ``opt.shown`` lets through (tested lazily, best
    first: the test may read a note), so a filter never leaves recall short of k."""
    if opt.shown is None:
        return ranked[: opt.k]
    out: list[tuple[str, float]] = []
    for item in ranked:
        if len(out) == opt.k:
            break
        if opt.shown(item[0]):
            out.append(item)
    return out


def search(src: Sources, query: str, opt: Options) -> list[Hit]:
    """Run one recall and return the top ``opt.k`` hits, best first."""
    opt.check()
    if not query.strip():
        raise BadInput("the query is empty")
    now = opt.now or now_utc()
    query, span, inside = time_query(src, query, opt, now)
    if opt.as_of is not None:
        opt = dataclasses.replace(opt, filters=dataclasses.replace(opt.filters, include_hidden=True))
    records = src.records
    near: dict[str, float] = {}
    if opt.anchor:
        near = anchor_weights(
            src.graph, resolve_anchor(src.graph, src.records, opt.anchor), opt.depth, opt.graph_decay
        )

    def candidate(path: str) -> bool:
        rec = records.get(path)
        return (rec is not None and opt.filters.metadata_match(rec) and (not near or path in near)
                and (opt.as_of is None or timefilter.valid_on(rec, opt.as_of))
                and (span is None or opt.time_mode != "filter" or path in inside))  # fmt: skip

    filtered = span is not None and opt.time_mode == "filter"
    narrowed = opt.filters.restrictive or near or opt.as_of is not None or filtered
    allowed = {p for p in records if candidate(p)} if narrowed else None
    scored, _, parts_of = _retrieve(src, query, opt, allowed)
    scored, parts_of = _subject_round(src, query, opt, allowed, scored, parts_of)
    _session_part(src, query, scored, opt)
    for path in near:
        if candidate(path):
            scored.setdefault(path, parts_of(path))["anchor"] = ANCHOR_WEIGHT * near[path]
    if span is not None and opt.time_mode == "boost" and len(inside) <= opt.candidates:
        for path in inside:  # a note dated in the range competes even when its text ranks low
            if candidate(path):
                scored.setdefault(path, parts_of(path))
    # a question about a past period also sees what was true then and has been superseded since
    past = inside if span is not None and span.end is not None and span.end < now.date() else set()
    _lifecycle(src, scored, opt, past)
    _graph(
        src, scored, opt, parts_of, lambda p: candidate(p) and (opt.filters.visible(records[p]) or p in past)
    )
    _turn_part(src, query, scored, opt)
    stats = src.usage([records[p].key for p in scored]) if (opt.adaptive and src.usage) else {}
    # the rest of the query names something (a keyword some note has): then the range re-ranks the
    # notes with evidence only; otherwise ("decisions last week") the range is what selects
    ctx = _with_context(opt, query)  # the same key: the memo's scores
    named = span is not None and bool(
        (raw_scores(src, query, opt.mode, opt.question_words, None, ctx)[0] > 0).any()
    )
    best = max((_base(p) for p in scored.values()), default=0.0)  # the best text evidence, for time's share
    vectors = opt.mode != "bm25" and src.embedder.name != "none"  # the floor reads cosines (floor.py)
    sources = frozenset(records[p].key for p, parts in scored.items() if _meaning(parts, vectors))
    final = {}
    for path, parts in scored.items():
        rec = records[path]
        parts["profile"] = _profile(rec, opt.profile, now) * (
            CANDIDATE_WEIGHT if rec.status == "candidate" else 1.0
        )
        parts["importance"] = importance_factor(rec.importance, opt.weights)
        parts["blend"] = 1.0
        if opt.adaptive:
            written = parse_time(rec.updated)
            used = evidence(stats.get(rec.key, Usage()), opt.weights)
            a = adaptive(used, now.timestamp(), written.timestamp() if written else None, opt.weights)
            parts.update(a, ratings=used.ratings, min_ratings=opt.weights.min_ratings)  # --explain: why 0.5
            parts["blend"] = blend_factor(a["adaptive"], opt.weights)
        relevant = evident(
            {**parts, "context": 0.0} if parts.get("context_hidden") else parts, vectors, sources
        )
        dated = path in inside and (relevant or not named)  # never lifts a note the query's words leave out
        if span is not None:
            share = _time_share(parts, named, best)
            # the range selects (nothing else named): it is the evidence, in filter mode as in boost
            by_date = opt.time_mode == "boost" or (opt.time_mode == "filter" and not named)
            parts["time"] = opt.time_boost * share if (by_date and dated) else 0.0
            parts["time_range"] = _range_text(span)
        if opt.as_of is not None:
            parts["as_of"] = opt.as_of.isoformat()
        if opt.combine == "sum":  # the weight the parts were made with: a caller reads z back from them
            parts["bm25_weight"] = opt.bm25_weight
        raw = _base(parts) + parts.get(
            "time", 0.0
        )  # multipliers lift what stands out; never a below-average score
        parts["score"] = raw * parts["profile"] * parts["importance"] * parts["blend"] if raw > 0 else raw
        if relevant or dated:  # a note without evidence is never a hit, not even to fill k
            final[path] = parts["score"]
        parts["score"] = max(parts["score"], BASELINE)  # ranked by it; shown never below the average
    ranked = _first_shown(fusion.ranked(final), opt)
    terms = src.bm25.terms(query)
    return [
        _hit(src, path, scored[path], i + 1, terms if opt.snippets else None)
        for i, (path, _) in enumerate(ranked)
    ]


def _time_share(parts: dict[str, float], named: bool, best: float) -> float:
    """How much of the time boost a note dated in the range gets: all of it when it shares a
    keyword with the query or the query names nothing else; otherwise its raw score's share
    of the best one (a note merely a little above average gets a little)."""
    if not named or parts["bm25_raw"] > 0:
        return 1.0
    return min(1.0, max(0.0, _base(parts)) / best) if best > 0 else 0.0


def _meaning(parts: dict, vectors: bool) -> bool:
    """Whether a note shares meaning with the query beyond chance on its own (``floor.py``)."""
    return floor.meaningful(parts["vector_raw"], parts["bm25_raw"] > 0, vectors)


def evident(parts: dict, vectors: bool = True, sources: frozenset = frozenset()) -> bool:
    """Whether a note is evidence for the query: it shares meaning with the query beyond chance
    (``floor.py``: a keyword, or a cosine unrelated texts do not reach), or is linked with a
    note in ``sources`` (keys of notes that do) that lifted it; and, without a keyword, its
    parts (text, links, anchor, speaker; not the turn prior) sum above the vault's average
    note (0). A hit below the average (a keyword in common, little else) is shown at 0 with
    why it is there (``_why``): no score shown is negative."""
    if parts["bm25_raw"] <= 0 and _base(parts) - parts.get("turn", 0.0) <= BASELINE:
        return False
    linked = {parts.get("graph_via"), None if parts["context"] <= 0 else parts.get("context_via")}
    return _meaning(parts, vectors) or bool(linked & sources)


def _range_text(span: DateRange) -> str:
    return f"{span.start or '...'}..{span.end or '...'} ({span.expression})"


def _hit(src: Sources, path: str, parts: dict, rank: int, terms: list[str] | None) -> Hit:
    rec = src.records[path]
    snippet, highlights = make_snippet(src.read_body(path), terms) if terms is not None else ("", [])
    explain = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in parts.items()}
    return Hit(
        id=rec.key, title=rec.title, path=path, type=rec.type, status=shown_status(rec),
        score=round(parts["score"], 4), snippet=snippet, rank=rank, tags=list(rec.tags),
        importance=rec.importance, updated=rec.updated, via=_why(parts, highlights), highlights=highlights,
        source=rec.source, explain=explain, outdated_by=outdated_by(src.graph, src.records, path),
    )  # fmt: skip


def _why(parts: dict, highlights: list[str]) -> str | None:
    """Why a hit that is no plain match is one: a superseded note's score, a link (the hit has
    no evidence of its own without its linked notes' share), or, at or below the average note,
    a keyword in common or its date (never a bare score of 0.000)."""
    if "redirect_from" in parts:
        return f"supersedes {parts['redirect_from']}"
    linked = parts.get("graph_via") or parts.get("context_via")
    own = {**parts, "graph": 0.0, "context": 0.0}  # the hit without its linked notes' share
    if linked and own["bm25_raw"] <= 0 and _base(own) - parts.get("turn", 0.0) <= BASELINE:
        return f"linked from {linked}"
    if parts["score"] > BASELINE:
        return None
    words = f" ({', '.join(highlights)})" if highlights else ""
    return (
        f"{'a keyword in common' + words if parts['bm25_raw'] > 0 else 'dated then'}; below the average note"
    )
