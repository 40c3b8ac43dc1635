"""The index manifest (SQLite in ``.vaultmem/index/``): what is indexed, and the vectors.

Tables: ``notes`` (one row per indexed note: stat, content hash, metadata, link list),
``chunks`` (path, chunk number, chunk hash) and ``embeddings`` (model, chunk hash -> float32
vector), so unchanged text is never embedded twice, even after a move. ``state`` holds the
schema version, the model name and a ``dirty`` flag set while a batch is being applied.

A manifest is opened only when this install made it: ``state`` holds a random ``nonce`` and
``owner``, this install's signature of it (``core.ownkey``), written when the database is
created. One that a copied vault, another install or anything else brings (a valid SQLite file
of the same tables included) is set aside and the indexes rebuilt; the rows themselves are not
signed one by one (a writer holding this user's own manifest could change them).
"""

from __future__ import annotations

import builtins
import json
import logging
import secrets
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import ownkey
from ..core.discovery import owner_only, private_dir
from ..core.errors import VaultError

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: reading records needs neither (the warm-up answer)

    from ..core.note import Note

log = logging.getLogger("vaultmem.index")
SCHEMA_VERSION = "4"  # 2: subject key, validity and dates (issue 13); 3: Obsidian links and titles
# (issue 27); 4: a note's lead line and the contextual vectors (``contexts``, issue 37)
SCHEMA = """
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS notes (
    path TEXT PRIMARY KEY, id TEXT, hash TEXT NOT NULL, mtime_ns INTEGER, size INTEGER,
    title TEXT, type TEXT, status TEXT, importance INTEGER, scope TEXT, source TEXT,
    origin TEXT, created TEXT, updated TEXT, expires TEXT, superseded_by TEXT,
    tags TEXT, aliases TEXT, context TEXT, links TEXT,
    subject TEXT, valid_from TEXT, valid_until TEXT, dates TEXT, lead TEXT
);
CREATE INDEX IF NOT EXISTS notes_id ON notes(id);
CREATE TABLE IF NOT EXISTS chunks (path TEXT, n INTEGER, chash TEXT, PRIMARY KEY (path, n));
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT, chash TEXT, vec BLOB, PRIMARY KEY (model, chash)
);
CREATE TABLE IF NOT EXISTS errors (path TEXT PRIMARY KEY, reason TEXT);
CREATE TABLE IF NOT EXISTS contexts (path TEXT PRIMARY KEY, khash TEXT, chash TEXT);
"""
NOTE_COLUMNS = (
    "path", "id", "hash", "mtime_ns", "size", "title", "type", "status", "importance", "scope",
    "source", "origin", "created", "updated", "expires", "superseded_by", "tags", "aliases",
    "context", "links", "subject", "valid_from", "valid_until", "dates", "lead",
)  # fmt: skip
ADDED_COLUMNS = ("subject", "valid_from", "valid_until", "dates", "lead")  # added by schemas 2 and 4


NOT_OURS = "not made by this install of vaultmem: copied, planted or another install's"


def _owner_body(nonce: str) -> bytes:
    return b"vaultmem manifest\0" + nonce.encode()


@dataclass(frozen=True)
class Record:
    """The indexed metadata of one note (what recall filters and the graph need)."""

    path: str
    id: str | None
    hash: str
    mtime_ns: int
    size: int
    title: str
    type: str | None
    status: str
    importance: int
    scope: str
    source: str | None
    origin: str | None
    created: str
    updated: str
    expires: str | None
    superseded_by: str | None
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    context: tuple[str, ...]
    links: tuple[tuple[str, str], ...]  # (target, kind)
    subject: str | None = None  # frontmatter ``key``: what fact this memory states
    valid_from: str | None = None
    valid_until: str | None = None
    dates: tuple[str, ...] = ()  # ISO days the note names: ``date``, title/first line, body
    lead: str = ""  # the body's first line (``context.lead``): what a linked note's context vector reads

    @property
    def key(self) -> str:
        return self.id or self.path

    @classmethod
    def from_note(cls, note: Note, mtime_ns: int, size: int) -> Record:
        from ..core import notedates  # its time expressions compile ~25 regexes: only indexing needs them
        from .context import lead

        links = tuple(dict.fromkeys((link.target, link.kind) for link in note.links))
        return cls(
            note.path, note.id, note.hash, mtime_ns, size, note.title, note.type, note.status,
            note.importance, note.scope, note.source, note.origin, note.created, note.updated,
            note.expires, note.superseded_by, note.tags, note.aliases, note.context, links,
            **notedates.fields(note.meta, note.title, note.body), lead=lead(note.body),
        )  # fmt: skip

    def row(self) -> tuple:
        values = [getattr(self, c) for c in NOTE_COLUMNS]
        for i, c in enumerate(NOTE_COLUMNS):
            if c in ("tags", "aliases", "context", "links", "dates"):
                values[i] = json.dumps(values[i], ensure_ascii=False)
        return tuple(values)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Record:
        """The record of a row of ``NOTE_COLUMNS`` (the dataclass's field order)."""
        values = list(row)
        for i in _LIST_COLUMNS:
            values[i] = _json_tuple(values[i])
        values[_LINKS] = tuple(tuple(x) for x in values[_LINKS])
        values[-1] = values[-1] or ""  # lead: NULL in a row an older schema added the column to
        return cls(*values)


_LIST_COLUMNS = tuple(NOTE_COLUMNS.index(c) for c in ("tags", "aliases", "context", "links", "dates"))
_LINKS = NOTE_COLUMNS.index("links")


def _json_tuple(text: str | None) -> tuple:
    """A stored JSON list as a tuple (most lists are empty: no parse for those)."""
    return () if not text or text == "[]" else tuple(json.loads(text))


def read_only(path: Path) -> sqlite3.Connection:
    """A SQLite file opened for reading only, also on a read-only disk: with its write-ahead log
    when SQLite can read it there, else as the file holds it (``immutable``: a log without its
    shared-memory file cannot be read where nothing can be written)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False,
                             timeout=30)  # fmt: skip
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return db
    except sqlite3.OperationalError:
        if not path.exists():
            raise
    return sqlite3.connect(
        f"file:{path}?immutable=1", uri=True, isolation_level=None, check_same_thread=False
    )


SCHEMA_WAIT = 10.0  # s a read waits for the schema of a manifest a first index just created (2 s ran out on a loaded machine)
BUSY_WAIT = 30.0  # s an opener waits for another one creating the manifest (sqlite's own timeout)


def _busy(e: sqlite3.DatabaseError) -> bool:
    """Whether SQLite failed only because another connection holds the database (busy, locked)."""
    return (getattr(e, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _foreign(path: Path, e: Exception) -> VaultError:
    """The one line for a manifest that is not vaultmem's."""
    return VaultError(f"{path} is not a vaultmem index ({e}); vaultmem index sets it aside and rebuilds")


class Manifest:
    """The SQLite manifest of one vault's indexes."""

    def __init__(self, path: Path, readonly: bool = False):
        """Open (creating it unless ``readonly``) the manifest at ``path``."""
        self.path = path
        if readonly:
            self._open_readonly(path)
            return
        private_dir(path.parent)
        try:
            self._open(path)
        except sqlite3.DatabaseError as e:  # not a database, or not vaultmem's: set it aside, start anew
            self.db.close()
            if _busy(e):  # another opener still holds it: it is vaultmem's, never set aside
                raise VaultError(f"{path} stayed locked for {BUSY_WAIT:g} s; try again") from None
            aside = path.with_name(path.name + ".foreign")
            for suffix in ("", "-wal", "-shm"):
                src = path.with_name(path.name + suffix)
                if src.exists():
                    src.replace(aside.with_name(aside.name + suffix))
            log.warning(
                "%s is not a vaultmem index (%s): set aside as %s, the indexes are rebuilt",
                path,
                e,
                aside.name,
            )
            self._open(path)
            self.set("dirty", "1")

    def _open_readonly(self, path: Path) -> None:
        """Open the manifest read-only; fail in one line unless this install's vaultmem made it.
        A database with no table yet, or no state yet, is one a first index has just created: its
        schema and its claim follow within moments, so the read waits for them (up to
        ``SCHEMA_WAIT`` s, a new connection each look) instead of calling it foreign."""
        deadline = time.monotonic() + SCHEMA_WAIT
        while True:
            try:
                self.db = read_only(path)  # also on a read-only disk
            except sqlite3.DatabaseError as e:  # not a database at all
                raise _foreign(path, e) from None
            self.db.row_factory = sqlite3.Row
            try:
                if not self.db.execute("SELECT value FROM state LIMIT 1").fetchall():
                    raise sqlite3.DatabaseError("no state yet")
                if not self._claimed():
                    raise sqlite3.DatabaseError(NOT_OURS)
                return
            except sqlite3.DatabaseError as e:
                retry = (self._empty() or str(e) == "no state yet") and time.monotonic() < deadline
                self.db.close()
                if not retry:
                    raise _foreign(path, e) from None
            time.sleep(0.05)

    def _empty(self) -> bool:
        """Whether the database holds no table at all (False when it is not a database)."""
        try:
            return not self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        except sqlite3.DatabaseError:
            return False

    def _open(self, path: Path) -> None:
        """Open the manifest at ``path``, creating it when it has no table yet. A new manifest's
        tables and claim are written in one transaction, so another opener (a thread of the
        service, another process) sees either nothing or a claimed manifest, never one half made
        that it would take for foreign; while another opener creates it (its switch to WAL does
        not wait for a lock), this one waits, up to ``BUSY_WAIT`` seconds."""
        owner_only(path)
        deadline = time.monotonic() + BUSY_WAIT
        while True:
            self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
            self.db.row_factory = sqlite3.Row
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                if not self._tables():  # new: made (or found made, by another opener) in one transaction
                    self._create()
                break
            except sqlite3.OperationalError as e:
                if not _busy(e) or time.monotonic() >= deadline:
                    raise
                self.db.close()
            time.sleep(0.05)
        tables = self._tables()
        if tables and "state" not in tables:
            raise sqlite3.DatabaseError(f"other tables: {', '.join(sorted(tables)[:3])}")
        if not self._claimed():
            raise sqlite3.DatabaseError(NOT_OURS)
        self.db.executescript(SCHEMA)  # the tables an older schema lacks
        have = {row[1] for row in self.db.execute("PRAGMA table_info(notes)")}
        for column in ADDED_COLUMNS:
            if column not in have:  # an index of schema 1: re-indexed (INDEX_VERSION changed)
                self.db.execute(f"ALTER TABLE notes ADD COLUMN {column} TEXT")
        if self.get("schema") is None:
            self.set("schema", SCHEMA_VERSION)

    def _tables(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _create(self) -> None:
        """The tables and this install's claim of a new manifest, in one transaction (none made
        when another opener made them first)."""
        self.db.execute("BEGIN IMMEDIATE")  # waits for another opener's creation
        try:
            if not self._tables():
                for statement in filter(str.strip, SCHEMA.split(";")):
                    self.db.execute(statement)
                self.claim()
                self.set("schema", SCHEMA_VERSION)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    @classmethod
    def unclaimed(cls, path: Path) -> Manifest:
        """The manifest at ``path`` opened as it is, without the owner check (``layout.adopt``
        claims the one this install wrote before manifests were claimed)."""
        self = cls.__new__(cls)
        self.path = path
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
        self.db.row_factory = sqlite3.Row
        return self

    def _claimed(self) -> bool:
        """Whether this install made the database (its signature of the database's nonce)."""
        nonce, owner = self.get("nonce"), self.get("owner")
        return bool(nonce) and ownkey.signed(_owner_body(nonce or ""), owner)

    def claim(self) -> None:
        """Mark the database as this install's (a new one, or one it wrote before manifests were
        claimed: ``layout.adopt``)."""
        nonce = secrets.token_hex(16)
        self.set("nonce", nonce)
        self.set("owner", ownkey.sign(_owner_body(nonce)))

    def close(self) -> None:
        self.db.close()

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM state WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM state WHERE key=?", (key,))
        else:
            self.db.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (key, value))

    def paths_with_status(self, status: str) -> list[str]:
        """Paths of the indexed notes with this status (e.g. ``conflict`` after a git merge)."""
        return [
            r[0] for r in self.db.execute("SELECT path FROM notes WHERE status = ? ORDER BY path", (status,))
        ]

    def records(self, paths: Iterable[str] | None = None) -> dict[str, Record]:
        """Indexed records (all, or those of ``paths`` that are indexed)."""
        cols = self._columns()
        if paths is None:
            rows = self.db.execute(f"SELECT {cols} FROM notes ORDER BY path").fetchall()
        else:
            wanted, rows = list(paths), []
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                rows += self.db.execute(
                    f"SELECT {cols} FROM notes WHERE path IN ({','.join('?' * len(part))})", part
                ).fetchall()
        return {r[0]: Record.from_row(r) for r in rows}

    def _columns(self) -> str:
        """The notes columns to select: one an older schema lacks reads NULL (a read-only open,
        e.g. the doctor's, of an index the next sync re-indexes, adds no column)."""
        if not hasattr(self, "_cols"):
            have = {row[1] for row in self.db.execute("PRAGMA table_info(notes)")}
            self._cols = ", ".join(c if c in have else f"NULL AS {c}" for c in NOTE_COLUMNS)
        return self._cols

    def stating(self) -> bool:
        """Whether any indexed note has a subject ``key`` or a ``supersedes`` link (a light
        query: what the vault's rules act on; may say yes for a target text of that name)."""
        q = "SELECT 1 FROM notes WHERE subject IS NOT NULL OR links LIKE '%\"supersedes\"%' LIMIT 1"
        return self.db.execute(q).fetchone() is not None

    def stats(self, paths: Iterable[str] | None = None) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of the indexed notes (all, or those of ``paths``), by path: all a
        reconcile compares before it reads a file (one light query; no records are built)."""
        cur = self.db.cursor()
        cur.row_factory = None
        if paths is None:
            return {p: (m, s) for p, m, s in cur.execute("SELECT path, mtime_ns, size FROM notes")}
        wanted, out = list(paths), dict[str, tuple[int, int]]()
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT path, mtime_ns, size FROM notes WHERE path IN ({','.join('?' * len(part))})"
            out.update((p, (m, s)) for p, m, s in cur.execute(q, part))
        return out

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM notes").fetchone()[0]

    def counts_by_type_status(self) -> dict[tuple[str, str], int]:
        """How many indexed notes carry each (type, status); a note without a type counts as ``note``."""
        rows = self.db.execute("SELECT COALESCE(NULLIF(type, ''), 'note'), COALESCE(status, 'active'), COUNT(*) "
                               "FROM notes GROUP BY 1, 2")  # fmt: skip
        return {(t, st): n for t, st, n in rows}

    def duplicate_ids(self) -> dict[str, list[str]]:
        """Ids that more than one note carries (case-insensitive), with their paths."""
        rows = self.db.execute("SELECT lower(id), path FROM notes WHERE id IS NOT NULL AND id <> '' AND lower(id) IN "
                               "(SELECT lower(id) FROM notes WHERE id IS NOT NULL AND id <> '' GROUP BY lower(id) "
                               "HAVING COUNT(*) > 1) ORDER BY lower(id), path").fetchall()  # fmt: skip
        out: dict[str, list[str]] = {}
        for key, path in rows:
            out.setdefault(key, []).append(path)
        return out

    def errors(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT path, reason FROM errors").fetchall())

    def cached_chunks(self, model: str, chashes: Iterable[str]) -> builtins.set[str]:
        """Those chunk hashes that have a stored vector (without reading the vectors)."""
        wanted = list(dict.fromkeys(chashes))
        found: builtins.set[str] = builtins.set()
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT chash FROM embeddings WHERE model=? AND chash IN ({','.join('?' * len(part))})"
            found.update(row[0] for row in self.db.execute(q, (model, *part)))
        return found

    def pending_vectors(self, limit: int | None = None) -> list[str]:
        """Indexed notes without chunk rows: indexed for keywords only (a first index, a large
        batch), their vectors still to be filled in (``Indexer.fill``): the most important and
        newest first (what recall most often wants is embedded first)."""
        q = ("SELECT path FROM notes n WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.path = n.path) "
             "ORDER BY importance DESC, updated DESC, path")  # fmt: skip
        args: tuple = ()
        if limit is not None:
            q, args = q + " LIMIT ?", (limit,)
        return [r[0] for r in self.db.execute(q, args)]

    def vector_counts(self) -> tuple[int, int]:
        """(notes with vectors, notes indexed)."""
        done = self.db.execute("SELECT COUNT(DISTINCT path) FROM chunks").fetchone()[0]
        return done, self.count()

    def with_chunks(self, paths: Iterable[str]) -> builtins.set[str]:
        """Those of these paths that have chunk rows (vectors)."""
        wanted, out = list(paths), builtins.set[str]()
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT DISTINCT path FROM chunks WHERE path IN ({','.join('?' * len(part))})"
            out.update(r[0] for r in self.db.execute(q, part))
        return out

    def hashes(self, paths: Iterable[str]) -> dict[str, str]:
        """The content hash of each of these paths that is indexed."""
        wanted, out = list(paths), dict[str, str]()
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT path, hash FROM notes WHERE path IN ({','.join('?' * len(part))})"
            out.update((p, h) for p, h in self.db.execute(q, part))
        return out

    def commit_chunks(
        self, chunk_rows: dict[str, list[str]], vectors: dict[str, np.ndarray], model: str
    ) -> None:
        """Give indexed notes their chunk rows and the new vectors those use, in one
        transaction (``Indexer.fill``: nothing else of the notes changes)."""
        import numpy as np

        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for path, chashes in chunk_rows.items():
                db.execute("DELETE FROM chunks WHERE path=?", (path,))
                db.executemany(
                    "INSERT INTO chunks VALUES (?,?,?)", [(path, n, h) for n, h in enumerate(chashes)]
                )
            db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?,?,?)",
                [(model, h, v.astype(np.float32).tobytes()) for h, v in vectors.items()],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def commit_batch(
        self,
        upserts: list[Record],
        chunk_rows: dict[str, list[str]],
        new_vectors: dict[str, np.ndarray],
        deletes: list[str],
        errors: dict[str, str],
        model: str,
        prune: bool = True,
    ) -> None:
        """Apply one batch in a single transaction and clear the dirty flag. ``prune``: drop
        vectors no chunk uses any more (the last commit of a sync: earlier ones may hold
        vectors later notes of the same sync reuse)."""
        import numpy as np

        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for path in deletes:
                db.execute("DELETE FROM notes WHERE path=?", (path,))
                db.execute("DELETE FROM chunks WHERE path=?", (path,))
            marks = ",".join("?" * len(NOTE_COLUMNS))
            db.executemany(
                f"INSERT OR REPLACE INTO notes ({', '.join(NOTE_COLUMNS)}) VALUES ({marks})",
                [r.row() for r in upserts],
            )  # columns named: a table an ALTER grew orders them its way
            for path, chashes in chunk_rows.items():
                db.execute("DELETE FROM chunks WHERE path=?", (path,))
                db.executemany(
                    "INSERT INTO chunks VALUES (?,?,?)", [(path, n, h) for n, h in enumerate(chashes)]
                )
            db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?,?,?)",
                [(model, h, v.astype(np.float32).tobytes()) for h, v in new_vectors.items()],
            )
            for path in set(deletes) | {r.path for r in upserts}:
                db.execute("DELETE FROM errors WHERE path=?", (path,))
            db.executemany("INSERT OR REPLACE INTO errors VALUES (?,?)", list(errors.items()))
            if prune and (deletes or chunk_rows):
                db.execute(
                    "DELETE FROM embeddings WHERE model=? AND chash NOT IN (SELECT chash FROM chunks)"
                    " AND chash NOT IN (SELECT chash FROM contexts)",
                    (model,),
                )
            db.execute("DELETE FROM embeddings WHERE model<>?", (model,))
            db.execute("INSERT OR REPLACE INTO state VALUES ('model', ?)", (model,))
            db.execute("DELETE FROM state WHERE key='dirty'")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def clear_errors(self, paths: list[str]) -> None:
        """Forget the parse errors of ``paths`` (files that are gone)."""
        self.db.executemany("DELETE FROM errors WHERE path=?", [(p,) for p in paths])

    def forget_notes(self) -> None:
        """Drop what is indexed (not the stored vectors), so the next sync re-indexes all."""
        self.db.execute("DELETE FROM notes")
        self.db.execute("DELETE FROM chunks")
        self.db.execute("DELETE FROM errors")
        self.db.execute("DELETE FROM contexts")

    def update_stats(self, stats: dict[str, tuple[int, int]]) -> None:
        """Record new mtime/size for files whose content hash did not change."""
        self.db.executemany(
            "UPDATE notes SET mtime_ns=?, size=? WHERE path=?",
            [(m, s, p) for p, (m, s) in stats.items()],
        )

    def vectors(self, model: str, paths: Iterable[str] | None = None) -> tuple[list[str], np.ndarray]:
        """(path per row, float32 matrix) of chunk vectors (all, or of ``paths``), grouped by path.

        Rows are copied one by one into a preallocated matrix: the peak is the matrix, not
        the matrix plus every row's bytes object plus their join (at 100k chunks ~150 MB
        against ~450 MB)."""
        import numpy as np

        sql = "SELECT c.path, e.vec FROM chunks c JOIN embeddings e ON e.chash=c.chash AND e.model=? "
        if paths is None:
            n = self.db.execute("SELECT COUNT(*) FROM chunks c JOIN embeddings e ON e.chash=c.chash AND e.model=?",
                                (model,)).fetchone()[0]  # fmt: skip
            parts: list[Any] = [self.db.execute(sql + "ORDER BY c.path, c.n", (model,))]
        else:
            wanted, parts = sorted(paths), []
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                q = sql + f"WHERE c.path IN ({','.join('?' * len(part))}) ORDER BY c.path, c.n"
                parts.append(self.db.execute(q, (model, *part)).fetchall())
            n = sum(len(p) for p in parts)
        row_paths: list[str] = []
        matrix: np.ndarray | None = None
        for rows in parts:
            for path, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if matrix is None:
                    matrix = np.empty((n, len(vec)), dtype=np.float32)
                if len(row_paths) == n:  # rows added since the count (another connection wrote)
                    matrix = np.concatenate([matrix, vec[None, :]])
                    n += 1
                matrix[len(row_paths)] = vec
                row_paths.append(path)
        if matrix is None:
            return [], np.zeros((0, 0), dtype=np.float32)
        return row_paths, matrix[: len(row_paths)]

    def chunk_hashes(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path, chash in self.db.execute("SELECT path, chash FROM chunks ORDER BY path, n"):
            out.setdefault(path, []).append(chash)
        return out

    # ------------------------------------------------------------------ contextual vectors

    def contextual(self) -> bool:
        """Whether any note links in its frontmatter or has a contextual vector (a light
        query: a vault with neither has no contexts to plan)."""
        q = ("SELECT 1 WHERE EXISTS (SELECT 1 FROM notes WHERE links LIKE '%\"frontmatter\"]%') "
             "OR EXISTS (SELECT 1 FROM contexts)")  # fmt: skip
        return self.db.execute(q).fetchone() is not None

    def context_keys(self) -> dict[str, str]:
        """Path -> the key (``context.Plan``) of the contextual vector stored for it."""
        return dict(self.db.execute("SELECT path, khash FROM contexts").fetchall())

    def commit_contexts(self, rows: dict[str, tuple[str, str]], deletes: Iterable[str],
                        new_vectors: dict[str, np.ndarray], model: str) -> None:  # fmt: skip
        """Put in the contextual vectors of ``rows`` (path -> (key, chunk hash)), drop those of
        ``deletes``, keep the new vectors and prune the ones nothing uses, in one transaction."""
        import numpy as np

        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("DELETE FROM contexts WHERE path=?", [(p,) for p in deletes])
            db.executemany("INSERT OR REPLACE INTO contexts VALUES (?,?,?)",
                           [(p, k, h) for p, (k, h) in rows.items()])  # fmt: skip
            db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?,?,?)",
                [(model, h, v.astype(np.float32).tobytes()) for h, v in new_vectors.items()],
            )
            db.execute(
                "DELETE FROM embeddings WHERE model=? AND chash NOT IN (SELECT chash FROM chunks)"
                " AND chash NOT IN (SELECT chash FROM contexts)",
                (model,),
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def context_vectors(self, model: str) -> tuple[list[str], np.ndarray]:
        """(path per row, float32 matrix) of the contextual vectors, one row per note, by path."""
        import numpy as np

        rows = self.db.execute("SELECT c.path, e.vec FROM contexts c JOIN embeddings e ON e.chash=c.chash "
                               "AND e.model=? ORDER BY c.path", (model,)).fetchall()  # fmt: skip
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [r[0] for r in rows], np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
