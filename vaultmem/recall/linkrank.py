"""The pipeline's BM25 mode in plain Python, for the keyword answer (``keywords.py``).

``pipeline.search(mode="bm25")`` ranks by standardised BM25 plus each note's neighbour context
(its best-scoring linked note's share), plus what the strongest hits pass along their links
(the graph's expansion), times importance, candidate status and the adaptive blend. This module
computes the same numbers from what the manifest holds (its link lists, resolved as
``index.graph`` resolves them; the usage store's ratings, read-only) without numpy, networkx
or the model, so the answer given while the memory service warms ranks links too (a test pins
it equal to the pipeline's on a linked vault).

Left to the pipeline: time expressions in the query (``--time``) and attachments (a link to a
file that is not an indexed note resolves here as if the file were not there).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.discovery import USAGE_DIR
from ..core.filters import Filters, now_utc, parse_time
from ..core.links import LINK_EXTRAS, NoteKeys, Resolver, fold, link_extras
from ..index.manifest import Manifest, Record
from ..index.usage import FILE as USAGE_FILE
from ..index.usage import Usage, read_usage
from .adaptive import Weights, adaptive, blend_factor, evidence, importance_factor

GRAPH_WEIGHT = 0.3  # pipeline.GRAPH_WEIGHT (a test pins these three equal to the pipeline's)
CANDIDATE_WEIGHT = 0.5  # pipeline.CANDIDATE_WEIGHT
EXTRAS = LINK_EXTRAS  # graph.EXTRAS: what links resolve by when no file name matches
CONTEXT_LIMIT = (
    300  # the best-matching notes whose score a neighbour's context reads (2000: the same on LoCoMo)
)
Stats = tuple[float, float]  # (mean, standard deviation) of a vault's BM25 over every note


def moments(scores: dict[str, float], n: int) -> tuple[int, float, float]:
    """``fusion.moments`` of the BM25 array of ``n`` notes (the unmatched ones score 0)."""
    if not n:
        return 0, 0.0, 0.0
    return n, sum(scores.values()) / n, sum(s * s for s in scores.values()) / n


def pooled(parts: Iterable[tuple[int, float, float]]) -> Stats:
    """``fusion.pooled``: mean and standard deviation of several vaults' arrays together."""
    parts = list(parts)
    n = sum(c for c, _, _ in parts)
    if not n:
        return 0.0, 0.0
    mean = sum(c * m for c, m, _ in parts) / n
    return mean, max(sum(c * q for c, _, q in parts) / n - mean**2, 0.0) ** 0.5


def own_stats(scores: dict[str, float], n: int) -> Stats:
    """Mean and (population) standard deviation of one vault's BM25 array, as numpy's."""
    if not n:
        return 0.0, 0.0
    mean = sum(scores.values()) / n
    var = (sum((s - mean) ** 2 for s in scores.values()) + (n - len(scores)) * mean**2) / n
    return mean, var**0.5


class Links:
    """The link graph among indexed notes as far as a ranking needs it, read from the manifest
    (a whole vault's graph costs ~0.1 s at 10k notes): ``outs`` resolves the links of some
    notes; ``near`` is a note's neighbours among the notes resolved so far (either way);
    ``backlinks`` resolves every note that may link to one. No self-links, attachments or
    dangling targets (recall walks none of them).

    A target resolves exactly as over the whole vault with a resolver of only the notes it
    can name (a file of its name, or a title, id or alias equal to it: ``_cover``)."""

    def __init__(self, manifest: Manifest, extras: Iterable[str] = EXTRAS):
        self.cur = manifest.db.cursor()
        self.cur.row_factory = None
        self.extras = tuple(extras)
        self.paths = [row[0] for row in self.cur.execute("SELECT path FROM notes")]
        self.covered: set[str] = set()  # the target names whose notes the resolver holds
        self.keys: dict[str, NoteKeys] = {}
        self.resolver = Resolver((), (), self.extras)
        self.resolved: dict[tuple[str, str], str | None] = {}
        self.out: dict[str, set[str]] = {}
        self.into: dict[str, set[str]] = {}

    def outs(self, paths: Iterable[str]) -> None:
        """Resolve the links of ``paths`` (those not resolved yet)."""
        wanted = [p for p in dict.fromkeys(paths) if p not in self.out]
        found: dict[str, list] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT path, links FROM notes WHERE path IN ({','.join('?' * len(part))})"
            found.update((p, json.loads(t)) for p, t in self.cur.execute(q, part) if t and t != "[]")
        self._cover({target for pairs in found.values() for target, _ in pairs})
        for path in wanted:
            dests = self.out[path] = set()
            folder = path.rpartition("/")[0]
            for target, _kind in found.get(path, ()):
                key = (target, folder)  # a target resolves by the folder it is read from
                if key not in self.resolved:
                    self.resolved[key] = self.resolver.resolve(target, path)
                dest = self.resolved[key]
                if dest is not None and dest != path:
                    dests.add(dest)
                    self.into.setdefault(dest, set()).add(path)

    def _cover(self, targets: set[str]) -> None:
        """Hold in the resolver every note some of ``targets`` may resolve to."""
        names = {_name(t) for t in targets} | {_norm(t) for t in targets}
        new = names - self.covered
        if not new:
            return
        self.covered |= new
        both = [*new, *(n + ".md" for n in new)]
        if all(n.isascii() for n in new):
            wanted = set(both)
            named = [p for p in self.paths if p.rpartition("/")[2].lower() in wanted]
            marks = ",".join("?" * len(both))
            q = f"SELECT path FROM notes WHERE lower(trim(title)) IN ({marks}) OR lower(trim(id)) IN ({marks})"
            if "alias" in self.extras:
                q += " OR (aliases IS NOT NULL AND aliases <> '[]')"
            named += [row[0] for row in self.cur.execute(q, both + both)]
        else:  # SQLite folds ASCII case only: every note
            named = list(self.paths)
        self._add_keys(p for p in named if p not in self.keys)

    def _add_keys(self, paths: Iterable[str]) -> None:
        wanted = list(dict.fromkeys(paths))
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT path, id, title, aliases FROM notes WHERE path IN ({','.join('?' * len(part))})"
            added = [NoteKeys(p, title, tuple(json.loads(aliases)) if aliases and aliases != "[]" else (), note_id)
                     for p, note_id, title, aliases in self.cur.execute(q, part)]  # fmt: skip
            self.keys.update((k.path, k) for k in added)
            self.resolver.add_notes(added)

    def backlinks(self, paths: Iterable[str]) -> None:
        """Resolve every note that may link to one of ``paths`` (its link list names the file,
        title, id or an alias: ``LIKE`` folds ASCII case only), so their ``near`` is complete."""
        paths = list(paths)
        self._add_keys(p for p in paths if p not in self.keys)
        names: set[str] = set()
        for path in paths:
            keys = self.keys[path]
            names |= {path.rsplit("/", 1)[-1].removesuffix(".md"), keys.title or "", keys.id or ""}
            names |= set(keys.aliases) if "alias" in self.extras else set()
        likes = [f"%{_escape(n)}%" for n in names if n]
        if likes:
            q = "SELECT path FROM notes WHERE " + " OR ".join(["links LIKE ? ESCAPE '\\'"] * len(likes))
            self.outs(row[0] for row in self.cur.execute(q, likes))

    def near(self, path: str) -> set[str]:
        return self.out.get(path, set()) | self.into.get(path, set())


def _name(target: str) -> str:
    """The file name a link target names (folded), as Obsidian's lookup reads it."""
    return fold(target.strip().replace("\\", "/")).rpartition("/")[2]


def _norm(target: str) -> str:
    """A target as the title, alias and id extras compare it (``links._norm``)."""
    name = fold(target.strip())
    return name[:-3] if name.endswith(".md") else name


def _escape(name: str) -> str:
    """A name as its JSON text holds it, escaped for ``LIKE``."""
    text = json.dumps(name, ensure_ascii=False)[1:-1]
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass
class Ranked:
    """One hit of the ranking: its record, final score and score parts (``--explain``)."""

    record: Record
    score: float
    parts: dict[str, Any]


def rank(manifest: Manifest, root: Path, scores: dict[str, float], stats: Stats, filters: Filters,
         config: dict[str, Any], k: int) -> list[Ranked]:  # fmt: skip
    """The best ``k`` notes for BM25 ``scores`` (path -> raw score of the matching notes) as the
    pipeline's BM25 mode ranks them, with the vault's ``config`` and standardising ``stats``."""
    rc, weights = config["recall"], Weights.from_config(config["adaptive"])
    extras = link_extras(bool(config["vault"].get("alias_links")))
    mean, sd = stats
    links = Links(manifest, extras)
    context_weight = float(rc["context_weight"])

    def bm25(path: str) -> float:
        return (scores.get(path, 0.0) - mean) / (6.0 * sd) if sd >= 1e-12 else 0.0

    def parts_of(path: str) -> dict[str, Any]:
        """A note's text parts (its links must be resolved: ``links.outs``)."""
        best = max((bm25(q) for q in links.near(path)), default=0.0)
        context = context_weight * max(best, 0.0) if context_weight > 0 else 0.0
        return {"bm25": bm25(path), "bm25_raw": scores.get(path, 0.0), "vector": 0.0, "vector_raw": 0.0,
                "context": context, "graph": 0.0}  # fmt: skip

    matched = sorted((p for p in scores if scores[p] > 0), key=lambda p: (-bm25(p), p))
    links.outs(p for p in matched[:CONTEXT_LIMIT] if bm25(p) > 0)  # whose context share a neighbour gets
    records: dict[str, Record] = {}
    reach = context_weight * max(bm25(matched[0]), 0.0) if matched else 0.0  # the most context adds
    pool = _pool(manifest, matched, bm25, filters, int(rc["candidates"]), reach, records)
    links.outs(pool)
    parts = {p: parts_of(p) for p in pool}
    kept = sorted(pool, key=lambda p: (-_base(parts[p]), p))[: int(rc["candidates"])]
    _fetch(manifest, kept, records)
    scored = {p: parts[p] for p in kept if p in records}
    _lifecycle(manifest, links, scored, filters, records)
    _graph(manifest, links, scored, filters, rc, parts_of, records)
    return _final(root, scored, records, weights, k)


def _base(parts: dict[str, Any]) -> float:
    return float(parts["bm25"] + parts["vector"] + parts["context"] + parts["graph"])


def _fetch(manifest: Manifest, paths: Iterable[str], records: dict[str, Record]) -> None:
    """Add the records of ``paths`` not yet read to ``records``."""
    missing = [p for p in paths if p not in records]
    if missing:
        records.update(manifest.records(missing))


def _pool(manifest: Manifest, matched: list[str], bm25, filters: Filters, count: int, reach: float,
          records: dict[str, Record]) -> list[str]:  # fmt: skip
    """The matching notes (best BM25 first) that may be among the ``count`` of the best BM25
    plus context (``pipeline._retrieve``): down to the ``count``-th one's BM25 less the most
    context can add; with a restrictive filter only notes whose metadata it lets through."""
    pool: list[str] = []
    floor: float | None = None
    step = max(50, 2 * count)
    for i in range(0, len(matched), step):
        part = matched[i : i + step]
        if filters.restrictive:
            _fetch(manifest, part, records)
            part = [p for p in part if p in records and filters.metadata_match(records[p])]
        for path in part:
            if floor is not None and bm25(path) < floor:
                return pool
            pool.append(path)
            if len(pool) == count:
                floor = bm25(path) - reach
    return pool


def _lifecycle(manifest: Manifest, links: Links, scored: dict[str, dict[str, Any]], filters: Filters,
               records: dict[str, Record]) -> None:  # fmt: skip
    """Drop hidden notes; a superseded one hands its parts to its live replacement
    (``pipeline._lifecycle``)."""
    for path in [p for p in scored if not filters.visible(records[p])]:
        parts = scored.pop(path)
        new = (
            _replacement(manifest, links, path, filters, records)
            if records[path].status == "superseded"
            else None
        )
        if new is None or not filters.metadata_match(records[new]):
            continue
        if new not in scored or _base(scored[new]) < _base(parts):
            scored[new] = {**parts, "redirect_from": records[path].key}


def _replacement(manifest: Manifest, links: Links, path: str, filters: Filters,
                 records: dict[str, Record]) -> str | None:  # fmt: skip
    """Follow ``superseded_by`` from a hidden note to the first visible note, if any."""
    seen, current = {path}, records[path]
    while current.superseded_by:
        nxt = links.resolver.resolve(current.superseded_by, current.path) if links.resolver else None
        if nxt is not None:
            _fetch(manifest, [nxt], records)
        if nxt is None or nxt in seen or nxt not in records:
            return None
        seen.add(nxt)
        current = records[nxt]
        if filters.visible(current):
            return nxt
    return None


def _graph(manifest: Manifest, links: Links, scored: dict[str, dict[str, Any]], filters: Filters,
           rc: dict[str, Any], parts_of, records: dict[str, Record]) -> None:  # fmt: skip
    """Notes linked to the strongest hits get ``GRAPH_WEIGHT * seed score * decay``
    (``pipeline._graph`` with ``traverse.expand`` one hop deep)."""
    if not scored or int(rc["graph_seeds"]) <= 0:
        return
    top = sorted(scored.items(), key=lambda kv: -_base(kv[1]))[: int(rc["graph_seeds"])]
    best = _base(top[0][1])
    if best <= 0:
        return
    seeds = {p: _base(parts) for p, parts in top if _base(parts) >= 0.5 * best}
    passed: dict[str, tuple[float, str]] = {}
    links.backlinks(seeds)
    for seed, score in seeds.items():
        for path in links.near(seed):
            value = score * float(rc["graph_decay"])
            if path not in seeds and (path not in passed or value > passed[path][0]):
                passed[path] = (value, seed)
    _fetch(manifest, passed, records)
    links.outs(passed)
    for path, (value, seed) in passed.items():
        rec = records.get(path)
        if rec is None or not filters.match(rec):
            continue
        parts = scored.setdefault(path, parts_of(path))
        if GRAPH_WEIGHT * value > parts["graph"]:
            parts["graph"], parts["graph_via"] = GRAPH_WEIGHT * value, records[seed].key


def _final(root: Path, scored: dict[str, dict[str, Any]], records: dict[str, Record], weights: Weights,
           k: int) -> list[Ranked]:  # fmt: skip
    """Profile (candidate status), importance and the adaptive blend; only notes with evidence
    (a keyword in common, or parts above the average note), best ``k`` first."""
    now = now_utc().timestamp()
    used = _usage(root, [records[p].key for p in scored])
    out = []
    for path, parts in scored.items():
        rec = records[path]
        parts["profile"] = CANDIDATE_WEIGHT if rec.status == "candidate" else 1.0
        parts["importance"] = importance_factor(rec.importance, weights)
        written = parse_time(rec.updated)
        a = adaptive(evidence(used.get(rec.key, Usage()), weights), now, written.timestamp() if written else None,
                     weights)  # fmt: skip
        parts["blend"] = blend_factor(a["adaptive"], weights)
        raw = _base(parts)
        parts["score"] = raw * parts["profile"] * parts["importance"] * parts["blend"] if raw > 0 else raw
        if parts["bm25_raw"] > 0 or raw > 0:
            out.append(Ranked(rec, parts["score"], parts))
    out.sort(key=lambda r: (-r.score, r.record.path))
    return out[:k]


def _usage(root: Path, keys: list[str]) -> dict[str, Usage]:
    """The usage of ``keys`` from the vault's usage store, read-only ({} without one)."""
    path = root / USAGE_DIR / USAGE_FILE
    if not keys or not path.is_file():
        return {}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return {}
    try:
        return read_usage(db, keys)
    except sqlite3.Error:
        return {}
    finally:
        db.close()
