"""The hybrid pipeline's reader (``VaultReader``): what recall reads of a Vault held in
memory, every note scored at once with numpy (BM25 and vector scores over the whole vault,
fused: ``fusion.py``, ``learned.py``) and the link graph. ``search`` ranks through it with
the one ranking (``search.py``, ``ranking.py``), as the keyword answer does through its own
reader (``keywords.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from ..core.errors import BadInput
from ..index import graph as graphmod
from ..index.bm25 import BM25Index
from ..index.embed import Embedder, similarity
from ..index.manifest import Record
from ..index.traverse import anchor_weights
from ..index.usage import Usage
from ..index.vectors import VectorIndex
from . import contextual, feedback, fusion, learned
from . import search as searching
from .hit import Hit
from .options import Options
from .question import keyword_query

HEAD = 1024  # notes sorted first by their text score (the candidates come from these, nearly always)


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
    bm25 = (
        src.bm25.score_all(keyword_query(query, question_words), src.index, n)
        if mode in ("hybrid", "bm25")
        else np.zeros(n)
    )
    if mode not in ("hybrid", "vector"):
        return bm25, np.zeros(n), None
    qvec = src.embedder.embed_query([vector_query or query])[0]
    vec = src.vectors().aligned_scores(qvec, src.index, n)
    if context and src.contexts is not None:
        vec = src.contexts().better(qvec, src.index, vec)
    return bm25, similarity(src.embedder, vec), qvec  # one scale for every model (embed.similarity)


def _combine(
    src: Sources, opt: Options, bm25: np.ndarray, vec: np.ndarray
) -> tuple[dict[str, np.ndarray], float]:
    """(name -> part of every note, the context weight); the parts' sum plus context ranks.
    ``combine = "sum"``: bm25 + vector (``fusion.hybrid``) and ``context_weight``;
    ``"learned"`` (hybrid mode): ``learned.parts`` and the model's context weight."""
    if opt.combine == "sum" or opt.mode != "hybrid":
        weight = {"hybrid": opt.bm25_weight, "bm25": 1.0, "vector": 0.0}[opt.mode]
        b_part, v_part = fusion.hybrid(bm25, vec, weight, opt.stats)
        return {"bm25": b_part, "vector": v_part}, opt.context_weight
    b_stats, v_stats = opt.stats if opt.stats is not None else (None, None)
    model = learned.load(opt.learned_weights or None)
    parts = learned.parts(
        model, fusion.standardise(bm25, b_stats), fusion.standardise(vec, v_stats), _sizes(src)
    )
    return parts, model.weights["context"]


def _sizes(src: Sources) -> np.ndarray:
    """File size of every note in universe order (kept in the memo, which a change clears)."""
    cached = src.memo.get("sizes")
    if cached is None or cached[0] is not src.index:
        cached = (src.index, np.array([float(src.records[p].size) for p in src.universe]))
        src.memo["sizes"] = cached
    return cached[1]


class VaultReader:
    """What recall reads of a Vault held in memory (``ranking.Reader``)."""

    def __init__(self, src: Sources):
        self.src = src
        self.records = src.records
        self._near = graphmod.near(src.graph)

    def fetch(self, paths: Iterable[str]) -> None:
        """Every record is at hand."""

    def every(self) -> dict[str, Record]:
        return self.src.records

    def text(self, query: str, opt: Options, vector_query: str | None = None) -> ArrayText:
        context = opt.context_vectors and contextual.applies(query)
        bm25, vec, qvec = raw_scores(self.src, query, opt.mode, opt.question_words, vector_query, context)
        parts, context_weight = _combine(self.src, opt, bm25, vec)
        eligible = bm25 > 0 if opt.mode == "bm25" else None
        return ArrayText(self.src, parts, bm25, vec, context_weight, eligible, qvec)

    def follow(self, paths: Iterable[str], back: bool = False) -> None:
        """Every link is at hand."""

    def near(self, path: str) -> Collection[str]:
        return self._near.get(path, ())

    def resolve(self, target: str, source: str) -> str | None:
        return self.src.graph.graph["resolver"].resolve(target, source)

    def anchor(self, anchor: str, depth: int, decay: float) -> dict[str, float]:
        return anchor_weights(
            self.src.graph, resolve_anchor(self.src.graph, self.src.records, anchor), depth, decay
        )

    def usage(self, keys: list[str]) -> dict[str, Usage]:
        return self.src.usage(keys) if self.src.usage else {}

    def body(self, path: str) -> str:
        return self.src.read_body(path)

    def memo(self, name: str) -> dict:
        return self.src.graph.graph.setdefault(name, {})

    def terms(self, text: str) -> list[str]:
        return self.src.bm25.terms(text)

    def outdated_by(self, path: str) -> list[str]:
        return graphmod.outdated_by(self.src.graph, self.src.records, path)


def search(src: Sources, query: str, opt: Options) -> list[Hit]:
    """Run one recall over a Vault's indexes and return the top ``opt.k`` hits, best first."""
    return searching.search(VaultReader(src), query, opt)


class ArrayText:
    """A query's text parts of every note, as numpy arrays in universe order (``ranking.Text``)."""

    def __init__(self, src: Sources, parts: dict[str, np.ndarray], bm25: np.ndarray, vec: np.ndarray,
                 context_weight: float, eligible: np.ndarray | None, qvec: np.ndarray | None = None):  # fmt: skip
        self.universe, self.index = src.universe, src.index
        self.arrays = {**parts, "bm25_raw": bm25, "vector_raw": vec}
        fused = parts["bm25"] + parts["vector"]  # what a neighbour's context comes from
        self._fused_array = fused
        self._fused: list[float] | None = None
        self._dense: np.ndarray = sum(parts.values())  # type: ignore[assignment]  # never empty
        self.eligible = eligible
        self.context_weight = context_weight
        self.best = float(fused.max()) if fused.size else 0.0
        self.matched = bool((bm25 > 0).any())
        self.qvec = qvec  # the query's vector (None: BM25 mode)
        self.vectors = qvec is not None and src.embedder.name != "none"  # the floor reads cosines (floor.py)
        self._src = src

    def parts(self, path: str) -> dict[str, float]:
        i = self.index.get(path)
        return {} if i is None else {name: float(a[i]) for name, a in self.arrays.items()}

    def fused(self, path: str) -> float:
        if self._fused is None:  # a list reads faster one note at a time (read only when notes link)
            self._fused = self._fused_array.tolist()
        i = self.index.get(path)
        return 0.0 if i is None else self._fused[i]

    def similar(self, seeds: list[str], weight: float, count: int) -> list[tuple[str, float]]:
        """The ``count`` notes nearest the query's vector moved towards the first
        ``feedback.SEEDS`` of ``seeds`` (``feedback.expanded``), with their standardised cosine."""
        if self.qvec is None:
            return []
        vectors = self._src.vectors()
        found = [v for p in seeds[: feedback.SEEDS] if (v := vectors.note_vector(p)) is not None]
        if not found:
            return []
        cos = vectors.aligned_scores(
            feedback.expanded(self.qvec, found, weight), self.index, len(self.universe)
        )
        z = fusion.standardise(cos)
        return [(self.universe[i], float(z[i])) for i in np.argsort(-z)[:count].tolist()]

    def ranked(self) -> Iterator[tuple[str, float]]:
        idx = np.flatnonzero(self.eligible) if self.eligible is not None else np.arange(len(self.universe))
        dense = self._dense[idx]
        groups = [idx]
        if len(idx) > HEAD:  # the best HEAD (and any tied with the last of them) sorted first
            cut = np.partition(dense, len(idx) - HEAD)[len(idx) - HEAD]
            groups = [idx[dense >= cut], idx[dense < cut]]
        for group in groups:
            values = self._dense[group]
            order = np.argsort(-values, kind="stable")  # ties keep universe (path) order
            for i, value in zip(group[order].tolist(), values[order].tolist()):
                yield self.universe[i], value


def resolve_anchor(graph: nx.DiGraph, records: dict[str, Record], anchor: str) -> str:
    """The path of the note an ``--anchor`` names; BadInput when there is none."""
    path = graph.graph["resolver"].resolve(anchor)
    if path is None or path not in records:
        raise BadInput(f"--anchor: no note called {anchor!r}")
    return path
