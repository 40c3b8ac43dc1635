"""Who wrote a note, as far as vaultmem can know (stdlib only: the prompt hook reads it).

A note is this machine's person's unless something says otherwise: its ``source:`` names an
agent, it is a session capture or a candidate (``fence.provenance``), or this record marks it
as written elsewhere, unconfirmed. The record, ``<vault>/.vaultmem-usage/provenance.json``
(this machine's, never synced), marks:

* every note ``vaultmem sync`` brings in (``mark_range`` over the fetched commits), whoever
  committed it (a teammate, or you on another machine: a synced file is data until confirmed);
* every note whose last commit's author is not this machine's git identity (``git var
  GIT_AUTHOR_IDENT``: ``user.email`` or ``GIT_AUTHOR_EMAIL``), found by ``refresh`` whenever the
  repository's HEAD moved since the record was written (a ``git pull`` by hand, a clone):
  ``wake`` and ``hook start`` call it, ``hook prompt`` when HEAD, read from the files, moved.

A mark stays until the person confirms the note (``vaultmem confirm``: ``confirm`` here), or
until the note is gone; new commits by others mark it again. Marked notes are injected as data,
labelled with their author, and held back when they read as orders (``fence.held``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from . import environment
from .discovery import USAGE_DIR

RECORD = "provenance.json"
NOTE_SUFFIXES = (".md", ".markdown")


def _path(root: Path) -> Path:
    return root / USAGE_DIR / RECORD


def read(root: Path) -> dict[str, Any]:
    """The record (``{"head": sha, "notes": {path: {"author", "teammate", "via"}}}``); empty
    when missing or unreadable (a broken record trusts nothing less than an absent one)."""
    try:
        data = json.loads(_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"head": None, "notes": {}}
    if not isinstance(data, dict) or not isinstance(data.get("notes"), dict):
        return {"head": None, "notes": {}}
    return data


def _write(root: Path, data: dict[str, Any]) -> None:
    """Replace the record atomically; a vault this user cannot write keeps the old one (a
    read-only vault is read as it is: nothing new is marked, nothing is lost)."""
    path = _path(root)
    tmp = path.with_name(f".{RECORD}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)
        tmp.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def label(entry: dict[str, Any] | None) -> str | None:
    """The origin a marked note is shown with, or None (not marked)."""
    if not entry:
        return None
    author = (
        re.sub(r"[^\w.@+-]", "", str(entry.get("author") or ""))[:60] or "unknown"
    )  # an address, never prose
    who = "teammate's note" if entry.get("teammate", True) else "synced note"
    return f"{who} ({author}), unconfirmed"


class Trust:
    """One vault's record, read once: ``label(path)`` for each memory shown."""

    def __init__(self, root: Path | None):
        self.notes: dict[str, Any] = read(root)["notes"] if root is not None else {}

    def label(self, path: str | None) -> str | None:
        return label(self.notes.get(path)) if path else None


# ---------------------------------------------------------------- git


def _git(root: Path, *args: str) -> str | None:
    """``git ARGS`` in ``root``: its output, or None (no git, not a repository, an error)."""
    import shutil
    import subprocess  # not at the top: the prompt hook only reads the record

    if shutil.which("git") is None:
        return None
    proc = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, env=environment.for_child({"LC_ALL": "C"})
    )
    return proc.stdout.decode("utf-8", "surrogateescape") if proc.returncode == 0 else None


def _in_repo(root: Path) -> bool:
    """A ``.git`` in the vault or a folder above it (checked before running any git)."""
    return any((p / ".git").exists() for p in (root, *root.parents))


def last_authors(root: Path, revs: list[str]) -> dict[str, str]:
    """Vault-relative note path -> the author email of the newest commit in ``revs`` that
    added or changed it (merges, which change nothing themselves, are skipped by ``git log``;
    deletions are not authorship)."""
    out = _git(root, "-c", "core.quotePath=false", "log", "--format=%x01%ae", "--name-only", "-z",
               "--relative", "--no-renames", "--diff-filter=d", *revs, "--", ".")  # fmt: skip
    found: dict[str, str] = {}
    author = ""
    for token in (out or "").split("\0"):
        if token.startswith("\x01"):
            author = token[1:]
            continue
        path = token.lstrip("\n")
        if path.lower().endswith(NOTE_SUFFIXES) and path not in found:
            found[path] = author
    return found


def _me(root: Path) -> str:
    """This machine's git identity's email (``GIT_AUTHOR_EMAIL``, else ``user.email``)."""
    ident = _git(root, "var", "GIT_AUTHOR_IDENT") or ""
    return ident[ident.find("<") + 1 : ident.rfind(">")].strip().lower() if "<" in ident else ""


def _mark(root: Path, data: dict[str, Any], authors: dict[str, str], via: str, me: str, all_: bool) -> None:
    for path, author in authors.items():
        teammate = author.strip().lower() != me
        if (all_ or teammate) and (root / path).is_file():
            data["notes"][path] = {"author": author, "teammate": teammate, "via": via}


def _git_dir(root: Path) -> Path | None:
    """The repository's git folder (a worktree's ``.git`` file followed), or None."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            return (folder / text[8:]).resolve() if text.startswith("gitdir: ") else None
    return None


def _head_sha(root: Path) -> str | None:
    """HEAD's commit read from the files (no git process): a loose or packed ref, or None."""
    try:
        gitdir = _git_dir(root)
        if gitdir is None:
            return None
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        common = gitdir / "commondir"
        dirs = [gitdir, (gitdir / common.read_text().strip()).resolve()] if common.is_file() else [gitdir]
        for d in dirs:
            if (d / ref).is_file():
                return (d / ref).read_text(encoding="utf-8").strip()
            if (d / "packed-refs").is_file():
                for line in (d / "packed-refs").read_text(encoding="utf-8").splitlines():
                    if line.endswith(" " + ref):
                        return line.split(" ", 1)[0]
    except OSError:
        return None
    return None


def refresh_if_moved(root: Path) -> None:
    """``refresh`` only when HEAD (read from the files: no git process) is not the record's:
    the prompt hook's check, so a note pulled by hand is marked before it is injected."""
    head = _head_sha(root)
    if head and read(root).get("head") != head:
        refresh(root)


def refresh(root: Path) -> None:
    """Mark the notes last committed by someone else since the record's HEAD (the whole
    history the first time); drop marks of notes that are gone. Cheap when HEAD has not moved."""
    if not _in_repo(root):
        return
    head = (_git(root, "rev-parse", "-q", "--verify", "HEAD") or "").strip()
    data = read(root)
    if not head or data.get("head") == head:
        return
    old = data.get("head")
    authors = last_authors(root, [head, f"^{old}"]) if old else {}
    if old and not authors and _git(root, "cat-file", "-e", f"{old}^{{commit}}") is None:
        old = None  # the recorded HEAD is gone (a rewritten history): look at all of it
    if not old:
        authors = last_authors(root, [head])
    _mark(root, data, authors, "git", _me(root), all_=False)
    data["notes"] = {p: e for p, e in data["notes"].items() if (root / p).is_file()}
    data["head"] = head
    _write(root, data)


def mark_range(root: Path, old: str | None, new: str) -> list[str]:
    """Mark every note the commits ``old..new`` (all of ``new`` when ``old`` is None) changed
    and that exists now: what a sync brought in. Returns the paths marked."""
    revs = [new, f"^{old}"] if old else [new]
    authors = last_authors(root, revs)
    data = read(root)
    before = set(data["notes"])
    _mark(root, data, authors, "sync", _me(root), all_=True)
    _write(root, data)
    return sorted(set(data["notes"]) - before | (set(authors) & set(data["notes"])))


def confirm(root: Path, path: str) -> bool:
    """The person vouches for a marked note: its mark is dropped. Whether it was marked."""
    data = read(root)
    if data["notes"].pop(path, None) is None:
        return False
    _write(root, data)
    return True
