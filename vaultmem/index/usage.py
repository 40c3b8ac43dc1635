"""The durable usage store (``.vaultmem-usage/usage.db``, SQLite WAL): what cannot be rebuilt
from the notes. A retrieval log (every memory surfaced by recall or wake), usefulness ratings
and knowledge gaps, and a daily snapshot of how many notes have each type and status (the
files only say what the counts are now). It lives in its own folder beside the disposable
``.vaultmem/`` (which can be deleted and rebuilt), and notes are never rewritten because they
were read. A store found at its old place, ``.vaultmem/usage.db``, is moved on first open.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.discovery import STATE_DIR, USAGE_DIR, owner_only, private_dir
from ..core.errors import ReadOnlyVault
from .manifest import read_only

log = logging.getLogger("vaultmem.index")

FILE = "usage.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS retrievals (key TEXT NOT NULL, at REAL NOT NULL, via TEXT);
CREATE INDEX IF NOT EXISTS retrievals_key ON retrievals(key);
CREATE TABLE IF NOT EXISTS ratings (key TEXT NOT NULL, useful INTEGER NOT NULL, at REAL NOT NULL, source TEXT);
CREATE INDEX IF NOT EXISTS ratings_key ON ratings(key);
CREATE TABLE IF NOT EXISTS gaps (text TEXT NOT NULL, query TEXT, at REAL NOT NULL, source TEXT);
CREATE TABLE IF NOT EXISTS counts (day TEXT NOT NULL, type TEXT NOT NULL, status TEXT NOT NULL, n INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS counts_day ON counts(day);
"""


@dataclass(frozen=True)
class Usage:
    """What the adaptive score needs to know about one memory."""

    count: int = 0  # times surfaced by recall or wake
    last_access: float | None = None
    useful: int = 0
    ratings: int = 0
    last_rating: float | None = None


def normalise_gap(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def store_path(root: Path) -> Path:
    """Where a vault's usage store lives, moving it there from ``.vaultmem/`` if it was kept
    there (before it had its own folder); the move holds a lock and copies through SQLite's
    backup, so a store in use or a crash half-way loses nothing."""
    path = root / USAGE_DIR / FILE
    old = root / STATE_DIR / FILE
    if path.exists() or not old.exists():
        return path
    from ..core.lock import named_lock

    with named_lock(root / STATE_DIR / "locks", "usage store move"):
        if old.exists() and not path.exists():
            _move_store(old, path)
    return path


def _move_store(old: Path, new: Path) -> None:
    private_dir(new.parent)
    part = new.with_name(new.name + ".part")
    part.unlink(missing_ok=True)
    owner_only(part)
    src, dst = sqlite3.connect(str(old), timeout=30), sqlite3.connect(str(part))
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    part.rename(new)
    for suffix in ("", "-wal", "-shm"):
        old.with_name(old.name + suffix).unlink(missing_ok=True)


class UsageStore:
    """Usage data of one vault."""

    @classmethod
    def of(cls, root: Path, readonly: bool = False) -> UsageStore:
        """The usage store of the vault at ``root`` (``readonly``: a vault this user cannot write)."""
        return cls(root / USAGE_DIR / FILE if readonly else store_path(root), readonly)

    def __init__(self, path: Path, readonly: bool = False):
        self.path, self.readonly = path, readonly
        if readonly:  # what it holds, read; nothing is logged, rating or reporting a gap is refused
            self.db = read_only(path) if path.exists() else sqlite3.connect(":memory:", isolation_level=None,
                                                                            check_same_thread=False)  # fmt: skip
            if not path.exists():
                self.db.executescript(SCHEMA)
            return
        private_dir(path.parent)
        try:
            self._open()
        except (
            sqlite3.DatabaseError
        ) as e:  # not a database: kept aside (it may be someone's data), a new one begins
            self.db.close()
            aside = path.with_name(f"{path.name}.foreign-{time.strftime('%Y%m%d-%H%M%S')}")
            for suffix in ("", "-wal", "-shm"):
                src = path.with_name(path.name + suffix)
                if src.exists():
                    src.replace(aside.with_name(aside.name + suffix))
            log.warning(
                "%s is not a vaultmem usage store (%s): kept aside as %s, a new one begins",
                path,
                e,
                aside.name,
            )
            self._open()

    def _open(self) -> None:
        owner_only(self.path)  # queries and ratings: SQLite gives its -wal/-shm files the same mode
        self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def _refuse(self, what: str) -> None:
        if self.readonly:
            raise ReadOnlyVault(f"{self.path.parent.parent} is read-only: {what} cannot be recorded")

    def log_retrievals(self, keys: Iterable[str], via: str, at: float | None = None) -> None:
        if self.readonly:  # a read of a read-only vault works; what it showed is not logged
            return
        at = time.time() if at is None else at
        self.db.executemany("INSERT INTO retrievals VALUES (?,?,?)", [(k, at, via) for k in keys])

    def rate(self, key: str, useful: bool, source: str | None = None, at: float | None = None) -> None:
        self._refuse("ratings")
        self.db.execute(
            "INSERT INTO ratings VALUES (?,?,?,?)",
            (key, int(useful), time.time() if at is None else at, source),
        )

    def add_gap(self, text: str, query: str | None = None, source: str | None = None) -> None:
        self._refuse("a knowledge gap")
        self.db.execute("INSERT INTO gaps VALUES (?,?,?,?)", (text.strip(), query, time.time(), source))

    def gaps(self) -> list[dict]:
        """Knowledge gaps aggregated by their normalised text, most frequent first."""
        groups: dict[str, dict] = {}
        for text, query, at in self.db.execute("SELECT text, query, at FROM gaps ORDER BY at"):
            g = groups.setdefault(normalise_gap(text), {"text": text, "count": 0, "queries": [], "last": at})
            g["count"] += 1
            g["last"] = at
            if query and query not in g["queries"]:
                g["queries"].append(query)
        return sorted(groups.values(), key=lambda g: (-g["count"], -g["last"]))

    def has_counts(self, day: str) -> bool:
        return self.db.execute("SELECT 1 FROM counts WHERE day = ? LIMIT 1", (day,)).fetchone() is not None

    def snapshot_counts(self, day: str, counts: dict[tuple[str, str], int]) -> bool:
        """Record the notes' counts by (type, status) for ``day`` (YYYY-MM-DD), once per day:
        False when that day has its snapshot already (the first one of a day stays)."""
        if self.readonly:
            return False
        self.db.execute("BEGIN IMMEDIATE")  # two processes snapshotting at once: one wins
        try:
            if self.has_counts(day):
                self.db.execute("ROLLBACK")
                return False
            rows = [(day, t, st, int(n)) for (t, st), n in sorted(counts.items())]
            self.db.executemany("INSERT INTO counts VALUES (?,?,?,?)", rows or [(day, "note", "active", 0)])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return True

    def count_history(self, days: int = 365) -> list[tuple[str, dict[tuple[str, str], int]]]:
        """The last ``days`` snapshots, oldest first: (day, {(type, status): n})."""
        out: dict[str, dict[tuple[str, str], int]] = {}
        for day, type_, status, n in self.db.execute(
            "SELECT day, type, status, MAX(n) FROM counts WHERE day IN "
            "(SELECT DISTINCT day FROM counts ORDER BY day DESC LIMIT ?) GROUP BY day, type, status ORDER BY day", (days,)
        ):  # fmt: skip
            row = out.setdefault(day, {})
            if n:
                row[(type_, status)] = n
        return list(out.items())

    def usage(self, keys: Iterable[str]) -> dict[str, Usage]:
        """Usage of each key (keys never seen are left out)."""
        return read_usage(self.db, keys)

    def dump(self) -> dict:
        """Everything, for ``vaultmem export``."""
        return {
            "retrievals": [list(r) for r in self.db.execute("SELECT key, at, via FROM retrievals")],
            "ratings": [list(r) for r in self.db.execute("SELECT key, useful, at, source FROM ratings")],
            "gaps": [list(r) for r in self.db.execute("SELECT text, query, at, source FROM gaps")],
            "counts": [list(r) for r in self.db.execute("SELECT day, type, status, n FROM counts")],
        }

    def load(self, data: dict) -> int:
        """Merge a dump (rows already present are not duplicated); returns rows added."""
        self._refuse("a backup's usage")
        added = 0
        self.db.execute("BEGIN")
        try:
            for table, cols in (("retrievals", 3), ("ratings", 4), ("gaps", 4), ("counts", 4)):
                existing = {tuple(r) for r in self.db.execute(f"SELECT * FROM {table}")}
                for row in data.get(table) or []:
                    row = tuple(row)
                    if len(row) != cols or row in existing:
                        continue
                    self.db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * cols)})", row)
                    existing.add(row)
                    added += 1
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return added


def read_usage(db: sqlite3.Connection, keys: Iterable[str]) -> dict[str, Usage]:
    """Usage of each key in a usage store's database (keys never seen are left out; a
    read-only connection will do: the keyword answer reads it so)."""
    wanted = list(dict.fromkeys(keys))
    out: dict[str, dict] = {}
    for i in range(0, len(wanted), 500):
        part = wanted[i : i + 500]
        marks = ",".join("?" * len(part))
        for key, count, last in db.execute(
            f"SELECT key, COUNT(*), MAX(at) FROM retrievals WHERE key IN ({marks}) GROUP BY key", part
        ):
            out.setdefault(key, {})["count"], out[key]["last_access"] = count, last
        for key, useful, total, last in db.execute(
            f"SELECT key, SUM(useful), COUNT(*), MAX(at) FROM ratings WHERE key IN ({marks}) GROUP BY key",
            part,
        ):
            out.setdefault(key, {}).update(useful=useful, ratings=total, last_rating=last)
    return {k: Usage(**v) for k, v in out.items()}
