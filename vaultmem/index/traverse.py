"""Graph expansion of recall results (pure functions over a link graph)."""

from __future__ import annotations

import networkx as nx

from .graph import neighbourhood


def expand(
    g: nx.DiGraph, seeds: dict[str, float], decay: float = 0.5, depth: int = 1
) -> dict[str, tuple[float, str, int]]:
    """Graph scores for notes linked to strong hits.

    Each seed passes ``seed_score * decay ** hops`` to notes within ``depth`` hops; a note
    keeps the best it receives. Returns path -> (graph score, seed path, hops); seeds get none.
    """
    out: dict[str, tuple[float, str, int]] = {}
    for seed, score in seeds.items():
        for path, hops in neighbourhood(g, seed, depth).items():
            if hops == 0 or path in seeds:
                continue
            value = score * decay**hops
            if path not in out or value > out[path][0]:
                out[path] = (value, seed, hops)
    return out


def anchor_weights(g: nx.DiGraph, anchor: str, depth: int, decay: float = 0.5) -> dict[str, float]:
    """Notes within ``depth`` hops of an anchor -> proximity weight ``decay ** hops`` (anchor: 1)."""
    return {path: decay**hops for path, hops in neighbourhood(g, anchor, depth).items()}
