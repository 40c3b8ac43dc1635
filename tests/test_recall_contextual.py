"""Contextual vectors (issue 37, ``index/context.py``, ``recall/contextual.py``), end to end:
a reply that names nothing is found through the turn it answers, and the derived index equals
a full rebuild after every kind of change."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import recall_json

from vaultmem.index import context
from vaultmem.recall import contextual

# the scores this test is about alone: no neighbour share, session part or graph expansion
ISOLATED = "[recall]\ncontext_weight = 0\nsession_weight = 0\ngraph_seeds = 0\n"
QUESTION = "When did Ann visit the Louvre museum?"
NOTES = {
    "S1": "---\nid: S1\n---\nSession 1 of the conversation between Ann and Bob.\n",
    "t1": "---\nid: t1\nsession: '[[S1]]'\n---\nBob: Did you finally see the Louvre museum in Paris?\n",
    "t2": "---\nid: t2\nsession: '[[S1]]'\nfollows: '[[t1]]'\n---\nAnn: Yes, I went there last week.\n",
    "t3": "---\nid: t3\nsession: '[[S1]]'\nfollows: '[[t2]]'\n---\nBob: Lucky you, I am jealous.\n",
    "d1": "---\nid: d1\n---\nAnn: I went to visit my aunt.\n",
    "d2": "---\nid: d2\n---\nAnn: I went to the gym.\n",
}


@pytest.fixture
def turns(tmp_path, fake_model) -> Path:
    """A session of three turns (the answer, t2, names nothing of the question) and two lone notes."""
    root = tmp_path / "v"
    (root / ".vaultmem").mkdir(parents=True)
    for stem, text in NOTES.items():
        (root / f"{stem}.md").write_text(text)
    return root


def _recall(root: Path, query: str, config: str) -> list[dict]:
    (root / ".vaultmem.toml").write_text(config)
    return recall_json(root, query)


def _ids(hits: list[dict]) -> list[str]:
    return [h["id"] for h in hits]


def test_a_reply_is_found_through_the_turn_it_answers(turns):
    plain = _ids(_recall(turns, QUESTION, ISOLATED + "context_vectors = false\n"))
    assert plain.index("d1") < plain.index("t2")  # alone, the reply reads like any note of Ann's
    hits = _recall(turns, QUESTION, ISOLATED)  # the default: context_vectors = true
    order = _ids(hits)
    assert order.index("t2") < order.index("d1")
    e = {h["id"]: h["explain"] for h in hits}
    assert e["t2"]["vector_raw"] > {h["id"]: h["explain"] for h in _recall(
        turns, QUESTION, ISOLATED + "context_vectors = false\n")}["t2"]["vector_raw"]  # fmt: skip
    assert e["d1"]["vector_raw"] == pytest.approx(  # a note without frontmatter links: one vector
        {h["id"]: h["explain"] for h in _recall(turns, QUESTION, ISOLATED + "context_vectors = false\n")}[
            "d1"
        ]["vector_raw"]
    )


@pytest.mark.parametrize("question", ["Would Ann visit the Louvre museum again?",
                                      "What museums has Ann visited?", "How many museums did Ann visit?"])  # fmt: skip
def test_lists_counts_and_suppositions_keep_the_plain_vector(turns, question):
    assert not contextual.applies(question)
    on = _recall(turns, question, ISOLATED)
    off = _recall(turns, question, ISOLATED + "context_vectors = false\n")
    assert [(h["id"], h["explain"]["vector_raw"]) for h in on] == [
        (h["id"], h["explain"]["vector_raw"]) for h in off
    ]


def _contexts(vault) -> dict[str, tuple[str, bytes]]:
    """Path -> (key, vector bytes) of the stored contextual vectors."""
    keys = vault.manifest.context_keys()
    paths, matrix = vault.manifest.context_vectors(vault.embedder.name)
    assert sorted(keys) == paths
    return {p: (keys[p], np.asarray(row).tobytes()) for p, row in zip(paths, matrix)}


def _rebuilt(root: Path, tmp: Path, open_vault) -> dict:
    copy = tmp / "rebuilt"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".vaultmem"))
    fresh = open_vault(copy)
    fresh.reindex()
    return _contexts(fresh)


def test_the_contextual_vectors_equal_a_full_rebuild_after_each_change(turns, tmp_path, open_vault):
    vault = open_vault(turns)
    vault.reindex()
    first = _contexts(vault)
    assert sorted(first) == ["t1.md", "t2.md", "t3.md"]  # S1 and the lone notes link nowhere: one vector each
    assert first == _rebuilt(turns, tmp_path, open_vault)
    changes = [
        lambda: (turns / "t1.md").write_text(
            NOTES["t1"].replace("Louvre museum", "Orsay gallery")
        ),  # a neighbour
        lambda: (turns / "S1.md").write_text(NOTES["S1"].replace("Bob", "Carl")),  # the hub: all its turns
        lambda: (turns / "t4.md").write_text("---\nid: t4\nfollows: '[[t3]]'\n---\nAnn: Ha!\n"),  # a reply
        lambda: (turns / "t2.md").unlink(),  # t3's link dangles now
        lambda: (turns / "t2.md").write_text(NOTES["t2"]),  # and resolves again
    ]
    for change in changes:
        before = _contexts(vault)
        change()
        vault.reindex()
        now = _contexts(vault)
        assert now != before
        assert now == _rebuilt(turns, tmp_path, open_vault)
    (turns / ".vaultmem.toml").write_text("[embedding]\ncontext = false\n")
    off = open_vault(turns)
    off.reindex()
    assert _contexts(off) == {}  # the setting off: none kept, none embedded


def test_an_index_of_the_schema_before_is_rebuilt_with_them(turns, open_vault):
    vault = open_vault(turns)
    vault.reindex()
    want = _contexts(vault)
    vault.manifest.db.execute("DELETE FROM contexts")
    vault.manifest.set("index_version", "m3.b1.filename")  # written by the vaultmem before
    vault.close()
    again = open_vault(turns)
    again.reindex()
    assert _contexts(again) == want


def test_context_text_reads_the_linked_notes_first_lines():
    c = context.Context(
        ("Session 1 of the conversation.", "Bob: Seen the Louvre?"), ("Bob: Lucky you.",), "k"
    )
    assert c.text("t2\nAnn: Yes.") == (
        "Session 1 of the conversation.\nBob: Seen the Louvre?\nt2\nAnn: Yes.\nBob: Lucky you."
    )
    assert (
        context.lead("\n\n[[S1|Session one]] began, with [[Ann]].\nMore.") == "Session one began, with Ann."
    )


def test_they_follow_the_plain_vectors_of_a_keyword_first_index(turns, open_vault, fake_embedder):
    """A first index through the service is keywords first (``reindex(vectors=False)``): no
    contextual vector until every note has its plain ones (``Watcher._fill_step``), then the
    same as a sync with vectors (issue 45: a linked vault's first answer costs plain vectors)."""
    vault = open_vault(turns)
    vault.reindex(vectors=False)
    assert (
        sorted(vault.pending_vectors()) == sorted(f"{n}.md" for n in NOTES) and vault.context_work() is None
    )
    vault.commit_vectors(vault.embed_pending(vault.pending_vectors()))
    assert not vault.pending_vectors()
    rows, gone, texts = vault.context_work()
    vault.commit_contexts(rows, gone, vault.embed_texts(texts))
    assert sorted(_contexts(vault)) == ["t1.md", "t2.md", "t3.md"]
    before = fake_embedder.texts_embedded
    vault.reindex()
    assert fake_embedder.texts_embedded == before and vault.context_work() is None


def test_a_read_only_look_at_an_index_before_schema_4_reads_its_records(turns, open_vault):
    """The doctor reads the manifest read-only, before any sync re-indexes it: no lead column yet."""
    import sqlite3

    from vaultmem.index.manifest import Manifest

    vault = open_vault(turns)
    vault.reindex()
    vault.close()
    path = turns / ".vaultmem" / "index" / "manifest.db"
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE notes DROP COLUMN lead")
    db.commit()
    db.close()
    m = Manifest(path, readonly=True)
    try:
        assert m.records()["t2.md"].lead == ""
    finally:
        m.close()
