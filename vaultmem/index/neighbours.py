"""Neighbour context at query time (pure): a note is lifted by its best linked neighbour.

A short note is often meaningful only next to the notes it links with (the turn it answers,
the session it belongs to). Each note gets ``weight * max(0, best fused score among the
notes it links to or is linked from)``, so a note whose neighbour matches the query
rises with it. Links are followed either way, one hop; dangling targets are skipped.
"""

from __future__ import annotations

import networkx as nx
import numpy as np


def edges(g: nx.DiGraph, index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(note, neighbour) position pairs of every link, both directions, sorted by note.

    Cached on the graph for this ``index`` (a new graph or index builds them again).
    """
    cached = g.graph.get("neighbour_edges")
    if cached is not None and cached[0] is index:
        return cached[1]
    ends = np.array([(index.get(a, -1), index.get(b, -1)) for a, b in g.edges()], dtype=np.int64).reshape(
        -1, 2
    )
    ends = ends[(ends >= 0).all(1) & (ends[:, 0] != ends[:, 1])]  # notes only (not dangling), no self-links
    a, b, n = ends[:, 0], ends[:, 1], max(len(index), 1)
    codes = np.unique(np.concatenate([a * n + b, b * n + a]))  # both directions, sorted, once each
    out = (codes // n, codes % n)
    g.graph["neighbour_edges"] = (index, out)
    return out


def best_neighbour(scores: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Each note's best neighbour score, floored at 0 (0 for notes without links)."""
    src, dst = pairs
    out = np.zeros(scores.shape[0], dtype=np.float64)
    if src.size == 0:
        return out
    starts = np.flatnonzero(np.r_[True, src[1:] != src[:-1]])
    best = np.maximum.reduceat(scores[dst], starts)
    out[src[starts]] = np.maximum(best, 0.0)
    return out


def lift(scores: np.ndarray, pairs: tuple[np.ndarray, np.ndarray], weight: float) -> np.ndarray:
    """The context part of every note: ``weight * best_neighbour(scores)``."""
    if weight <= 0:
        return np.zeros(scores.shape[0], dtype=np.float64)
    return weight * best_neighbour(scores, pairs)


def via(i: int, scores: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> int | None:
    """Position of the neighbour note ``i``'s context part came from: its best-scoring linked
    note (ties: the later position), or None without links (for ``--explain``; a binary search
    in the sorted pairs, so it costs the same for a hub with hundreds of links)."""
    src, dst = pairs
    lo, hi = np.searchsorted(src, i, "left"), np.searchsorted(src, i, "right")
    if lo == hi:
        return None
    near = dst[lo:hi]
    vals = scores[near]
    return int(near[np.flatnonzero(vals == vals.max())[-1]])
