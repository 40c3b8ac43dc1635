"""Concurrency: many processes changing the same note at once lose nothing.

Every read-modify-write of a note holds the note's OS lock (``lock.note_lock``, through
``Store.update``) with the changed-since-read check inside it; each concurrent writer is
either applied or refused with a clear message (exit 4), never reported "updated" and then
overwritten. ``edit`` applies its change to the text it finds under the lock, so edits of
different keys all land.
"""

from __future__ import annotations

import pytest

from .adversarial_helpers import run, start, wait_for

WRITERS = 10
pytestmark = pytest.mark.integration  # concurrent processes (with the hash embedder: cli_env)


def _race(root, tag: str) -> list[tuple[int, str, str]]:
    """WRITERS concurrent `vaultmem edit` of one note, each setting its own key."""
    procs = [
        start("edit", "note0aa", "--set", f"{tag}{i}=v{i}", "--vault", str(root)) for i in range(WRITERS)
    ]
    return [(p.wait(timeout=120), *p.communicate()) for p in procs]


def _check(root, tag: str, results) -> int:
    text = (root / "Alpha.md").read_text()
    applied = 0
    for i, (code, out, err) in enumerate(results):
        present = f"\n{tag}{i}: v{i}\n" in text
        if code == 0:
            assert out.startswith("updated") and present, (
                f"writer {i} said {out!r} but its key is lost:\n{text}"
            )
            applied += 1
        else:
            assert code == 4 and err.startswith("vaultmem: ") and "changed" in err and not present, (
                code,
                err,
            )
    assert "Text 0." in text and text.startswith("---\nid: note0aa\n")
    return applied


def test_concurrent_edits_of_one_note_lose_nothing(small_vault):
    """One round of WRITERS racing edits (two until issue 44: the second repeated the first on
    the changed note); edits apply to the current text under the note's lock: all land."""
    run("index", "--vault", str(small_vault))
    assert _check(small_vault, "r0k", _race(small_vault, "r0k")) == WRITERS


def test_concurrent_edits_with_a_watcher_lose_nothing(small_vault):
    watcher = start("watch", "--vault", str(small_vault))
    try:

        def up() -> bool:
            assert watcher.poll() is None, watcher.communicate()
            return "running" in run("status", "--vault", str(small_vault)).stdout

        wait_for(up, timeout=60, interval=0.2, what="the watcher")
        assert _check(small_vault, "w", _race(small_vault, "w")) == WRITERS
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)


def test_concurrent_first_checkpoints_of_one_session_make_one_handoff(small_vault):
    """Before: each process found no handoff for the session and made its own."""
    (small_vault / ".vaultmem.toml").write_text('[embedding]\nmodel = "none"\n')  # BM25 only: quick
    procs = [start("checkpoint", f"step {i} done", "--source", "agent-race", "--json", "--vault", str(small_vault))
             for i in range(6)]  # fmt: skip
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert all(code == 0 for code, _, _ in results), results
    handoffs = [p for p in small_vault.rglob("*.md") if "type: handoff" in p.read_text()]
    assert len(handoffs) == 1, handoffs
    text = handoffs[0].read_text()
    assert all(f"step {i} done" in text for i in range(6)), text
