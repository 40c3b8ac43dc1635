"""The note merge driver: frontmatter key by key, bodies three-way, conflicts kept and marked."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from vaultmem.core.mergedriver import main, merge_meta, merge_notes
from vaultmem.core.note import parse

BASE = """---
id: abc12345
title: Cache choice
type: decision
tags: [cache]
status: active
importance: 5
updated: '2026-11-01T10:00:00Z'
---
# Cache choice

Line one.
Line two.
Line three.
"""


def edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


def test_keys_merge_by_their_rules():
    ours = edit(BASE, ("tags: [cache]", "tags: [cache, sqlite]"), ("'2026-11-01T10:00:00Z'", "'2026-11-02T10:00:00Z'"),
                ("Line one.", "Line one, edited by A."))  # fmt: skip
    theirs = edit(BASE, ("tags: [cache]", "tags: [cache, redis]"), ("status: active", "status: resolved"),
                  ("importance: 5", "importance: 8"), ("'2026-11-01T10:00:00Z'", "'2026-11-03T10:00:00Z'"),
                  ("Line three.", "Line three, edited by B."))  # fmt: skip
    result = merge_notes(BASE, ours, theirs, "decisions/Cache choice.md")
    note = parse(result.text, "x.md")
    assert result.conflicts == []
    assert note.tags == ("cache", "sqlite", "redis")
    assert note.status == "resolved" and note.importance == 8 and note.updated == "2026-11-03T10:00:00Z"
    assert "Line one, edited by A.\nLine two.\nLine three, edited by B.\n" in note.body
    assert result.text.startswith("---\nid: abc12345\ntitle: Cache choice\n")  # ours' layout kept


def test_resolved_on_one_side_stays_resolved_even_if_the_other_changed_later():
    base = {"status": "active", "updated": "2026-01-01"}
    ours = {"status": "resolved", "updated": "2026-01-02"}
    theirs = {"status": "archived", "updated": "2026-01-05"}
    merged, conflicts = merge_meta(base, ours, theirs)
    assert merged["status"] == "resolved" and merged["updated"] == "2026-01-05" and not conflicts


def test_status_and_superseded_by_follow_the_later_change():
    base = {"status": "active", "updated": "2026-01-01"}
    ours = {"status": "superseded", "superseded_by": "[[A]]", "updated": "2026-01-02"}
    theirs = {"status": "superseded", "superseded_by": "[[B]]", "updated": "2026-01-03"}
    merged, conflicts = merge_meta(base, ours, theirs)
    assert merged["superseded_by"] == "[[B]]" and not conflicts


def test_one_sided_changes_and_removals_apply():
    base = {"a": 1, "b": 2, "aliases": ["x"]}
    ours = {"a": 1, "b": 3, "aliases": ["x"]}
    theirs = {"a": 1, "aliases": ["x", "y"], "c": "new"}
    merged, conflicts = merge_meta(base, ours, theirs)
    assert merged == {"a": 1, "b": 3, "aliases": ["x", "y"], "c": "new"}
    assert conflicts == ["b"]  # removed on one side, changed on the other: kept, reported


def test_same_lines_changed_keeps_both_versions_marked_and_sets_conflict():
    ours = edit(
        BASE, ("Line two.", "Line two as A wrote it."), ("title: Cache choice", "title: Cache decision")
    )
    theirs = edit(
        BASE, ("Line two.", "Line two as B wrote it."), ("title: Cache choice", "title: Cache pick")
    )
    result = merge_notes(BASE, ours, theirs, "decisions/Cache choice.md")
    note = parse(result.text, "x.md")
    assert result.conflicts == ["body", "title"]
    assert note.meta["status"] == "conflict" and note.meta["status_before_conflict"] == "active"
    for line in (
        "Line one.",
        "Line two as A wrote it.",
        "Line two as B wrote it.",
        "Line three.",
        "Cache pick",
    ):
        assert line in result.text
    assert "<<<<" not in result.text and "\n====" not in result.text  # markdown, not git markers
    assert "> [!warning] vaultmem merge conflict" in result.text
    # the marked blocks are separated by blank lines, so no body line is swallowed by a quote
    a = result.text.index("Line two as A wrote it.")
    assert result.text[a - 2 : a] == "\n\n"


def test_both_added_the_same_path_without_base():
    ours = "---\ntitle: T\ntags: [a]\n---\nfrom A\n"
    theirs = "---\ntitle: T\ntags: [b]\n---\nfrom B\n"
    result = merge_notes("", ours, theirs, "T.md")
    assert "from A" in result.text and "from B" in result.text
    assert parse(result.text, "T.md").tags == ("a", "b")


def test_unparsable_frontmatter_falls_back_to_a_line_merge():
    bad = "---\ntitle: [unclosed\n---\nbody\n"
    result = merge_notes(bad, bad.replace("body", "body A"), bad.replace("body", "body B"), "x.md")
    assert not result.clean and "body A" in result.text and "body B" in result.text


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(cwd.parent / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    (tmp_path / "gitconfig").write_text(
        "[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    return root


def test_driver_through_a_real_git_merge(repo):
    from vaultmem.sync.git import setup

    env_cfg = str(repo.parent / "gitconfig")
    os.environ["GIT_CONFIG_GLOBAL"] = env_cfg
    try:
        assert setup(repo)  # .gitattributes + the repo's own git config
    finally:
        del os.environ["GIT_CONFIG_GLOBAL"]
    assert "merge=vaultmem" in (repo / ".gitattributes").read_text()
    assert "merge-driver %O %A %B %P" in _git(repo, "config", "--local", "merge.vaultmem.driver")
    note = repo / "Cache choice.md"
    note.write_text(BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "other")
    note.write_text(edit(BASE, ("tags: [cache]", "tags: [cache, redis]"), ("Line two.", "Line two by B.")))
    _git(repo, "commit", "-qam", "B")
    _git(repo, "checkout", "-q", "main")
    note.write_text(edit(BASE, ("tags: [cache]", "tags: [cache, sqlite]"), ("Line two.", "Line two by A.")))
    _git(repo, "commit", "-qam", "A")
    _git(repo, "merge", "-q", "--no-edit", "other")  # exit 0: the driver merged the note
    text = note.read_text()
    assert "tags: [cache, sqlite, redis]" in text
    assert "Line two by A." in text and "Line two by B." in text and "status: conflict" in text
    assert _git(repo, "status", "--porcelain") == ""


def test_cli_entry_point_writes_into_ours(tmp_path):
    paths = []
    for name, text in (
        ("o", BASE),
        ("a", edit(BASE, ("Line one.", "A1"))),
        ("b", edit(BASE, ("Line three.", "B3"))),
    ):
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    assert main([str(p) for p in paths] + ["notes/x.md"]) == 0
    merged = paths[1].read_text()
    assert "A1\nLine two.\nB3\n" in merged
    assert main(["only-two", "args"]) == 2
