"""Git sync end to end: a bare remote and three clones (two machines and a teammate), each
with its own watcher, real git and the real CLI. Concurrent edits, remember on both sides, a
resolve against an edit, a rename against an edit, a delete against an edit, and syncs killed
at every step; then every clone holds the same notes, no line anyone wrote is lost, and every
clone's indexes equal a fresh rebuild."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from gitcluster import KILL, Cluster, wait_for

from vaultmem.core.note import parse

pytestmark = pytest.mark.integration  # the CLI in subprocesses

NOTE = """---
id: {id}
title: {title}
type: fact
tags: [start]
updated: '2026-11-01T10:00:00Z'
---
# {title}

First line of {title}.
Second line of {title}.
Third line of {title}.
"""


def _seed(c: Cluster, name: str) -> None:
    for i, title in enumerate(("Alpha", "Beta", "Gamma", "Delta", "Epsilon")):
        c.write(name, f"facts/{title}.md", NOTE.format(id=f"seed000{i}", title=title))


def _edit(c: Cluster, name: str, rel: str, old: str, new: str) -> None:
    text = c.read(name, rel)
    assert old in text, (name, rel, old)
    c.write(name, rel, text.replace(old, new))


def _sync_all(c: Cluster, rounds: int = 2) -> None:
    for _ in range(rounds):
        for name in c.vaults:
            c.vm(name, "sync")


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.stop_watchers()


def test_three_clones_converge_without_losing_a_line(cluster):
    c = cluster
    c.first("laptop")
    _seed(c, "laptop")
    c.vm("laptop", "sync", "-m", "seed")
    c.clone("server")
    c.clone("mate")
    for name in c.vaults:
        c.watch(name)
    written: list[str] = []

    def change(name, rel, old, new):
        _edit(c, name, rel, old, new)
        if old in written:  # the writer replaced a line of their own on purpose
            written.remove(old)
        written.append(new)

    def create(name, rel, line):
        c.write(name, rel, f"# {rel[6:-3]}\n\n{line}\n")
        written.append(line)

    # different notes at the same time
    change("laptop", "facts/Alpha.md", "First line of Alpha.", "Laptop rewrote Alpha's first line.")
    change("server", "facts/Beta.md", "First line of Beta.", "Server rewrote Beta's first line.")
    # the same note, different lines
    change("laptop", "facts/Gamma.md", "First line of Gamma.", "Laptop: Gamma line one.")
    change("server", "facts/Gamma.md", "Third line of Gamma.", "Server: Gamma line three.")
    # the same note, the same line (a real conflict) and different tags
    change("server", "facts/Delta.md", "Second line of Delta.", "Server's version of Delta's second line.")
    change("mate", "facts/Delta.md", "Second line of Delta.", "Mate's version of Delta's second line.")
    _edit(c, "server", "facts/Delta.md", "tags: [start]", "tags: [start, server]")
    _edit(c, "mate", "facts/Delta.md", "tags: [start]", "tags: [start, mate]")
    # remember on both machines
    c.vm("laptop", "remember", "fact", "Deploys run on Fridays", "Remembered on the laptop.")
    c.vm("server", "remember", "fact", "Deploys run on Fridays", "Remembered on the server.")
    written += ["Remembered on the laptop.", "Remembered on the server."]
    out = {name: c.vm(name, "sync") for name in ("laptop", "server", "mate")}
    assert "committed" in out["laptop"].stdout and "pushed" in out["laptop"].stdout
    assert "in: changed facts/Alpha.md" in out["server"].stdout
    assert "conflict kept both versions: facts/Delta.md" in out["mate"].stdout
    log = c.git(c.remote, "log", "--format=%B", "main")
    assert "changed: Delta (facts/Delta.md)" in log and "added: Deploys run on Fridays" in log
    _sync_all(c)

    delta = parse(c.read("laptop", "facts/Delta.md"), "facts/Delta.md")
    assert delta.meta["status"] == "conflict" and {"server", "mate"} <= set(delta.tags)
    status = c.vm("laptop", "status").stdout
    assert "merge conflict: facts/Delta.md" in status
    gamma = c.read("mate", "facts/Gamma.md")
    assert "Laptop: Gamma line one.\nSecond line of Gamma.\nServer: Gamma line three." in gamma
    fridays = [p for p, t in c.notes("mate").items() if "Deploys run on Fridays" in t]
    assert len(fridays) == 2  # two memories, two ids, nothing merged away
    # the near-duplicate is reported by maintain and merged by --apply (its text kept)
    plan = json.loads(c.vm("mate", "maintain", "--json").stdout)["actions"]
    assert [a["kind"] for a in plan] == ["merge"] and plan[0]["path"] in fridays
    c.vm("mate", "maintain", "--apply")
    kept = parse(c.read("mate", next(p for p in fridays if p != plan[0]["path"])), "kept.md")
    assert "Remembered on the laptop." in kept.body and "Remembered on the server." in kept.body
    assert parse(c.read("mate", plan[0]["path"]), "dup.md").status == "superseded"

    # a resolve on one side, an edit on the other; a rename against an edit; a delete against an edit
    beta = c.vm("laptop", "show", "facts/Beta.md", "--json")
    c.vm("laptop", "resolve", "seed0001")
    change(
        "server",
        "facts/Beta.md",
        "Third line of Beta.",
        "Server added to Beta after it was resolved elsewhere.",
    )
    (c.vaults["laptop"] / "facts/Epsilon.md").rename(c.vaults["laptop"] / "facts/Epsilon renamed.md")
    change("mate", "facts/Epsilon.md", "Second line of Epsilon.", "Mate edited Epsilon while it was renamed.")
    (c.vaults["server"] / "facts/Alpha.md").unlink()
    change("mate", "facts/Alpha.md", "Third line of Alpha.", "Mate edited Alpha while the server deleted it.")
    _sync_all(c)
    assert beta.returncode == 0
    b = parse(c.read("mate", "facts/Beta.md"), "facts/Beta.md")
    assert b.status == "resolved" and "Server added to Beta" in b.body
    eps = [p for p in c.notes("server") if "Epsilon" in p]
    assert eps == ["facts/Epsilon renamed.md"]
    assert "Mate edited Epsilon while it was renamed." in c.read("server", "facts/Epsilon renamed.md")
    assert "Mate edited Alpha while the server deleted it." in c.read("server", "facts/Alpha.md")

    # syncs killed at every step, each finished by the next sync
    for step in ("staged", "committed", "fetched", "merged", "applied", "moved"):
        change("server", "facts/Gamma.md", "Second line of Gamma.", f"Server before the {step} kill.")
        c.vm("server", "sync")
        create("laptop", f"facts/Kill {step}.md", f"Laptop note written before a sync killed at {step}.")
        killed = c.vm("laptop", "sync", check=False, env={KILL: step})
        assert killed.returncode == -9, (step, killed.stderr)
        _edit(c, "server", "facts/Gamma.md", f"Server before the {step} kill.", "Second line of Gamma.")
        written.remove(f"Server before the {step} kill.")
        c.vm("laptop", "sync")
        c.vm("server", "sync")
    # killed right after merging a delete/edit conflict aside
    c.vm("mate", "sync")
    (c.vaults["mate"] / "facts/Kill staged.md").unlink()
    c.vm("mate", "sync")
    change("laptop", "facts/Kill staged.md", "Laptop note written before a sync killed at staged.",
           "Laptop edited a note the teammate deleted, then its sync was killed mid-merge.")  # fmt: skip
    killed = c.vm("laptop", "sync", check=False, env={KILL: "merged"})
    assert killed.returncode == -9
    c.vm("laptop", "sync")
    # a git killed while holding the index lock
    (c.vaults["laptop"] / ".git" / "index.lock").write_text("")
    create("laptop", "facts/After lock.md", "Written while a stale index.lock was there.")
    assert "stale .git/index.lock" in c.vm("laptop", "sync").stderr

    _sync_all(c)
    reference = c.notes("laptop")
    for name in c.vaults:
        assert c.notes(name) == reference, name
        lines = c.body_lines(name)
        lost = [w for w in written if w.strip() not in lines]
        assert not lost, (name, lost)
        assert c.git(c.vaults[name], "status", "--porcelain") == ""
        assert "force" not in c.git(c.vaults[name], "reflog", "origin/main")
    for name in c.vaults:
        c.settle(name)
    c.stop_watchers()
    _assert_indexes_equal_rebuild(c)


def _assert_indexes_equal_rebuild(c: Cluster) -> None:
    from vaultmem.vault import Vault

    for name, root in c.vaults.items():
        v = Vault(root)
        watched = (v.manifest.records(), v.bm25.documents(), v.manifest.chunk_hashes())
        v.reindex(rebuild=True)
        fresh = (v.manifest.records(), v.bm25.documents(), v.manifest.chunk_hashes())
        differ = {p: (r, watched[0].get(p)) for p, r in fresh[0].items() if watched[0].get(p) != r}
        assert not differ and set(fresh[0]) == set(watched[0]), (name, differ)
        assert fresh == watched, name
        v.close()


def test_sync_outside_a_repo_says_how_to_make_one(tmp_path):
    c = Cluster(tmp_path)
    root = tmp_path / "plain"
    subprocess.run(
        [sys.executable, "-m", "vaultmem", "init", str(root)], env=c.env, check=True, capture_output=True
    )
    c.vaults["plain"] = root
    proc = c.vm("plain", "sync", check=False)
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == f"vaultmem: {root} is not a git repository; make it one with: "
        f"vaultmem init --git {root} [--remote URL]"
    )


def test_sync_without_a_remote_commits_locally(tmp_path):
    c = Cluster(tmp_path)
    root = tmp_path / "solo"
    subprocess.run(
        [sys.executable, "-m", "vaultmem", "init", "--git", str(root)],
        env=c.env,
        check=True,
        capture_output=True,
    )
    c.vaults["solo"] = root
    c._configure(root)
    c.vm("solo", "remember", "decision", "Use SQLite", "Small data.")
    out = c.vm("solo", "sync")
    assert "committed" in out.stdout and "no remote" in out.stderr
    assert "added: Use SQLite (decisions/Use SQLite.md)" in c.git(root, "log", "-1", "--format=%B")
    # the usage store (queries, ratings) is this machine's: never committed, even when
    # .gitignore does not list it (a vault made before it had its own folder)
    (root / ".gitignore").write_text(".vaultmem/\n")
    c.vm("solo", "rate", "Use SQLite", "useful")
    c.vm("solo", "sync")
    tracked = c.git(root, "ls-files").split()
    assert (root / ".vaultmem-usage" / "usage.db").is_file() and ".gitignore" in tracked
    assert not [p for p in tracked if p.startswith((".vaultmem/", ".vaultmem-usage/"))], tracked


def test_watch_sync_every_pulls_and_indexes_in_one_burst(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    c = Cluster(tmp_path)
    try:
        c.first("laptop")
        c.clone("server")
        c.watch("server", "--sync-every", "5s")
        for i in range(30):
            c.write(
                "laptop", f"facts/Pulled {i}.md", f"# Pulled {i}\n\nzebrapull{i} arrived from the laptop.\n"
            )
        c.write("server", "facts/Local.md", "# Local\n\nzebralocal written on the server.\n")
        c.vm("laptop", "sync")
        wait_for(
            lambda: (c.vaults["server"] / "facts/Pulled 29.md").exists(), what="the periodic sync's pull"
        )
        c.settle("server")
        hits = json.loads(c.vm("server", "recall", "zebrapull7", "--json").stdout)["results"]
        assert hits and hits[0]["path"] == "facts/Pulled 7.md"
        wait_for(
            lambda: "zebralocal" in c.git(c.remote, "log", "-p", "main"), what="the server's note pushed"
        )
    finally:
        logs = c.stop_watchers()
    batches = [line for line in logs["server"].splitlines() if "indexed:" in line and "30 added" in line]
    assert batches, logs["server"]  # the 30 pulled notes reached the indexer as one batch
