"""The watcher on a real filesystem: editor save patterns, moves, bursts, lock, socket."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time

import pytest
from helpers import Running, wait_for, write

from vaultmem.core.errors import VaultError
from vaultmem.core.lock import WatcherRunning, WriterLock
from vaultmem.service import client
from vaultmem.service.watch import Batch, Batcher, Housekeeping, Watcher
from vaultmem.vault import Vault


@pytest.fixture
def running(empty_vault, fake_embedder):
    write(empty_vault, "facts/Alpha.md", "# Alpha\n\nPostgres advisory locks.\n")
    r = Running(empty_vault, fake_embedder)
    yield r
    r.stop()


# ---------------------------------------------------------------- batching


def test_batcher_waits_for_quiet_and_caps_delay():
    b = Batcher(quiet=0.05, max_delay=0.3)
    stop = threading.Event()
    b.add({"a.md"})
    start = time.monotonic()
    assert b.take(stop).paths == {"a.md"}
    assert time.monotonic() - start >= 0.04

    def keep_busy():
        for i in range(40):
            b.add({f"n{i}.md"})
            time.sleep(0.02)  # the thing under test: changes that never leave a quiet period

    t = threading.Thread(target=keep_busy)
    t.start()
    start = time.monotonic()
    first = b.take(stop)
    assert time.monotonic() - start < 0.6 and len(first.paths) < 40  # max delay cut it
    t.join()


def test_batcher_returns_pending_immediately_on_stop():
    b = Batcher(quiet=10, max_delay=10)
    stop = threading.Event()
    b.add({"x.md"})
    stop.set()
    assert b.take(stop) == Batch({"x.md"}, False)
    assert b.take(stop) is None


def test_housekeeping_collects_when_idle_and_at_most_every_interval_when_busy(monkeypatch):
    collected, young = [], []
    monkeypatch.setattr(
        "vaultmem.service.watch.gc.collect", lambda *gen: (young if gen else collected).append(1)
    )
    clock = [100.0]
    monkeypatch.setattr("vaultmem.service.watch.time.monotonic", lambda: clock[0])
    h = Housekeeping(every=10.0)  # the interval is a parameter; the watcher uses 60 s
    h.after(applied=False)
    assert collected == []  # idle with nothing applied since the last run: nothing to give back
    h.after(applied=True)
    clock[0] += 5
    h.after(applied=True)
    assert collected == []  # busy, interval not yet over
    clock[0] += 6
    h.after(applied=True)
    assert len(collected) == 1  # busy for more than the interval
    h.after(applied=True)
    assert len(collected) == 1
    h.after(applied=False)
    assert len(collected) == 2  # went idle after applying work
    h.after(applied=False)
    assert len(collected) == 2 and h.runs == 2
    assert len(young) == 3  # every other applied batch: a cheap young-generation collection


def test_shared_housekeeping_waits_until_every_watcher_is_idle(monkeypatch):
    collected = []
    monkeypatch.setattr(
        "vaultmem.service.watch.gc.collect", lambda *gen: None if gen else collected.append(1)
    )
    clock = [100.0]
    monkeypatch.setattr("vaultmem.service.watch.time.monotonic", lambda: clock[0])
    h = Housekeeping(every=60.0)
    a, b = object(), object()
    h.after(applied=True, caller=a)
    for _ in range(5):  # b idles on while a is still busy: a full collection would stall a
        clock[0] += 1
        h.after(applied=False, caller=b)
    assert collected == []
    h.after(applied=False, caller=a)
    assert len(collected) == 1  # both idle now
    h.after(applied=True, caller=b)
    clock[0] += 61
    h.after(applied=True, caller=b)
    assert len(collected) == 2  # a busy process still collects once per interval


def test_a_watcher_that_ends_after_a_batch_leaves_the_shared_schedule_idle(empty_vault, fake_embedder):
    vault = Vault(empty_vault, embedder=fake_embedder)
    watcher = Watcher(vault, quiet=0.05, max_delay=0.5)
    watcher.start()
    try:
        write(empty_vault, "facts/Alpha.md", "# Alpha\n\nlast words\n")
        watcher.batcher.add({"facts/Alpha.md"})
        watcher.stop()
        watcher.run()  # applies the pending batch (a busy turn), then ends
        assert "facts/Alpha.md" in vault.manifest.records()
        assert watcher.housekeeping.idle  # else other watchers of the process wait on it for good
    finally:
        watcher.close()
        vault.close()


def test_watcher_serves_a_vault_without_notes(empty_vault, fake_embedder):
    r = Running(empty_vault, fake_embedder, serve=True)  # start-up warms recall on an empty index
    try:
        assert r.find("anything") == []
        write(empty_vault, "facts/First.md", "# First\n\nquokka\n")
        wait_for(lambda: r.find("quokka") == ["facts/First.md"], what="the first note")
    finally:
        r.stop()


def test_running_watcher_gives_memory_back_once_idle(running, monkeypatch):
    housekeeping, turns = running.watcher.housekeeping, []
    after = housekeeping.after
    monkeypatch.setattr(housekeeping, "after", lambda applied, caller=None: (after(applied, caller),
                                                                             turns.append(applied)))  # fmt: skip
    before = housekeeping.runs
    write(running.vault.root, "facts/Beta.md", "# Beta\n\nmore\n")
    wait_for(lambda: "facts/Beta.md" in running.paths(), what="indexed")
    wait_for(lambda: housekeeping.runs > before, what="housekeeping after the batch")
    runs, seen = housekeeping.runs, len(turns)
    wait_for(lambda: False in turns[seen:], what="a further idle turn (one a second)")
    assert housekeeping.runs == runs  # a turn with nothing applied does not collect again


# ---------------------------------------------------------------- editor save patterns


def test_plain_save_is_indexed(running):
    write(running.vault.root, "facts/Beta.md", "# Beta\n\nRedis keyspace notifications.\n")
    wait_for(lambda: "facts/Beta.md" in running.find("keyspace notifications"), what="new note")


def test_write_temp_then_rename(running):
    root = running.vault.root
    tmp = write(root, "facts/.Alpha.md.tmp123", "# Alpha\n\nAtomic save via rename.\n")
    os.replace(tmp, root / "facts/Alpha.md")
    wait_for(lambda: "facts/Alpha.md" in running.find("atomic rename"), what="renamed-over save")
    assert running.paths() == {"facts/Alpha.md"}


def test_delete_then_create(running):
    root = running.vault.root
    os.remove(root / "facts/Alpha.md")
    write(root, "facts/Alpha.md", "# Alpha\n\nRecreated with zebra stripes.\n")
    wait_for(lambda: "facts/Alpha.md" in running.find("zebra stripes"), what="recreated note")


def test_truncate_then_write(running):
    path = running.vault.root / "facts/Alpha.md"
    with open(path, "r+", encoding="utf-8") as f:
        f.truncate(0)
        f.flush()
        f.write("# Alpha\n\nTruncated and rewritten about giraffes.\n")
    wait_for(lambda: "facts/Alpha.md" in running.find("giraffes"), what="truncate+write")


def test_vim_style_backup_swap_dance(running):
    root = running.vault.root
    (root / "facts/.Alpha.md.swp").write_bytes(b"swap")
    os.rename(root / "facts/Alpha.md", root / "facts/Alpha.md~")
    write(root, "facts/Alpha.md", "# Alpha\n\nVim saved this about pelicans.\n")
    os.remove(root / "facts/Alpha.md~")
    os.remove(root / "facts/.Alpha.md.swp")
    wait_for(lambda: "facts/Alpha.md" in running.find("pelicans"), what="vim save")
    assert running.paths() == {"facts/Alpha.md"}


# ---------------------------------------------------------------- moves, deletes, bursts


def test_rename_and_delete(running):
    root = running.vault.root
    os.rename(root / "facts/Alpha.md", root / "facts/Alpha renamed.md")
    wait_for(lambda: running.paths() == {"facts/Alpha renamed.md"}, what="rename")
    os.remove(root / "facts/Alpha renamed.md")
    wait_for(lambda: running.paths() == set(), what="delete")


def test_folder_moves_within_into_and_out_of_the_vault(running, tmp_path):
    root = running.vault.root
    write(root, "projects/x/One.md", "# One\n\nfirst\n")
    write(root, "projects/x/Two.md", "# Two\n\nsecond\n")
    wait_for(lambda: {"projects/x/One.md", "projects/x/Two.md"} <= running.paths(), what="new folder")
    os.rename(root / "projects/x", root / "projects/y")
    wait_for(lambda: {"projects/y/One.md", "projects/y/Two.md"} <= running.paths()
             and not any(p.startswith("projects/x/") for p in running.paths()), what="folder rename")  # fmt: skip
    outside = tmp_path / "outside"
    os.rename(root / "projects", outside)
    wait_for(lambda: running.paths() == {"facts/Alpha.md"}, what="folder moved out")
    os.rename(outside, root / "archive")
    wait_for(lambda: {"archive/y/One.md", "archive/y/Two.md"} <= running.paths(), what="folder moved in")


def test_burst_of_changes_is_indexed_in_few_batches(running):
    root = running.vault.root
    before = running.watcher.state.batches
    for i in range(300):
        write(root, f"burst/Note {i}.md", f"# Note {i}\n\nburst token{i}\n")
    wait_for(lambda: len(running.paths()) == 301, what="burst indexed")
    assert running.watcher.state.batches - before <= 6


def test_ignored_files_never_reach_the_index(running):
    root = running.vault.root
    write(root, ".obsidian/workspace.md", "# Workspace\n\nsecretword\n")
    write(root, "facts/notes.txt", "secretword")
    write(root, "facts/#Alpha.md#", "secretword")
    write(root, ".gitignore", "private/\n")
    write(root, "private/Hidden.md", "# Hidden\n\nsecretword\n")
    write(root, "facts/Visible.md", "# Visible\n\nvisibleword\n")
    wait_for(lambda: "facts/Visible.md" in running.paths(), what="visible note")
    assert running.paths() == {"facts/Alpha.md", "facts/Visible.md"}
    assert not running.find("secretword")


def test_gitignore_change_applies_to_existing_notes(running):
    root = running.vault.root
    write(root, "drafts/Draft.md", "# Draft\n\ndraft text\n")
    wait_for(lambda: "drafts/Draft.md" in running.paths(), what="draft indexed")
    write(root, ".gitignore", "drafts/\n")
    wait_for(lambda: "drafts/Draft.md" not in running.paths(), what="draft dropped after .gitignore edit")


def test_unparsable_note_is_skipped_and_watching_continues(running):
    root = running.vault.root
    write(root, "facts/Broken.md", "---\ntitle: [unclosed\n---\n")
    wait_for(lambda: running.watcher.state.last_error and "Broken.md" in running.watcher.state.last_error,
             what="parse error recorded")  # fmt: skip
    write(root, "facts/After.md", "# After\n\nstill watching\n")
    wait_for(lambda: "facts/After.md" in running.paths(), what="later note")
    assert running.error is None


def test_unreadable_note_is_logged_and_skipped(running, monkeypatch):
    """A permission error (simulated: the tests run as root, where chmod does not deny reads)."""
    from vaultmem.core.store import Store

    real = Store.read_text

    def read_text(self, rel):
        if rel == "facts/Locked.md":
            raise PermissionError(13, "Permission denied", str(self.abspath(rel)))
        return real(self, rel)

    monkeypatch.setattr(Store, "read_text", read_text)
    root = running.vault.root
    write(root, "facts/Locked.md", "# Locked\n\nsecret\n")
    wait_for(lambda: (running.watcher.state.last_error or "").startswith("facts/Locked.md: Permission denied"),
             what="permission error recorded with the path")  # fmt: skip
    write(root, "facts/Open.md", "# Open\n\nreadable\n")
    wait_for(lambda: "facts/Open.md" in running.paths(), what="later note")
    assert "facts/Locked.md" not in running.paths() and running.error is None
    assert "facts/Locked.md" in running.vault.index_errors()


def test_own_writes_are_not_indexed_twice(running, fake_embedder):
    root = running.vault.root
    path = write(root, "facts/Gamma.md", "# Gamma\n\ncontent\n")
    wait_for(lambda: "facts/Gamma.md" in running.paths())
    embedded = fake_embedder.texts_embedded
    os.utime(path)  # a touch: same content hash, nothing to embed
    write(root, "facts/Delta.md", "# Delta\n\nmarker\n")
    wait_for(lambda: "facts/Delta.md" in running.paths())
    assert fake_embedder.texts_embedded - embedded == 1


def test_watched_indexes_equal_a_rebuild(running, fake_embedder):
    root = running.vault.root
    for i in range(20):
        write(root, f"n/Note {i}.md", f"# Note {i}\n\nabout [[Note {(i + 1) % 20}]] token{i}\n")
    os.rename(root / "n/Note 3.md", root / "n/Note three.md")
    os.remove(root / "n/Note 4.md")
    wait_for(lambda: len(running.paths()) == 20 and "n/Note three.md" in running.paths(), what="settled")
    with running.watcher.mutex:
        watched = (
            running.vault.manifest.records(),
            running.vault.bm25.documents(),
            running.vault.manifest.chunk_hashes(),
        )
        q = [(h.path, h.score) for h in running.vault.recall("token7 note", k=5, log=False)]
    running.stop()
    fresh = Vault(root, embedder=fake_embedder)
    fresh.reindex(rebuild=True)
    assert (fresh.manifest.records(), fresh.bm25.documents(), fresh.manifest.chunk_hashes()) == watched
    assert [(h.path, h.score) for h in fresh.recall("token7 note", k=5, log=False)] == q
    fresh.close()
    running.stop = lambda: None  # already stopped


# ---------------------------------------------------------------- lock, socket, shutdown


def test_second_watcher_refuses(running, fake_embedder):
    other = Watcher(Vault(running.vault.root, embedder=fake_embedder))
    with pytest.raises(VaultError, match="only one watcher"):
        other.start()


def test_one_off_writers_defer_to_the_watcher(running, fake_embedder):
    other = Vault(running.vault.root, embedder=fake_embedder)
    with pytest.raises(WatcherRunning):
        other.reindex()
    assert other.recall("advisory", mode="bm25")  # reads work; no reconcile attempted
    holder = WriterLock(other.lock_path).holder()
    assert holder["role"] == "watch" and holder["pid"] == os.getpid()
    other.close()


def test_service_socket_recall_equals_in_process_recall(empty_vault, fake_embedder):
    """The service's socket answers the declared operations only, checks their arguments and
    the client's version, and its recall equals the vault's own."""
    write(empty_vault, "a/Alpha.md", "# Alpha\n\nPostgres advisory locks for job leasing.\n")
    write(empty_vault, "a/Beta.md", "# Beta\n\nRedis locks expire. See [[Alpha]].\n")
    r = Running(empty_vault, fake_embedder, serve=True)
    roots = {"vault": str(empty_vault)}
    try:
        sock = client.service_socket()
        assert oct(sock.stat().st_mode & 0o777) == "0o600"
        reply = client.call("recall", {"roots": roots, "query": "advisory locks", "explain": True,
                                       "options": {"k": 5, "log": False}})  # fmt: skip
        assert reply["ok"] and reply["result"]["skipped"] == {}
        with r.watcher.gate.read():
            local = [h.as_dict(True) for h in r.vault.recall("advisory locks", k=5, log=False)]
        assert reply["result"]["hits"] == json.loads(json.dumps(local))
        bad = client.call("recall", {"roots": roots, "query": "x", "options": {"mode": "fuzzy"}})
        assert not bad["ok"] and "mode" in bad["error"] and bad["code"] == 2
        assert client.call("nonsense")["ok"] is False
        assert client.call("recall", {"roots": roots})["code"] == 2  # no query: refused before it runs
        assert client.call("recall", {"roots": roots, "query": 3})["code"] == 2
        other = client.send(
            sock, {"op": "status", "args": {"root": str(empty_vault)}, "version": "0.0.1"}, 10
        )
        assert other["code"] == "version"
        status = client.call("status", {"root": str(empty_vault)})["result"]
        assert status["pid"] == os.getpid() and status["in_sync"] and status["notes_indexed"] == 2
        assert status["by"] == "service"
    finally:
        r.stop()
    assert not client.service_socket().exists()
    assert client.call("recall", {"roots": roots, "query": "advisory"}) is None  # the CLI works in process


def test_cli_uses_the_service_and_falls_back(empty_vault, fake_embedder, fake_model):
    from typer.testing import CliRunner

    from vaultmem.cli import app as cli

    write(empty_vault, "a/Alpha.md", "# Alpha\n\nPostgres advisory locks.\n")
    runner = CliRunner()
    args = ["recall", "advisory locks", "--vault", str(empty_vault), "--json", "--explain", "--no-adaptive"]
    r = Running(empty_vault, fake_embedder, serve=True)
    try:
        served = runner.invoke(cli.app, args)
        assert served.exit_code == 0, served.output
        status = runner.invoke(cli.app, ["status", "--vault", str(empty_vault)])
        assert f"indexed by: the memory service, pid {os.getpid()}" in status.stdout
        assert "indexes match the files: yes" in status.stdout
    finally:
        r.stop()
    local = runner.invoke(cli.app, args)
    assert local.exit_code == 0, local.output
    assert json.loads(served.stdout) == json.loads(local.stdout)


def test_stop_applies_the_pending_batch(empty_vault, fake_embedder):
    r = Running(empty_vault, fake_embedder)
    r.watcher.batcher.quiet = r.watcher.batcher.max_delay = 30  # nothing would apply on its own
    write(empty_vault, "late/Late.md", "# Late\n\nwritten just before shutdown\n")
    wait_for(lambda: r.watcher.batcher.pending, what="event seen")
    r.stop()
    assert r.error is None
    v = Vault(empty_vault, embedder=fake_embedder)
    assert "late/Late.md" in v.manifest.records()
    v.close()


def test_vanished_vault_stops_the_watcher_with_a_message(tmp_path, fake_embedder):
    from vaultmem.core.scaffold import init_vault

    root = tmp_path / "gone"
    init_vault(root)
    write(root, "a.md", "# A\n\ntext\n")
    r = Running(root, fake_embedder)
    shutil.rmtree(root)
    wait_for(lambda: not r.thread.is_alive(), what="watcher exit")
    assert isinstance(r.error, VaultError) and "disappeared" in str(r.error)
    r.watcher.close()


def test_falls_back_to_polling_when_the_os_runs_out_of_watches(
    empty_vault, fake_embedder, monkeypatch, caplog
):
    import errno

    from vaultmem.service import watch as watchmod

    class Exhausted:
        def __init__(self, *a, **k):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watchmod, "Observer", Exhausted)
    write(empty_vault, "a/Alpha.md", "# Alpha\n\nfirst\n")
    with caplog.at_level("WARNING", logger="vaultmem.service.watch"):
        r = Running(empty_vault, fake_embedder)
    try:
        assert r.watcher.state.polling
        assert "falling back to polling" in caplog.text
        write(empty_vault, "a/Beta.md", "# Beta\n\npolled change\n")
        wait_for(lambda: "a/Beta.md" in r.paths(), timeout=20, what="change seen by polling")
    finally:
        r.stop()


def test_a_config_edit_applies_without_a_restart(running, caplog):
    """Recall settings in .vaultmem.toml apply from the next call; what shapes the indexes
    ([embedding], [vault], [folders]) waits for a restart; a broken file changes nothing."""
    vault = running.vault
    write(vault.root, ".vaultmem.toml", "[recall]\nbm25_weight = 0.9\n")
    wait_for(lambda: vault.config["recall"]["bm25_weight"] == 0.9, what="recall setting reloaded")
    model = vault.config["embedding"]["model"]
    with caplog.at_level("WARNING", logger="vaultmem.service.watch"):
        write(vault.root, ".vaultmem.toml", '[recall]\nbm25_weight = 0.8\n[embedding]\nmodel = "other"\n')
        wait_for(lambda: "[embedding] changed and applies when vaultmem watch restarts" in caplog.text,
                 what="second reload")  # fmt: skip
        assert vault.config["recall"]["bm25_weight"] == 0.8
        assert vault.config["embedding"]["model"] == model  # the index's model stays until a restart
        write(vault.root, ".vaultmem.toml", "[recall\nbroken")
        wait_for(lambda: "config not reloaded" in caplog.text, what="broken config reported")
    assert vault.config["recall"]["bm25_weight"] == 0.8 and running.error is None
    assert running.find("advisory locks") == ["facts/Alpha.md"]  # still serving
