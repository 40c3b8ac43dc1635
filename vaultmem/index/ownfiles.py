"""Which files in an index folder this user's vaultmem wrote itself: a signed record of names,
sizes, times and hashes, kept beside the folder, so that a file planted there (a git checkout of
a remote's commit, a copied or unpacked folder, another local user) or torn by a crash is never
loaded. whoosh unpickles the newest table of contents it finds and the segments it names, so a
foreign ``_MAIN_999.toc`` or segment would run code.

The record is signed with this user's key (``ownkey``, kept outside every vault): a record
beside the files proves nothing unless this user's vaultmem signed it. Each file is recorded with
its size, modification time, change time (``st_ctime``, set by the kernel: nobody but root can
put it back after rewriting a file) and sha256, hashed when it was recorded. ``foreign`` checks
the signature, the owner (this user) and each file's size and times, and re-hashes the tables of
contents; ``foreign(deep=True)`` (doctor) re-hashes every file, which finds a segment torn by a
crash (zeros where data was) that kept its size and times.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path

from ..core import ownkey
from ..core.store import atomic_write

SKIP = re.compile(r"(WRITELOCK|\.toc\.[0-9.]+$|\.tmp$)")  # lock and temp files whoosh never reads back
TOC = re.compile(r"^_[A-Za-z0-9]+_[0-9]+\.toc$")
VERSION = 2  # 2: signed, with change times (records of version 1 are not trusted: one rebuild)
MAX_RECORD = 16 << 20  # bytes: a record larger than this is not vaultmem's


def record_path(folder: Path) -> Path:
    return folder.with_name(folder.name + ".files.json")


def _listing(folder: Path) -> dict[str, os.stat_result]:
    try:
        return {e.name: e.stat(follow_symlinks=False) for e in os.scandir(folder) if not SKIP.search(e.name)}
    except FileNotFoundError:
        return {}


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _body(files: dict[str, list]) -> bytes:
    return json.dumps({"v": VERSION, "files": files}, sort_keys=True, separators=(",", ":")).encode()


def _read(folder: Path) -> dict[str, list] | None:
    """The files the record names (name -> [size, mtime, ctime, sha256]) when this user's
    vaultmem signed it; None for a missing, unreadable, malformed or unsigned record (it is
    untrusted input: deep nesting, huge size and bad types included)."""
    path = record_path(folder)
    try:
        if path.stat().st_size > MAX_RECORD:
            return None
        data = json.loads(path.read_bytes())
        files, mac = data["files"], data["mac"]
        if data.get("v") != VERSION or not isinstance(files, dict):
            return None
        if not all(_valid(entry) for entry in files.values()):
            return None
        return files if ownkey.signed(_body(files), mac) else None
    except (OSError, ValueError, RecursionError, TypeError, KeyError, AttributeError):
        return None


def signed_record(folder: Path) -> bool:
    """Whether the record of ``folder`` is this install's, signed with its key."""
    return _read(folder) is not None


def legacy(folder: Path) -> bool:
    """Whether the record is an unsigned one an older vaultmem wrote (name -> [size, time, hash])."""
    try:
        path = record_path(folder)
        data = json.loads(path.read_bytes()) if path.stat().st_size <= MAX_RECORD else None
    except (OSError, ValueError, RecursionError):
        return False
    return (
        isinstance(data, dict)
        and bool(data)
        and all(isinstance(v, list) and len(v) == 3 for v in data.values())
    )


def _valid(entry: object) -> bool:
    return (isinstance(entry, list) and len(entry) == 4 and all(isinstance(x, int) for x in entry[:3])
            and isinstance(entry[3], str))  # fmt: skip


def record(folder: Path, written: set[str]) -> None:
    """Sign the record of ``folder``: the files ``written`` (what this user's vaultmem just wrote
    there: a commit's table of contents and segment) and those the record held before, unchanged
    since. Any other file (dropped there meanwhile by a sync client, an agent, anyone) is left out,
    so the next open finds it foreign; a file already recorded keeps its hash (none is hashed twice)."""
    old = _read(folder) or {}
    out: dict[str, list] = {}
    for name, st in sorted(_listing(folder).items()):
        prev = old.get(name)
        if prev is not None and prev[:3] == _stamp(st):
            out[name] = prev
        elif name in written and stat.S_ISREG(st.st_mode):
            out[name] = [*_stamp(st), file_sha256(folder / name)]
    body = _body(out)
    data = {"v": VERSION, "files": out, "mac": ownkey.sign(body)}
    atomic_write(record_path(folder), json.dumps(data, separators=(",", ":")))


def _owned(folder: Path) -> bool:
    """Whether ``folder`` and the folders up to the vault's state folder belong to this user."""
    uid = os.geteuid()
    for f in (folder, *folder.parents):
        try:
            if f.lstat().st_uid != uid:
                return False
        except OSError:
            return False
        if f.name == ".vaultmem":
            break
    return True


def foreign(folder: Path, deep: bool = False) -> list[str]:
    """Files of ``folder`` this user's vaultmem did not write (or that changed since), sorted:
    all of them when the record is not signed by this user or the folder is another user's.
    ``deep``: re-hash every file (else only the tables of contents)."""
    listing = _listing(folder)
    if not listing:
        return []
    known = _read(folder) if _owned(folder) else None
    if known is None:
        return sorted(listing)
    bad = []
    uid = os.geteuid()
    for name, st in listing.items():
        prev = known.get(name)
        if prev is None or prev[:3] != _stamp(st) or not stat.S_ISREG(st.st_mode) or st.st_uid != uid:
            bad.append(name)
        elif (deep or TOC.match(name)) and file_sha256(folder / name) != prev[3]:
            bad.append(name)
    return sorted(bad)
