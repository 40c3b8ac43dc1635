"""The answer recall gives while the memory service warms up: BM25 over a vault's indexes as
they are on disk, without the model, numpy or networkx, so that a prompt hook that has just
started the service answers at once (importing the hybrid pipeline alone takes longer than this
whole answer: benchmarks/README.md, "Always warm").

In step with the pipeline where it answers: the same BM25 numbers (``BM25Index.matches`` is
``score_all`` without numpy; a test pins them equal), the same question-word rule, the same
filters and lifecycle visibility (``Filters``), the same ``Hit`` and snippet. Ranked by BM25
alone: what needs the model (vectors) and what the pipeline adds on top (the link graph's
context and expansion, profiles, importance, usage, time ranges, lifecycle redirects) waits for
the service. A call asking for an option this answer cannot honour (``covers``) is answered by
the pipeline in process instead. Nothing is written: an index missing, of another version or
holding a file vaultmem did not write answers nothing (the service indexes and repairs).
"""

from __future__ import annotations

from pathlib import Path

from ..core import config as configmod
from ..core.errors import BadInput, NoteParseError, VaultError
from ..core.filters import Filters
from ..core.note import split_frontmatter
from ..core.store import Store
from ..index.bm25 import BM25Index
from ..index.layout import index_dir, index_version
from ..index.manifest import Manifest, Record
from .hit import Hit, make_snippet, shown_status
from .params import PARAMS
from .question import content_query

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

# the recall options this answer honours; any other must be at its declared default
HONOURED = {"k", "types", "tags", "since", "scope", "include_resolved", "mode", "log"}
DEFAULTS = {p.name: p.default for p in PARAMS}


def covers(options: dict[str, Any]) -> bool:
    """Whether the keyword answer honours every option of a call (else the pipeline answers)."""
    if options.get("mode", "hybrid") not in ("hybrid", "bm25"):
        return False
    return all(value == DEFAULTS.get(name, value) or value in (None, [], ())
               for name, value in options.items() if name not in HONOURED)  # fmt: skip


def recall(root: Path, query: str, options: dict[str, Any], explain: bool = False) -> list[dict[str, Any]]:
    """Hits (``Hit.as_dict``) of one vault for ``query``, best BM25 first, as ``options`` filter
    them (``covers`` must hold); [] when the vault has no index this answer may read."""
    if not query.strip():
        raise BadInput("the query is empty")
    filters = Filters.build(options.get("types") or (), options.get("tags") or (), since=options.get("since"),
                            scope=options.get("scope"), include_hidden=bool(options.get("include_resolved")))  # fmt: skip
    config = configmod.load(root)
    k = options.get("k") or int(config["recall"]["k"])
    manifest = _manifest(root, config["vault"]["title_from"])
    if manifest is None:
        return []
    try:
        bm25 = BM25Index(index_dir(root) / "bm25")
        scores = bm25.matches(content_query(query))
        kept = _best(manifest, scores, filters, k)
    finally:
        manifest.close()
    store, terms = Store(root), bm25.terms(query)
    return [
        _hit(store, rec, scores[rec.path], rank, terms).as_dict(explain) for rank, rec in enumerate(kept, 1)
    ]


def recall_vaults(roots: dict[str, Path], query: str, options: dict[str, Any],
                  explain: bool = False) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
    """(vault name, hit) of several vaults in one ranking by BM25 score (raw scores of different
    vaults: comparable enough for a keyword answer; ties go to the vault listed first), ``k``
    in all (default: the first vault's, as ``MultiVault``); hits carry their vault's name when
    there are several, and a score relative to the best hit's (1.0; ``bm25_raw`` in explain)."""
    first = next(iter(roots.values()))
    k = options.get("k") or int(configmod.load(first)["recall"]["k"])
    found = [(order, name, hit) for order, (name, root) in enumerate(roots.items())
             for hit in recall(root, query, {**options, "k": k}, explain)]  # fmt: skip
    found.sort(key=lambda x: (-x[2]["score"], x[0], x[2]["rank"]))
    kept = [(name, hit) for _, name, hit in found[:k]]
    top = kept[0][1]["score"] if kept else 0.0
    for rank, (name, hit) in enumerate(kept, 1):
        hit["rank"] = rank
        if top > 0:  # raw BM25 (31.892) means nothing to a reader: the best hit is 1 (--explain: the raw)
            hit["score"] = round(hit["score"] / top, 4)
        if len(roots) > 1:
            hit["vault"] = name
    return kept


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


def _best(manifest: Manifest, scores: dict[str, float], filters: Filters, k: int) -> list[Record]:
    """The ``k`` best-scored indexed notes ``filters`` let through, reading records a batch at a
    time from the best down (a common word matches thousands of notes)."""
    ranked = sorted(scores, key=lambda p: (-scores[p], p))
    kept: list[Record] = []
    step = max(50, 4 * k)
    for i in range(0, len(ranked), step):
        part = ranked[i : i + step]
        records = manifest.records(part)
        kept += [records[p] for p in part if p in records and filters.match(records[p])]
        if len(kept) >= k:
            break
    return kept[:k]


def _hit(store: Store, rec: Record, score: float, rank: int, terms: list[str]) -> Hit:
    try:
        body = split_frontmatter(store.read_text(rec.path))[1]
    except (OSError, NoteParseError):
        body = ""
    snippet, highlights = make_snippet(body, terms)
    return Hit(id=rec.key, title=rec.title, path=rec.path, type=rec.type, status=shown_status(rec), score=round(score, 4),
               snippet=snippet, rank=rank, tags=list(rec.tags), importance=rec.importance, updated=rec.updated,
               highlights=highlights, source=rec.source, explain={"bm25_raw": round(score, 4)})  # fmt: skip
