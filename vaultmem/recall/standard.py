"""Standardised scores (pure, no numpy): how a retriever's raw scores become comparable parts.

A retriever's scores over the whole vault become ``z / 6`` (an average note scores 0, three
standard deviations above average 0.5; ``fusion`` says why). Several vaults searched together
are standardised with the mean and standard deviation of all their notes at once, pooled from
each vault's moments. ``standardise`` takes a float or a numpy array: the pipeline standardises
every note's score at once, the keyword answer only the notes a query matches.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Stats = tuple[float, float]  # (mean, standard deviation) of a retriever's scores over every note
Moments = tuple[int, float, float]  # (count, mean, mean of squares)


def moments(count: int, total: float, squares: float) -> Moments:
    """(count, mean, mean of squares) of ``count`` scores summing to ``total`` (their squares:
    ``squares``): what pooled statistics over several vaults need."""
    return (count, total / count, squares / count) if count else (0, 0.0, 0.0)


def pooled(parts: Iterable[Moments]) -> Stats:
    """Mean and standard deviation of several arrays taken together, from their moments."""
    parts = list(parts)
    n = sum(c for c, _, _ in parts)
    if not n:
        return 0.0, 0.0
    mean = sum(c * m for c, m, _ in parts) / n
    var = sum(c * q for c, _, q in parts) / n - mean**2
    return mean, max(var, 0.0) ** 0.5


def standardise(scores: Any, stats: Stats) -> Any:
    """``scores`` (a float or a numpy array) as ``z / 6`` with ``stats``; 0 where the scores do
    not vary."""
    mean, sd = stats
    if sd < 1e-12:
        return abs(scores) * 0.0  # +0.0 (never -0.0), as a float or an array
    return (scores - mean) / (6.0 * sd)
