"""Hybrid fusion of BM25 and vector scores (pure functions).

The method, chosen by measurement on the SciFact train split (benchmarks/README.md):
both retrievers score *every* note; each score vector is standardised over the whole vault
as ``z / 6`` (an average note scores 0, three standard deviations above average 0.5), and
the hybrid score is the convex combination ``w * bm25 + (1 - w) * vector``. On the train split (nDCG@10) w = 0.25 scored 0.737 against
0.729 for min-max normalisation of each top-100 list and 0.717 for reciprocal rank fusion.
``convex`` (min-max over candidate lists) and ``rrf`` are kept for that comparison.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import standard
from .standard import Moments, Stats

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


def moments(scores: np.ndarray) -> Moments:
    """(count, mean, mean of squares) of every note's score: what pooled statistics over
    several vaults need (``standard.pooled``)."""
    return standard.moments(int(scores.size), float(scores.sum()), float((scores**2).sum()))


def standardise(scores: np.ndarray, stats: Stats | None = None) -> np.ndarray:
    """Scores as ``z / 6`` over the whole array, or with given (mean, sd) when several vaults
    are ranked together (all 0 when the scores do not vary)."""
    if scores.size == 0:
        return scores.astype(np.float64)
    return standard.standardise(
        scores, stats if stats is not None else (float(scores.mean()), float(scores.std()))
    )


def hybrid(bm25: np.ndarray, vector: np.ndarray, bm25_weight: float,
           stats: tuple[Stats, Stats] | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(weighted bm25 part, weighted vector part) of every note; their sum is the hybrid score."""
    if not 0.0 <= bm25_weight <= 1.0:
        raise ValueError("bm25_weight must be within [0, 1]")
    b_stats, v_stats = stats if stats is not None else (None, None)
    return bm25_weight * standardise(bm25, b_stats), (1.0 - bm25_weight) * standardise(vector, v_stats)


def ranked(scores: dict[str, float]) -> list[tuple[str, float]]:
    """Scores as a list, best first, ties broken by key for determinism."""
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
