"""Bringing the working tree from one commit to another file by file, never over unsaved work.

For each file that differs between the two commits, under the note's lock: when the file on
disk is still exactly the old commit's version it is replaced by the new one (or removed);
when someone changed it since (an editor, an agent, a hook), the three versions are merged
into it so both the local change and the incoming one stay. A file being written right now
(size or time stamp still moving) is left alone and the move is reported unfinished: the
branch then stays where it was, and the next sync commits what is on disk and merges again.
Nothing here is ``checkout``, ``reset --hard`` or ``clean``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import Conflict, VaultError
from ..core.lock import NoteBusy, note_lock
from ..core.store import BeingWritten, atomic_write, remove_checked, wait_settled
from .errors import GitError
from .threeway import is_owned, merge_three

if TYPE_CHECKING:
    from .git import Git


@dataclass
class Moved:
    """What moving the working tree did."""

    touched: set[str] = field(default_factory=set)  # repository paths written or removed
    merged: list[str] = field(default_factory=list)  # local changes merged with incoming ones
    conflicts: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)  # being written: left for the next sync

    @property
    def complete(self) -> bool:
        return not self.busy


@dataclass(frozen=True)
class Change:
    path: str
    old_mode: str
    new_mode: str
    old: str | None  # blob sha (None: absent)
    new: str | None


def changes(git: Git, old: str, new: str) -> list[Change]:
    """Files that differ between two commits (plumbing: no diff drivers, no renames)."""
    out = git.run("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", old, new).stdout
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    rows, zero = [], "0" * 40
    for i in range(0, len(parts) - 1, 2):
        if not parts[i].startswith(":"):
            break
        old_mode, new_mode, a, b, _ = parts[i][1:].split(" ")
        rows.append(
            Change(parts[i + 1], old_mode, new_mode, None if a == zero else a, None if b == zero else b)
        )
    return rows


def move(git: Git, top: Path, old: str, new: str) -> Moved:
    """Bring the files of the work tree at ``top`` from commit ``old`` to ``new`` (see above)."""
    rows = [
        c for c in changes(git, old, new) if not is_owned(c.path) and "160000" not in (c.old_mode, c.new_mode)
    ]
    shas = sorted({s for c in rows for s in (c.old, c.new) if s})
    blobs = {s: b for s, b in zip(shas, git.blobs(shas)) if b is not None}
    if len(blobs) < len(shas):  # a missing object is not a missing file: nothing is moved
        raise GitError(
            f"{len(shas) - len(blobs)} git object(s) missing from {top} (a partial or damaged clone; "
            "git fsck tells more): no file was changed"
        )
    done = Moved()
    for c in rows:
        try:
            _move_one(top, c, blobs, done)
        except (BeingWritten, NoteBusy):
            done.busy.append(c.path)
    if done.touched:
        os.sync()  # every file durable at once (one flush, not two fsyncs a file) before the branch moves
    return done


def _move_one(top: Path, c: Change, blobs: dict[str, bytes], done: Moved) -> None:
    full = _inside(top, c.path)
    old = blobs[c.old] if c.old else None
    new = blobs[c.new] if c.new else None
    links = "120000" in (c.old_mode, c.new_mode)
    with note_lock(full, wait=2.0):
        disk = _read(full, links)
        if disk == old:
            result, extra, conflicted = new, None, False
        else:
            res = merge_three(c.path, old, disk, new, taken=lambda p: os.path.lexists(top / p))
            result, extra, conflicted = res.data, res.extra, res.conflicted
            done.merged.append(c.path)
        if result == disk:
            return
        settled = wait_settled(full, c.path) if os.path.lexists(full) and not full.is_symlink() else None
        if _read(full, links) != disk:
            raise BeingWritten(f"{c.path}: the note is being written")
        _put(top, full, result, c.new_mode, settled, c.path)
    done.touched.add(c.path)
    if conflicted:
        done.conflicts.append(c.path)
    if extra is not None:
        _put(top, _inside(top, extra[0]), extra[1], c.new_mode, None, extra[0])
        done.touched.add(extra[0])


def _read(full: Path, links: bool) -> bytes | None:
    """The file's bytes (a symlink's target when the commits hold a link there; a symlink
    where they hold a file counts as no file: it is replaced, never followed)."""
    try:
        if full.is_symlink():
            return os.readlink(full).encode("utf-8", "surrogateescape") if links else None
        return full.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return b""


def _put(top: Path, full: Path, data: bytes | None, mode: str, settled, label: str) -> None:
    """Write (or remove, ``data`` None) one file; ``settled``: its signature, re-checked last."""
    if data is None:
        if settled is not None:
            remove_checked(full, settled, label)  # a save landing after the check is put back
        else:
            full.unlink(missing_ok=True)
        _prune(full.parent, top)
        return
    if mode == "120000":
        tmp = full.with_name(f".{full.name}.vaultmem-link")
        tmp.unlink(missing_ok=True)
        os.symlink(data.decode("utf-8", "surrogateescape"), tmp)
        os.replace(tmp, full)
        return
    if full.is_symlink():
        full.unlink()  # replaced, never followed
    try:  # no file at the check: one created since (someone's new note) is never replaced
        atomic_write(full, data, create_only=settled is None, unchanged=settled, label=label, durable=False)
    except BeingWritten:
        raise
    except Conflict:
        raise BeingWritten(f"{label}: the note was created meanwhile; nothing was written") from None
    if mode == "100755":
        os.chmod(full, os.stat(full).st_mode | 0o111)


def _prune(folder: Path, top: Path) -> None:
    """Remove folders a deletion left empty (as git does), never ``top`` itself."""
    try:
        while folder != top and top in folder.parents and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    except OSError:
        pass


def _inside(top: Path, path: str) -> Path:
    """The file for a repository path; refuses a folder on the way that leads out of ``top``."""
    full = top / path
    current = top
    for part in Path(path).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise VaultError(f"{path}: {current.relative_to(top)} is not a plain folder; not writing there")
    full.parent.mkdir(parents=True, exist_ok=True)
    return full
