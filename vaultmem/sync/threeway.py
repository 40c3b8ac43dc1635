"""Three versions of one file merged so that no side's text is lost (the rules every sync
merge uses, in a temporary index and in the working tree alike).

Notes are merged key by key (``core.mergedriver``); other text files line by line with
conflicting hunks kept as marked blocks; a file deleted on one side and changed on the other
is kept; two notes created at one path both stay (the second at a free path); a binary file
changed on both sides keeps this side's version (the other stays in its commit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.discovery import STATE_DIR, USAGE_DIR
from ..core.mergedriver import merge_lines, merge_notes

NOTE_SUFFIXES = (".md", ".markdown")
OWNED = (STATE_DIR, USAGE_DIR)  # folders vaultmem owns: never checked out, merged or committed


def is_owned(path: str) -> bool:
    """Whether a repository path lies in (or is) a folder vaultmem owns, at any depth, in any
    letter case (``.VAULTMEM/`` is ``.vaultmem/`` on macOS and Windows)."""
    return any(part.lower() in OWNED for part in path.split("/"))


def unsafe_name(name: str) -> bool:
    """A tree entry no checkout may hold: ``.git`` in any case (with the trailing dots and
    spaces Windows drops), ``.``, ``..``, empty, or a name with a slash or backslash."""
    return name.rstrip(". ").lower() in ("", ".git") or name in (".", "..") or "/" in name or "\\" in name


@dataclass
class Resolution:
    """The merged content (None: the file is gone on both sides), a second file to create
    (two notes created at one path), and whether conflicting text was kept as marked blocks."""

    data: bytes | None
    extra: tuple[str, bytes] | None = None
    conflicted: bool = False


def merge_three(path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None,
                taken: Callable[[str], bool]) -> Resolution:  # fmt: skip
    """Merge ``ours`` and ``theirs`` (changed from ``base``; None: absent) keeping all text."""
    if ours == theirs:
        return Resolution(ours)
    if ours is None or theirs is None:
        kept = ours if ours is not None else theirs
        if base is not None and kept == base:
            return Resolution(None)  # deleted on one side, untouched on the other
        return Resolution(kept)  # deletion loses to an edit
    if base == ours:
        return Resolution(theirs)
    if base == theirs:
        return Resolution(ours)
    try:
        b, o, t = ((x or b"").decode("utf-8") for x in (base, ours, theirs))
    except UnicodeDecodeError:
        return Resolution(ours, conflicted=True)
    if path.lower().endswith(NOTE_SUFFIXES):
        merged = merge_notes(b, o, t, path)
        if not merged.clean and base is None and merged.conflicts == ["id"]:
            return Resolution(ours, extra=(free_path(path, taken), theirs))
        return Resolution(merged.text.encode("utf-8", "surrogateescape"), conflicted=bool(merged.conflicts))
    text, n = merge_lines(b, o, t, path)
    return Resolution(text.encode("utf-8", "surrogateescape"), conflicted=bool(n))


def free_path(path: str, taken: Callable[[str], bool]) -> str:
    """``Title 2.md``, ``Title 3.md``, ... : the first one not taken."""
    stem, dot, ext = path.rpartition(".")
    if not dot:
        stem, ext = path, ""
    n = 2
    while taken(f"{stem} {n}{dot}{ext}"):
        n += 1
    return f"{stem} {n}{dot}{ext}"
