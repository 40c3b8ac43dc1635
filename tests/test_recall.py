"""Recall: fusion math, chunking, CJK search, lifecycle, anchors, profiles, output schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write as note
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.errors import BadInput
from vaultmem.index.chunking import chunk, word_budget
from vaultmem.recall import fusion
from vaultmem.vault import Vault

REPO = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- fusion


def test_minmax_scales_to_unit_range():
    assert fusion.minmax([("a", 10.0), ("b", 5.0), ("c", 0.0)]) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert fusion.minmax([("a", 3.0), ("b", 3.0)]) == {"a": 1.0, "b": 1.0}
    assert fusion.minmax([]) == {}


def test_convex_combines_weighted_parts():
    out = fusion.convex([("a", 10.0), ("b", 0.0)], [("b", 0.9), ("c", 0.1)], bm25_weight=0.4)
    assert out["a"] == pytest.approx((0.4, 0.4, 0.0))
    assert out["b"] == pytest.approx((0.6, 0.0, 0.6))
    assert out["c"] == pytest.approx((0.0, 0.0, 0.0))


def test_convex_rejects_bad_weight():
    with pytest.raises(ValueError):
        fusion.convex([], [], bm25_weight=1.5)


def test_rrf_and_ranked_are_deterministic():
    scores = fusion.rrf([("a", 9), ("b", 8)], [("b", 0.9), ("a", 0.8)], k=60)
    assert scores["a"] == pytest.approx(scores["b"])
    assert fusion.ranked(scores) == sorted(scores.items())  # ties broken by key


@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=3), st.floats(-100, 100)),
        max_size=20,
        unique_by=lambda x: x[0],
    ),
    st.lists(
        st.tuples(st.text(min_size=1, max_size=3), st.floats(-1, 1)), max_size=20, unique_by=lambda x: x[0]
    ),
    st.floats(0, 1),
)
def test_convex_scores_stay_in_unit_interval(bm25, vec, w):
    for total, b, v in fusion.convex(bm25, vec, w).values():
        assert -1e-9 <= total <= 1 + 1e-9
        assert total == pytest.approx(b + v)


# ---------------------------------------------------------------- chunking


def test_short_note_is_one_chunk_with_title():
    assert chunk("Title", "short body") == ["Title\nshort body"]


def test_long_note_splits_along_headings_and_respects_budget():
    body = "\n\n".join(f"## Section {i}\n\n" + " ".join(f"w{i}_{j}" for j in range(120)) for i in range(3))
    pieces = chunk("T", body, max_tokens=256)
    budget = word_budget(256)
    assert len(pieces) >= 3
    assert all(p.startswith("T\n") for p in pieces)
    assert all(len(p.split()) <= budget + 1 for p in pieces)
    assert " ".join(pieces).count("w2_119") == 1  # nothing lost, nothing doubled


def test_enormous_sentence_is_hard_split():
    pieces = chunk("T", " ".join(["word"] * 1000), max_tokens=128)
    assert len(pieces) > 1 and all(len(p.split()) <= word_budget(128) + 1 for p in pieces)


# ---------------------------------------------------------------- recall on small vaults


@pytest.fixture
def lifecycle_vault(empty_vault, open_vault):
    note(empty_vault, "decisions/Old.md", "---\nid: old00001\nstatus: superseded\nsuperseded_by: '[[Middle]]'\n"
         "type: decision\n---\n# Old\n\nUse a lease table for job leasing.\n")  # fmt: skip
    note(empty_vault, "decisions/Middle.md", "---\nid: mid00001\nstatus: superseded\nsuperseded_by: '[[New]]'\n"
         "type: decision\n---\n# Middle\n\nUse redis locks.\n")  # fmt: skip
    note(
        empty_vault,
        "decisions/New.md",
        "---\nid: new00001\ntype: decision\n---\n# New\n\nUse advisory locks.\n",
    )
    note(
        empty_vault,
        "bugs/Fixed.md",
        "---\nstatus: resolved\ntype: bug_fix\n---\n# Fixed\n\nLease table deadlock fixed.\n",
    )
    return open_vault(empty_vault)


def test_hidden_notes_are_not_returned(lifecycle_vault):
    paths = [h.path for h in lifecycle_vault.recall("lease table", mode="bm25")]
    assert "bugs/Fixed.md" not in paths and "decisions/Old.md" not in paths


def test_superseded_match_brings_its_live_replacement(lifecycle_vault):
    hits = lifecycle_vault.recall("lease table job leasing", mode="bm25")
    assert hits[0].path == "decisions/New.md"
    assert hits[0].via == "supersedes old00001"
    assert hits[0].explain["redirect_from"] == "old00001"


def test_include_resolved_shows_everything(lifecycle_vault):
    paths = [h.path for h in lifecycle_vault.recall("lease table", mode="bm25", include_resolved=True)]
    assert {"bugs/Fixed.md", "decisions/Old.md"} <= set(paths)


def test_filters_apply_to_recall(lifecycle_vault):
    assert not lifecycle_vault.recall("locks", types=["bug_fix"])
    hits = lifecycle_vault.recall("locks", types=["decision"], k=5)
    assert hits and all(h.type == "decision" for h in hits)


def test_bad_recall_options_are_errors(lifecycle_vault):
    for kwargs in ({"mode": "fuzzy"}, {"profile": "nope"}, {"k": 0}, {"anchor": "No such anchor"}):
        with pytest.raises(BadInput):
            lifecycle_vault.recall("locks", **kwargs)
    with pytest.raises(BadInput):
        lifecycle_vault.recall("   ")


def test_cjk_notes_are_searchable(empty_vault, fake_embedder):
    note(empty_vault, "ja.md", "# 予約\n\n桟橋の予約確認メールを送信します。\n")
    note(empty_vault, "zh.md", "# 数据库\n\n我们使用数据库索引来加速查询。\n")
    note(empty_vault, "en.md", "# English\n\nNothing in Japanese here.\n")
    v = Vault(empty_vault, embedder=fake_embedder)
    assert [h.path for h in v.recall("確認メール", mode="bm25")] == ["ja.md"]
    assert [h.path for h in v.recall("索引", mode="bm25")] == ["zh.md"]
    assert [h.path for h in v.recall("桟橋", mode="bm25")] == ["ja.md"]
    v.close()


# ---------------------------------------------------------------- demo vault (fake embedder)


def test_graph_links_and_dangling_targets(demo):
    from vaultmem.index import graph as g

    G = demo.graph()
    anchors = g.anchors(G)
    assert {"projects/Project - Tidewater.md", "projects/Project - Tidewater Mobile.md"} <= set(anchors)
    dangling = g.unresolved(G)
    assert "Refund policy for cancelled bookings" in dangling
    # a link written inside an inline code span is not an edge
    assert "patterns/Linking conventions for memory notes.md" not in g.backlinks(
        G, "architecture/Booking availability model.md"
    )
    kinds = {k for _, _, d in G.edges(data=True) for k in d["kinds"]}
    assert {"body", "frontmatter", "superseded_by"} <= kinds


def test_anchor_restricts_results_to_its_neighbourhood(demo):
    from vaultmem.index.graph import neighbourhood

    G = demo.graph()
    near = neighbourhood(G, "projects/Project - Tidewater Mobile.md", 1)
    hits = demo.recall("build and release the app", anchor="Project: Tidewater Mobile", depth=1, k=20)
    assert hits and all(h.path in near for h in hits)
    assert all(h.explain["anchor"] > 0 for h in hits)
    deeper = demo.recall("build and release the app", anchor="Project: Tidewater Mobile", depth=2, k=50)
    assert len(deeper) >= len(hits)


def test_linked_notes_get_graph_score(demo):
    hits = demo.recall("advisory locks job leasing", k=10)
    assert any(h.explain["graph"] > 0 and h.explain.get("graph_via") for h in hits)


def test_profiles_reweight_types(demo):
    plain = demo.recall("what is next", k=10)
    handoff = demo.recall("what is next", k=10, profile="handoff")
    assert handoff[0].type in ("handoff", "progress", "session_summary")
    assert any(h.explain["profile"] > 1 for h in handoff)
    assert all(h.explain["profile"] == 1 for h in plain)


def test_explain_parts_add_up(demo):
    for h in demo.recall("stripe webhooks", k=5):
        e = h.explain
        base = e["bm25"] + e["vector"] + e["context"] + e["graph"] + e["anchor"]
        assert base > 0 and h.score == pytest.approx(
            base * e["profile"] * e["importance"] * e["blend"], abs=1e-3
        )
        assert e["blend"] == pytest.approx(0.7 + 0.3 * e["adaptive"], abs=1e-3)
    for h in demo.recall("stripe webhooks", k=5, adaptive=False):
        assert h.explain["blend"] == 1.0 and "adaptive" not in h.explain


def test_json_schema_of_recall(demo_copy, fake_model):
    from typer.testing import CliRunner

    from vaultmem.cli import app as cli

    result = CliRunner().invoke(
        cli.app, ["recall", "stripe webhooks", "--vault", str(demo_copy), "--json", "-k", "3", "--explain"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"query", "mode", "profile", "results"}
    first = data["results"][0]
    assert {"id", "title", "path", "type", "status", "score", "snippet", "rank", "tags", "importance",
            "updated", "via", "highlights", "vault", "source", "outdated_by", "explain"} == set(first)  # fmt: skip
    assert [r["rank"] for r in data["results"]] == [1, 2, 3]


# ---------------------------------------------------------------- real model


@pytest.mark.model
def test_demo_questions_with_real_model(demo_copy, real_model):
    questions = json.loads((REPO / "tests/data/demo_questions.json").read_text())
    v = Vault(demo_copy, embedder=real_model)
    found_top3 = 0
    for q in questions:
        paths = [h.path for h in v.recall(q["query"], k=3)]
        found_top3 += q["expected"] in paths
    v.close()
    assert found_top3 >= 9, f"only {found_top3}/{len(questions)} questions answered in the top 3"


# ---------------------------------------------------------------- standardised fusion, BM25 scoring


def test_standardise_maps_mean_to_half_and_three_sd_to_edges():
    import numpy as np

    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    z = fusion.standardise(a)
    assert z.mean() == pytest.approx(0.0)
    assert z[4] == pytest.approx((4 - 2) / (6 * a.std()))
    assert list(fusion.standardise(np.array([3.0, 3.0]))) == [0.0, 0.0]


def test_hybrid_parts_are_weighted():
    import numpy as np

    b, v = fusion.hybrid(np.array([0.0, 10.0]), np.array([1.0, 0.0]), 0.25)
    assert b == pytest.approx([0.25 * -1 / 6, 0.25 * 1 / 6])
    assert v == pytest.approx([0.75 * 1 / 6, 0.75 * -1 / 6])
    with pytest.raises(ValueError):
        fusion.hybrid(np.zeros(2), np.zeros(2), -0.1)


def test_numpy_bm25_matches_whoosh_and_a_rebuild_after_deletions(demo_copy, fake_embedder):
    import os

    v = Vault(demo_copy, embedder=fake_embedder)
    v.reindex()
    searcher = v.bm25._fresh_searcher()
    universe, index = v.universe()
    queries = ("stripe webhook twice", "advisory locks postgres job", "booking overlap exclusion constraint")
    for q in queries:  # no deletions: whoosh's own BM25F (it averages exact, we quantised lengths)
        theirs = [(h["path"], h.score) for h in searcher.search(v.bm25.query(q), limit=None)]
        full = v.bm25.score_all(q, index, len(universe))
        assert {p for p, _ in theirs} == {universe[i] for i in range(len(universe)) if full[i] > 0}
        assert [full[index[p]] for p, _ in theirs] == pytest.approx([s for _, s in theirs], rel=0.03)
    os.remove(demo_copy / "decisions" / "Use Postgres advisory locks for job leasing.md")
    (demo_copy / "facts" / "Extra.md").write_text("# Extra\n\nstripe webhook notes\n")
    v.reindex()  # leaves deleted documents in the segments
    universe, index = v.universe()
    incremental = {q: v.bm25.score_all(q, index, len(universe)) for q in queries}
    v.reindex(rebuild=True)
    for q in queries:
        assert list(v.bm25.score_all(q, index, len(universe))) == pytest.approx(
            list(incremental[q]), rel=1e-12
        )
    v.close()


def test_console_entry_fast_path_for_recall(demo_copy, fake_model, monkeypatch, capsys):
    from vaultmem.cli import app as cli

    monkeypatch.setattr(
        "sys.argv", ["vaultmem", "recall", "stripe webhooks", "--vault", str(demo_copy), "--json", "-k", "2"]
    )
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code in (0, None)
    assert len(json.loads(capsys.readouterr().out)["results"]) == 2
    monkeypatch.setattr("sys.argv", ["vaultmem", "recall", "x", "--vault", str(demo_copy), "--mode", "fuzzy"])
    with pytest.raises(SystemExit) as failed:
        cli.main()
    assert failed.value.code == 2
    err = capsys.readouterr().err
    assert err.strip() == "vaultmem: --mode: 'fuzzy' is not one of hybrid, bm25, vector"


def test_score_caches_follow_the_index_object_not_its_id(tmp_path):
    """A freshly built position map often reuses a freed one's id(); scores must follow the
    map actually passed (a watcher rebuilds it whenever a note is added or removed)."""
    import numpy as np

    from vaultmem.index.bm25 import BM25Index, Doc
    from vaultmem.index.vectors import VectorIndex

    paths = [f"n{i}.md" for i in range(6)]
    bm25 = BM25Index(tmp_path / "bm25")
    bm25.apply(
        [Doc(p, "h", p, "", "", "apple" if i == 0 else "cherry", "", "active") for i, p in enumerate(paths)],
        [],
    )
    vectors = VectorIndex(paths, np.eye(6, dtype=np.float32))
    for trial in range(20):
        order = paths if trial % 2 == 0 else paths[::-1]
        index = {p: i for i, p in enumerate(order)}
        assert int(np.argmax(bm25.score_all("apple", index, 6))) == index["n0.md"]
        assert (
            int(np.argmax(vectors.aligned_scores(np.eye(6, dtype=np.float32)[2], index, 6))) == index["n2.md"]
        )
        del index
    bm25.close()


def test_a_reader_without_a_segment_never_matches_a_cached_key():
    from vaultmem.index.bm25 import BM25Index

    class Unsegmented:
        def doc_count(self) -> int:
            return 3

    reader = Unsegmented()
    assert BM25Index._segment_key(reader) != BM25Index._segment_key(reader)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
def test_closed_bm25_readers_unmap_their_segments_without_garbage_collection(tmp_path):
    """Each commit opens and closes segment readers; their mmaps must go when they close,
    not when a full garbage collection happens to reach them (a watcher commits for days)."""
    import gc

    from vaultmem.index.bm25 import BM25Index, Doc

    def doc(i: int, version: int) -> Doc:
        return Doc(
            f"n{i}.md",
            f"{i}-{version}",
            f"note {i}",
            "",
            "",
            f"apple cherry word{i} v{version}",
            "",
            "active",
        )

    folder = tmp_path / "bm25"
    bm25 = BM25Index(folder)
    bm25.apply([doc(i, 0) for i in range(50)], [])
    index = {f"n{i}.md": i for i in range(50)}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for version in range(1, 30):
            bm25.apply([doc(version, version)], [])
            bm25.score_all("apple", index, 50)
        mapped = [line for line in Path("/proc/self/maps").read_text().splitlines() if str(folder) in line]
        live = {str(p) for p in folder.glob("*.seg")}
    finally:
        bm25.close()
        if enabled:
            gc.enable()
    assert len(mapped) <= len(live) + 1, f"{len(mapped)} mappings of {len(live)} segment files"
    assert {line.split()[-1] for line in mapped} <= live  # no deleted segment stays mapped


def test_recall_on_a_vault_without_notes_finds_nothing(empty_vault, open_vault):
    """A freshly initialised vault: whoosh reads an index without segments as an EmptyReader."""
    assert open_vault(empty_vault).recall("postgres advisory locks") == []
