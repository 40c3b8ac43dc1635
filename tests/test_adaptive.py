"""Adaptive scoring: the formula at its edges (usefulness, recency, frequency, floor, blend,
importance), weights from the config, and what recall reports with and without it."""

from __future__ import annotations

import math

import pytest
from helpers import write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core.config import DEFAULTS
from vaultmem.index.usage import Usage
from vaultmem.recall.adaptive import (
    DAY,
    Weights,
    adaptive,
    blend_factor,
    frequency,
    importance_factor,
    recency,
    usefulness,
)

NOW = 1_800_000_000.0


def rated(useful: int, total: int, days_ago: float = 0.0) -> Usage:
    return Usage(useful=useful, ratings=total, last_rating=NOW - days_ago * DAY)


# ------------------------------------------------------------------ the parts


@pytest.mark.parametrize("useful, total", [(0, 0), (0, 1), (2, 2), (0, 2)])
def test_usefulness_is_neutral_below_three_ratings(useful, total):
    assert usefulness(rated(useful, total), NOW) == 0.5


def test_usefulness_is_the_share_of_useful_ratings():
    assert usefulness(rated(3, 3), NOW) == 1.0
    assert usefulness(rated(3, 4), NOW) == 0.75
    assert usefulness(rated(2, 4), NOW) == 0.5
    assert usefulness(rated(3, 3, days_ago=365), NOW) == 1.0  # good ratings do not fade


@pytest.mark.parametrize("days, expected", [(0, 0.0), (90, 0.25), (180, 0.375), (900, 0.5 - 0.5 / 1024)])
def test_negative_usefulness_fades_back_to_neutral_with_a_90_day_half_life(days, expected):
    assert usefulness(rated(0, 4, days_ago=days), NOW) == pytest.approx(expected)


def test_fading_of_a_partly_negative_score():
    assert usefulness(rated(1, 4, days_ago=90), NOW) == pytest.approx(0.5 - 0.25 / 2)


@pytest.mark.parametrize(
    "days, expected",
    [(0, 1.0), (30, 0.5), (15, 0.5**0.5), (45, 0.5**1.5), (53, 0.30), (60, 0.30), (3650, 0.30), (-5, 1.0)],
)
def test_recency_has_a_30_day_half_life_and_a_floor(days, expected):
    assert recency(NOW - days * DAY, NOW) == pytest.approx(max(expected, 0.30))


def test_recency_of_a_memory_never_seen_is_the_floor():
    assert recency(None, NOW) == 0.30


@pytest.mark.parametrize("count, expected", [(0, 0.0), (1, math.log(2) / math.log(51)), (7, math.log(8) / math.log(51)),
                                             (50, 1.0), (1000, 1.0)])  # fmt: skip
def test_frequency_saturates_at_50(count, expected):
    assert frequency(count) == pytest.approx(expected)


def test_adaptive_combines_the_parts():
    u = Usage(count=7, last_access=NOW - 30 * DAY, useful=3, ratings=4, last_rating=NOW)
    a = adaptive(u, NOW)
    assert a["usefulness"] == 0.75 and a["recency"] == pytest.approx(0.5)
    assert a["frequency"] == pytest.approx(math.log(8) / math.log(51))
    assert a["adaptive"] == pytest.approx(0.60 * 0.75 + 0.25 * 0.5 + 0.15 * a["frequency"])


def test_adaptive_edges():
    best = adaptive(Usage(count=50, last_access=NOW, useful=5, ratings=5, last_rating=NOW), NOW)
    assert best["adaptive"] == pytest.approx(1.0)
    fresh = adaptive(Usage(), NOW, written=NOW)  # just written, never used or rated
    assert fresh == pytest.approx({"usefulness": 0.5, "recency": 1.0, "frequency": 0.0, "adaptive": 0.55})
    worst = adaptive(Usage(ratings=10, useful=0, last_rating=NOW), NOW)  # 0.6*0 + 0.25*0.3 + 0 = 0.075
    assert worst["adaptive"] == 0.35  # the floor: a memory never vanishes


def test_last_access_is_the_later_of_retrieval_and_write():
    u = Usage(count=1, last_access=NOW - 60 * DAY)
    assert adaptive(u, NOW, written=NOW - 30 * DAY)["recency"] == pytest.approx(0.5)
    assert adaptive(Usage(count=1, last_access=NOW - 30 * DAY), NOW, written=NOW - 90 * DAY)[
        "recency"
    ] == pytest.approx(0.5)
    assert adaptive(Usage(), NOW)["recency"] == 0.30


@pytest.mark.parametrize("a, factor", [(0.35, 0.805), (0.5, 0.85), (0.55, 0.865), (1.0, 1.0)])
def test_blend_factor(a, factor):
    assert blend_factor(a) == pytest.approx(factor)


@pytest.mark.parametrize("importance, factor", [(1, 1.0), (7, 1.0), (8, 1.5), (10, 1.5)])
def test_importance_factor(importance, factor):
    assert importance_factor(importance) == factor


def test_weights_from_config():
    assert Weights.from_config(DEFAULTS["adaptive"]) == Weights()
    w = Weights.from_config({"usefulness": 0.5, "recency": 0.3, "frequency": 0.2, "base": 0.6, "floor": 0.05,
                             "importance_boost": 2.0, "recency_half_life_days": 10, "unknown_key": 1})  # fmt: skip
    assert (w.usefulness, w.recency, w.frequency, w.base, w.floor, w.importance_boost) == (
        0.5,
        0.3,
        0.2,
        0.6,
        0.05,
        2.0,
    )
    assert w.min_ratings == 3  # not given: default
    assert recency(NOW - 10 * DAY, NOW, w) == pytest.approx(0.5)
    assert blend_factor(0.5, w) == pytest.approx(0.8) and importance_factor(9, w) == 2.0
    assert adaptive(Usage(ratings=10, useful=0, last_rating=NOW), NOW, w=w)["adaptive"] == pytest.approx(
        0.3 * 0.30
    )


# ------------------------------------------------------------------ in recall


@pytest.fixture
def vault(empty_vault, open_vault):
    body = "Webhook retries are idempotent: store the event id before any side effect.\n"
    write(
        empty_vault,
        "lessons/Alpha.md",
        f"---\nid: alpha001\ntype: lesson\nimportance: 5\n---\n# Alpha\n\n{body}",
    )
    write(
        empty_vault,
        "lessons/Beta.md",
        f"---\nid: beta0001\ntype: lesson\nimportance: 5\n---\n# Beta\n\n{body}",
    )
    write(empty_vault, "lessons/Gamma.md", "---\nid: gamma001\ntype: lesson\nimportance: 8\n---\n# Gamma\n\n"
                                           "Webhook signatures must be verified.\n")  # fmt: skip
    return open_vault(empty_vault)


def by_id(hits) -> dict:
    return {h.id: h for h in hits}


def test_explain_has_every_part_and_the_score_is_their_product(vault):
    hits = vault.recall("webhook idempotent event", log=False)
    assert sum(h.score > 0 for h in hits) >= 2
    for h in hits:
        e = h.explain
        assert {"bm25", "vector", "graph", "anchor", "profile", "importance", "blend",
                "usefulness", "recency", "frequency", "adaptive", "score"} <= set(e)  # fmt: skip
        assert e["blend"] == pytest.approx(0.70 + 0.30 * e["adaptive"], abs=1e-4)
        raw = e["bm25"] + e["vector"] + e["graph"] + e["anchor"]
        expected = raw * e["profile"] * e["importance"] * e["blend"] if raw > 0 else raw  # never amplify <= 0
        assert h.score == pytest.approx(max(expected, 0.0), abs=1e-3)  # shown never below the average (0)
    hits = by_id(vault.recall("webhook", log=False))
    assert hits["gamma001"].explain["importance"] == 1.5 and hits["alpha001"].explain["importance"] == 1.0
    fresh = hits["alpha001"].explain  # just written, never rated or recalled (log=False)
    assert (fresh["usefulness"], fresh["recency"], fresh["frequency"], fresh["adaptive"]) == (
        0.5,
        1.0,
        0.0,
        0.55,
    )


def test_no_adaptive_removes_the_parts(vault):
    vault.rate([("alpha001", False)] * 3)
    for h in vault.recall("webhook idempotent event", adaptive=False, log=False):
        e = h.explain
        assert not {"usefulness", "recency", "frequency", "adaptive"} & set(e)
        assert e["blend"] == 1.0
        raw = e["bm25"] + e["vector"] + e["graph"] + e["anchor"]
        assert h.score == pytest.approx(
            max(raw * e["profile"] * e["importance"] if raw > 0 else raw, 0.0), abs=1e-3
        )


@pytest.mark.parametrize("good, bad", [("alpha001", "beta0001"), ("beta0001", "alpha001")])
def test_ratings_move_memories_up_and_down(vault, good, bad):
    plain = [h.id for h in vault.recall("webhook idempotent event", adaptive=False, log=False)]
    vault.rate([(good, True)] * 3 + [(bad, False)] * 3)
    hits = vault.recall("webhook idempotent event", log=False)
    ranked = [h.id for h in hits]
    assert ranked.index(good) < ranked.index(bad)
    e = by_id(hits)
    assert e[good].explain["usefulness"] == 1.0 and e[bad].explain["usefulness"] == 0.0
    assert e[bad].explain["adaptive"] == 0.35 and e[bad].explain["blend"] == pytest.approx(0.805)  # floor
    assert bad in ranked  # sinks, never vanishes
    assert [h.id for h in vault.recall("webhook idempotent event", adaptive=False, log=False)] == plain


def test_recall_uses_the_weights_of_the_vault_config(vault):
    vault.config["adaptive"].update(base=1.0, importance_boost=3.0)
    hits = by_id(vault.recall("webhook", log=False))
    assert all(h.explain["blend"] == 1.0 for h in hits.values())
    assert hits["gamma001"].explain["importance"] == 3.0


def test_cli_explain_and_no_adaptive(vault, fake_model):
    env = {"VAULTMEM_VAULT": str(vault.root)}
    out = CliRunner().invoke(app, ["recall", "webhook idempotent", "--explain", "-k", "1"], env=env).stdout
    assert "x adaptive blend 0.865" in out
    assert (
        "adaptive 0.550 from usefulness 0.50 (0 ratings; neutral 0.50 until 3), recency 1.00, frequency 0.00"
        in out
    )
    out = (
        CliRunner()
        .invoke(app, ["recall", "webhook idempotent", "--explain", "--no-adaptive", "-k", "1"], env=env)
        .stdout
    )
    assert "x adaptive blend 1.000" in out and "from usefulness" not in out
