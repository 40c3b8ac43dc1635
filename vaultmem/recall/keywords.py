"""The answer recall gives while the memory service warms up: BM25 over a vault's indexes as
they are on disk, without the model, numpy or networkx, so that a prompt hook that has just
started the service answers at once (importing the hybrid pipeline alone takes longer than this
whole answer: benchmarks/README.md, "Always warm").

In step with the pipeline's BM25 mode: the same BM25 numbers (``BM25Index.matches`` is
``score_all`` without numpy; a test pins them equal), the same question-word rule, the same
filters and lifecycle, the same ranking (``linkrank``: standardised BM25, the link graph's
context and expansion read from the manifest, importance, usage ratings), the same ``Hit`` and
snippet. What needs the model (vectors) or more than the manifest (time ranges, profiles,
anchors) waits for the service: a call asking for an option this answer cannot honour
(``covers``) is answered by the pipeline in process instead. Nothing is written: an index
missing, of another version or holding a file vaultmem did not write answers nothing (the
service indexes and repairs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import config as configmod
from ..core.errors import BadInput, NoteParseError, VaultError
from ..core.filters import Filters
from ..core.note import split_frontmatter
from ..core.store import Store
from ..index.bm25 import BM25Index
from ..index.layout import index_dir, index_version
from ..index.manifest import Manifest
from . import linkrank
from .hit import Hit, make_snippet, shown_status
from .params import PARAMS
from .question import content_query

# the recall options this answer honours; any other must be at its declared default
HONOURED = {"k", "types", "tags", "since", "scope", "include_resolved", "mode", "log"}
DEFAULTS = {p.name: p.default for p in PARAMS}


def covers(options: dict[str, Any]) -> bool:
    """Whether the keyword answer honours every option of a call (else the pipeline answers)."""
    if options.get("mode", "hybrid") not in ("hybrid", "bm25"):
        return False
    return all(value == DEFAULTS.get(name, value) or value in (None, [], ())
               for name, value in options.items() if name not in HONOURED)  # fmt: skip


@dataclass
class _Vault:
    """One vault's side of a keyword answer: its open manifest and the query's BM25 scores."""

    root: Path
    manifest: Manifest
    config: dict[str, Any]
    filters: Filters
    k: int
    scores: dict[str, float]
    terms: list[str]
    notes: int  # indexed notes (the array BM25 is standardised over)


def recall(root: Path, query: str, options: dict[str, Any], explain: bool = False) -> list[dict[str, Any]]:
    """Hits (``Hit.as_dict``) of one vault for ``query`` ranked as the pipeline's BM25 mode
    ranks them (``linkrank``), as ``options`` filter them (``covers`` must hold); [] when the
    vault has no index this answer may read."""
    side = _open(root, query, options)
    if side is None:
        return []
    try:
        return _hits(side, linkrank.own_stats(side.scores, side.notes), side.k, explain)
    finally:
        side.manifest.close()


def recall_vaults(roots: dict[str, Path], query: str, options: dict[str, Any],
                  explain: bool = False) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
    """(vault name, hit) of several vaults in one ranking by score (BM25 standardised with the
    moments pooled over every vault, as ``MultiVault``; ties go to the vault listed first),
    ``k`` in all (default: the first vault's); hits carry their vault's name when there are
    several, and a score relative to the best hit's (1.0; ``score`` in explain)."""
    first = next(iter(roots.values()))
    k = options.get("k") or int(configmod.load(first)["recall"]["k"])
    sides = {name: _open(root, query, {**options, "k": k}) for name, root in roots.items()}
    try:
        opened = [s for s in sides.values() if s is not None]
        stats = (linkrank.pooled(linkrank.moments(s.scores, s.notes) for s in opened) if len(roots) > 1
                 else linkrank.own_stats(opened[0].scores, opened[0].notes) if opened else (0.0, 0.0))  # fmt: skip
        found = [(order, name, hit) for order, (name, side) in enumerate(sides.items()) if side is not None
                 for hit in _hits(side, stats, k, explain)]  # fmt: skip
    finally:
        for side in sides.values():
            if side is not None:
                side.manifest.close()
    found.sort(key=lambda x: (-x[2]["score"], x[0], x[2]["rank"]))
    kept = [(name, hit) for _, name, hit in found[:k]]
    top = kept[0][1]["score"] if kept else 0.0
    for rank, (name, hit) in enumerate(kept, 1):
        hit["rank"] = rank
        if top > 0:  # a reader compares hits with the best one (1); --explain keeps the parts
            hit["score"] = round(hit["score"] / top, 4)
        if len(roots) > 1:
            hit["vault"] = name
    return kept


def _open(root: Path, query: str, options: dict[str, Any]) -> _Vault | None:
    """A vault's manifest and the query's BM25 scores (None: no index this answer may read)."""
    if not query.strip():
        raise BadInput("the query is empty")
    filters = Filters.build(options.get("types") or (), options.get("tags") or (), since=options.get("since"),
                            scope=options.get("scope"), include_hidden=bool(options.get("include_resolved")))  # fmt: skip
    config = configmod.load(root)
    k = options.get("k") or int(config["recall"]["k"])
    manifest = _manifest(root, config["vault"]["title_from"])
    if manifest is None:
        return None
    try:
        bm25 = BM25Index(index_dir(root) / "bm25")
        scores = bm25.matches(content_query(query))
        return _Vault(root, manifest, config, filters, k, scores, bm25.terms(query), manifest.count())
    except BaseException:
        manifest.close()
        raise


def _hits(side: _Vault, stats: linkrank.Stats, k: int, explain: bool) -> list[dict[str, Any]]:
    ranked = linkrank.rank(side.manifest, side.root, side.scores, stats, side.filters, side.config, k)
    store = Store(side.root)
    return [_hit(store, r, rank, side.terms).as_dict(explain) for rank, r in enumerate(ranked, 1)]


def _manifest(root: Path, title_from: str) -> Manifest | None:
    """The vault's manifest, read-only, when it is a current, clean index of notes titled by
    ``title_from`` (else None)."""
    path = index_dir(root) / "manifest.db"
    if not path.is_file():
        return None
    try:
        manifest = Manifest(path, readonly=True)
    except VaultError:
        return None
    if manifest.get("index_version") != index_version(title_from) or manifest.get("dirty"):
        manifest.close()
        return None
    return manifest


def _hit(store: Store, ranked: linkrank.Ranked, rank: int, terms: list[str]) -> Hit:
    rec = ranked.record
    try:
        body = split_frontmatter(store.read_text(rec.path))[1]
    except (OSError, NoteParseError):
        body = ""
    snippet, highlights = make_snippet(body, terms)
    via = f"supersedes {ranked.parts['redirect_from']}" if "redirect_from" in ranked.parts else None
    if via is None and ranked.parts.get("graph_via") and not ranked.parts["bm25_raw"]:
        via = f"linked from {ranked.parts['graph_via']}"
    explain = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in ranked.parts.items()}
    return Hit(id=rec.key, title=rec.title, path=rec.path, type=rec.type, status=shown_status(rec),
               score=round(ranked.score, 4), snippet=snippet, rank=rank, tags=list(rec.tags),
               importance=rec.importance, updated=rec.updated, highlights=highlights, source=rec.source,
               via=via, explain=explain)  # fmt: skip
