"""Recall, written once (no numpy, no networkx): BM25 + vectors fused, neighbour context,
lifecycle redirects, graph expansion, profiles, usage. The hybrid pipeline
(``pipeline.search``) and the keyword answer given while the memory service warms up
(``keywords.recall``) both rank through ``search``; only their ``Reader`` differs
(``ranking.py``).

Score of a hit (every part is reported by ``--explain``)::

    raw   = bm25 + vector [+ length] + context + graph + anchor + subject + session + turn
            [+ feedback] [+ time]
    score = raw * profile * importance * blend      (a raw score <= 0 is left as it is)

A note is a hit only with evidence (``ranking.evident``): it shares meaning with the query
beyond chance (the relevance floor, ``floor.py``: a keyword in common, or a cosine unrelated
texts do not reach; without vectors, as in BM25 mode and the keyword answer, a keyword) or is
lifted by a link with a note that does, and it has a keyword or a raw score above the vault's
average note (0); recall returns fewer than k hits rather than pad them with notes that have
none, and a hit is shown with a score of at least 0. ``time`` (a time expression in the query, ``--time
boost``) goes to the notes dated in its range that share a keyword with the query; one that
shares none gets the share of it its raw score earns against the best note's (``_time_share``):
time re-ranks relevant notes and never lifts one the query's words leave out. When the rest of
the query names nothing (no note has any of its keywords: "decisions last week", "what
happened yesterday"), the range is the evidence and every note dated in it gets the whole
boost (with ``--time filter`` too). A hit whose score is still at or below the average note's
(a keyword in common, little else) says so in its ``via``.

``bm25`` and ``vector`` are the weighted, standardised parts (every note is scored by both;
an average note scores 0): with ``[recall] combine = "learned"`` (default "sum") the weights
come from ``learned.py``, which adds one more part to the sum, ``length`` (a short-note
prior); with ``"sum"`` they are ``fusion.hybrid``'s;
``context`` is a share of the best fused score among the notes a note links with
(``ranking.Round``; BM25 scores a question without its question words, ``question.py``): it
ranks, but is no evidence when that note is hidden (resolved, superseded: a note that was a
hit only for its link with it is no hit once it is resolved);
``graph`` is what a strong hit passes to the notes it links with (``ranking.expand``);
``subject`` lifts a speaker's own notes when the question is about that speaker (a second
round, ``subject.py``; ``feedback``, off by default: a list question's third round from the
speaker's best notes, ``feedback.py``); ``session`` lifts a question's notes by the best match among the notes
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
from typing import Any

from ..core.errors import BadInput
from ..core.filters import now_utc, parse_time
from ..index.manifest import Record
from ..index.usage import Usage
from . import ranking, spread, subject, turns
from .hit import Hit, make_snippet, shown_status
from .options import PROFILES, RECENT_TYPES, Options
from .question import is_question
from .ranking import BASELINE, Parts, Reader, Round, base

ANCHOR_WEIGHT = 0.15

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from ..core.timeexpr import DateRange


def search(reader: Reader, query: str, opt: Options) -> list[Hit]:
    """Run one recall and return the top ``opt.k`` hits, best first."""
    opt.check()
    if not query.strip():
        raise BadInput("the query is empty")
    now = opt.now or now_utc()
    query, span, inside = time_query(reader, query, opt, now)
    if opt.as_of is not None:
        opt = dataclasses.replace(opt, filters=dataclasses.replace(opt.filters, include_hidden=True))
    records = reader.records
    near = reader.anchor(opt.anchor, opt.depth, opt.graph_decay) if opt.anchor else {}
    valid = _valid_on(opt.as_of)

    def candidate(path: str) -> bool:
        rec = records.get(path)
        return (rec is not None and opt.filters.metadata_match(rec) and (not near or path in near)
                and (valid is None or valid(rec))
                and (span is None or opt.time_mode != "filter" or path in inside))  # fmt: skip

    filtered = span is not None and opt.time_mode == "filter"
    narrowed = opt.filters.restrictive or near or valid is not None or filtered
    first = Round(reader, reader.text(query, opt), opt.filters)
    scored = first.retrieve(opt.candidates, candidate if narrowed else None)
    scored, parts_of = _subject_round(reader, query, opt, candidate if narrowed else None, scored, first)
    _session_part(reader, query, scored, opt)
    for path in near:
        if candidate(path):
            scored.setdefault(path, parts_of(path))["anchor"] = ANCHOR_WEIGHT * near[path]
    if span is not None and opt.time_mode == "boost" and len(inside) <= opt.candidates:
        for path in inside:  # a note dated in the range competes even when its text ranks low
            if candidate(path):
                scored.setdefault(path, parts_of(path))
    # a question about a past period also sees what was true then and has been superseded since
    past = inside if span is not None and span.end is not None and span.end < now.date() else set()
    ranking.lifecycle(reader, scored, opt.filters, past)
    ranking.expand(reader, scored, opt.graph_seeds, opt.graph_decay, parts_of,
                   lambda p: candidate(p) and (opt.filters.visible(records[p]) or p in past))  # fmt: skip
    _turn_part(reader, query, scored, opt)
    final = _final(reader, scored, opt, now, span, inside, first.text)
    terms = reader.terms(query) if opt.snippets else None
    return [
        _hit(reader, path, scored[path], rank, terms)
        for rank, path in enumerate(ranking.top(final, opt.k, opt.shown), 1)
    ]


def _valid_on(day: dt.date | None) -> Callable[[Record], bool] | None:
    """``--as-of``: whether a note was valid on that day (None: no such condition)."""
    if day is None:
        return None
    from .timefilter import valid_on

    return lambda rec: valid_on(rec, day)


def _final(reader: Reader, scored: dict[str, Parts], opt: Options, now: dt.datetime, span: DateRange | None,
           inside: set[str], text: ranking.Text) -> dict[str, float]:  # fmt: skip
    """Each note's multipliers, time part and score; path -> score of the notes with evidence
    (``ranking.relevant``: a note without evidence is never a hit, not even to fill k)."""
    records = reader.records
    used = reader.usage([records[p].key for p in scored]) if opt.adaptive else {}
    # the rest of the query names something (a keyword some note has): then the range re-ranks the
    # notes with evidence only; otherwise ("decisions last week") the range is what selects
    named = span is not None and text.matched
    best = max((base(p) for p in scored.values()), default=0.0)  # the best text evidence, for time's share
    linked_from = ranking.sources(scored, records, text.vectors)  # the relevance floor (floor.py)
    final = {}
    for path, parts in scored.items():
        rec = records[path]
        ranking.weigh(parts, rec, _profile(rec, opt.profile, now), opt.weights,
                      used.get(rec.key, Usage()) if opt.adaptive else None, now.timestamp())  # fmt: skip
        relevant = ranking.relevant(parts, text.vectors, linked_from)
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
        ranking.score(parts)
        if relevant or dated:
            final[path] = parts["score"]
        parts["score"] = max(parts["score"], BASELINE)  # ranked by it; shown never below the average
    return final


def _profile(rec: Record, profile: str, now: dt.datetime) -> float:
    weight = PROFILES[profile].get(rec.type or "", 1.0)
    if rec.type in RECENT_TYPES.get(profile, ()):
        when = parse_time(rec.updated) or parse_time(rec.created)
        if when is not None:
            age_days = max(0.0, (now - when).total_seconds() / 86400)
            weight *= 1.0 + 0.5 * math.exp(-age_days / 14)
    return weight


def time_query(
    reader: Reader, query: str, opt: Options, now: dt.datetime
) -> tuple[str, DateRange | None, set[str]]:
    """(the text to search, the time range in use or None, the notes dated in it).

    A range is used only when it tells notes apart: some but not all of the vault's notes
    are dated in it; otherwise the query is searched as written (so too by a reader without
    every note at hand: ``Reader.every``)."""
    every = reader.every() if opt.time_mode != "off" else None
    if every is None:
        return query, None, set()
    from ..core.timeexpr import parse_query
    from . import datemath, timefilter

    records = every.values()
    parsed = parse_query(query, now, timefilter.event_resolver(records, now.date()))
    if opt.date_arithmetic:  # "the week before X": the 7 days up to X, not every day before it
        parsed = datemath.shift(query, parsed)
    if parsed.range is None:
        return query, None, set()
    inside = timefilter.in_range(records, parsed.range)
    if not inside and opt.time_mode == "filter":  # only notes dated then, and there are none
        return parsed.text or query, parsed.range, inside
    if not inside or len(inside) == len(every):
        return query, None, set()
    return parsed.text or query, parsed.range, inside


def _time_share(parts: Parts, named: bool, best: float) -> float:
    """How much of the time boost a note dated in the range gets: all of it when it shares a
    keyword with the query or the query names nothing else; otherwise its raw score's share
    of the best one (a note merely a little above average gets a little)."""
    if not named or parts["bm25_raw"] > 0:
        return 1.0
    return min(1.0, max(0.0, base(parts)) / best) if best > 0 else 0.0


def _range_text(span: DateRange) -> str:
    return f"{span.start or '...'}..{span.end or '...'} ({span.expression})"


def _of_body(reader: Reader, name: str, path: str, read: Callable[[str], Any]) -> Any:
    """``read(body)`` of a note, cached in the reader's memo ``name`` per content hash."""
    cache = reader.memo(name)
    rec = reader.records[path]
    hit = cache.get(path)
    if hit is None or hit[0] != rec.hash:
        hit = cache[path] = (rec.hash, read(reader.body(path)))
    return hit[1]


def _speaker(reader: Reader, path: str) -> str | None:
    """The speaker a note opens with (``Name: ...``), cached per content hash."""
    return _of_body(reader, "speakers", path, subject.speaker)


def _subject_round(reader: Reader, query: str, opt: Options, ok: Callable[[str], bool] | None,
                   scored: dict[str, Parts], first: Round) -> tuple[dict[str, Parts], Callable[[str], Parts]]:  # fmt: skip
    """A question naming a speaker of the first round's top hits: search again with the
    name out of the vector query, and lift that speaker's own notes (``subject.py``)."""
    if not opt.subject or opt.mode == "bm25" or not subject.names_in(query):
        return scored, first.parts_of
    ranked = sorted(scored, key=lambda p: -base(scored[p]))
    subj = subject.find(
        query, [(reader.records[p].key, _speaker(reader, p)) for p in ranked[: subject.FIRST]]
    )
    if subj is None:
        return scored, first.parts_of
    order = {p: rank for rank, p in enumerate(ranked, start=1)}
    second = Round(reader, reader.text(query, opt, subj.vector_query), opt.filters)
    scored = second.retrieve(opt.candidates, ok)
    for path, parts in scored.items():
        parts["first_round_rank"] = order.get(path, 0)  # 0: not among the first round's candidates
        if _speaker(reader, path) in subj.names:
            parts["subject"] = subj.lift
            parts["subject_via"] = subj.reason()
    if opt.feedback_weight > 0 and subj.lift > subject.WEIGHT:
        _feedback_round(reader, opt, subj, second, scored, ok)
    return scored, second.parts_of


def _feedback_round(reader: Reader, opt: Options, subj: subject.Subject, second: Round,
                    scored: dict[str, Parts], ok: Callable[[str], bool] | None) -> None:  # fmt: skip
    """A list question about a speaker: the speaker's notes scored by the question's vector
    moved towards the speaker's best notes so far (``feedback.py``)."""
    own = [p for p in sorted(scored, key=lambda p: -base(scored[p])) if _speaker(reader, p) in subj.names]
    near = second.text.similar(own, opt.feedback_weight, opt.candidates)
    reader.fetch(p for p, _ in near)
    for path, z in near:
        if (
            path not in reader.records
            or _speaker(reader, path) not in subj.names
            or (ok is not None and not ok(path))
        ):
            continue
        parts = scored.setdefault(path, second.parts_of(path))
        parts["subject"] = subj.lift
        parts["feedback"] = opt.feedback_part * z


def _turn_part(reader: Reader, query: str, scored: dict[str, Parts], opt: Options) -> None:
    """A question (hybrid and vector modes): each conversation turn that tells gets
    ``turn_weight``, one that only asks loses it (``turns.py``); a prior, never evidence."""
    if opt.turn_weight <= 0 or opt.mode == "bm25" or not is_question(query):
        return
    values = {path: _of_body(reader, "turn_values", path, turns.value) for path in scored}
    talking = turns.conversational([who for who, _ in values.values()])
    for path, parts in scored.items():
        who, value = values[path]
        parts["turn"] = opt.turn_weight * value if who in talking else 0.0


def _session_part(reader: Reader, query: str, scored: dict[str, Parts], opt: Options) -> None:
    """A question not asking for a list (hybrid and vector modes): each candidate gets
    ``session_weight`` x the best score among its session's candidates (``spread.py``)."""
    if opt.session_weight <= 0 or opt.mode == "bm25" or not scored or not spread.applies(query):
        return
    groups = {p: spread.session_of(reader.records[p]) for p in scored}
    best = spread.session_best(groups, {p: base(parts) for p, parts in scored.items()})
    for path, parts in scored.items():
        group = groups[path]
        if group is not None:
            parts["session"] = opt.session_weight * best[group]
            parts["session_via"] = group  # --explain: the session's day


def _hit(reader: Reader, path: str, parts: Parts, rank: int, terms: list[str] | None) -> Hit:
    rec = reader.records[path]
    snippet, highlights = make_snippet(reader.body(path), terms) if terms is not None else ("", [])
    explain = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in parts.items()}
    return Hit(
        id=rec.key, title=rec.title, path=path, type=rec.type, status=shown_status(rec),
        score=round(parts["score"], 4), snippet=snippet, rank=rank, tags=list(rec.tags),
        importance=rec.importance, updated=rec.updated, via=_why(parts, highlights), highlights=highlights,
        source=rec.source, explain=explain, outdated_by=reader.outdated_by(path),
    )  # fmt: skip


def _why(parts: Parts, highlights: list[str]) -> str | None:
    """Why a hit that is no plain match is one: a superseded note's score, a link (the hit has
    no evidence of its own without its linked notes' share), or, at or below the average note,
    a keyword in common or its date (never a bare score of 0.000)."""
    if "redirect_from" in parts:
        return f"supersedes {parts['redirect_from']}"
    linked = parts.get("graph_via") or parts.get("context_via")
    if linked and not ranking.above_average({**parts, "graph": 0.0, "context": 0.0}):
        return f"linked from {linked}"
    if parts["score"] > BASELINE:
        return None
    words = f" ({', '.join(highlights)})" if highlights else ""
    return (
        f"{'a keyword in common' + words if parts['bm25_raw'] > 0 else 'dated then'}; below the average note"
    )
