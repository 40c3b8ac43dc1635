"""Sync you can trust (issue 24): nothing from a remote runs or replaces local state, and no
saved or committed change is lost (hooks writing during a sync, a rebase an older version left
interrupted, an editor saving in place while `vaultmem edit` runs)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gitcluster import Cluster

from vaultmem.index.layout import index_dir

pytestmark = pytest.mark.integration  # the CLI in subprocesses

NOTE = """---
id: {id}
title: {title}
type: fact
tags: [start]
---
# {title}

First line of {title}.
Second line of {title}.
Third line of {title}.
"""


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.stop_watchers()


def _two_machines(c: Cluster) -> None:
    c.first("laptop")
    for i, title in enumerate(("Alpha", "Beta", "Gamma")):
        c.write("laptop", f"facts/{title}.md", NOTE.format(id=f"trust00{i}", title=title))
    c.vm("laptop", "sync")
    c.clone("server")


def _replace(c: Cluster, name: str, rel: str, old: str, new: str) -> None:
    text = c.read(name, rel)
    assert old in text
    c.write(name, rel, text.replace(old, new))


def _remote_files(c: Cluster) -> list[str]:
    return c.git(c.remote, "ls-tree", "-r", "--name-only", "main").split()


# ---------------------------------------------------------------- no change lost


HOOK = """#!/bin/sh
# a person saving a note at the worst moment: every time git runs this hook during a sync
[ "$0" != "${0%reference-transaction}" ] && { cat >/dev/null; [ "$1" = committed ] || exit 0; }
line="Saved by an editor during the sync ($(basename "$0") $(date +%s%N))."
printf '%s\\n' "$line" >> facts/Alpha.md
printf '%s\\n' "$line" >> "$HOOK_LOG"
exit 0
"""


def test_a_save_during_the_sync_is_never_lost(cluster, tmp_path):
    """Old code: the rebase's checkout ran post-checkout, the pick then stopped with nothing
    staged and ``rebase --skip`` dropped the local commit; sync exited 0."""
    c = cluster
    _two_machines(c)
    _replace(c, "server", "facts/Alpha.md", "Third line of Alpha.", "Server changed Alpha's third line.")
    c.vm("server", "sync")
    _replace(c, "laptop", "facts/Alpha.md", "First line of Alpha.", "Laptop changed Alpha's first line.")
    log = tmp_path / "hook.log"
    hooks = c.vaults["laptop"] / ".git" / "hooks"
    for name in ("post-checkout", "reference-transaction", "post-commit", "post-merge", "post-rewrite"):
        (hooks / name).write_text(HOOK)
        (hooks / name).chmod(0o755)
    out = c.vm("laptop", "sync", env={"HOOK_LOG": str(log)})
    assert out.returncode == 0
    for name in ("post-checkout", "reference-transaction", "post-commit", "post-merge", "post-rewrite"):
        (hooks / name).unlink()
    saved = log.read_text().splitlines()
    assert saved  # the hook did write during the sync
    for _ in range(2):
        c.vm("laptop", "sync")
        c.vm("server", "sync")
    for name in ("laptop", "server"):
        alpha = c.read(name, "facts/Alpha.md")
        missing = [line for line in saved + ["Laptop changed Alpha's first line.", "Server changed Alpha's third line."]
                   if line not in alpha]  # fmt: skip
        assert not missing, (name, missing)
    assert c.git(c.vaults["laptop"], "symbolic-ref", "--short", "HEAD").strip() == "main"


def test_a_rebase_an_older_version_left_interrupted_loses_nothing(cluster):
    """A sync of an older vaultmem killed right after its rebase checked out the remote's
    commit (before replaying the local one), then a person saved a note: the next sync must
    keep the local commit and the save (old code: ``rebase --skip`` dropped them)."""
    c = cluster
    _two_machines(c)
    laptop = c.vaults["laptop"]
    _replace(c, "server", "facts/Alpha.md", "Third line of Alpha.", "Server changed Alpha's third line.")
    c.vm("server", "sync")
    _replace(c, "laptop", "facts/Beta.md", "First line of Beta.", "Laptop's committed change to Beta.")
    c.git(laptop, "commit", "-qam", "local work")
    c.git(laptop, "fetch", "-q", "origin")
    env = {**c.env, "GIT_SEQUENCE_EDITOR": "sed -i 1ibreak"}
    subprocess.run(
        ["git", "rebase", "-i", "origin/main"], cwd=laptop, env=env, check=True, capture_output=True
    )
    assert (laptop / ".git" / "rebase-merge").exists()
    _replace(c, "laptop", "facts/Gamma.md", "Second line of Gamma.", "Saved while the rebase was stopped.")
    c.vm("laptop", "sync")
    c.vm("server", "sync")
    for name in ("laptop", "server"):
        assert "Laptop's committed change to Beta." in c.read(name, "facts/Beta.md"), name
        assert "Saved while the rebase was stopped." in c.read(name, "facts/Gamma.md"), name
        assert "Server changed Alpha's third line." in c.read(name, "facts/Alpha.md"), name
    assert not (laptop / ".git" / "rebase-merge").exists()
    assert c.git(laptop, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert c.git(laptop, "status", "--porcelain") == ""


# ---------------------------------------------------------------- nothing from a remote runs


def _evil_toc(folder: Path, marker: Path) -> None:
    """A valid whoosh table of contents whose pickled schema runs a command when loaded."""
    from whoosh import __version__
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import _CURRENT_TOC_VERSION, _FLOAT_SIZE, _INT_SIZE, _LONG_SIZE

    folder.mkdir(parents=True, exist_ok=True)
    f = FileStorage(str(folder)).create_file("_MAIN_999.toc")
    for size in (_INT_SIZE, _LONG_SIZE, _FLOAT_SIZE):
        f.write_varint(size)
    f.write_int(-12345)
    f.write_int(_CURRENT_TOC_VERSION)
    for num in __version__[:3]:
        f.write_varint(num)
    f.write_string(f"cos\nsystem\n(S'touch {marker}'\ntR.".encode())
    f.write_int(999)
    f.write_int(0)
    f.write_pickle([])
    f.close()


def test_a_remote_cannot_plant_files_vaultmem_owns(cluster, tmp_path):
    c = cluster
    _two_machines(c)
    victim = c.vaults["laptop"]
    c.vm("laptop", "recall", "Alpha")
    c.vm("laptop", "rate", "Alpha", "useful")
    usage = victim / ".vaultmem-usage" / "usage.db"
    ratings = usage.read_bytes()
    marker = tmp_path / "pwned"
    # the attacker's clone: plain git, force-adding what vaultmem owns
    evil = c.vaults["server"]
    _evil_toc(evil / ".vaultmem" / "index" / "bm25", marker)
    (evil / ".vaultmem" / "index" / "manifest.db").write_bytes(b"not a database" * 100)
    (evil / ".vaultmem" / "config.toml").write_text("[recall]\nk = 1\n")
    (evil / ".vaultmem-usage").mkdir(exist_ok=True)
    (evil / ".vaultmem-usage" / "usage.db").write_bytes(b"garbage")
    (evil / ".gitignore").write_text("*.tmp\n")
    c.write("server", "facts/Innocent.md", NOTE.format(id="trust009", title="Innocent"))
    c.git(evil, "add", "-f", ".")
    c.git(evil, "commit", "-qm", "innocent note")
    c.git(evil, "push", "-q", "origin", "HEAD:main")

    out = c.vm("laptop", "sync", real=True)
    refused = [line for line in out.stderr.splitlines() if "vaultmem owns" in line]
    assert len(refused) == 1 and refused[0].startswith("vaultmem: refused "), out.stderr
    assert "never checked out" in refused[0]  # .vaultmem/index/bm25/_MAIN_999.toc among them
    assert (victim / "facts/Innocent.md").exists()  # the notes of that commit arrive
    assert not (victim / ".vaultmem" / "config.toml").exists()
    assert not (victim / ".vaultmem" / "index" / "bm25" / "_MAIN_999.toc").exists()
    assert usage.read_bytes() == ratings
    assert c.vm("laptop", "recall", "Innocent", real=True).returncode == 0
    assert c.vm("laptop", "doctor", real=True, check=False).returncode in (0, 1)
    assert not marker.exists()
    # the merge pushed leaves them out, and this clone never commits its own, .gitignore or not
    c.write("laptop", "facts/After.md", NOTE.format(id="trust010", title="After"))
    c.vm("laptop", "sync")
    assert not [p for p in _remote_files(c) if p.startswith((".vaultmem/", ".vaultmem-usage/"))], (
        _remote_files(c)
    )
    assert "facts/After.md" in _remote_files(c)


# ---------------------------------------------------------------- a slow in-place save


@pytest.mark.usefixtures("real_settle")
def test_edit_never_cuts_a_slow_in_place_save(tmp_path):
    """An editor truncating and rewriting a big note slowly (bursts, then a pause: a slow
    disk); edits meanwhile, in this process and through the CLI, must never rename their
    version over the file (old code: an edit during a pause passed the changed-since-read
    check and the rest of the save went to the unlinked old file)."""
    from vaultmem.core.errors import Conflict
    from vaultmem.core.store import Store

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    root = tmp_path / "v"
    subprocess.run(
        [sys.executable, "-m", "vaultmem", "init", str(root)], env=env, check=True, capture_output=True
    )
    cfg = root / ".vaultmem.toml"
    cfg.write_text(
        cfg.read_text().replace('# model = "sentence-transformers/all-MiniLM-L6-v2"', 'model = "none"')
    )
    note = root / "Big.md"
    head = "---\nid: big00001\ntitle: Big\n---\n"
    note.write_text(head + "".join(f"old line {i}\n" for i in range(2000)))
    lines = [f"line {i} of the person's save, long enough to matter\n" for i in range(2000)]
    done = threading.Event()

    def editor() -> None:
        with open(note, "r+", encoding="utf-8") as f:
            f.truncate(0)
            f.write(head)
            for i, line in enumerate(lines):
                f.write(line)
                if i % 50 == 49:
                    f.flush()
                    time.sleep(0.1)
        done.set()

    writer = threading.Thread(target=editor)
    writer.start()
    cli = subprocess.Popen([sys.executable, "-m", "vaultmem", "edit", "big00001", "--add-tag", "cut", "--vault", str(root)],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    store, refused = Store(root), []
    while not done.is_set():
        try:
            store.update("Big.md", lambda text: text.replace("title: Big", "title: Big (edited)"))
        except Conflict as e:
            refused.append(str(e))
    writer.join()
    _, err = cli.communicate(timeout=60)
    text = note.read_text()
    assert text.endswith(lines[-1]) and all(line in text for line in lines), (err, len(text.splitlines()))
    assert refused and all("try again" in r for r in refused)
    if cli.returncode != 0:
        assert "try again" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert stat.S_ISREG(note.stat().st_mode)


# ---------------------------------------------------------------- an index is only loaded when it is vaultmem's


def _plain_vault(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    root = tmp_path / "v"
    subprocess.run(
        [sys.executable, "-m", "vaultmem", "init", str(root)], env=env, check=True, capture_output=True
    )
    cfg = root / ".vaultmem.toml"
    cfg.write_text(
        cfg.read_text().replace('# model = "sentence-transformers/all-MiniLM-L6-v2"', 'model = "none"')
    )
    (root / "Otters.md").write_text("---\ntitle: Otters\n---\nOtters hold hands while they sleep.\n")
    return root, env


def _vm(root, env, *args):
    return subprocess.run([sys.executable, "-m", "vaultmem", *args, "--vault", str(root)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_a_planted_whoosh_toc_is_never_unpickled(tmp_path):
    root, env = _plain_vault(tmp_path)
    assert _vm(root, env, "recall", "otters").returncode == 0
    marker = tmp_path / "pwned"
    _evil_toc(index_dir(root) / "bm25", marker)
    for _ in range(2):
        out = _vm(root, env, "recall", "otters", "--json")
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        assert not marker.exists()
        assert '"Otters.md"' in out.stdout, (out.stdout, out.stderr)
    assert "did not write" in out.stderr or (index_dir(root) / "bm25.foreign").exists()
    assert (index_dir(root) / "bm25.foreign" / "_MAIN_999.toc").exists()


def test_a_manifest_that_is_not_vaultmems_is_set_aside_with_one_line(tmp_path):
    root, env = _plain_vault(tmp_path)
    assert _vm(root, env, "recall", "otters").returncode == 0
    (index_dir(root) / "manifest.db").write_bytes(b"not a database" * 1000)
    for name in ("manifest.db-wal", "manifest.db-shm"):
        (index_dir(root) / name).unlink(missing_ok=True)
    out = _vm(root, env, "recall", "otters", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    warned = [line for line in out.stderr.splitlines() if "not a vaultmem index" in line]
    assert len(warned) == 1 and '"Otters.md"' in out.stdout, out.stderr
    doctor = _vm(root, env, "doctor")
    assert "Traceback" not in doctor.stderr


# ---------------------------------------------------------------- secrets are never pushed

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_sync_never_commits_a_note_holding_a_secret(cluster):
    c = cluster
    _two_machines(c)
    c.write("laptop", "facts/Deploy.md", NOTE.format(id="trust020", title="Deploy").replace(
        "Second line of Deploy.", f"The deploy token is {TOKEN} for now."))  # fmt: skip
    c.write("laptop", "facts/Clean.md", NOTE.format(id="trust021", title="Clean"))
    out = c.vm("laptop", "sync", real=True, check=False)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    held = [line for line in out.stderr.splitlines() if "holds a secret" in line]
    assert len(held) == 1 and "facts/Deploy.md" in held[0] and "github" in held[0].lower(), out.stderr
    assert "--allow-secrets" in held[0]
    remote = _remote_files(c)
    assert "facts/Clean.md" in remote and "facts/Deploy.md" not in remote
    assert TOKEN not in c.git(c.remote, "log", "-p", "--all")
    assert TOKEN in c.read("laptop", "facts/Deploy.md")  # the person's file is left as it is
    doctor = c.vm("laptop", "doctor", "--json", real=True, check=False)
    import json

    found = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "secret"]
    assert [f["path"] for f in found] == ["facts/Deploy.md"] and TOKEN not in doctor.stdout
    # an edit of a committed note that adds a secret is held back too; the flag commits on purpose
    _replace(c, "laptop", "facts/Clean.md", "First line of Clean.", f"token = {TOKEN}")
    assert c.vm("laptop", "sync", real=True, check=False).returncode == 1
    assert TOKEN not in c.git(c.remote, "log", "-p", "--all")
    assert c.vm("laptop", "sync", "--allow-secrets", real=True).returncode == 0
    assert "facts/Deploy.md" in _remote_files(c)


def test_a_usage_store_that_is_not_a_database_is_kept_aside_with_one_line(tmp_path):
    root, env = _plain_vault(tmp_path)
    assert _vm(root, env, "recall", "otters").returncode == 0
    usage = root / ".vaultmem-usage"
    (usage / "usage.db").write_bytes(b"garbage, or a replacement from somewhere")
    for name in ("usage.db-wal", "usage.db-shm"):
        (usage / name).unlink(missing_ok=True)
    out = _vm(root, env, "recall", "otters")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert len([line for line in out.stderr.splitlines() if "not a vaultmem usage store" in line]) == 1
    assert [p.name for p in usage.glob("usage.db.foreign-*")]


# ---------------------------------------------------------------- a save landing between the check and the replace


def _save_after_the_check(monkeypatch, path: Path, save) -> list:
    """Run ``save`` (a person's editor) right after vaultmem's last look at ``path`` before it
    replaces or removes the file: the check passes, the save lands, then vaultmem acts."""
    from vaultmem.core import store as storemod

    real, fired = storemod._signature, []

    def hooked(p):
        sig = real(p)
        if (
            not fired
            and Path(p) == path
            and sys._getframe(1).f_code.co_name in ("atomic_write", "remove_checked", "_sig")
        ):
            fired.append(p)
            save()
        return sig

    monkeypatch.setattr(storemod, "_signature", hooked)
    return fired


def _rename_save(path: Path, line: str) -> None:
    tmp = path.with_name(f".{path.name}.editor")
    tmp.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _in_place_save(path: Path, line: str) -> None:
    text = path.read_text(encoding="utf-8")
    with open(path, "w", encoding="utf-8") as f:  # truncates the file vaultmem checked, writes into it
        f.write(text + line + "\n")


def _quiet(path: Path) -> None:
    """Last written 10 s ago: past the settle window, so no test waits for it."""
    past = time.time() - 10
    os.utime(path, (past, past))


@pytest.mark.parametrize("save", [_rename_save, _in_place_save], ids=["rename", "in-place"])
def test_edit_never_overwrites_a_save_landing_between_its_check_and_its_replace(tmp_path, monkeypatch, save):
    """Old code: atomic_write checked the signature, then os.replace'd: a rename-save landing in
    between was overwritten, an in-place save went to the unlinked old file (the line lost)."""
    from vaultmem.core.errors import Conflict
    from vaultmem.core.store import Store

    store = Store(tmp_path)
    note = tmp_path / "n.md"
    note.write_text("---\nid: n0000001\ntitle: N\n---\nFirst.\n", encoding="utf-8")
    _quiet(note)
    fired = _save_after_the_check(monkeypatch, note, lambda: save(note, "The person's save."))
    with pytest.raises(Conflict, match="try again"):
        store.update("n.md", lambda text: text + "vaultmem's line.\n")
    assert fired
    assert (
        note.read_text(encoding="utf-8") == "---\nid: n0000001\ntitle: N\n---\nFirst.\nThe person's save.\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]  # no temp or displaced file left
    monkeypatch.undo()
    store.update("n.md", lambda text: text + "vaultmem's line.\n")  # asked again: both lines
    assert note.read_text(encoding="utf-8").endswith("The person's save.\nvaultmem's line.\n")


def _sync_in_process(c, name: str, monkeypatch) -> None:
    """``vaultmem sync`` of clone ``name`` in this process (so a test can hook the store), with
    the cluster's git configuration (``monkeypatch.undo()`` drops it with the hooks)."""
    from vaultmem.sync.git import sync

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", c.env["GIT_CONFIG_GLOBAL"])
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    sync(c.vaults[name], interactive=False)


@pytest.mark.parametrize("save", [_rename_save, _in_place_save], ids=["rename", "in-place"])
def test_a_pull_never_overwrites_a_save_landing_between_its_check_and_its_replace(cluster, monkeypatch, save):
    """The same window in sync's move (worktree._put): the person's line was lost everywhere."""
    c = cluster
    _two_machines(c)
    c.write("laptop", "facts/Alpha.md", c.read("laptop", "facts/Alpha.md") + "Laptop's line.\n")
    c.vm("laptop", "sync")
    note = c.vaults["server"] / "facts/Alpha.md"
    _quiet(note)
    fired = _save_after_the_check(monkeypatch, note, lambda: save(note, "Server person's save."))
    _sync_in_process(c, "server", monkeypatch)
    assert fired
    assert "Server person's save." in note.read_text(encoding="utf-8")
    monkeypatch.undo()
    for name in ("server", "laptop", "server"):
        c.vm(name, "sync")
    for name in ("laptop", "server"):
        text = c.read(name, "facts/Alpha.md")
        assert "Server person's save." in text and "Laptop's line." in text, (name, text)


def test_a_pulled_deletion_never_removes_a_save_landing_after_its_check(cluster, monkeypatch):
    """Old code: the deletion checked the signature, then unlinked whatever was there."""
    c = cluster
    _two_machines(c)
    (c.vaults["laptop"] / "facts/Beta.md").unlink()
    c.vm("laptop", "sync")
    note = c.vaults["server"] / "facts/Beta.md"
    _quiet(note)
    fired = _save_after_the_check(monkeypatch, note, lambda: _rename_save(note, "Saved as it was deleted."))
    _sync_in_process(c, "server", monkeypatch)
    assert fired
    assert "Saved as it was deleted." in note.read_text(encoding="utf-8")
    monkeypatch.undo()
    for name in ("server", "laptop"):
        c.vm(name, "sync")
    assert "Saved as it was deleted." in c.read("laptop", "facts/Beta.md")  # an edit wins over a deletion


def test_a_pull_never_replaces_a_note_created_after_its_check(cluster, monkeypatch):
    """A note the pull brings to a path that was free when it looked, created there by a person
    meanwhile (old code: os.replace over it)."""
    from vaultmem.core import store as storemod

    c = cluster
    _two_machines(c)
    c.write("laptop", "facts/New.md", NOTE.format(id="laptop01", title="New"))
    c.vm("laptop", "sync")
    note = c.vaults["server"] / "facts/New.md"
    real, fired = storemod._write_temp, []

    def hooked(folder, name, *args, **kw):
        tmp = real(folder, name, *args, **kw)
        if not fired and name == "New.md":
            fired.append(name)
            note.write_text(NOTE.format(id="server01", title="New") + "The server person's own note.\n")
        return tmp

    monkeypatch.setattr(storemod, "_write_temp", hooked)
    _sync_in_process(c, "server", monkeypatch)
    assert fired
    assert "The server person's own note." in note.read_text(encoding="utf-8")
    monkeypatch.undo()
    for name in ("server", "laptop", "server"):
        c.vm(name, "sync")
    for name in ("laptop", "server"):
        every = "\n".join(c.notes(name).values())
        assert "The server person's own note." in every and "id: laptop01" in every, name
