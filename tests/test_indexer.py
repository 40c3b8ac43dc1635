"""The indexer: hash-keyed incremental sync, reconcile behind its back, crash repair."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers import write

from vaultmem.vault import Vault


def touch_later(path: Path) -> None:
    """Bump mtime so a stat-based check sees a change even within one clock tick."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))


@pytest.fixture
def vault(empty_vault, open_vault):
    write(
        empty_vault,
        "facts/Alpha.md",
        "---\nid: aaaa1111\ntype: fact\n---\n# Alpha\n\nPostgres advisory locks.\n",
    )
    write(empty_vault, "facts/Beta.md", "# Beta\n\nRedis keys expire. See [[Alpha]].\n")
    write(
        empty_vault, "lessons/Gamma.md", "---\ntype: lesson\n---\n# Gamma\n\nAlways run migrations twice.\n"
    )
    return open_vault(empty_vault)


def test_first_sync_adds_everything(vault):
    s = vault.reindex()
    assert (s.added, s.updated, s.removed, s.moved) == (3, 0, 0, 0)
    assert set(vault.records()) == {"facts/Alpha.md", "facts/Beta.md", "lessons/Gamma.md"}
    assert vault.bm25.count() == 3
    assert len(vault.vectors()) == 3


def test_second_sync_embeds_nothing(vault, fake_embedder):
    vault.reindex()
    calls = fake_embedder.calls
    s = vault.reindex()
    assert fake_embedder.calls == calls
    assert s.unchanged == 3 and not s.changed


def test_touch_without_change_reparses_nothing(vault, fake_embedder):
    vault.reindex()
    touch_later(vault.root / "facts/Alpha.md")
    calls = fake_embedder.calls
    s = vault.reindex()
    assert not s.changed and fake_embedder.calls == calls


def test_reconcile_sees_changes_made_behind_its_back(vault, fake_embedder):
    vault.reindex()
    root = vault.root
    write(root, "facts/Delta.md", "# Delta\n\nNew note about GiST indexes.\n")
    p = write(
        root, "lessons/Gamma.md", "---\ntype: lesson\n---\n# Gamma\n\nAlways run migrations on a snapshot.\n"
    )
    touch_later(p)
    (root / "archive").mkdir()
    os.rename(root / "facts/Beta.md", root / "archive/Beta.md")  # moved, same name (title): same chunks
    os.remove(root / "facts/Alpha.md")
    before = fake_embedder.texts_embedded
    s = vault.reindex()
    assert (s.added, s.updated, s.moved, s.removed) == (1, 1, 1, 1)
    assert set(vault.records()) == {"archive/Beta.md", "facts/Delta.md", "lessons/Gamma.md"}
    assert fake_embedder.texts_embedded - before == 2  # the moved note is not re-embedded
    assert vault.recall("GiST indexes", k=1)[0].path == "facts/Delta.md"
    assert not vault.recall("advisory", mode="bm25")


def test_reopen_reconciles_without_watcher(vault, fake_embedder):
    vault.reindex()
    vault.close()
    write(vault.root, "facts/Epsilon.md", "# Epsilon\n\nCelery beat schedules.\n")
    fresh = Vault(vault.root, embedder=fake_embedder)
    hits = fresh.recall("celery beat", k=1)
    assert hits[0].title == "Epsilon"
    fresh.close()


def test_bad_note_is_reported_and_skipped(vault):
    write(vault.root, "facts/Broken.md", "---\ntitle: [unclosed\n---\nbody\n")
    (vault.root / "facts/Binary.md").write_bytes(b"\x00\x01\x02")
    s = vault.reindex()
    assert "facts/Broken.md" in s.errors and "YAML" in s.errors["facts/Broken.md"]
    assert "facts/Binary.md" in s.errors
    assert "facts/Broken.md" not in vault.records()
    assert vault.index_errors().keys() == {"facts/Broken.md", "facts/Binary.md"}
    assert (vault.root / "facts/Broken.md").read_text() == "---\ntitle: [unclosed\n---\nbody\n"


def test_note_that_becomes_unparsable_leaves_the_index(vault):
    vault.reindex()
    p = write(vault.root, "facts/Alpha.md", "---\n: : bad\n  - x\n---\n")
    touch_later(p)
    s = vault.reindex()
    assert "facts/Alpha.md" in s.errors and "facts/Alpha.md" not in vault.records()


def test_rebuild_gives_identical_indexes(vault):
    vault.reindex()
    before = (vault.records(), vault.bm25.documents(), vault.manifest.chunk_hashes())
    q1 = [(h.path, h.score) for h in vault.recall("migrations", k=3, log=False)]
    s = vault.reindex(rebuild=True)
    assert s.added == 3
    after = (vault.records(), vault.bm25.documents(), vault.manifest.chunk_hashes())
    assert before == after
    assert q1 == [(h.path, h.score) for h in vault.recall("migrations", k=3, log=False)]


def test_interrupted_batch_is_detected_and_repaired(vault, monkeypatch):
    vault.reindex()
    write(vault.root, "facts/Zeta.md", "# Zeta\n\nZebra crossings.\n")
    os.remove(vault.root / "lessons/Gamma.md")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(vault.manifest, "commit_batch", crash)
    with pytest.raises(KeyboardInterrupt):
        vault.reindex()
    monkeypatch.undo()
    assert vault.manifest.get("dirty") == "1"  # BM25 was written, the manifest was not
    os.remove(vault.root / "facts/Zeta.md")  # and the file vanished before the next open
    vault.close()
    fresh = Vault(vault.root, embedder=vault.embedder)
    fresh.reindex()
    assert fresh.manifest.get("dirty") is None
    assert set(fresh.bm25.documents()) == set(fresh.records()) == {"facts/Alpha.md", "facts/Beta.md"}
    assert not fresh.recall("zebra crossings", mode="bm25")
    fresh.close()


def test_model_change_reembeds_everything(vault, fake_embedder):
    from helpers import HashEmbedder

    vault.reindex()
    vault.close()
    other = HashEmbedder(dim=32, name="test/other-model")
    v2 = Vault(vault.root, embedder=other)
    v2.reindex()
    assert other.texts_embedded == 3
    assert v2.manifest.get("model") == "test/other-model"
    assert v2.vectors().matrix.shape == (3, 32)
    v2.close()


def test_edit_embeds_only_changed_chunks(empty_vault, fake_embedder):
    sections = "\n\n".join(f"## Part {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(40)) for i in range(4))
    p = write(empty_vault, "Long.md", f"# Long\n\n{sections}\n")
    v = Vault(empty_vault, embedder=fake_embedder)
    v.reindex()
    first = fake_embedder.texts_embedded
    assert first > 1  # the note was split into several chunks
    write(empty_vault, "Long.md", p.read_text().replace("word3x0 ", "changed "))
    touch_later(p)
    v.reindex()
    assert fake_embedder.texts_embedded - first == 1
    v.close()


def test_ignored_files_never_indexed(demo_copy, fake_embedder):
    v = Vault(demo_copy, embedder=fake_embedder)
    (demo_copy / "facts" / ".Alpha.md.swp").write_text("swap")
    (demo_copy / "facts" / "notes.txt").write_text("not markdown")
    v.reindex()
    paths = set(v.records())
    assert not any(p.startswith(("drafts/", ".obsidian/", ".trash/")) for p in paths)
    assert "README.md" not in paths and all(p.endswith(".md") for p in paths)
    assert not v.recall("xylophone harbour pelican", mode="bm25")
    v.close()


def test_reconcile_of_unchanged_vault_is_cheap(demo_copy, fake_embedder):
    v = Vault(demo_copy, embedder=fake_embedder)
    v.reindex()
    start = time.perf_counter()
    s = v.reindex()
    assert not s.changed and s.unchanged == len(v.records())
    assert time.perf_counter() - start < 5  # generous: a correctness guard, not a benchmark
    v.close()


def test_in_memory_views_after_a_batch_equal_a_fresh_load(vault, fake_embedder):
    import numpy as np

    vault.reindex()
    vault.records(), vault.graph(), vault.vectors()  # load the views, then change files
    root = vault.root
    write(root, "facts/Delta.md", "# Delta\n\nLinks to [[Gamma]].\n")
    p = write(root, "facts/Beta.md", "# Beta\n\nRedis keys expire. No link now.\n")
    touch_later(p)
    os.remove(root / "lessons/Gamma.md")
    vault.reindex(["facts/Delta.md", "facts/Beta.md", "lessons/Gamma.md"])
    fresh = Vault(root, embedder=fake_embedder)
    fresh.reindex()
    assert vault.records() == fresh.records()
    assert vault.vectors().paths == fresh.vectors().paths
    assert np.array_equal(vault.vectors().matrix, fresh.vectors().matrix)
    assert sorted(vault.graph().edges(data=True)) == sorted(fresh.graph().edges(data=True))
    assert [(h.path, h.score) for h in vault.recall("redis links", k=3, log=False)] == [
        (h.path, h.score) for h in fresh.recall("redis links", k=3, log=False)
    ]
    fresh.close()


def test_same_size_edit_is_seen_by_the_stat_fast_path(vault, fake_embedder):
    vault.reindex()
    p = vault.root / "facts/Alpha.md"
    old = p.read_text()
    p.write_text(old.replace("Postgres", "Postgrex"))  # same size: only the mtime tells
    touch_later(p)
    s = vault.reindex()
    assert (s.updated, s.unchanged) == (1, 2)
    assert vault.recall("Postgrex", k=1, mode="bm25")[0].path == "facts/Alpha.md"


def test_no_change_reconcile_builds_no_records(vault, monkeypatch):
    from vaultmem.index.manifest import Manifest

    vault.reindex()
    asked: list[list[str]] = []
    real = Manifest.records
    monkeypatch.setattr(
        Manifest, "records", lambda self, paths=None: asked.append(paths) or real(self, paths)
    )
    assert not vault.reindex().changed
    assert asked == []  # stat compared against the stored stat only
    p = write(
        vault.root, "lessons/Gamma.md", "---\ntype: lesson\n---\n# Gamma\n\nNever run migrations twice.\n"
    )
    touch_later(p)
    os.remove(vault.root / "facts/Beta.md")
    s = vault.reindex()
    assert (s.updated, s.removed, s.unchanged) == (1, 1, 1)
    assert [sorted(a) for a in asked] == [["facts/Beta.md", "lessons/Gamma.md"]]  # only what changed
    assert set(vault.records()) == {"facts/Alpha.md", "lessons/Gamma.md"}


def test_list_stats_agrees_with_list_paths_and_stat(demo_copy, tmp_path):
    from vaultmem.core.store import Store

    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n")
    write(demo_copy, "facts/deep/er/Nested.md", "# Nested\n")
    os.symlink(demo_copy / "facts/deep/er/Nested.md", demo_copy / "facts/Linked.md")
    os.symlink(outside, demo_copy / "facts/Out.md")
    os.symlink(demo_copy / "facts", demo_copy / "facts-link")  # a symlinked folder is not entered
    (demo_copy / "facts" / ".Hidden.md").write_text("# hidden\n")
    (demo_copy / "facts" / "Draft.md.sync-conflict-1").write_text("# conflict copy\n")
    store = Store(demo_copy, ("/templates/",))
    stats = store.list_stats()
    assert list(stats) == store.list_paths()
    assert "facts/Linked.md" in stats and "facts/Out.md" not in stats and "facts/deep/er/Nested.md" in stats
    assert not any(p.startswith("facts-link/") or "Hidden" in p or "conflict" in p for p in stats)
    assert stats == {p: store.stat(p) for p in stats}


def test_model_change_seen_by_a_partial_sync_reembeds_every_note(vault, fake_embedder):
    """A watcher's batch (a few paths) was the first to see a new model: it embedded those
    notes with it, dropped every other note's vectors and recorded the new model, so the next
    full sync saw nothing to do and recall silently lost the other notes' vectors."""
    from helpers import HashEmbedder

    vault.reindex()
    vault.close()
    other = HashEmbedder(dim=32, name="test/other-model")
    v2 = Vault(vault.root, embedder=other)
    v2.reindex(["facts/Beta.md"])
    v2.reindex()
    assert v2.vectors().matrix.shape == (3, 32)  # every note, with the new model's vectors only
    assert v2.manifest.get("model") == "test/other-model"
    v2.close()


def test_model_change_is_said_once_and_never_on_the_first_index(vault, fake_embedder):
    from helpers import HashEmbedder

    assert vault.reindex().model_changed is None  # a first index: no model before
    vault.close()
    v2 = Vault(vault.root, embedder=HashEmbedder(dim=32, name="test/other-model"))
    first = v2.reindex()
    assert first.model_changed == ("test/hash-bow", "test/other-model")
    assert first.as_dict()["model_changed"] == {"from": "test/hash-bow", "to": "test/other-model"}
    assert v2.reindex().model_changed is None
    v2.close()
