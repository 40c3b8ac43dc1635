"""The answer recall gives while the memory service warms up: the pipeline's BM25 mode over a
vault's indexes as they are on disk, without the model, numpy or networkx, so that a prompt
hook that has just started the service answers at once (importing the hybrid pipeline alone
takes longer than this whole answer: benchmarks/README.md, "Always warm").

It ranks with the one ranking (``search.search``: the same options, parts, filters, lifecycle,
link context and expansion, importance, usage, ``Hit`` and snippet) through a reader of its
own (``ManifestReader``): BM25 from the postings (``BM25Index.matches``, ``score_all``'s numbers
without numpy), records read from the manifest as the ranking asks for them, links from the
manifest's link lists (``index.linklists``), ratings from the usage store, read-only. What
needs the model (vectors) or every note at hand (time ranges, profiles, anchors) waits for the
service: a call asking for an option this answer cannot honour (``covers``) is answered by the
pipeline in process instead; a time expression in the query is plain words here. Nothing is
written: an index missing, of another version or holding a file vaultmem did not write
answers nothing (the service indexes and repairs).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from ..core import config as configmod
from ..core.discovery import USAGE_DIR
from ..core.errors import BadInput, VaultError
from ..core.links import link_extras
from ..core.store import Store
from ..index.bm25 import BM25Index
from ..index.layout import index_dir, index_version
from ..index.linklists import Links, outdated_titles
from ..index.manifest import Manifest, Record
from ..index.usage import FILE as USAGE_FILE
from ..index.usage import Usage, read_usage
from . import params
from .options import Options
from .question import keyword_query
from .search import search
from .standard import Moments, Stats, moments, pooled, standardise

# the recall options this answer honours; any other must be at its declared default
# (``shown``: a test of (vault root, path) the hits must pass, as ``Vault.recall`` takes it)
HONOURED = {"k", "types", "tags", "since", "scope", "include_resolved", "mode", "log", "shown"}
DEFAULTS = {p.name: p.default for p in params.PARAMS}
# the best-scoring matches whose links are read for their neighbours' context (a match further
# down lends none here: on LoCoMo 2000 ranked the same; ``ManifestReader.text``)
CONTEXT_LIMIT = 300


def covers(options: dict[str, Any]) -> bool:
    """Whether the keyword answer honours every option of a call (else the pipeline answers)."""
    if options.get("mode", "hybrid") not in ("hybrid", "bm25"):
        return False
    return all(value == DEFAULTS.get(name, value) or value in (None, [], ())
               for name, value in options.items() if name not in HONOURED)  # fmt: skip


def recall(root: Path, query: str, options: dict[str, Any], explain: bool = False) -> list[dict[str, Any]]:
    """Hits (``Hit.as_dict``) of one vault for ``query`` ranked as the pipeline's BM25 mode
    ranks them, as ``options`` filter them (``covers`` must hold); [] when the vault has no
    index this answer may read."""
    reader = _open(root, query)
    if reader is None:
        return []
    try:
        return [hit.as_dict(explain) for hit in search(reader, query, reader.options(options))]
    finally:
        reader.close()


def recall_vaults(roots: dict[str, Path], query: str, options: dict[str, Any],
                  explain: bool = False) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
    """(vault name, hit) of several vaults in one ranking by score (BM25 standardised with the
    moments pooled over every vault, as ``MultiVault``; ties go to the vault listed first),
    ``k`` in all (default: the first vault's); hits carry their vault's name when there are
    several, and a score relative to the best hit's (1.0; ``score`` in explain)."""
    first = next(iter(roots.values()))
    k = options.get("k") or int(configmod.load(first)["recall"]["k"])
    readers = {name: _open(root, query) for name, root in roots.items()}
    try:
        opened = {name: r for name, r in readers.items() if r is not None}
        opts = {name: r.options({**options, "k": k}) for name, r in opened.items()}
        if len(roots) > 1:
            stats = pooled(r.moments(query, opts[name]) for name, r in opened.items())
            opts = {
                name: r.options({**options, "k": k}, stats=(stats, (0.0, 0.0))) for name, r in opened.items()
            }
        found = [(order, name, hit.as_dict(explain)) for order, name in enumerate(roots) if name in opened
                 for hit in search(opened[name], query, opts[name])]  # fmt: skip
    finally:
        for reader in readers.values():
            if reader is not None:
                reader.close()
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


def _open(root: Path, query: str) -> ManifestReader | None:
    """A reader of the vault's indexes (None: no index this answer may read)."""
    if not query.strip():
        raise BadInput("the query is empty")
    config = configmod.load(root)
    manifest = _manifest(root, config["vault"]["title_from"])
    if manifest is None:
        return None
    try:
        return ManifestReader(root, manifest, config)
    except BaseException:
        manifest.close()
        raise


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


class ManifestReader:
    """What recall reads of a vault's indexes on disk, read-only (``ranking.Reader``)."""

    def __init__(self, root: Path, manifest: Manifest, config: dict[str, Any]):
        self.root, self.manifest, self.config = root, manifest, config
        self.bm25 = BM25Index(index_dir(root) / "bm25")
        self.store = Store(root)
        self.records: dict[str, Record] = {}
        self.notes = manifest.count()  # the indexed notes (what BM25 is standardised over)
        self.links = Links(manifest, link_extras(bool(config["vault"].get("alias_links"))))
        self._absent: set[str] = set()
        self._matches: dict[str, dict[str, float]] = {}
        self._memo: dict[str, dict] = {}

    def close(self) -> None:
        self.manifest.close()

    def options(self, options: dict[str, Any], stats: tuple[Stats, Stats] | None = None) -> Options:
        """A call's options as the pipeline's BM25 mode takes them (``Vault.recall``)."""
        call = params.resolve(
            {k: v for k, v in options.items() if k in params.BY_NAME}, self.config["recall"]
        )
        shown = options.get("shown")
        mine = (lambda path: shown(self.root, path)) if shown is not None else None
        return Options.build({**call, "mode": "bm25"}, self.config, self.root, stats=stats, shown=mine)

    def matches(self, text: str) -> dict[str, float]:
        """path -> BM25 score of the notes holding a term of ``text`` (read once per text)."""
        if text not in self._matches:
            self._matches[text] = self.bm25.matches(text)
        return self._matches[text]

    def moments(self, query: str, opt: Options) -> Moments:
        """The moments of the query's BM25 scores over every note (``fusion.moments``)."""
        raw = self.matches(keyword_query(query, opt.question_words))
        return moments(self.notes, sum(raw.values()), sum(s * s for s in raw.values()))

    def fetch(self, paths: Iterable[str]) -> None:
        missing = [p for p in dict.fromkeys(paths) if p not in self.records and p not in self._absent]
        if missing:
            self.records.update(self.manifest.records(missing))
            self._absent.update(p for p in missing if p not in self.records)

    def every(self) -> None:
        """Notes are read as the ranking asks for them: a time expression is plain words here."""
        return None

    def text(self, query: str, opt: Options, vector_query: str | None = None) -> SparseText:
        """The BM25 part of every note (the keyword answer has no vectors); the links of the
        best matches that lend context (``CONTEXT_LIMIT``) are read."""
        if opt.mode != "bm25":
            raise ValueError("the keyword answer ranks by keywords only (mode bm25)")
        raw = self.matches(keyword_query(query, opt.question_words))
        stats = opt.stats[0] if opt.stats is not None else pooled([self.moments(query, opt)])
        text = SparseText(raw, stats, opt.context_weight)
        if text.context_weight > 0:
            self.links.outs(p for p, z in islice(text.ranked(), CONTEXT_LIMIT) if z > 0)
        return text

    def follow(self, paths: Iterable[str], back: bool = False) -> None:
        paths = list(paths)
        self.links.outs(paths)
        if back:
            self.links.backlinks(paths)

    def near(self, path: str) -> Collection[str]:
        return self.links.near(path)

    def resolve(self, target: str, source: str) -> str | None:
        return self.links.resolve(target, source)

    def anchor(self, anchor: str, depth: int, decay: float) -> dict[str, float]:
        raise BadInput("--anchor: the keyword answer has no link graph (the memory service answers it)")

    def usage(self, keys: list[str]) -> dict[str, Usage]:
        """The usage of ``keys`` from the vault's usage store, read-only ({} without one)."""
        path = self.root / USAGE_DIR / USAGE_FILE
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

    def body(self, path: str) -> str:
        return self.store.body(path)

    def memo(self, name: str) -> dict:
        return self._memo.setdefault(name, {})

    def terms(self, text: str) -> list[str]:
        return self.bm25.terms(text)

    def outdated_by(self, path: str) -> list[str]:
        linkers = self.links.updaters(path)
        self.fetch(linkers)
        return outdated_titles(linkers, self.records)


class SparseText:
    """A query's BM25 part of every note, kept for the notes it matches (``ranking.Text``):
    standardised with ``stats`` over every note, the others' part is that of a score of 0."""

    def __init__(self, raw: dict[str, float], stats: Stats, context_weight: float):
        self.raw = raw
        self.zero = standardise(0.0, stats)
        self.z = {path: standardise(score, stats) for path, score in raw.items()}
        self.context_weight = context_weight
        self.best = max(self.z.values(), default=self.zero)
        self.matched = any(score > 0 for score in raw.values())
        self.vectors = False  # no cosines: a keyword in common is the relevance floor's evidence
        self._order: list[str] | None = None

    def parts(self, path: str) -> dict[str, float]:
        return {"bm25": self.z.get(path, self.zero), "vector": 0.0, "bm25_raw": self.raw.get(path, 0.0),
                "vector_raw": 0.0}  # fmt: skip

    def fused(self, path: str) -> float:
        return self.z.get(path, self.zero)

    def similar(self, seeds: list[str], weight: float, count: int) -> list[tuple[str, float]]:
        return []  # no vectors

    def ranked(self) -> Iterator[tuple[str, float]]:
        if self._order is None:
            self._order = sorted((p for p, s in self.raw.items() if s > 0), key=lambda p: (-self.z[p], p))
        return ((path, self.z[path]) for path in self._order)
