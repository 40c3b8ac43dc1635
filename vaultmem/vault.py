"""One vault as one object: ``Vault``, the facade over the indexes and the note operations.

It owns the vault's state (config, store, manifest, BM25, vectors, link graph, usage) and
offers the operations of ``ops``, ``lifecycle``, ``aging``, ``context`` and ``sessions`` as
methods; those modules depend only on ``state.VaultState``, never on this module. Front ends
reach vaults through ``api.Session``, which decides which vault a call goes to.

    from vaultmem import Vault
    vault = Vault.open("vaults/demo")
    vault.reindex()
    for hit in vault.recall("why advisory locks?", k=5, types=["decision"]):
        print(hit.id, hit.title, hit.score)
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import networkx as nx

from .core import config as configmod
from .core.discovery import writable
from .core.errors import BadInput, NoteNotFound, NoteParseError, ReadOnlyVault, VaultError
from .core.ignore import obsidian_templates, vault_files
from .core.links import NoteKeys, Resolver, link_extras, parse_link
from .core.lock import WatcherRunning, WriterLock
from .core.memtypes import known_types
from .core.note import from_timestamp
from .core.store import Store, find_vault
from .core.titles import folded
from .index import graph as graphmod
from .index.bm25 import BM25Index
from .index.embed import Embedder, make_embedder
from .index.indexer import Filled, Indexer, Progress, Summary
from .index.layout import adopt, index_dir, index_version
from .index.manifest import Manifest, Record
from .index.usage import UsageStore
from .index.vectors import VectorIndex
from .memory import agents_md, aging, branches, context, dupes, lifecycle, ops, rules, sessions
from .recall import params
from .recall.hit import Hit, make_snippet
from .recall.options import Options
from .recall.pipeline import Sources, search


def disk_full(e: BaseException) -> bool:
    """Whether an error is a full disk (or quota): the OS's, or SQLite's own."""
    if isinstance(e, OSError):
        return e.errno in (errno.ENOSPC, errno.EDQUOT)
    return isinstance(e, sqlite3.OperationalError) and "disk is full" in str(e)


def _phase(progress: Progress | None, name: str) -> None:
    """Tell a progress display that counts by phase (``cli.progress``) that the next one starts."""
    start = getattr(progress, "start", None)
    if callable(start):
        start(name)


def _link_keys(rec: Record | None) -> tuple | None:
    """What of a record the link graph depends on."""
    return None if rec is None else (rec.title, rec.aliases, rec.id, rec.links)


def _suggest(ref: str, records: Iterable[Record]) -> str:
    """``; did you mean ...`` with up to 3 titles that hold every word of ``ref`` or are close to it."""
    import difflib

    titles = {r.title: r.key for r in records if r.title}
    words = ref.casefold().split()
    found = sorted((t for t in titles if words and all(w in t.casefold() for w in words)), key=len)
    if not found:  # best first
        by_fold = {t.casefold(): t for t in titles}
        found = [by_fold[m] for m in difflib.get_close_matches(ref.casefold(), by_fold, n=3, cutoff=0.6)]
    if not found:
        return ""
    return "; did you mean: " + ", ".join(f"{t!r} ({titles[t]})" for t in found[:3]) + "?"


class Vault:
    """One vault: its files, its configuration and its derived indexes."""

    def __init__(self, root: Path, embedder: Embedder | None = None):
        self.root = Path(root).resolve()
        self.config = configmod.load(self.root)
        self.read_only = not writable(self.root)  # read from its indexes as they are; writes refused
        vcfg = self.config["vault"]
        self.obsidian_templates = obsidian_templates(self.root)  # Obsidian's templates folder, never indexed
        excludes = ("/" + vcfg["templates_dir"].strip("/") + "/", *vcfg.get("exclude", []),
                    *([f"/{self.obsidian_templates}/"] if self.obsidian_templates else []))  # fmt: skip
        folder_types = {folder: type_ for type_, folder in self.config["folders"].items()}
        self.store = Store(self.root, excludes, folder_types, vcfg["title_from"])
        adopt(self.root)  # indexes an older vaultmem of this install kept in .vaultmem/index/ itself
        emb = self.config["embedding"]
        self.embedder: Embedder = embedder or make_embedder(emb["model"], int(emb["batch_size"]))
        self._manifest: Manifest | None = None
        self._bm25: BM25Index | None = None
        self._opening = threading.RLock()  # the indexes opened once, whichever thread asks first
        self._records: dict[str, Record] | None = None
        self._graph: nx.DiGraph | None = None
        self._vectors: VectorIndex | None = None
        self._contexts: VectorIndex | None = None  # contextual vectors (index/context.py)
        self._index: tuple[list[str], dict[str, int]] | None = None
        self._synced = False
        self._held_lock: WriterLock | None = None
        self._batching = False  # inside ``batch()``: ``catalog`` is kept, not rebuilt per call
        self._batch_catalog: dict[str, Record] | None = None
        self._batch_ids: set[str] | None = None  # the catalogue's ids, kept with it
        self._pending: set[str] | None = None  # a bulk write: paths written, indexed at ``flush``
        self._titled: dict[str, list[str]] | None = None  # normalised title -> indexed paths
        self._usage: UsageStore | None = None
        self._memo: dict = {}  # raw scores of recent queries; cleared whenever the indexes change
        self.skipped: dict[str, str] = {}  # notes the last catalog() could not read, with the reason

    def reload_config(self) -> list[str]:
        """Read the config file again (a running watcher, when it changes). Recall, adaptive
        and lifecycle settings apply from the next call; the sections that shape the store and
        the indexes stay as they were opened. Returns those that changed (they need a restart)."""
        new = configmod.load(self.root)
        fixed = ("vault", "folders", "embedding")
        pending = [name for name in fixed if new.get(name) != self.config.get(name)]
        self.config = {**new, **{name: self.config[name] for name in fixed}}
        self._memo.clear()
        return pending

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, embedder: Embedder | None = None) -> Vault:
        """Open the vault at ``path`` (or discover it like git; see ``store.find_vault``)."""
        return cls(find_vault(path), embedder)

    @property
    def index_dir(self) -> Path:
        return index_dir(self.root)

    @property
    def templates_dir(self) -> Path:
        return self.root / self.config["vault"]["templates_dir"]

    @property
    def manifest(self) -> Manifest:
        """The manifest, opened on first use: once, also when two threads ask at once (the
        service's ``status`` while its watcher starts a first index)."""
        manifest = self._manifest
        if manifest is not None:
            return manifest
        with self._opening:
            if self._manifest is None:
                path = self.index_dir / "manifest.db"
                if self.read_only and not path.exists():
                    raise ReadOnlyVault(f"{self.root} is read-only and has no index: index it where it can be "
                                        "written (vaultmem index)")  # fmt: skip
                self._manifest = Manifest(path, readonly=self.read_only)
            return self._manifest

    @property
    def bm25(self) -> BM25Index:
        bm25 = self._bm25
        if bm25 is not None:
            return bm25
        with self._opening:
            if self._bm25 is None:
                dirty = lambda: self.manifest.set("dirty", "1")
                self._bm25 = BM25Index(self.index_dir / "bm25", on_reset=dirty)
            return self._bm25

    @property
    def indexer(self) -> Indexer:
        return Indexer(self.store, self.manifest, self.bm25, self.embedder, self.max_chunks)

    @property
    def max_chunks(self) -> int:
        """Chunks embedded per note at most (``[embedding] max_chunks``; 0: no cap)."""
        value = self.config["embedding"]["max_chunks"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise BadInput(f"[embedding] max_chunks: {value!r} is not a whole number >= 0")
        return value

    def close(self) -> None:
        if self._usage is not None:
            self._usage.close()
            self._usage = None
        if self._bm25 is not None:
            self._bm25.close()
            self._bm25 = None
        if self._manifest is not None:
            self._manifest.close()
            self._manifest = None
        self._invalidate()  # a later use reopens everything from disk
        self._synced = False

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ indexes

    @property
    def lock_path(self) -> Path:
        return self.index_dir / "writer.lock"

    def hold_lock(self, lock: WriterLock | None) -> None:
        """Tell this Vault that its process holds the writer lock (the watcher does)."""
        self._held_lock = lock

    def reindex(self, paths: Iterable[str] | None = None, rebuild: bool = False,
                progress: Progress | None = None, wait: float = 300.0, vectors: bool = True) -> Summary:  # fmt: skip
        """Bring the indexes in line with the files (all, or just ``paths``).

        ``rebuild`` deletes the indexes first and builds them from nothing. ``vectors`` False:
        what changed is indexed for keywords only, its vectors left pending (the memory
        service fills them in behind: ``embed_pending``, ``commit_vectors``). Takes the vault's
        writer lock (waiting up to ``wait`` seconds for another one-off writer); raises
        WatcherRunning when a watcher owns the indexes.
        """
        if self._held_lock is not None:
            return self._reindex(paths, rebuild, progress, vectors)
        if self.read_only:
            raise ReadOnlyVault(f"{self.root} is read-only: its indexes cannot be written")
        lock = WriterLock(self.lock_path)
        holder = lock.holder()
        if holder and holder.get("role") == "watch":
            raise WatcherRunning(holder.get("pid"))
        if not lock.acquire("index", wait):
            holder = lock.holder() or {}
            if holder.get("role") == "watch":
                raise WatcherRunning(holder.get("pid"))
            raise VaultError(
                f"timed out waiting for pid {holder.get('pid', '?')} to finish writing the indexes"
            )
        try:
            return self._reindex(paths, rebuild, progress, vectors)
        finally:
            lock.release()

    def _reindex(self, paths: Iterable[str] | None, rebuild: bool, progress: Progress | None,
                 vectors: bool = True) -> Summary:  # fmt: skip
        if self._prepare(rebuild):
            paths = None
        indexer = self.indexer
        summary = indexer.sync(paths, progress, vectors)
        if vectors and paths is None and indexer.pending(limit=1):  # a keyword-first index's notes
            _phase(progress, "vectors")
            summary.touched |= set(indexer.fill(progress))
        if summary.touched:
            self._refresh(summary.touched)
        if paths is None:
            self._synced = True
        self._apply_rules(indexer, summary, vectors)
        if vectors:
            self._sync_contexts(indexer, summary, progress)
        if paths is None:
            self.snapshot_counts()
        return summary

    def _prepare(self, rebuild: bool = False) -> bool:
        """Open the indexes for a sync: deleted first (``rebuild``), set aside when another
        version built them, repaired after an interrupted batch. True when every note is to be
        indexed again (the stored vectors are reused)."""
        version = index_version(self.store.title_from)
        stale = self.manifest.get("index_version") not in (None, version)
        if rebuild or stale:
            self._invalidate()
        if rebuild:
            self.close()
            self.bm25.clear()
            for name in ("manifest.db", "manifest.db-wal", "manifest.db-shm"):
                (self.index_dir / name).unlink(missing_ok=True)
        elif stale:
            self.bm25.clear()  # built by another version: re-index, reusing stored vectors
            self.manifest.forget_notes()
        indexer = self.indexer
        self.bm25.count()  # opens the keyword index: files vaultmem did not write are set aside (marks dirty)
        self.manifest.set("index_version", version)
        if indexer.needs_repair():
            indexer.repair()
        return stale

    def clear_indexes(self) -> None:
        """Delete the indexes (``vaultmem index --rebuild`` through the service, whose watcher
        then indexes every note again; reads meanwhile see what it has indexed so far)."""
        self._prepare(rebuild=True)
        self.refresh()

    def changed_paths(self, rebuild: bool = False) -> list[str]:
        """The notes a whole sync would index or drop, after ``_prepare`` (an index of another
        model or version is emptied first: then every note): what the memory service indexes
        in slices (``Watcher._catch_up``)."""
        self._prepare(rebuild)
        self.indexer.forget_other_model()
        return self.indexer.changes()

    def _apply_rules(self, indexer: Indexer, summary: Summary, vectors: bool = True) -> None:
        """The explicit rules (``memory.rules``) for the notes this sync changed; the notes they
        rewrite are indexed in the same sync, so one sync leaves files and index settled."""
        if not summary.touched or (self._records is None and not self.manifest.stating()):
            return
        records = self._records if self._records is not None else self.manifest.records()
        done = rules.apply(self, summary.touched, records)
        rewritten = sorted({d["path"] for d in done if d["changed"]})
        again = indexer.sync(rewritten, vectors=vectors) if rewritten else Summary()
        if again.touched:
            self._refresh(again.touched)
            summary.touched |= again.touched
            summary.updated += again.updated
        summary.superseded = done

    def _sync_contexts(self, indexer: Indexer, summary: Summary, progress: Progress | None = None) -> None:
        """The contextual vectors (``index/context.py``, ``[embedding] context``) after a sync
        that changed notes, or when the setting changed since the last one."""
        on = bool(self.config["embedding"]["context"])
        if not summary.touched and self.manifest.get("contexts") == str(on):
            return
        if self._records is None and not self.manifest.contextual():
            self.manifest.set("contexts", str(on))
            return  # no note links in its frontmatter: nothing to plan (and no records loaded)
        records = self._records if self._records is not None else self.manifest.records()
        graph = (self._graph or self.build_graph(records.values())) if on else None
        if indexer.sync_contexts(records, graph, progress):
            self._contexts = None
            self._memo.clear()
        self.manifest.set("contexts", str(on))

    # ------------------------------------------------------------------ vectors filled in behind

    def pending_vectors(self, limit: int | None = None) -> list[str]:
        """Indexed notes whose vectors are still to be embedded (a keyword-first index)."""
        return self.indexer.pending(limit)

    def vector_counts(self) -> tuple[int, int]:
        """(notes with vectors, notes indexed); read through a connection of its own."""
        if not (self.index_dir / "manifest.db").exists():
            return 0, 0  # nothing indexed yet
        manifest = Manifest(self.index_dir / "manifest.db", readonly=True)
        try:
            done, total = manifest.vector_counts()
        finally:
            manifest.close()
        return (total, total) if self.embedder.name == "none" else (done, total)

    def embed_pending(self, paths: list[str], report: Callable[[int], None] = lambda n: None) -> Filled:
        """Embed these pending notes without touching the indexes, reading the manifest
        through a connection of its own: the memory service runs it outside the vault's gate,
        so recall answers meanwhile; ``commit_vectors`` then writes them in a moment."""
        manifest = Manifest(self.index_dir / "manifest.db", readonly=True)
        try:
            return self.indexer.embed_notes(paths, report, manifest)
        finally:
            manifest.close()

    def commit_vectors(self, filled: Filled) -> list[str]:
        """Write what ``embed_pending`` made (for the notes unchanged since) and show it to
        recall; once no note is pending, the contextual vectors follow (``context_work``)."""
        done = self.indexer.commit(filled)
        if done:
            self._refresh(set(done))
        return done

    def context_work(self) -> tuple[dict[str, tuple[str, str]], list[str], dict[str, str]] | None:
        """The contextual vectors to make (``Indexer.context_work``), None when they are
        current or off; the texts are embedded with ``embed_texts`` and written with
        ``commit_contexts``."""
        on = bool(self.config["embedding"]["context"])
        if self._records is None and not self.manifest.contextual():
            return None
        return self.indexer.context_work(self.records(), self.graph() if on else None)

    def embed_texts(self, texts: dict[str, str], report: Callable[[int], None] = lambda n: None) -> dict:
        """Vectors of texts without a stored one (outside the gate: a connection of its own)."""
        manifest = Manifest(self.index_dir / "manifest.db", readonly=True)
        try:
            return self.indexer.embed_texts(texts, report, manifest)
        finally:
            manifest.close()

    def commit_contexts(self, rows: dict[str, tuple[str, str]], gone: list[str], vectors: dict) -> None:
        """Write contextual vectors ``context_work`` planned (a later sync plans again any
        whose notes changed since)."""
        self.manifest.commit_contexts(rows, gone, vectors, self.embedder.name)
        self.manifest.set("contexts", str(bool(self.config["embedding"]["context"])))
        self._contexts = None
        self._memo.clear()

    def refresh(self) -> None:
        """Drop this process's cached views of the indexes (another process changed them)."""
        self._invalidate()
        self._synced = True

    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> Summary | None:
        """Bring this process's view in line with the files: index what changed (all, or just
        ``paths``); while a watcher owns the indexes (it indexes changes itself) drop the cached
        views instead (for a full sync). None when nothing was indexed here."""
        paths = None if paths is None else list(paths)
        if paths == []:
            return None
        if self.read_only:  # read from the indexes as they are (`status` and `doctor` show any drift)
            if paths is None:
                self.refresh()
            return None
        try:
            return self.reindex(paths, progress=progress)
        except WatcherRunning:
            if paths is None:
                self.refresh()
            else:
                self._indexed_by_owner(paths)
            return None
        except (OSError, sqlite3.OperationalError) as e:
            if paths is not None or not disk_full(e):
                raise
            self.refresh()  # a read on a full disk: from the indexes as they are (status shows the drift)
            return None

    def sync_paths(self, paths: Iterable[str]) -> None:
        """Index notes this process just wrote: here, or, while the memory service keeps the
        indexes, by the service before this returns (read-your-writes: the next call of any
        client sees them). In a bulk write they wait for ``flush``; the records, titles and
        links the note operations read include them meanwhile."""
        paths = list(paths)
        fresh = self._catalog(paths) if self._batch_catalog is not None or self._pending is not None else {}
        if self._pending is not None:
            self._pending.update(paths)
            self._overlay(paths, fresh)
        else:
            self.sync(paths)
        if self._batch_catalog is not None:
            self._batch_catalog.update(fresh)
            assert self._batch_ids is not None
            self._batch_ids.update(r.id for r in fresh.values() if r.id)
            for gone in [p for p in paths if p not in fresh]:
                self._batch_catalog.pop(gone, None)

    @contextlib.contextmanager
    def batch(self, bulk: bool = False) -> Iterator[None]:
        """Many writes in a row (an import): ``catalog`` is read from the files once and kept
        current by the writes (``sync_paths``), instead of stat-ing every note on each of them
        (which made a large import quadratic: benchmarks/README.md, "A large chat export").

        ``bulk``: also no fsync per file and no index commit per note: the notes written wait
        for ``flush`` (``memory.batch.paced`` calls it every few hundred), which makes them
        durable at once, saves the undo record so far, and indexes them in one sync (the
        rules of ``memory.rules`` included). Meanwhile ``records``, ``titled`` and the link
        resolver hold them, so each note is checked against every one written before it."""
        outer, bulk = self._batching, bulk and self._pending is None
        self._batching = True
        if bulk:
            self.records()  # the indexed view the writes are added to
            self._pending = set()
            self.store.bulk(True)
        try:
            yield
        finally:
            self._batching = outer
            if bulk:
                try:
                    self.flush()
                finally:
                    self._pending = None
                    self.store.bulk(False)
            if not outer:
                self._batch_catalog = self._batch_ids = None

    def flush(self) -> int:
        """A bulk write's checkpoint: the files written so far made durable (one ``os.sync``),
        the undo record saved, then the notes indexed in one sync; how many notes were
        indexed. Nothing a checkpoint reported is lost by a crash after it."""
        self.store.flush()
        if self.store.recorder is not None:
            self.store.recorder.checkpoint()
        paths = sorted(self._pending or ())
        if self._pending:
            self._pending.clear()
            self.sync(paths)
            self._graph = self._index = self._titled = None  # rebuilt once per checkpoint, not per note
        return len(paths)

    def _overlay(self, paths: list[str], fresh: dict[str, Record]) -> None:
        """Notes written in a bulk write, not yet indexed, added to the views reads use."""
        records = self.records()
        self._memo.clear()
        for path in paths:
            old, new = records.pop(path, None), fresh.get(path)
            if new is not None:
                records[path] = new
            if self._titled is not None:
                if old is not None and path in self._titled.get(folded(old.title), ()):
                    self._titled[folded(old.title)].remove(path)
                if new is not None:
                    self._titled.setdefault(folded(new.title), []).append(path)
            if self._graph is None:
                continue
            if old is not None and _link_keys(old) == _link_keys(new):
                continue
            if old is None and new is not None:  # a new note: its names and its node
                self._graph.graph["resolver"].add_notes([NoteKeys(new.path, new.title, new.aliases, new.id)])
                self._graph.add_node(new.path, title=new.title, type=new.type, status=new.status,
                                     tags=new.tags, dangling=False)  # fmt: skip
            else:
                self._graph = None  # renamed or removed: built again when next asked

    def _indexed_by_owner(self, paths: list[str]) -> None:
        """Ask the process that keeps the indexes (the memory service) to index ``paths`` now,
        then read its indexes afresh; without an answer, only the latter (it indexes them
        itself, a moment later)."""
        from .service import client

        try:
            reply = client.call("sync", {"root": str(self.root), "paths": paths}, timeout=120)
        except VaultError:
            reply = None
        done = (reply or {}).get("result") if (reply or {}).get("ok") else None
        if done is not None and not done.get("superseded"):
            self._refresh(set(paths))
        else:
            self.refresh()

    def _invalidate(self) -> None:
        self._records = self._graph = self._vectors = self._index = self._titled = self._contexts = None
        self._memo.clear()

    def _refresh(self, touched: set[str]) -> None:
        """Update the in-memory views after a batch touched these paths (cheaper than reloading
        10k records, the graph and the vector matrix; a watcher does this on every save)."""
        self._memo.clear()
        if self._records is None:
            self._invalidate()
            return
        fresh = self.manifest.records(touched)
        old = {p: self._records.pop(p) for p in touched if p in self._records}
        self._titled = None
        self._records.update(fresh)
        if set(old) != set(fresh):
            self._index = None  # membership changed
        if self._vectors is not None:
            rows, matrix = self.manifest.vectors(self.embedder.name, fresh)
            self._vectors = self._vectors.updated(rows, matrix, set(touched))
        if self._graph is not None and any(
            _link_keys(old.get(p)) != _link_keys(fresh.get(p)) for p in touched
        ):
            self._graph = None
        elif self._graph is not None:
            for path, rec in fresh.items():
                self._graph.nodes[path].update(
                    title=rec.title, type=rec.type, status=rec.status, tags=rec.tags
                )

    def ensure_synced(self) -> None:
        """Sync once per Vault object (cheap when nothing changed)."""
        if not self._synced:
            self.sync()

    def records(self) -> dict[str, Record]:
        """Indexed metadata of every note, by path (after a reconcile)."""
        self.ensure_synced()
        if self._records is None:
            self._records = self.manifest.records()
        return self._records

    def titled(self, title: str) -> list[Record]:
        """The indexed notes with this title (case and spacing aside), from an index of titles
        kept with ``records`` (a check of each note written, not a pass over every note)."""
        records = self.records()
        if self._titled is None:
            self._titled = {}
            for path, rec in records.items():
                self._titled.setdefault(folded(rec.title), []).append(path)
        return [records[p] for p in self._titled.get(folded(title), ()) if p in records]

    def note_ids(self) -> set[str]:
        """The ids of every note (``catalog``'s): a new note's id is none of them."""
        if self._batching and self._batch_ids is not None:
            return self._batch_ids
        ids = {r.id for r in self.catalog().values() if r.id}
        if self._batching:
            self._batch_ids = ids
        return ids

    def note_paths(self) -> list[str]:
        """Every note path (``store.list_paths``; in a batch, the catalogue's, kept by the writes)."""
        if self._batching:
            catalog = self.catalog()
            return [*catalog, *(p for p in self.skipped if p not in catalog)]
        return self.store.list_paths()

    def graph(self) -> nx.DiGraph:
        """The link graph of the indexed notes."""
        if self._graph is None:
            self._graph = self.build_graph(self.records().values())
        return self._graph

    def build_graph(self, records: Iterable[Record]) -> nx.DiGraph:
        """The link graph of these notes under this vault's link settings (``alias_links``),
        with links to the vault's other files as attachments."""
        extras = link_extras(self.config["vault"]["alias_links"])
        return graphmod.build(records, vault_files(self.root), extras)

    def vectors(self) -> VectorIndex:
        if self._vectors is None:
            self._vectors = VectorIndex(*self.manifest.vectors(self.embedder.name))
        return self._vectors

    def contexts(self) -> VectorIndex:
        """The contextual vectors (one row per note that has one; ``index/context.py``)."""
        if self._contexts is None:
            self._contexts = VectorIndex(*self.manifest.context_vectors(self.embedder.name))
        return self._contexts

    def warm(self) -> None:
        """Load everything recall needs (model, vectors, graph, BM25 arrays) ahead of time."""
        try:
            self.recall("warm up", k=1, log=False)
        except VaultError:
            pass

    def index_errors(self) -> dict[str, str]:
        """Files that could not be indexed, with the reason."""
        return self.manifest.errors()

    # ------------------------------------------------------------------ recall

    def recall(self, query: str, k: int | None = None, *, log: bool = True, stats: tuple | None = None,
               snippets: bool = True, types_known: Iterable[str] | None = None,
               shown: Callable[[Path, str], bool] | None = None, **options: Any) -> list[Hit]:  # fmt: skip
        """Hybrid recall; see ``recall/pipeline.py`` for how scores are made. ``options``: the
        declared recall parameters (``recall/params.py``; unset ones take the vault's config).
        A type neither this vault's templates nor its notes have is refused (``types_known``:
        the types that count instead, for several vaults searched together).
        ``shown(root, path)``: only memories it lets through are hits (other code branches'
        memories are left out where the index is, so recall still brings k).
        The memories returned are logged as retrieved (``log=False`` to skip, e.g. in evaluations)."""
        known = (
            None if not options.get("types") else self.memory_types() if types_known is None else types_known
        )
        call = params.resolve({"k": k, **options}, self.config["recall"], known)
        if self.embedder.name == "none" and call["mode"] != "vector":
            call["mode"] = "bm25"
        mine = (lambda path: shown(self.root, path)) if shown is not None else None
        opt = Options.build(call, self.config, self.root, stats=stats, snippets=snippets, shown=mine)
        hits = search(self.sources(), query, opt)
        if log and hits:
            self.usage.log_retrievals([h.id for h in hits], "recall")
        return hits

    def add_snippet(self, hit: Hit, query: str) -> Hit:
        """Fill in a hit's snippet and highlights (for hits recalled with ``snippets=False``)."""
        hit.snippet, hit.highlights = make_snippet(self.body(hit.path), self.bm25.terms(query))
        return hit

    @property
    def usage(self) -> UsageStore:
        """The durable usage store (retrievals, ratings, gaps)."""
        if self._usage is None:
            self._usage = UsageStore.of(self.root, readonly=self.read_only)
        return self._usage

    def sources(self) -> Sources:
        """The indexes recall reads, bundled for ``recall.search``."""
        records = self.records()
        universe, index = self.universe()
        return Sources(records, self.bm25, self.vectors, self.embedder, self.graph(), self.body, universe, index,
                       self.usage.usage, self._memo, self.contexts)  # fmt: skip

    def memory_types(self) -> set[str]:
        """The types of its templates (built-in and the vault's own) and of its notes."""
        return set(known_types(self.templates_dir)) | {r.type for r in self.records().values() if r.type}

    def universe(self) -> tuple[list[str], dict[str, int]]:
        """Every indexed note in a fixed order (sorted paths) and each one's position."""
        if self._index is None:
            paths = sorted(self.records())
            self._index = (paths, {p: i for i, p in enumerate(paths)})
        return self._index

    def body(self, path: str) -> str:
        """A note's markdown body (no frontmatter); empty when unreadable."""
        return self.store.body(path)

    # ------------------------------------------------------------------ lookups

    def catalog(self, errors: dict[str, str] | None = None) -> dict[str, Record]:
        """Metadata of every note without touching the indexes: a manifest row is reused
        when its file's mtime and size still match, anything else is parsed from the file
        (files that cannot be parsed are left out; ``errors`` collects path -> reason)."""
        if not self._batching or errors is not None:
            return self._catalog(None, errors)
        if self._batch_catalog is None:
            self._batch_catalog = self._catalog(None)
            self._batch_ids = {r.id for r in self._batch_catalog.values() if r.id}
        return self._batch_catalog  # kept by the batch's writes: callers read it, never change it

    def _catalog(self, paths: list[str] | None, errors: dict[str, str] | None = None) -> dict[str, Record]:
        """``catalog`` of every note, or of ``paths``."""
        manifest = (self.index_dir / "manifest.db").exists()
        known = (
            (self.manifest.records(paths) if paths is not None else self.manifest.records())
            if manifest
            else {}
        )
        out: dict[str, Record] = {}
        listed = self.store.list_paths() if paths is None else paths
        if paths is None:
            self.skipped.update(self.store.rules.misnamed)
            if errors is not None:
                errors.update(self.store.rules.misnamed)
        for path in listed:
            st = self.store.stat(path)
            rec = known.get(path)
            if st is None:
                continue
            if rec is not None and (rec.mtime_ns, rec.size) == (st.mtime_ns, st.size):
                out[path] = rec
                continue
            try:
                out[path] = Record.from_note(self.store.read(path), st.mtime_ns, st.size)
            except (NoteParseError, OSError) as e:
                reason = e.reason if isinstance(e, NoteParseError) else (e.strerror or str(e))
                self.skipped[path] = reason
                if errors is not None:
                    errors[path] = str(e)
        return out

    def new_skips(self) -> dict[str, str]:
        """Notes ``catalog`` skipped that the indexes do not already report (with this reason):
        what a command that read notes should tell its user, once."""
        known = self.index_errors() if self.skipped and (self.index_dir / "manifest.db").exists() else {}
        return {p: r for p, r in self.skipped.items() if known.get(p) != r}

    def checked_ref(self, ref: str) -> str:
        """A note reference as given, refused (BadInput) when it is path-like and leads outside
        the vault (every front end, in process or through the service, asks here)."""
        if (
            ref.startswith(("/", "\\", "~", "."))
            or "/" in ref
            or "\\" in ref
            or ref.endswith((".md", ".markdown"))
        ):
            self.store.abspath(ref.replace("\\", "/"))
        return ref

    def find(self, ref: str, records: dict[str, Record] | None = None) -> Record:
        """A note by id, vault-relative path, title, alias or file name."""
        records = records if records is not None else self.catalog()
        ref = ref.strip()
        if not ref:
            raise BadInput("empty note reference")
        by_id = [r for r in records.values() if r.id and r.id.lower() == ref.lower()]
        if len(by_id) > 1:
            listing = ", ".join(sorted(r.path for r in by_id)[:5])
            raise BadInput(
                f"id {ref!r} is used by {len(by_id)} notes ({listing}); name one by its path, "
                "and give the others new ids"
            )
        if by_id:
            return by_id[0]
        rel = ref[len(str(self.root)) + 1 :] if ref.startswith(str(self.root) + os.sep) else ref
        for candidate in (rel, rel + ".md"):
            if candidate in records:
                return records[candidate]
        target = rel
        if rel.startswith("[[") and rel.endswith("]]"):
            link = parse_link(rel[2:-2])
            target = link.target if link else rel
        resolver = Resolver(
            (NoteKeys(r.path, r.title, r.aliases, r.id) for r in records.values()), extras=Resolver.EXTRAS
        )  # a reference names a note by any of its names
        matches = [r for r in records.values() if r.title.lower() == target.lower()]
        if len(matches) > 1:
            listing = ", ".join(m.key for m in matches[:5])
            raise BadInput(f"{ref!r} names {len(matches)} notes ({listing}); use an id or path")
        path = resolver.resolve(target)
        if path is None:
            for candidate in (rel, rel + ".md"):
                if self.store.is_note(candidate) and (self.root / candidate).is_file():
                    self.store.read(candidate)  # raises the parse error that kept it out
            raise NoteNotFound(f"no note {ref!r} in {self.root}{_suggest(target, records.values())}")
        return records[path]

    def index_status(self, drift: bool = True) -> dict[str, Any]:
        """Notes indexed, files that could not be indexed, and whether the indexes match the
        files; read through a connection of its own, so it can answer while a batch is applied."""
        if not (self.index_dir / "manifest.db").exists():
            self.manifest  # noqa: B018 -- creates an empty one: nothing is indexed yet
        manifest = Manifest(self.index_dir / "manifest.db", readonly=True)
        try:
            counts = {"notes_indexed": manifest.count(), "errors": manifest.errors(),
                      "duplicate_ids": manifest.duplicate_ids()}  # fmt: skip
            if not drift:  # just the counts: cheap enough to poll
                return counts
            diff = Indexer(self.store, manifest, self.bm25, self.embedder).diff()
            conflicts = manifest.paths_with_status("conflict")
            return {**counts, "in_sync": not any(diff.values()), "drift": diff, "conflicts": conflicts}
        finally:
            manifest.close()

    @staticmethod
    def init(path: str | os.PathLike) -> list[str]:
        """Create a vault (idempotent); returns the files it created."""
        from .core.scaffold import init_vault

        return init_vault(Path(path))

    def __repr__(self) -> str:
        return f"Vault({str(self.root)!r})"

    # ------------------------------------------------------------------ lifecycle and usage

    def resolve(self, ref: str) -> dict[str, Any]:
        return lifecycle.resolve(self, ref)

    def resolve_source(self, source: str) -> list[dict[str, Any]]:
        return lifecycle.resolve_source(self, source)

    def supersede(self, old: str, new: str) -> dict[str, Any]:
        return lifecycle.supersede(self, old, new)

    def reopen(self, ref: str) -> dict[str, Any]:
        return lifecycle.reopen(self, ref)

    def confirm(self, ref: str) -> dict[str, Any]:
        return lifecycle.confirm(self, ref)

    def maintain(self, apply: bool = False, days: int | None = None, now: Any = None,
                 code_dir: Path | None = None) -> dict[str, Any]:  # fmt: skip
        """The aging rules' plan; carried out only with ``apply`` (``now``: a fixed clock).
        ``code_dir``: a code repository whose merged or deleted branches' memories are promoted
        or archived (``branches.maintain``). ``agents_md``: the files the config's
        ``[agents_md]`` refreshes on maintain (only said, without ``apply``)."""
        self.ensure_synced()
        files = self.agents_md_files("maintain")  # a bad one fails before anything changed
        if apply:  # so does a file vaultmem cannot write a section into (broken markers, not UTF-8)
            agents_md.refresh(self, files, self.config["agents_md"]["anchor"], apply=False)
        actions = aging.plan(self, days=days, now=now)
        done = aging.apply(self, actions, now) if apply else []
        planned = [a.__dict__ for a in actions]
        merges = dupes.plan(self)  # near-duplicates, e.g. remembered on two machines
        planned += [dupes.as_action(self, m) for m in merges]
        if apply:
            done += dupes.apply(self, merges)
        state = branches.code_state(code_dir) if code_dir is not None else None
        if state is not None:
            moved = branches.maintain(self, state, apply)
            planned += moved
            done += moved if apply else []
        refreshed = agents_md.refresh(self, files, self.config["agents_md"]["anchor"], apply)
        return {"applied": apply, "actions": planned, "done": len(done), "agents_md": refreshed}

    def agents_md_files(self, event: str) -> list[Path]:
        """The files whose vaultmem section the config's ``[agents_md]`` refreshes on ``event``
        ("maintain" or "sync"), checked (a bad path is a one-line error naming the key)."""
        label = str(configmod.config_path(self.root))
        return agents_md.targets(self.root, self.config["agents_md"], event, label)

    def refresh_agents_md(self, event: str, apply: bool = True) -> list[dict[str, Any]]:
        """Refresh the files ``[agents_md]`` names for ``event`` (see ``agents_md.refresh``)."""
        return agents_md.refresh(self, self.agents_md_files(event), self.config["agents_md"]["anchor"], apply)

    def rate(
        self, ratings: list[tuple[str, bool]], source: str | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Record usefulness ratings (id, title or path, useful?) of memories: every memory
        found is rated (``rated``); a reference that names no note, or several, is not, and is
        returned in ``unknown`` with the reason (one bad id does not cost the others)."""
        records = self.catalog()
        rated, unknown = [], []
        for ref, useful in ratings:
            try:
                rec = self.find(ref, records)
            except (NoteNotFound, BadInput) as e:
                unknown.append({"id": ref, "error": str(e)})
                continue
            self.usage.rate(rec.key, bool(useful), source)
            rated.append({"id": rec.key, "title": rec.title, "useful": bool(useful)})
        return {"rated": rated, "unknown": unknown}

    def gap(self, text: str, query: str | None = None, source: str | None = None) -> None:
        """Record a knowledge gap: something an agent needed and memory did not have."""
        if not text.strip():
            raise BadInput("describe the gap: what did you need?")
        self.usage.add_gap(text, query, source)

    def gaps(self) -> list[dict[str, Any]]:
        """Reported gaps, most frequent first; ``last`` (when last reported) as an ISO time in UTC,
        as every other time vaultmem prints."""
        return [{**g, "last": from_timestamp(g["last"])} for g in self.usage.gaps()]

    def snapshot_counts(self, day: str | None = None) -> bool:
        """Record today's counts of notes by type and status in the usage store, once a day
        (one indexed query when the day has none yet, one lookup otherwise); True if recorded."""
        day = day or dt.date.today().isoformat()
        try:
            if self.usage.has_counts(day):
                return False
            return self.usage.snapshot_counts(day, self.manifest.counts_by_type_status())
        except sqlite3.OperationalError:  # busy or read-only: a missed snapshot must not fail a reindex
            return False

    def count_history(self, days: int = 365) -> list[tuple[str, dict[tuple[str, str], int]]]:
        """Daily counts by (type, status), oldest first (see ``snapshot_counts``)."""
        return self.usage.count_history(days)

    # ------------------------------------------------------------------ agents

    def wake(self, anchor: str | None = None, task: str | None = None, profile: str = "default",
             budget: int = 2000, shown: Callable[[Path, str], bool] | None = None) -> dict[str, Any]:  # fmt: skip
        """The session-start [MEMORY] block (see context.py); ``shown``: which memories it may
        show (branch scope, see ``branches.shown_test``)."""
        result = context.wake(self, anchor, task, profile, budget, shown=shown)
        sessions.record_anchor(self, anchor)  # the session's checkpoint and sleep default to it
        return result

    def sleep(self, summary: str, next_steps: str | None = None, source: str | None = None,
              anchor: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """Session summary (and handoff with next steps) at the end of a session (``extra``: more
        frontmatter for the notes it creates, e.g. the branch scope)."""
        return sessions.sleep(self, summary, next_steps, source, anchor, extra)

    def checkpoint(self, text: str, source: str | None = None, anchor: str | None = None,
                   extra: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """Append a timestamped line to the current session's handoff note."""
        return sessions.checkpoint(self, text, source, anchor, extra)

    # ------------------------------------------------------------------ notes

    # The note operations live in ops.py as functions of the vault's state (state.VaultState);
    # the facade offers them as methods so the API stays one object.
    remember = ops.remember
    age_anchor = ops.age_anchor
    show = ops.show
    list_notes = ops.list_notes
    edit = ops.edit
    write_note = ops.write_note
    delete = ops.delete
    stats = ops.stats
    export = ops.export
    import_ = ops.import_
