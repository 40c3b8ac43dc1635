"""Where a vault's derived indexes live, and the version of what they hold.

Each install (a HOME: its own key, ``core.ownkey``) keeps its own indexes of a vault, in
``.vaultmem/index/<key id>/``: an index is trusted only when this install wrote it, so two
installs serving one vault (two HOMEs, two services) each keep theirs instead of setting the
other's aside and rebuilding in turn. An index an older vaultmem of this install kept in
``.vaultmem/index/`` itself is moved into its folder once (``adopt``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..core import ownkey
from ..core.discovery import private_dir
from ..core.lock import WriterLock
from ..core.store import STATE_DIR
from .bm25 import SCHEMA_VERSION as BM25_VERSION
from .manifest import SCHEMA_VERSION as MANIFEST_VERSION

INDEX_DIR = "index"
# Bump when the on-disk layout or what is indexed changes: older indexes are rebuilt on open.
INDEX_VERSION = f"m{MANIFEST_VERSION}.b{BM25_VERSION}"
LEGACY = ("manifest.db", "manifest.db-wal", "manifest.db-shm", "bm25", "bm25.files.json")
log = logging.getLogger("vaultmem.index")


def index_dir(root: Path) -> Path:
    """The folder of this install's indexes of a vault (manifest, BM25)."""
    return root / STATE_DIR / INDEX_DIR / ownkey.key_id()


def index_version(title_from: str) -> str:
    """The version an index of notes titled by ``title_from`` records (titles are indexed: a
    new setting re-indexes)."""
    return f"{INDEX_VERSION}.{title_from}"


def adopt(root: Path) -> None:
    """Move the indexes an older vaultmem kept in ``.vaultmem/index/`` into this install's
    folder, when this install wrote them (their BM25 record is signed with its key) and no
    older watcher holds them; anything else there is left alone and never read."""
    from .ownfiles import signed_record

    old = root / STATE_DIR / INDEX_DIR
    new = index_dir(root)
    if (
        (new / "manifest.db").exists()
        or not (old / "manifest.db").is_file()
        or not signed_record(old / "bm25")
    ):
        return
    lock = WriterLock(old / "writer.lock")
    try:
        if not lock.acquire("index"):
            return  # an older vaultmem's watcher writes them: moved once it stops
        try:
            private_dir(new)
            for name in LEGACY:
                if (old / name).exists() and not (new / name).exists():
                    (old / name).rename(new / name)
        finally:
            lock.release()
        from .manifest import Manifest

        db = Manifest.unclaimed(new / "manifest.db")
        try:
            db.claim()
        finally:
            db.close()
    except OSError as e:  # a read-only vault: its indexes are rebuilt (or read) where this install keeps them
        log.info("%s: the indexes were not moved to %s (%s)", root, new, e)
