"""Which files are notes: dot-folders, editor junk, .gitignore files, configured excludes."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmem.core.ignore import IgnoreRules, is_junk_name
from vaultmem.core.store import Store
from vaultmem.vault import Vault


def write(root: Path, rel: str, text: str = "# note\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def listed(root: Path, *files: str, exclude: tuple[str, ...] = ()) -> list[str]:
    for rel in files:
        write(root, rel)
    return Store(root, exclude).list_paths()


@pytest.mark.parametrize(
    "name",
    [
        "note.md.swp", ".note.md.swp", "note.md~", ".#note.md", "#note.md#", "note.md.tmp",
        ".note.md.a1b2c3d4.vaultmem.tmp", "note.bak", "~$note.md", "note.sync-conflict-20260101-1.md",
        "image.png", "notes.txt", "Makefile", ".hidden.md",
    ],
)  # fmt: skip
def test_junk_names(name):
    assert is_junk_name(name)


@pytest.mark.parametrize(
    "name", ["note.md", "Note.MD", "long.markdown", "has space.md", "v1.2.md", "日本.md"]
)
def test_note_names(name):
    assert not is_junk_name(name)


def test_dot_folders_are_skipped(tmp_path):
    paths = listed(
        tmp_path, "keep.md", ".obsidian/x.md", ".git/x.md", ".trash/x.md", ".vaultmem/x.md", "a/.hidden/x.md"
    )
    assert paths == ["keep.md"]


def test_junk_files_are_skipped_during_a_walk(tmp_path):
    paths = listed(tmp_path, "a/keep.md", "a/keep.md.swp", "a/keep.md~", "a/.#keep.md", "a/#keep.md#",
                   "a/keep.md.tmp", "a/.keep.md.x1y2.vaultmem.tmp", "a/image.png")  # fmt: skip
    assert paths == ["a/keep.md"]


def test_root_gitignore_with_negation(tmp_path):
    write(tmp_path, ".gitignore", "drafts/\n*.private.md\n/top.md\nscratch*\n!scratch-keep.md\n")
    paths = listed(tmp_path, "drafts/a.md", "x/drafts/b.md", "a.private.md", "top.md", "sub/top.md",
                   "scratch1.md", "scratch-keep.md", "fine.md")  # fmt: skip
    assert paths == ["fine.md", "scratch-keep.md", "sub/top.md"]


def test_nested_gitignore_applies_below_its_folder(tmp_path):
    write(tmp_path, "projects/.gitignore", "*.md\n!keep.md\n")
    paths = listed(tmp_path, "projects/a.md", "projects/keep.md", "projects/deep/b.md", "other/a.md")
    assert paths == ["other/a.md", "projects/keep.md"]


def test_nested_negation_overrides_a_parent_pattern(tmp_path):
    write(tmp_path, ".gitignore", "*.md\n")
    write(tmp_path, "sub/.gitignore", "!keep.md\n")
    assert listed(tmp_path, "top.md", "sub/keep.md", "sub/other.md") == ["sub/keep.md"]


def test_files_in_an_ignored_folder_cannot_be_re_included(tmp_path):
    write(tmp_path, ".gitignore", "private/\n!private/keep.md\n")
    rules = IgnoreRules(tmp_path)
    assert listed(tmp_path, "private/keep.md") == []
    assert rules.ignored("private/keep.md")


def test_configured_exclude_patterns(tmp_path):
    paths = listed(tmp_path, "README.md", "sub/README.md", "templates/decision.md", "archive/2020/old.md",
                   "keep.md", exclude=("/README.md", "/templates/", "archive/"))  # fmt: skip
    assert paths == ["keep.md", "sub/README.md"]


def test_ignored_agrees_with_the_walk(tmp_path):
    write(tmp_path, ".gitignore", "drafts/\n")
    all_files = ["a.md", "drafts/x.md", ".obsidian/y.md", "b.md.swp", "README.md", "c/d.md", "c/e.txt"]
    found = listed(tmp_path, *all_files, exclude=("/README.md",))
    rules = IgnoreRules(tmp_path, ("/README.md",))
    assert [p for p in all_files if not rules.ignored(p)] == found == ["a.md", "c/d.md"]


def test_forget_rereads_a_changed_gitignore(tmp_path):
    write(tmp_path, "a.md")
    rules = IgnoreRules(tmp_path)
    assert not rules.ignored("a.md")
    write(tmp_path, ".gitignore", "a.md\n")
    rules.forget()
    assert rules.ignored("a.md")


def test_demo_vault_listing(demo_copy, fake_embedder):
    write(demo_copy, ".obsidian/workspace.md")
    paths = Vault(demo_copy, embedder=fake_embedder).store.list_paths()
    every_md = sorted(p.relative_to(demo_copy).as_posix() for p in demo_copy.rglob("*.md"))
    hidden = {"drafts/scratch.md", ".obsidian/workspace.md", "README.md"}
    assert hidden <= set(every_md)
    assert paths == [p for p in every_md if p not in hidden]
