"""Which recall hits the search page lists: those above the relevance floor (issue 38: it listed
every hit recall returned, ten unrelated notes for a question the vault has no memory for).

A hit is listed when the prompt hook's floor would inject it (``agents.hooks.DEFAULT_FLOOR``:
BM25 and the vectors agree, a query term and cosine >= 0.325, or cosine >= 0.55 without a term),
or when it is among the query's strongest keyword matches (BM25 at least ``KEYWORD_SHARE`` of
the best hit's) and not far in meaning (cosine >= ``NEAR``, 0.15): a one-word search ("pgbouncer")
reads far from a whole note yet names it. Hits without cosines (the keyword answer while the
memory service starts, ``--mode bm25``) are judged on their keywords alone. Measured on the
demo vault with the real model (benchmarks/README.md, "The web search page's relevance floor").
"""

from __future__ import annotations

from typing import Any

from ..agents.hooks import DEFAULT_FLOOR

KEYWORD_SHARE = 0.5  # of the best hit's BM25 score
NEAR = 0.15  # the least cosine a strong keyword match needs


def _explain(hit: dict[str, Any]) -> dict[str, Any]:
    return hit.get("explain") or {}


def above_floor(hits: list[dict[str, Any]], near: float = NEAR) -> list[dict[str, Any]]:
    """The hits (``Hit.as_dict(explain=True)``) worth listing, in their order (``near``: the
    least cosine of a strong keyword match)."""
    top = max((float(_explain(h).get("bm25_raw", 0.0)) for h in hits), default=0.0)
    cosines = any(float(_explain(h).get("vector_raw", 0.0)) for h in hits)

    def keep(hit: dict[str, Any]) -> bool:
        e = _explain(hit)
        if cosines and DEFAULT_FLOOR.keep(hit):
            return True
        strong = top > 0 and float(e.get("bm25_raw", 0.0)) >= KEYWORD_SHARE * top
        return strong and (not cosines or float(e.get("vector_raw", 0.0)) >= near)

    return [h for h in hits if keep(h)]
