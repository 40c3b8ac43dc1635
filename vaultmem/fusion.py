"""Hybrid fusion of BM25 and vector results (pure functions).

The method, chosen by measurement on the SciFact train split (benchmarks/README.md):
each result list is min-max normalised over its own candidates to [0, 1], and a note's
hybrid score is the convex combination ``w * bm25_norm + (1 - w) * vector_norm``. A note
missing from one list gets 0 for that part. Reciprocal rank fusion is kept for comparison.
"""

from __future__ import annotations

from typing import Sequence

Ranked = Sequence[tuple[str, float]]


def minmax(results: Ranked) -> dict[str, float]:
    """Scores scaled to [0, 1] over the list; a list of equal scores maps to 1.0."""
    if not results:
        return {}
    scores = [s for _, s in results]
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return {key: 1.0 for key, _ in results}
    return {key: (s - lo) / (hi - lo) for key, s in results}


def convex(bm25: Ranked, vector: Ranked, bm25_weight: float = 0.4) -> dict[str, tuple[float, float, float]]:
    """key -> (hybrid, bm25 part, vector part) where parts are weighted normalised scores."""
    if not 0.0 <= bm25_weight <= 1.0:
        raise ValueError("bm25_weight must be within [0, 1]")
    nb, nv = minmax(bm25), minmax(vector)
    out = {}
    for key in nb.keys() | nv.keys():
        b = bm25_weight * nb.get(key, 0.0)
        v = (1.0 - bm25_weight) * nv.get(key, 0.0)
        out[key] = (b + v, b, v)
    return out


def rrf(*lists: Ranked, k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: sum of 1 / (k + rank) over the lists (rank from 1)."""
    out: dict[str, float] = {}
    for results in lists:
        for rank, (key, _) in enumerate(results, start=1):
            out[key] = out.get(key, 0.0) + 1.0 / (k + rank)
    return out


def ranked(scores: dict[str, float]) -> list[tuple[str, float]]:
    """Scores as a list, best first, ties broken by key for determinism."""
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
