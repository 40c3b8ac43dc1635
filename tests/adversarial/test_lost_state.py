"""Lost state: derived state deleted, interrupted or stale never leaves vaultmem confused.

``.vaultmem/`` may be deleted at any time (the indexes are rebuilt from the files); a
watcher running at that moment must notice and rebuild, not write into the void.
"""

from __future__ import annotations

import time

from conftest import wait_for


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
