"""The one ranking (``recall/ranking.py``): its candidate rule against brute force, and the
pipeline's note order (``pipeline.ArrayText.ranked``) across its sorted head."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from vaultmem.core.filters import Filters
from vaultmem.recall import pipeline
from vaultmem.recall.ranking import Round


def _round(
    dense: dict[str, float], fused: dict[str, float], near: dict[str, set[str]], weight: float
) -> Round:
    order = sorted(dense, key=lambda p: (-dense[p], p))
    text = SimpleNamespace(context_weight=weight, best=max(fused.values()), fused=fused.__getitem__,
                           parts=lambda p: {"bm25": dense[p]}, ranked=lambda: ((p, dense[p]) for p in order))  # fmt: skip
    records = {p: SimpleNamespace(key=p, status="active", expires=None, valid_until=None) for p in dense}
    reader = SimpleNamespace(records=records, fetch=lambda paths: None, follow=lambda paths, back=False: None,
                             near=lambda p: near.get(p, ()))  # fmt: skip
    return Round(reader, text, Filters())  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(20))
def test_the_candidates_are_the_best_by_text_plus_context(seed):
    """The pool reads down to the count-th note's text less the most context can add; what it
    keeps is what scoring every note would keep (ties by path)."""
    rng = random.Random(seed)
    notes = [f"n{i:03d}" for i in range(rng.randint(5, 300))]
    dense = {p: round(rng.gauss(0, 0.2), rng.choice([1, 2, 6])) for p in notes}  # some ties
    fused = {p: dense[p] - rng.random() * 0.05 for p in notes}
    near: dict[str, set[str]] = {}
    for _ in range(rng.randint(0, 3 * len(notes))):
        a, b = rng.sample(notes, 2)
        near.setdefault(a, set()).add(b)
        near.setdefault(b, set()).add(a)
    weight, count = rng.choice([0.0, 0.2, 1.0]), rng.randint(1, 60)
    ranking = _round(dense, fused, near, weight)
    total = {p: dense[p] + weight * max([0.0] + [fused[q] for q in near.get(p, ())]) for p in notes}
    expected = sorted(notes, key=lambda p: (-total[p], p))[:count]
    kept = ranking.retrieve(count, None)
    assert list(kept) == expected
    assert [kept[p]["context"] for p in kept] == pytest.approx([total[p] - dense[p] for p in expected])


def test_the_pipeline_orders_every_note_by_text_then_path(monkeypatch):
    """Past the sorted head (``HEAD``) and across ties at its edge."""
    rng = np.random.default_rng(7)
    universe = [f"n{i:03d}" for i in range(200)]
    dense = np.round(rng.normal(0, 0.2, 200), 1)  # many ties
    src = SimpleNamespace(universe=universe, index={p: i for i, p in enumerate(universe)})
    parts = {"bm25": dense, "vector": np.zeros(200)}
    for head in (7, 50, 1024):
        monkeypatch.setattr(pipeline, "HEAD", head)
        text = pipeline.ArrayText(src, parts, dense, np.zeros(200), 0.2, None)  # type: ignore[arg-type]
        assert [p for p, _ in text.ranked()] == sorted(universe, key=lambda p: (-dense[src.index[p]], p))
        eligible = dense > 0  # BM25 mode: only the notes holding a keyword
        text = pipeline.ArrayText(src, parts, dense, np.zeros(200), 0.2, eligible)  # type: ignore[arg-type]
        assert [p for p, _ in text.ranked()] == sorted((p for p in universe if dense[src.index[p]] > 0),
                                                        key=lambda p: (-dense[src.index[p]], p))  # fmt: skip
