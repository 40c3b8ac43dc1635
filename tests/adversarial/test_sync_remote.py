"""What a remote (a teammate who can push, or a careless clone) can do to `vaultmem sync`
(issue 39, low: sync): a hostile attribute or tree makes one sync report a problem, never every
later one; a path vaultmem owns in any letter case is never checked out; a mass deletion or a
force-push is reported as it is (no "removed" for kept notes) and warned about; a note deleted
on one clone and edited on another stays, out of `.trash/`. Two clones, the real CLI and git."""

from __future__ import annotations

import subprocess

import pytest
from gitcluster import Cluster

pytestmark = pytest.mark.integration  # the CLI in subprocesses

NOTE = "---\nid: {id}\ntitle: {title}\ntype: fact\n---\n# {title}\n\nLine of {title}.\n"


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    c.first("victim")
    for i in range(12):
        c.write("victim", f"facts/Fact {i}.md", NOTE.format(id=f"fact{i:04d}", title=f"Fact {i}"))
    c.vm("victim", "sync")
    c.clone("mallory")
    yield c
    c.stop_watchers()


def _push_tree(c: Cluster, folders: dict[str, dict[str, bytes]]) -> None:
    """A commit on top of the remote's main whose root gains the folders ``folders`` (a name
    may be ``.git`` or ``..``, which no git command adds), built with mktree and pushed as is."""
    clone = c.vaults["mallory"]

    def git(*args: str, input: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=clone, env=c.env, input=input, capture_output=True,
                              check=True).stdout.decode().strip()  # fmt: skip

    head = git("rev-parse", "HEAD")
    rows = git("ls-tree", "HEAD").splitlines()
    for folder, files in folders.items():
        blobs = [
            f"100644 blob {git('hash-object', '-w', '--stdin', input=data)}\t{name}"
            for name, data in files.items()
        ]
        sub = git("mktree", input=("\n".join(blobs) + "\n").encode())
        rows.append(f"040000 tree {sub}\t{folder}")
    tree = git("mktree", input=("\n".join(rows) + "\n").encode())
    git(
        "push",
        "-q",
        "origin",
        f"{git('commit-tree', tree, '-p', head, '-m', 'hostile tree')}:refs/heads/main",
    )


def _sync(c: Cluster, name: str) -> str:
    out = c.vm(name, "sync", check=False)
    assert out.returncode == 0 and "Traceback" not in out.stderr, (out.stdout, out.stderr)
    return out.stdout + out.stderr


@pytest.mark.parametrize("folder", [".git", "..", ".GIT"])
def test_a_tree_holding_git_or_dotdot_entries_fails_no_sync(cluster, folder):
    """Before: `git read-tree failed: error: invalid path '../escape.md'` at this sync and every
    later one; nothing else arrived and nothing local was pushed."""
    c = cluster
    c.write("mallory", "facts/Along.md", NOTE.format(id="along001", title="Along"))
    c.vm("mallory", "sync")
    _push_tree(c, {folder: {"config": b"[core]\n\tfsmonitor = touch /tmp/pwned\n", "escape.md": b"x\n"}})
    out = _sync(c, "victim")
    assert "left out 1 path(s)" in out and f"{folder}" in out and "the rest is synced" in out
    assert (c.vaults["victim"] / "facts" / "Along.md").exists()
    c.write("victim", "facts/Local.md", NOTE.format(id="local001", title="Local"))
    assert "pushed" in _sync(c, "victim")
    assert "facts/Local.md" in c.git(c.remote, "ls-tree", "-r", "--name-only", "main")
    assert not (c.vaults["victim"].parent / "escape.md").exists()


def test_a_remote_working_tree_encoding_fails_no_later_sync(cluster):
    """Before: once `*.md working-tree-encoding=UTF-16LE` arrived, every sync failed with
    `git add failed: fatal: failed to encode 'facts/Local.md' from UTF-16LE to UTF-8`."""
    c = cluster
    c.write(
        "mallory",
        ".gitattributes",
        c.read("mallory", ".gitattributes") + "*.md working-tree-encoding=UTF-16LE\n",
    )
    c.vm("mallory", "sync")
    _sync(c, "victim")
    c.write("victim", "facts/Local.md", NOTE.format(id="local002", title="Local"))
    out = _sync(c, "victim")
    assert "working-tree-encoding: ignored" in out and "pushed" in out
    assert c.git(c.remote, "show", "main:facts/Local.md") == c.read("victim", "facts/Local.md")


def test_an_owned_folder_in_another_case_is_never_checked_out(cluster):
    """Before: `.VAULTMEM/index/...` was checked out (on macOS and Windows that is `.vaultmem/`)."""
    c = cluster
    _push_tree(c, {".VAULTMEM": {"planted.toc": b"\x80\x04evil"}, ".Vaultmem-Usage": {"usage.db": b"x"}})
    out = _sync(c, "victim")
    assert "refused 2 path(s) vaultmem owns" in out
    assert (
        not (c.vaults["victim"] / ".VAULTMEM").exists()
        and not (c.vaults["victim"] / ".Vaultmem-Usage").exists()
    )


def test_a_mass_delete_is_warned_about_and_kept_notes_are_not_reported_removed(cluster):
    """Before: "in: removed" for every note the remote deleted, also the one kept here because it
    was edited, and no word about 10 of 12 notes going."""
    c = cluster
    for i in range(10):
        (c.vaults["mallory"] / "facts" / f"Fact {i}.md").unlink()
    c.vm("mallory", "sync")
    edited = c.read("victim", "facts/Fact 0.md") + "Edited here.\n"
    c.write("victim", "facts/Fact 0.md", edited)
    out = _sync(c, "victim")
    assert "in: removed facts/Fact 1.md" in out and "in: removed facts/Fact 0.md" not in out
    assert "warning: origin/main deleted 9 of 13 notes" in out and "checkout" in out  # 12 facts and README
    assert c.read("victim", "facts/Fact 0.md") == edited


def test_a_force_push_is_said_and_reports_only_what_changed_here(cluster):
    """Before: after a teammate's force-push to the first commit, sync printed "in: removed" for
    all 12 notes, which it kept, and said nothing of the rewrite."""
    c = cluster
    first = c.git(c.vaults["mallory"], "rev-list", "--max-parents=0", "HEAD").split()[0]
    c.git(c.vaults["mallory"], "push", "-q", "-f", "origin", f"{first}:refs/heads/main")
    out = _sync(c, "victim")
    assert "force-pushed" in out and "in: removed" not in out
    assert len(list((c.vaults["victim"] / "facts").glob("*.md"))) == 12


def test_a_note_deleted_on_one_clone_and_edited_on_the_other_stays_out_of_the_trash(cluster):
    """Before: the edit followed the move into `.trash/` (git tracks it) and the note left both
    clones; docs/sync.md says a note deleted on one side and edited on the other is kept."""
    c = cluster
    c.vm("victim", "delete", "Fact 3", "--force")
    c.vm("victim", "sync")
    edited = c.read("mallory", "facts/Fact 3.md") + "Edited on mallory.\n"
    c.write("mallory", "facts/Fact 3.md", edited)
    out = _sync(c, "mallory")
    assert "kept 1 note(s) deleted on one side and edited on the other" in out
    _sync(c, "victim")
    for name in ("victim", "mallory"):
        assert c.read(name, "facts/Fact 3.md") == edited, name
        assert not (c.vaults[name] / ".trash" / "facts" / "Fact 3.md").exists()


def test_remote_file_names_never_send_escapes_to_the_terminal(cluster):
    """Before: `in: added facts/<ESC>]52;c;...<BEL>.md` wrote the teammate's text to the clipboard."""
    c = cluster
    name = "facts/Clip \x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07.md"
    c.write("mallory", name, NOTE.format(id="clip0002", title="Clip"))
    c.vm("mallory", "sync")
    out = _sync(c, "victim")
    assert "\x1b" not in out and "\x07" not in out and "in: added facts/Clip \\x1b]52;c;" in out
