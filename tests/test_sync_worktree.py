"""Moving the working tree between two commits (``sync.worktree.move``) in process."""

from __future__ import annotations

import os
import subprocess

import pytest

from vaultmem.sync.errors import GitError
from vaultmem.sync.git import Git
from vaultmem.sync.worktree import move

ID = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


def _git(top, *args: str) -> str:
    return subprocess.run(
        ["git", *ID, *args], cwd=top, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_a_missing_incoming_object_is_an_error_and_never_a_deletion(tmp_path):
    """Old code: a blob ``git cat-file`` could not find (a partial or damaged clone) read as
    "no file in the new commit", so the note on disk was removed and the branch moved on."""
    top = tmp_path / "vault"
    top.mkdir()
    _git(top, "init", "-q")
    note = top / "a.md"
    note.write_text("one\n", encoding="utf-8")
    _git(top, "add", "a.md")
    _git(top, "commit", "-qm", "one")
    old = _git(top, "rev-parse", "HEAD")
    note.write_text("two\n", encoding="utf-8")
    _git(top, "commit", "-qam", "two")
    new = _git(top, "rev-parse", "HEAD")
    blob = _git(top, "rev-parse", f"{new}:a.md")
    (top / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # loose, so gone from the store
    note.write_text("one\n", encoding="utf-8")  # the file as the old commit holds it

    with pytest.raises(GitError, match="missing"):
        move(Git(top), top, old, new)
    assert note.read_text(encoding="utf-8") == "one\n"


def test_an_interrupted_rebase_of_a_branch_since_deleted_is_one_line_and_loses_nothing(tmp_path):
    """Old code: the branch's sha was None, handed to ``git merge-tree`` (a TypeError traceback)."""
    from typer.testing import CliRunner

    from vaultmem.cli.app import app

    top = tmp_path / "vault"
    top.mkdir()
    _git(top, "init", "-q", "-b", "main")
    note = top / "a.md"
    for line in ("one", "two"):
        note.write_text(f"{line}\n", encoding="utf-8")
        _git(top, "add", "a.md")
        _git(top, "commit", "-qm", line)
    subprocess.run(
        ["git", *ID, "rebase", "-i", "HEAD~1"],
        cwd=top, env={**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 1ibreak"}, check=True, capture_output=True,
    )  # fmt: skip
    _git(top, "update-ref", "-d", "refs/heads/main")
    note.write_text("saved during the rebase\n", encoding="utf-8")

    result = CliRunner().invoke(app, ["sync", "--no-push", "--vault", str(top)])
    assert result.exit_code != 0 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert "no longer exists" in result.output and "Traceback" not in result.output, result.output
    assert note.read_text(encoding="utf-8") == "saved during the rebase\n"
