"""The one fan-out point: applies a batch of file changes to the manifest, BM25 and vectors.

``Indexer.sync(paths)`` looks at each path on disk (stat first, hash only what changed),
parses what changed, embeds only chunks whose text has no stored vector, then writes BM25
and the manifest. The manifest is committed last in one transaction; a ``dirty`` flag
set before the BM25 write lets the next open detect and repair an interrupted batch.

A big batch can be indexed for keywords first (``sync(vectors=False)``): its notes get no
chunk rows, which marks them ``pending``; ``embed_notes`` then embeds some of them without
touching the indexes (the memory service does it outside the vault's gate) and ``commit``
writes their chunk rows and vectors in a moment. The result equals a sync with vectors.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from ..core.config import DEFAULTS
from ..core.errors import NoteParseError
from ..core.note import Note, property_text
from ..core.store import Store
from . import context
from .bm25 import BM25Index, Doc
from .chunking import chunk, plain_text
from .embed import Embedder
from .manifest import Manifest, Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

Progress = Callable[[int, int], None]
PROGRESS_STEP = 16  # chunks embedded between progress reports (~1 s on 2 busy cores)
LEGACY_PENDING = "vectors"  # the state key earlier keyword-first indexes set (now: notes without chunks)
MAX_CHUNKS: int = DEFAULTS["embedding"]["max_chunks"]  # chunks embedded per note (256: ~40k words)


def capped(pieces: list[str], limit: int) -> list[str]:
    """At most ``limit`` chunks, spread evenly over the note (its start, middle and end
    all get vectors); BM25 still indexes the whole text."""
    if limit <= 0 or len(pieces) <= limit:
        return pieces
    step = len(pieces) / limit
    return [pieces[int(i * step)] for i in range(limit)]


@dataclass
class Summary:
    """What one sync did."""

    added: int = 0
    updated: int = 0
    moved: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded: int = 0
    errors: dict[str, str] = field(default_factory=dict)
    new_errors: dict[str, str] = field(default_factory=dict)  # errors not recorded (so not reported) before
    capped: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (embedded, total) chunks
    seconds: float = 0.0
    touched: set[str] = field(default_factory=set)  # paths whose index entries changed
    superseded: list[dict] = field(default_factory=list)  # what the vault's rules wrote (memory.rules)
    model_changed: tuple[str, str] | None = None  # (old, new): the vault's vectors were made again

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.moved or self.removed)

    def as_dict(self) -> dict:
        return {
            "added": self.added, "updated": self.updated, "moved": self.moved,
            "removed": self.removed, "unchanged": self.unchanged, "embedded_chunks": self.embedded,
            "errors": self.errors, "capped": {p: list(c) for p, c in self.capped.items()},
            "seconds": round(self.seconds, 3),
            **({"superseded": self.superseded} if self.superseded else {}),
            **({"model_changed": dict(zip(("from", "to"), self.model_changed))} if self.model_changed else {}),
        }  # fmt: skip


BATCH_CHUNKS = 512  # chunks per commit of a long index (~1-2 min of embedding on 2 busy cores)
BATCH_NOTES = 1000  # notes per commit (without an embedder, or of notes with few chunks)
HUGE_CHARS = 1_000_000  # a note this long is indexed after the others, in a commit of its own


def commits(notes: list[Note], chunk_rows: dict[str, list[str]]) -> list[list[Note]]:
    """The notes in commit order and groups: by path, huge notes last and alone."""
    order = sorted(notes, key=lambda n: (len(n.text) >= HUGE_CHARS, n.path))
    out: list[list[Note]] = []
    size = 0
    for note in order:
        n = len(chunk_rows.get(note.path, ()))
        huge = len(note.text) >= HUGE_CHARS or n >= BATCH_CHUNKS
        if not out or huge or size + n > BATCH_CHUNKS or len(out[-1]) >= BATCH_NOTES or _huge(out[-1]):
            out.append([])
            size = 0
        out[-1].append(note)
        size += n
    return out


def _huge(group: list[Note]) -> bool:
    return len(group) == 1 and len(group[0].text) >= HUGE_CHARS


def chunk_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def bm25_doc(note: Note) -> Doc:
    return Doc(
        path=note.path, hash=note.hash, title=note.title, aliases=" ".join(note.aliases),
        tags=",".join(note.tags), body=plain_text(note.body), type=note.type or "",
        status=note.status, props=property_text(note.meta),
    )  # fmt: skip


def note_chunks(note: Note, max_tokens: int) -> list[str]:
    """What is embedded of a note: its body's chunks; a note without a body (a reference note
    whose author and topics are properties) is the one chunk of its title and its other
    properties' values (``note.property_text``). A body's vectors never take property text: on
    LoCoMo's linked turns (``session``/``follows`` links) that cost R@10 (benchmarks/README.md);
    BM25 indexes the properties of every note."""
    body = plain_text(note.body)
    props = property_text(note.meta) if not body.strip() else ""
    return chunk(note.title, props or body, max_tokens)


def chunk_texts(notes: list[Note], embedder: Embedder, max_chunks: int,
                summary: Summary) -> tuple[dict[str, list[str]], dict[str, str]]:  # fmt: skip
    """Chunk hashes per path and the text of each chunk (nothing without an embedder)."""
    if embedder.name == "none":
        return {}, {}
    max_tokens = getattr(embedder, "max_tokens", 256)
    chunk_rows: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for note in notes:
        pieces = note_chunks(note, max_tokens)
        if len(pieces) > max_chunks > 0:
            summary.capped[note.path] = (max_chunks, len(pieces))
            pieces = capped(pieces, max_chunks)
        hashes = [chunk_hash(p) for p in pieces]
        chunk_rows[note.path] = hashes
        texts.update(zip(hashes, pieces))
    return chunk_rows, texts


@dataclass
class _Batch:
    upserts: list[Note] = field(default_factory=list)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)
    stat_only: dict[str, tuple[int, int]] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    cleared: list[str] = field(default_factory=list)  # unreadable files that are gone: their error goes too


@dataclass
class Filled:
    """Vectors embedded for pending notes (``Indexer.embed_notes``), to ``commit``."""

    hashes: dict[str, str] = field(default_factory=dict)  # path -> content hash it was read with
    rows: dict[str, list[str]] = field(default_factory=dict)  # path -> chunk hashes
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # chunk hash -> new vector
    skipped: list[str] = field(default_factory=list)  # unreadable now


class Indexer:
    """Keeps the manifest, the BM25 index and the vectors equal to the files."""

    def __init__(self, store: Store, manifest: Manifest, bm25: BM25Index, embedder: Embedder,
                 max_chunks: int = MAX_CHUNKS):  # fmt: skip
        self.store = store
        self.manifest = manifest
        self.bm25 = bm25
        self.embedder = embedder
        self.max_chunks = max_chunks  # 0: no cap

    # ------------------------------------------------------------------ classify

    def _scan(
        self, paths: list[str] | None, fresh_model: bool, summary: Summary
    ) -> tuple[_Batch, dict[str, Record]]:
        """Classify the files: stat (one per file) against the manifest's stored stat first,
        then read and hash only the files whose stat differs. Returns the batch and the
        records of the paths it touches."""
        if paths is None:
            on_disk = self.store.list_stats()
            stored = self.manifest.stats()
        else:
            on_disk = {p: self.store.stat(p) for p in sorted(set(paths)) if self.store.is_note(p)}
            stored = self.manifest.stats(paths)
        if fresh_model:
            stored = {}  # model changed: everything is re-embedded (and re-indexed)
        batch, suspects = _Batch(), []
        for path in sorted(on_disk.keys() | stored.keys()):
            st, old = on_disk.get(path), stored.get(path)
            if st is None:
                if old is not None:
                    batch.deletes.append(path)
            elif old == st:  # both (mtime_ns, size) tuples
                summary.unchanged += 1
            else:
                suspects.append((path, st))
        scope = None if paths is None else set(paths)
        errors = self.manifest.errors()
        misnamed = self.store.rules.misnamed  # the last scan's files no path can name: errors, said
        if paths is None:
            batch.errors.update({p: why for p, why in misnamed.items() if errors.get(p) != why})
        batch.cleared = [
            p
            for p in errors
            if on_disk.get(p) is None and p not in misnamed and (scope is None or p in scope)
        ]
        wanted = [p for p, _ in suspects if p in stored] + batch.deletes
        known = self.manifest.records(wanted) if wanted else {}
        for path, st in suspects:
            self._classify(path, st, known.get(path), batch, summary)
        return batch, known

    def _classify(
        self, path: str, st: tuple[int, int], rec: Record | None, batch: _Batch, summary: Summary
    ) -> None:
        """Read a file whose stat changed: an upsert, a stat-only change, or an error."""
        try:
            note = self.store.read(path)
        except NoteParseError as e:
            batch.errors[path] = e.reason
            if rec is not None:
                batch.deletes.append(path)
            return
        except OSError as e:  # deleted or unreadable mid-read
            if rec is not None:
                batch.deletes.append(path)
            if self.store.stat(path) is not None:
                batch.errors[path] = e.strerror or str(e)
            return
        # same text; but dates taken from file times move when git rewrites a file unchanged
        if (
            rec is not None
            and rec.hash == note.hash
            and (rec.created, rec.updated) == (note.created, note.updated)
        ):
            batch.stat_only[path] = (st[0], st[1])
            summary.unchanged += 1
            return
        batch.upserts.append(note)
        batch.stats[path] = (st[0], st[1])

    # ------------------------------------------------------------------ embed

    def _chunks(self, notes: list[Note], summary: Summary) -> tuple[dict[str, list[str]], dict[str, str]]:
        return chunk_texts(notes, self.embedder, self.max_chunks, summary)

    def _embed(
        self, missing: list[str], texts: dict[str, str], report: Callable[[int], None]
    ) -> dict[str, np.ndarray]:
        """Vectors of these chunk hashes, PROGRESS_STEP texts per model call."""
        vectors: dict[str, np.ndarray] = {}
        for i in range(0, len(missing), PROGRESS_STEP):
            part = missing[i : i + PROGRESS_STEP]
            for h, vec in zip(part, self.embedder.embed([texts[h] for h in part])):
                vectors[h] = vec
            report(len(part))
        return vectors

    # ------------------------------------------------------------------ apply

    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None,
             vectors: bool = True) -> Summary:  # fmt: skip
        """Bring the indexes in line with the files at ``paths`` (None: the whole vault).
        ``vectors`` False: the notes that changed are indexed for keywords only (BM25, manifest,
        links: seconds where their vectors take minutes), their vectors left to ``fill``."""
        started = time.perf_counter()
        summary = Summary()
        paths = None if paths is None else list(paths)
        if self.manifest.get(LEGACY_PENDING) is not None:  # its notes without chunks are pending
            self.manifest.set(LEGACY_PENDING, None)
        stored_model = self.manifest.get("model")
        if stored_model not in (None, self.embedder.name) and self.manifest.count():
            # another model's vectors: every note is embedded again, never only the paths asked
            # for (their commit would record the new model and drop every other note's vectors)
            summary.model_changed = (str(stored_model), self.embedder.name)
            paths = None
        fresh_model = stored_model not in (None, self.embedder.name)
        forgotten: set[str] = set()
        if fresh_model and paths is None and self.manifest.count():
            # everything is re-indexed, over several commits: a run stopped midway must find
            # the rest unindexed, not indexed with vectors of the old model
            forgotten = set(self.manifest.stats())
            self.manifest.forget_notes()
            self.bm25.clear()
        batch, known = self._scan(paths, fresh_model, summary)
        self._count(batch, known, summary)
        summary.errors = dict(batch.errors)
        if batch.errors:
            before = self.manifest.errors()
            summary.new_errors = {p: r for p, r in batch.errors.items() if before.get(p) != r}
        if batch.stat_only:
            self.manifest.update_stats(batch.stat_only)
        if batch.cleared:  # `status` stops listing a broken file once it is deleted
            self.manifest.clear_errors(batch.cleared)
        if batch.upserts or batch.deletes or batch.errors:
            self._apply(batch, progress, summary, vectors)
            summary.touched = {n.path for n in batch.upserts} | set(batch.deletes)
        summary.touched |= forgotten  # a note forgotten and gone since: the views drop it too
        summary.seconds = time.perf_counter() - started
        return summary

    def forget_other_model(self) -> None:
        """An index of another embedding model is emptied (its vectors are of no use): every
        note is then indexed again, as ``sync`` of the whole vault does."""
        if self.manifest.get("model") not in (None, self.embedder.name) and self.manifest.count():
            self.manifest.forget_notes()
            self.bm25.clear()

    def changes(self) -> list[str]:
        """The paths whose file and index differ by stat (new, changed, removed, unreadable),
        sorted: nothing is read or hashed."""
        known = self.manifest.stats()
        on_disk = self.store.list_stats()
        return sorted(p for p in on_disk.keys() | known.keys() if on_disk.get(p) != known.get(p))

    def diff(self) -> dict[str, int]:
        """Files that differ from the index by stat (cheap: nothing is read or hashed).

        ``changed`` may include files only touched; a sync then finds nothing to do.
        """
        known = self.manifest.stats()
        on_disk = self.store.list_stats()
        changed = 0
        for path in on_disk.keys() & known.keys():
            st = on_disk[path]
            changed += st != known[path]
        errors = self.manifest.errors()
        return {"new": len(on_disk.keys() - known.keys() - errors.keys()), "changed": changed,
                "removed": len(known.keys() - on_disk.keys())}  # fmt: skip

    def _apply(
        self, batch: _Batch, progress: Progress | None, summary: Summary, vectors: bool = True
    ) -> None:
        """Index the batch in commits of at most BATCH_CHUNKS chunks / BATCH_NOTES notes, huge
        notes last and each alone: a run stopped midway keeps what it committed (the next one
        starts from there), and recall waits for one commit at a time, never for a huge note
        ahead of the rest. The result equals one commit of everything. Without ``vectors`` the
        notes get no chunk rows (their old ones go): ``pending`` until ``fill`` embeds them."""
        if vectors or self.embedder.name == "none":
            chunk_rows, texts = self._chunks(batch.upserts, summary)
        else:
            chunk_rows, texts = {n.path: [] for n in batch.upserts}, {}
        cached = self.manifest.cached_chunks(self.embedder.name, texts) if texts else set()
        missing = {h for h in texts if h not in cached}
        units = len(missing) if texts else len(batch.upserts)  # chunks to embed, else notes
        done = 0

        def report(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress(min(done, units), units)

        if progress and units:
            progress(0, units)  # before the first batch: the model may still have to load
        parts = commits(batch.upserts, chunk_rows)
        for i, notes in enumerate(parts or [[]]):
            first, last = i == 0, i == len(parts) - 1 or not parts
            rows = {n.path: chunk_rows[n.path] for n in notes if n.path in chunk_rows}
            todo = list(dict.fromkeys(h for hashes in rows.values() for h in hashes if h in missing))
            todo.sort(key=lambda h: len(texts[h]))  # a model call pads to its longest text: like with like
            new = self._embed(todo, texts, report)
            missing.difference_update(todo)
            summary.embedded += len(todo)
            records = [Record.from_note(n, *batch.stats[n.path]) for n in notes]
            deletes = batch.deletes if first else []
            self.manifest.set("dirty", "1")
            self.bm25.apply((bm25_doc(n) for n in notes), deletes)
            self.manifest.commit_batch(records, rows, new, deletes, batch.errors if first else {},
                                       self.embedder.name, prune=last)  # fmt: skip
            if not texts:
                report(len(notes))

    @staticmethod
    def _count(batch: _Batch, known: dict[str, Record], summary: Summary) -> None:
        gone = {known[p].hash: p for p in batch.deletes if p in known}
        for note in batch.upserts:
            if note.path in known:
                summary.updated += 1
            elif gone.pop(note.hash, None) is not None:
                summary.moved += 1
            else:
                summary.added += 1
        summary.removed = len(gone)

    # ------------------------------------------------------------------ contextual vectors

    def sync_contexts(self, records: dict[str, Record], graph: nx.DiGraph | None,
                      progress: Progress | None = None) -> int:  # fmt: skip
        """Make the contextual vectors (``context.py``) those of ``records`` linked by ``graph``
        (None: none at all): embed the notes whose context key changed, drop the others'.
        Returns how many notes' contextual vectors changed."""
        work = self.context_work(records, graph)
        if work is None:
            return 0
        rows, gone, texts = work
        start = getattr(progress, "start", None)
        shown = progress if callable(start) else None  # a display that counts by phase (cli.progress)
        if shown is not None:
            start("contexts")  # type: ignore[misc]
            shown(0, len(texts))
        done = 0

        def report(n: int) -> None:
            nonlocal done
            done += n
            if shown is not None:
                shown(done, len(texts))

        self.manifest.commit_contexts(rows, gone, self.embed_texts(texts, report), self.embedder.name)
        return len(rows) + len(gone)

    def context_work(self, records: dict[str, Record], graph: nx.DiGraph | None
                     ) -> tuple[dict[str, tuple[str, str]], list[str], dict[str, str]] | None:  # fmt: skip
        """What making the contextual vectors those of ``records`` takes: the rows to write
        (path -> (key, chunk hash)), the paths whose contextual vector goes, and the texts
        (hash -> text) of those rows; None when nothing is to do (no model, or notes whose
        plain vectors are still ``pending``: the contextual ones come after them)."""
        if self.embedder.name == "none" or self.manifest.pending_vectors(limit=1):
            return None
        wanted = context.plan(records, graph) if graph is not None else {}
        stored = self.manifest.context_keys()
        changed = [p for p, c in sorted(wanted.items()) if stored.get(p) != c.key]
        gone = [p for p in stored if p not in wanted]
        if not changed and not gone:
            return None
        max_tokens = getattr(self.embedder, "max_tokens", 256)
        rows: dict[str, tuple[str, str]] = {}
        texts: dict[str, str] = {}
        for path in changed:
            try:
                note = self.store.read(path)
            except (NoteParseError, OSError):
                continue  # changed under us: the next sync indexes it, then its context
            text = wanted[path].text(note_chunks(note, max_tokens)[0])
            h = chunk_hash(text)
            rows[path], texts[h] = (wanted[path].key, h), text
        return rows, gone, texts

    def embed_texts(self, texts: dict[str, str], report: Callable[[int], None] = lambda n: None,
                    manifest: Manifest | None = None) -> dict[str, np.ndarray]:  # fmt: skip
        """Vectors of those texts (hash -> text) that have none stored, shortest first (a model
        call pads to its longest text); ``manifest``: the connection to look in (a thread of
        its own reads through its own)."""
        cached = (manifest or self.manifest).cached_chunks(self.embedder.name, texts)
        todo = sorted((h for h in texts if h not in cached), key=lambda h: len(texts[h]))
        return self._embed(todo, texts, report)

    # ------------------------------------------------------------------ vectors filled in behind

    def pending(self, limit: int | None = None) -> list[str]:
        """Indexed notes whose vectors are still to be embedded (``sync(vectors=False)``)."""
        if self.embedder.name == "none":
            return []
        return self.manifest.pending_vectors(limit)

    def embed_notes(self, paths: list[str], report: Callable[[int], None] = lambda n: None,
                    manifest: Manifest | None = None) -> Filled:  # fmt: skip
        """The chunk rows and new vectors of these notes, read from their files (nothing is
        written: ``commit`` does, under the vault's gate; this may run outside it, with a
        ``manifest`` connection of its own)."""
        notes, filled = [], Filled()
        for path in paths:
            try:
                notes.append(self.store.read(path))
            except (NoteParseError, OSError):
                filled.skipped.append(path)  # changed or gone: the watcher's next batch indexes it
        rows, texts = self._chunks(notes, Summary())
        filled.hashes = {n.path: n.hash for n in notes}
        filled.rows = rows
        filled.vectors = self.embed_texts(texts, report, manifest)
        return filled

    def commit(self, filled: Filled) -> list[str]:
        """Write what ``embed_notes`` made for the notes still indexed with the text it read
        and still without vectors; returns those paths."""
        current = self.manifest.hashes(filled.rows)
        done = self.manifest.with_chunks(filled.rows)
        rows = {p: r for p, r in filled.rows.items() if current.get(p) == filled.hashes[p] and p not in done}
        used = {h for hashes in rows.values() for h in hashes}
        self.manifest.commit_chunks(rows, {h: v for h, v in filled.vectors.items() if h in used},
                                    self.embedder.name)  # fmt: skip
        return sorted(rows)

    def fill(self, progress: Progress | None = None, step: int = 64) -> list[str]:
        """Embed every pending note here (``vaultmem index`` in its own process), ``step``
        notes per commit; returns the paths filled."""
        todo, out = self.pending(), []
        total = len(todo)
        if progress and total:
            progress(0, total)
        for i in range(0, total, step):
            out += self.commit(self.embed_notes(todo[i : i + step]))
            if progress:
                progress(min(i + step, total), total)
        return out

    # ------------------------------------------------------------------ repair

    def needs_repair(self) -> bool:
        """True when a previous batch was interrupted (dirty flag still set)."""
        return self.manifest.get("dirty") is not None

    def repair(self) -> int:
        """Make BM25 match the manifest after an interrupted batch; returns documents fixed."""
        records = self.manifest.records()
        docs = self.bm25.documents()
        stale = [p for p, h in docs.items() if p not in records or records[p].hash != h]
        missing = [p for p, r in records.items() if docs.get(p) != r.hash]
        notes = []
        for path in missing:
            try:
                notes.append(self.store.read(path))
            except (NoteParseError, OSError):
                stale.append(path)
        self.bm25.apply((bm25_doc(n) for n in notes), stale)
        self.manifest.set("dirty", None)
        return len(set(stale) | set(missing))
