"""Which files in an index folder vaultmem wrote itself: a record of names, sizes, times and
hashes, kept beside the folder, so that a file planted there (a git checkout of a remote's
commit, a copy) is never loaded. whoosh unpickles the newest table of contents it finds and the
segments it names, so a foreign ``_MAIN_999.toc`` would run code: tables of contents are checked
by hash, other files by size and time stamp (whoosh never rewrites a file in place).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path

from ..core.store import atomic_write

SKIP = re.compile(r"(WRITELOCK|\.toc\.[0-9.]+$|\.tmp$)")  # lock and temp files whoosh never reads back
TOC = re.compile(r"^_[A-Za-z0-9]+_[0-9]+\.toc$")


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


def _read(folder: Path) -> dict[str, list]:
    try:
        data = json.loads(record_path(folder).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def record(folder: Path) -> None:
    """Record every file of ``folder`` as vaultmem's own (after vaultmem wrote it); a file
    already recorded with the same size and time keeps its hash (none is hashed twice)."""
    old = _read(folder)
    out = {}
    for name, st in sorted(_listing(folder).items()):
        prev = old.get(name)
        same = isinstance(prev, list) and len(prev) == 3 and prev[:2] == [st.st_size, st.st_mtime_ns]
        out[name] = prev if same else [st.st_size, st.st_mtime_ns, file_sha256(folder / name)]
    atomic_write(record_path(folder), json.dumps(out, separators=(",", ":")))


def foreign(folder: Path) -> list[str]:
    """Files of ``folder`` vaultmem did not write (or that changed since), sorted."""
    known = _read(folder)
    bad = []
    for name, st in _listing(folder).items():
        prev = known.get(name)
        if not (isinstance(prev, list) and len(prev) == 3) or prev[:2] != [st.st_size, st.st_mtime_ns]:
            bad.append(name)
        elif TOC.match(name) and file_sha256(folder / name) != prev[2]:
            bad.append(name)
        elif not stat.S_ISREG(st.st_mode):  # a link (not followed) or anything but a plain file
            bad.append(name)
    return sorted(bad)
