"""Lost state: derived state deleted, interrupted or stale never leaves vaultmem confused.

``.vaultmem/`` may be deleted at any time (the indexes are rebuilt from the files); a
watcher running at that moment must notice and rebuild, not write into the void.
"""

from __future__ import annotations

import time

from vaultmem.index.layout import index_dir

from .adversarial_helpers import wait_for


def test_watcher_status_clears_the_last_error_after_recovery(small_vault, watching, monkeypatch):
    w = watching(small_vault)
    real = w.vault.reindex
    failing = [True]

    def flaky(*args, **kwargs):
        if failing[0]:
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)

    monkeypatch.setattr(w.vault, "reindex", flaky)
    (small_vault / "Delta.md").write_text("---\ntitle: Delta\n---\nDelta text.\n")
    wait_for(lambda: w.watcher.status()["last_error"], what="the failure")
    failing[0] = False
    (small_vault / "Epsilon.md").write_text("---\ntitle: Epsilon\n---\nEpsilon text.\n")
    wait_for(lambda: "Epsilon.md" in w.vault.manifest.records(), what="recovery")
    assert w.watcher.status()["last_error"] is None


def test_watcher_rebuilds_when_its_state_folder_is_deleted(small_vault, watching):
    import shutil

    from vaultmem.core.lock import WriterLock
    from vaultmem.index.manifest import Manifest

    w = watching(small_vault)
    wait_for(lambda: "Alpha.md" in w.vault.manifest.records(), what="the first index")
    shutil.rmtree(small_vault / ".vaultmem")
    time.sleep(1.5)  # the watcher checks its state folder at least once a second
    (small_vault / "Delta.md").write_text("---\ntitle: Delta\n---\nDelta text about otters.\n")
    index = index_dir(small_vault)
    wait_for(lambda: (index / "manifest.db").exists() and "Delta.md" in Manifest(index / "manifest.db", readonly=True).records(),
             what="the new note in the manifest on disk")  # fmt: skip
    holder = WriterLock(index / "writer.lock").holder()
    assert holder and holder["role"] == "watch", holder  # the new lock file is held: no second writer
    with w.watcher.mutex:
        assert [h.path for h in w.vault.recall("otters", mode="bm25")] == ["Delta.md"]
        assert (
            set(w.vault.bm25.documents())
            == set(w.vault.manifest.records())
            == {"Alpha.md", "Beta.md", "Gamma.md", "Delta.md"}
        )
    assert w.error is None and w.watcher.state.rebuilds == 1


def test_a_second_writer_after_the_deletion_stops_the_watcher_cleanly(small_vault, watching):
    import shutil

    from vaultmem.core.lock import WriterLock

    w = watching(small_vault)
    wait_for(lambda: "Alpha.md" in w.vault.manifest.records(), what="the first index")
    with w.watcher.mutex:  # hold the watcher while another process takes the new lock first
        shutil.rmtree(small_vault / ".vaultmem")
        other = WriterLock(index_dir(small_vault) / "writer.lock")
        assert other.acquire("index")
    try:
        w.thread.join(timeout=15)
        assert not w.thread.is_alive() and "another vaultmem process" in str(w.error)
    finally:
        other.release()


def test_a_model_folder_whose_links_dangle_is_assembled_again(tmp_path):
    """The model cache is shared by every venv of the user; its links point into the venv that
    assembled it, and that venv can be deleted (this broke every command on the dev machine)."""
    import os

    from vaultmem.index.embed import default_model_dir

    target = default_model_dir(tmp_path)
    gone = tmp_path / "removed-venv" / "model.onnx"
    os.unlink(target / "model.onnx")
    os.symlink(gone, target / "model.onnx")  # what a removed venv leaves behind
    assert default_model_dir(tmp_path) == target and (target / "model.onnx").exists()
