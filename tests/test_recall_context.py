"""Recall v2 (issue 18): question words left out of BM25, neighbour context, end to end."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from helpers import recall_json
from typer.testing import CliRunner

from vaultmem.cli import app as cli
from vaultmem.index import neighbours
from vaultmem.recall.question import content_query


@pytest.mark.parametrize("query, expected", [
    ("What did Caroline research?", "Caroline research"),
    ("Where has Melanie camped?", "Melanie camped"),
    ("what's the plan", "the plan"),
    ("Why doesn't the cache expire?", "doesn't the cache expire"),
    ("what did", "what did"),  # nothing else left: the query as it is
    ("postgres advisory locks", "postgres advisory locks"),
    ("Bariatric surgery has a positive impact.", "Bariatric surgery has a positive impact."),  # a claim
    ("does vitamin D help", "vitamin D help"),
])  # fmt: skip
def test_content_query(query, expected):
    assert content_query(query) == expected


def test_best_neighbour_is_the_best_linked_score_either_way():
    g = nx.DiGraph()
    g.add_nodes_from(["a", "b", "c", "d"], dangling=False)
    g.add_node("dangling:x", dangling=True)
    g.add_edge("b", "a")
    g.add_edge("c", "b")
    g.add_edge("d", "dangling:x")
    index = {"a": 0, "b": 1, "c": 2, "d": 3}
    pairs = neighbours.edges(g, index)
    assert neighbours.edges(g, index) is pairs  # cached for this index
    best = neighbours.best_neighbour(np.array([0.5, -0.2, 0.1, 0.9]), pairs)
    assert best.tolist() == [0.0, 0.5, 0.0, 0.0]  # c's only neighbour is below 0; d has none
    assert neighbours.lift(np.array([0.5, -0.2, 0.1, 0.9]), pairs, 0.2).tolist() == pytest.approx(
        [0, 0.1, 0, 0]
    )
    scores = np.array([0.5, -0.2, 0.1, 0.9])
    assert (
        neighbours.via(1, scores, pairs) == 0 and neighbours.via(3, scores, pairs) is None
    )  # b's best is a; d has none
    assert neighbours.via(1, np.array([0.5, 0.0, 0.5, 0.0]), pairs) == 2  # a tie: the later note (c)


def _turns(root: Path) -> Path:
    (root / ".vaultmem").mkdir(parents=True)
    (root / "t1.md").write_text(
        "---\nid: t1\n---\nCaroline: Researching adoption agencies has been my dream.\n"
    )
    (root / "t2.md").write_text(
        '---\nid: t2\nfollows: "[[t1]]"\n---\nMelanie: Wow, that is wonderful news!\n'
    )
    (root / "t3.md").write_text("---\nid: t3\n---\nMelanie: What did you do? What did it look like?\n")
    (root / "t4.md").write_text("---\nid: t4\n---\nMelanie: Pottery class on Sunday, so relaxing.\n")
    return root


def _recall(root: Path, query: str, *extra: str) -> list[dict]:
    return recall_json(root, query, *extra)


@pytest.fixture
def turns(tmp_path, fake_embedder, monkeypatch):
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    return _turns(tmp_path / "v")


def test_question_words_do_not_match_other_questions(turns):
    hits = _recall(turns, "What did Caroline research?", "--mode", "bm25")
    assert hits[0]["id"] == "t1"
    assert "t3" not in [h["id"] for h in hits]  # it shares only "what did"
    (turns / ".vaultmem.toml").write_text("[recall]\nquestion_words = true\n")
    assert "t3" in [h["id"] for h in _recall(turns, "What did Caroline research?", "--mode", "bm25")]


def test_a_linked_note_inherits_context_and_explain_says_from_where(turns):
    hits = {h["id"]: h for h in _recall(turns, "adoption agencies", "--no-adaptive")}
    reply = hits["t2"]["explain"]
    assert reply["context"] > 0 and reply["context_via"] == "t1"
    assert "t4" not in hits  # unrelated, linked to nothing: no evidence, no hit
    result = CliRunner().invoke(cli.app, ["recall", "adoption agencies", "--vault", str(turns), "--explain"])
    assert "context" in result.output and "via t1" in result.output
    (turns / ".vaultmem.toml").write_text("[recall]\ncontext_weight = 0\n")
    hits = {h["id"]: h for h in _recall(turns, "adoption agencies", "--no-adaptive")}
    assert all(h["explain"]["context"] == 0 for h in hits.values())


def test_unrelated_queries_do_not_move_later_rankings(turns):
    def ranking(query: str) -> list[tuple[str, float]]:
        return [(h["id"], h["score"]) for h in _recall(turns, query, "-k", "4")]

    before = ranking("pottery news")
    for _ in range(5):
        _recall(turns, "adoption agencies dream", "-k", "2")  # logged as retrieved each time
    assert ranking("pottery news") == before
    (turns / ".vaultmem.toml").write_text("[adaptive]\nfrom_retrievals = true\n")
    lifted = dict(ranking("pottery news"))
    assert lifted["t1"] > dict(before)["t1"]  # the old behaviour: being shown lifts a memory
