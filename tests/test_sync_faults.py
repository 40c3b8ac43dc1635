"""Fault injection (issue 24): a bare remote and three clones under a mixed load (CLI writers,
an editor saving in place and by rename, a watcher syncing every 5 s, syncs SIGKILLed at random
moments and at every named step) for a bounded time; then every acknowledged write is on every
clone, no commit any clone's branch ever held is missing from the remote, and every index
equals a rebuild. The load runs 20 s (35 s until issue 44; VAULTMEM_FAULT_SECONDS sets it), the
named steps taken in turn so a short run still kills at each; the long version is
benchmarks/sync_soak.py."""

from __future__ import annotations

import os
import random

import pytest
from gitcluster import Cluster
from syncload import Load

SECONDS = float(os.environ.get("VAULTMEM_FAULT_SECONDS", "20"))


def enough(c) -> bool:
    """What the run must have done for its check to mean something."""
    return c.writes >= 20 and c.kills >= 3 and c.syncs >= 3


@pytest.mark.integration  # the CLI in subprocesses
@pytest.mark.usefixtures("real_settle")  # an editor saves in place meanwhile
def test_no_acknowledged_write_or_commit_is_lost_under_kills(tmp_path):
    load = Load(Cluster(tmp_path), seed=24)
    try:
        load.start()
        load.run(SECONDS, until=enough)
        load.settle()
        lost = load.check()
    finally:
        load.c.stop_watchers()
    c = load.counts
    print(c)
    assert enough(c), c
    assert not any(lost.values()) and not c.cli_timeouts, (lost, c)
    assert not load.index_drift()


def _load_with_note(tmp_path):
    load = Load(Cluster(tmp_path))
    note = tmp_path / "laptop" / "shared" / "S0.md"
    note.parent.mkdir(parents=True)
    note.write_text("# S0\n\nmate editor save 1.\n", encoding="utf-8")
    load.lines.append(("shared/S0.md", "mate editor save 1."))
    return load, note


def _sync_brings(note) -> None:
    """What a sync's move does: the note replaced by one holding another clone's line."""
    tmp = note.with_name(".S0.md.sync")
    tmp.write_text(note.read_text(encoding="utf-8") + "server editor save 7.\n", encoding="utf-8")
    os.replace(tmp, note)


def test_the_editor_model_records_a_save_over_a_file_a_sync_replaced_after_it_read(tmp_path, monkeypatch):
    """The editor's own race (like a real editor's): a sync replaces the note between the
    editor's last look and its rename; the save wipes the line the sync brought. It is
    recorded with that line, so ``check`` does not count it as lost by vaultmem."""
    import syncload

    load, note = _load_with_note(tmp_path)
    real = syncload.exchange

    def late(tmp, path):
        _sync_brings(note)
        return real(tmp, path)

    monkeypatch.setattr(syncload, "exchange", late)
    assert load._save(note, "laptop editor save 2.", "rename", random.Random(1))
    assert "server editor save 7." not in note.read_text(encoding="utf-8")
    assert load.counts.editor_overwrote == 1 and load.counts.editor_overwrote_unread == 0
    assert load.overwritten == {("shared/S0.md", "server editor save 7.")}
    monkeypatch.undo()
    assert load._save(note, "laptop editor save 3.", "rename", random.Random(1))  # no sync meanwhile
    assert load.counts.editor_overwrote == 1


def test_the_editor_model_records_truncating_a_file_a_sync_replaced_after_it_read(tmp_path, monkeypatch):
    """The same in place: the wiped text is gone, so every acknowledged line of the note the
    editor had not read counts as possibly wiped (and only those)."""
    import builtins

    import syncload

    load, note = _load_with_note(tmp_path)
    load.lines += [("shared/S0.md", "server editor save 7."), ("shared/S1.md", "server editor save 8.")]

    def late(path, mode="r", *args, **kw):
        if mode == "w" and path == note:
            _sync_brings(note)
        return builtins.open(path, mode, *args, **kw)

    monkeypatch.setattr(syncload, "open", late, raising=False)
    assert load._save(note, "laptop editor save 2.", "truncate", random.Random(1))
    assert load.counts.editor_overwrote == 1 and load.counts.editor_overwrote_unread == 1
    assert load.wiped() == {("shared/S0.md", "server editor save 7.")}


def test_the_editor_model_counts_a_line_acknowledged_after_its_truncate_wiped_it(tmp_path, monkeypatch):
    """The kill test's flake ("mate editor save 61." missing from every clone): a sync brought
    another clone's line before that clone's editor had recorded its save, and an editor here
    truncated the file over it; the wiped lines were taken from what was acknowledged when it
    truncated, so the line acknowledged a moment later counted as lost by vaultmem. Every line
    whose save began before the truncation is now a line it may have wiped."""
    import builtins

    import syncload

    load, note = _load_with_note(tmp_path)
    other = tmp_path / "server" / "shared" / "S0.md"
    other.parent.mkdir(parents=True)
    other.write_text(note.read_text(encoding="utf-8"), encoding="utf-8")
    assert load._save(other, "server editor save 7.", "rename", random.Random(2))  # saved, not yet recorded

    def late(path, mode="r", *args, **kw):
        if mode == "w" and path == note:
            _sync_brings(note)  # the server's line arrives between this editor's read and its save
        return builtins.open(path, mode, *args, **kw)

    monkeypatch.setattr(syncload, "open", late, raising=False)
    assert load._save(note, "laptop editor save 2.", "truncate", random.Random(1))
    load.lines += [("shared/S0.md", "server editor save 7."), ("shared/S0.md", "laptop editor save 2.")]
    assert "server editor save 7." not in note.read_text(encoding="utf-8")
    assert load.wiped() == {("shared/S0.md", "server editor save 7.")}  # never its own line


def test_the_editor_model_saves_again_when_it_paused_mid_save_and_a_sync_replaced_the_file(tmp_path):
    """A thread of the editor model stalled mid-save on a loaded machine: its half-written file,
    quiet for vaultmem's settle time, was replaced by a sync, and the rest of the save went to
    the unlinked file. A real editor writes its buffer at once; the model now sees that its save
    did not land after such a pause and saves again."""
    from vaultmem.core.store import SETTLE

    load, note = _load_with_note(tmp_path)
    now = [0.0]
    load.clock = lambda: now[0]

    class Stalls(random.Random):
        def uniform(self, a, b):
            if now[0] == 0.0:  # after the first third: the editor stalls; a sync takes what is there
                now[0] += SETTLE
                tmp = note.with_name(".S0.md.sync")
                tmp.write_text(note.read_text(encoding="utf-8"), encoding="utf-8")
                os.replace(tmp, note)
            return 0.0

    assert load._save(note, "laptop editor save 2.", "truncate", Stalls(1))
    assert "laptop editor save 2." in note.read_text(encoding="utf-8")
    assert load.counts.editor_replaced_while_writing == load.counts.editor_stalled == 1


@pytest.mark.usefixtures("real_settle")  # the product's settle window: an editor saves in place
def test_a_note_being_saved_in_place_is_staged_whole(tmp_path):
    """Seen in the kill run: ``sync`` staged a note an editor was saving in place (truncated,
    half written) and committed it cut mid-line. A file written within the settle window is
    staged once it is quiet."""
    import subprocess
    import threading

    from gitcluster import git_env

    from vaultmem.sync.git import Git, stage_notes

    env = {**os.environ, **git_env(tmp_path)}
    root = tmp_path / "v"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], env=env, check=True)
    note = root / "plan.md"
    whole = "# Plan\n\n" + "".join(f"Step {i}: do the thing number {i}.\n" for i in range(40))
    saving = note.open("w", encoding="utf-8")  # the editor truncates and writes its buffer
    saving.write(whole[: len(whole) // 2])
    saving.flush()
    rest = threading.Timer(0.05, lambda: (saving.write(whole[len(whole) // 2 :]), saving.close()))
    rest.start()
    try:
        git = Git(root)
        git.env.update(git_env(tmp_path))
        stage_notes(git)
    finally:
        rest.join()
    staged = subprocess.run(["git", "show", ":plan.md"], cwd=root, env=env, capture_output=True, text=True)
    assert staged.stdout == whole
