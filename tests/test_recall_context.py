"""Recall v2 (issue 18): question words left out of BM25, neighbour context, end to end."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import networkx as nx
import pytest
from helpers import recall_json
from typer.testing import CliRunner

from vaultmem.cli import app as cli
from vaultmem.core.filters import Filters
from vaultmem.index import graph
from vaultmem.recall.question import content_query
from vaultmem.recall.ranking import Round


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


def test_a_notes_context_is_its_best_linked_score_either_way():
    g = nx.DiGraph()
    g.add_nodes_from(["a", "b", "c", "d"], dangling=False)
    g.add_node("dangling:x", dangling=True)
    g.add_edge("b", "a")
    g.add_edge("c", "b")
    g.add_edge("d", "dangling:x")
    g.add_edge("c", "c")
    near = graph.near(g)
    assert near == {"a": {"b"}, "b": {"a", "c"}, "c": {"b"}}  # both ways; no dangling target, no self-link
    assert graph.near(g) is near  # cached on the graph

    def context(scores: dict[str, float]) -> list[tuple[float, str | None]]:
        reader = SimpleNamespace(near=lambda p: near.get(p, ()))
        text = SimpleNamespace(context_weight=0.2, fused=scores.__getitem__)
        round_ = Round(reader, text, Filters())  # type: ignore[arg-type]
        return [round_.context(p) for p in "abcd"]

    # b's best is a; c's only neighbour is below 0 (no context, no via); d has none
    assert context({"a": 0.5, "b": -0.2, "c": 0.1, "d": 0.9}) == [(0.0, None), (pytest.approx(0.1), "a"),
                                                                 (0.0, None), (0.0, None)]  # fmt: skip
    assert context({"a": 0.5, "b": 0.0, "c": 0.5, "d": 0.0})[1][1] == "c"  # a tie: the later note


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
