"""Escapes: nothing vaultmem writes or follows leaves the vault; its state is owner-only.

Tests run as root here, so "another user" is simulated: a folder is chown'ed to another
uid (root still sees the owner change), or the uid a check compares with is monkeypatched.
"""

from __future__ import annotations

import os
import stat

from conftest import run


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_delete_refuses_a_trash_symlinked_out_of_the_vault(small_vault, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (small_vault / ".trash").symlink_to(outside)
    result = run("delete", "note0aa", "--force", "--vault", str(small_vault))
    assert result.returncode != 0 and result.stderr.startswith("vaultmem: ") and "outside the vault" in result.stderr
    assert list(outside.iterdir()) == [] and (small_vault / "Alpha.md").exists()


def test_delete_refuses_a_trash_subfolder_symlinked_out(small_vault, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (small_vault / "sub").mkdir()
    (small_vault / "sub" / "Delta.md").write_text("---\nid: delta111\ntitle: Delta\n---\nDelta.\n")
    (small_vault / ".trash").mkdir()
    (small_vault / ".trash" / "sub").symlink_to(outside)
    result = run("delete", "delta111", "--force", "--vault", str(small_vault))
    assert result.returncode != 0 and "outside the vault" in result.stderr
    assert list(outside.iterdir()) == [] and (small_vault / "sub" / "Delta.md").exists()


def test_delete_into_a_real_trash_still_works(small_vault):
    result = run("delete", "note0aa", "--force", "--vault", str(small_vault))
    assert result.returncode == 0, result.stderr
    assert (small_vault / ".trash" / "Alpha.md").exists() and not (small_vault / "Alpha.md").exists()


def test_state_folder_and_its_files_are_owner_only(tmp_path):
    root = tmp_path / "v"
    assert run("init", str(root)).returncode == 0
    (root / "Note.md").write_text("---\ntitle: Note\n---\nSome text.\n")
    assert run("index", "--vault", str(root)).returncode == 0
    assert run("recall", "text", "--vault", str(root)).returncode == 0  # logs the query's retrievals
    state = root / ".vaultmem"
    assert _mode(state) == 0o700
    for path in state.rglob("*"):
        if path.is_dir():
            assert _mode(path) == 0o700, path
        elif path.name.startswith(("usage.db", "manifest.db")):
            assert _mode(path) == 0o600, path


def test_an_existing_open_state_folder_is_tightened(small_vault):
    os.chmod(small_vault / ".vaultmem", 0o755)
    assert run("index", "--vault", str(small_vault)).returncode == 0
    assert _mode(small_vault / ".vaultmem") == 0o700


def test_a_state_folder_symlinked_elsewhere_is_refused(small_vault, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (small_vault / ".vaultmem").rename(elsewhere)
    (small_vault / ".vaultmem").symlink_to(elsewhere)
    result = run("index", "--vault", str(small_vault))
    assert result.returncode != 0 and "symlink" in result.stderr and "Traceback" not in result.stderr
    assert not (elsewhere / "index").exists()
