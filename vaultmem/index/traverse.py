"""The notes near an anchor (pure functions over a link graph): ``recall --anchor``."""

from __future__ import annotations

import networkx as nx

from .graph import neighbourhood


def anchor_weights(g: nx.DiGraph, anchor: str, depth: int, decay: float = 0.5) -> dict[str, float]:
    """Notes within ``depth`` hops of an anchor -> proximity weight ``decay ** hops`` (anchor: 1)."""
    return {path: decay**hops for path, hops in neighbourhood(g, anchor, depth).items()}
