"""A vault's watcher: file events -> a stream of change sets -> its consumers (the memory
service runs one per vault it serves; ``vaultmem watch`` is that service in the foreground).

A watchdog observer reports changes (``ChangeStream``); they are collected into a change set
that is released once the vault has been quiet for ``quiet`` seconds, or at the latest
``max_delay`` seconds after the first change, so a ``git checkout`` of a thousand notes is one
batch. Folder events and ``.gitignore`` edits make a full (stat-based, cheap) reconcile instead
of per-file work. The watcher consumes the stream: it indexes each change set through
``Vault.reindex`` (which applies the vault's rules, as ``vaultmem index`` does: no rule lives
here), then runs housekeeping. The web view reads the
same stream (``web/state.py``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from ..core.config import CONFIG_FILE
from ..core.discovery import STATE_DIR, USAGE_DIR
from ..core.errors import VaultError
from ..core.lock import WriterLock
from ..index.indexer import HUGE_CHARS, Summary

log = logging.getLogger("vaultmem.service.watch")
CONFIG_QUIET = 0.3  # seconds the config file must stay unchanged before it is reloaded


def _malloc_trim() -> Callable[[], Any] | None:
    """glibc's ``malloc_trim(0)`` (None on other C libraries)."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


class Housekeeping:
    """Gives memory freed by applied batches back, so a long-running watcher does not sit on it.

    whoosh's readers and writers sit in reference cycles (their segment files are unmapped when
    they close, see ``bm25``, but their Python objects wait for the garbage collector), which a
    large long-lived heap rarely runs on its own. After each batch a young-generation collection
    (~2 ms) frees most of it; a full collection (~50 ms on a 2k-note vault, ~190 ms on 10k: it
    holds the GIL, so a recall waits) runs when the watcher goes idle, and while it stays busy
    at most every ``every`` seconds. Each run ends with glibc's ``malloc_trim``, which returns
    the freed pages to the OS.
    """

    def __init__(self, every: float = 60.0):
        self.every = every
        self.runs = 0  # full collections
        self._dirty = False
        self._busy: set[object] = set()  # callers whose last turn applied a batch
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._trim = _malloc_trim()

    @property
    def idle(self) -> bool:
        """No caller's last turn applied a batch."""
        return not self._busy

    def after(self, applied: bool, caller: object = None) -> None:
        """Called after each turn of a watcher loop (``applied``: a batch was just applied).

        Watchers in one process share one instance (collections are process-wide): the
        process counts as idle only once every caller's last turn applied nothing.
        """
        with self._lock:
            (self._busy.add if applied else self._busy.discard)(caller)
            self._dirty |= applied
            if self._dirty and (self.idle or time.monotonic() - self._last >= self.every):
                gc.collect()
                self._dirty, self._last = False, time.monotonic()
                self.runs += 1
            elif applied:
                gc.collect(1)
            else:
                return
            if self._trim is not None:
                self._trim()


@dataclass
class Batch:
    """Paths to sync, or ``full`` for a whole-vault reconcile."""

    paths: set[str] = field(default_factory=set)
    full: bool = False


class Batcher:
    """Thread-safe collector of changed paths with a quiet period and a maximum delay."""

    def __init__(self, quiet: float = 0.2, max_delay: float = 1.0):
        self.quiet, self.max_delay = quiet, max_delay
        self._cond = threading.Condition()
        self._batch = Batch()
        self._first = self._last = 0.0
        self._held = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Collect changes without releasing a batch (a git pull lands as one burst)."""
        with self._cond:
            self._held += 1
        try:
            yield
        finally:
            with self._cond:
                self._held -= 1
                self._last = time.monotonic()
                self._cond.notify_all()

    def add(self, paths: set[str] | None = None, full: bool = False) -> None:
        with self._cond:
            now = time.monotonic()
            if not self._batch.paths and not self._batch.full:
                self._first = now
            self._last = now
            self._batch.paths |= paths or set()
            self._batch.full |= full
            self._cond.notify_all()

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._batch.paths) + (1 if self._batch.full else 0)

    def take(self, stop: threading.Event, idle: float | None = None) -> Batch | None:
        """Wait for a ready batch; on stop, return what is pending at once (None if nothing).

        With ``idle``, an empty batch comes back after that many seconds without changes.
        """
        started = time.monotonic()
        with self._cond:
            while True:
                has = bool(self._batch.paths or self._batch.full)
                now = time.monotonic()
                ready = not self._held and (
                    now - self._last >= self.quiet or now - self._first >= self.max_delay
                )
                if has and (stop.is_set() or ready):
                    batch, self._batch = self._batch, Batch()
                    return batch
                if stop.is_set():
                    return None
                if not has and idle is not None and now - started >= idle:
                    return Batch()
                if has and not self._held:
                    timeout = min(self.quiet - (now - self._last), self.max_delay - (now - self._first))
                else:
                    timeout = 0.5
                self._cond.wait(max(0.005, timeout))

    def drain(self) -> Batch | None:
        """What is pending, at once (None if nothing): for a reader that only needs to know."""
        with self._cond:
            if not (self._batch.paths or self._batch.full):
                return None
            batch, self._batch = self._batch, Batch()
            return batch

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


class EventCollector(FileSystemEventHandler):
    """Turns watchdog events into vault-relative paths for the batcher."""

    def __init__(self, root: Path, batcher: Batcher, is_candidate: Callable[[str], bool],
                 on_rules_change: Callable[[], None], on_config_change: Callable[[], None] = lambda: None):  # fmt: skip
        self.root = str(root)
        self.batcher = batcher
        self.is_candidate = is_candidate
        self.on_rules_change = on_rules_change
        self.on_config_change = on_config_change

    def _rel(self, path: str | bytes) -> str | None:
        path = os.fsdecode(path)
        if path != self.root and not path.startswith(self.root + os.sep):
            return None
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if rel == "." or rel.split("/", 1)[0] in (STATE_DIR, USAGE_DIR):
            return None
        return rel

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        found = [self._rel(event.src_path)]
        if getattr(event, "dest_path", None):
            found.append(self._rel(event.dest_path))
        rels = [r for r in found if r]
        if not rels:
            return
        if CONFIG_FILE in rels:  # the vault's settings, in its root folder
            self.on_config_change()
            return
        if any(r.rsplit("/", 1)[-1] == ".gitignore" for r in rels):
            self.on_rules_change()
            self.batcher.add(full=True)
        elif event.is_directory:
            if event.event_type != "modified":  # created, deleted, moved folders
                self.batcher.add(full=True)
        else:
            notes = {r for r in rels if self.is_candidate(r)}
            if notes:
                self.batcher.add(notes)


class ChangeStream:
    """A vault's file events as change sets (``Batch``): a watchdog observer (polling when the
    OS runs out of watches) feeds a ``Batcher``. Ignored paths, ``.vaultmem/`` and the usage
    folder never make a change set; the config file and ``.gitignore`` files have their own
    callbacks. Its consumers: the watcher (indexing with the vault's rules, then the socket's
    warm views and housekeeping) and the web view, which reads the same stream."""

    def __init__(self, root: Path, is_candidate: Callable[[str], bool], quiet: float = 0.2, max_delay: float = 1.0,
                 on_rules_change: Callable[[], None] = lambda: None,
                 on_config_change: Callable[[], None] = lambda: None):  # fmt: skip
        self.root = root
        self.batcher = Batcher(quiet, max_delay)
        self.polling = False
        self._handler = EventCollector(root, self.batcher, is_candidate, on_rules_change, on_config_change)
        self._observer: Any = None

    def start(self) -> None:
        try:
            observer = Observer()
            observer.schedule(self._handler, str(self.root), recursive=True)
            observer.start()
        except OSError as e:  # inotify watch or instance limit reached
            log.warning("native file events unavailable (%s); falling back to polling every 1 s", e)
            self.polling = True
            observer = PollingObserver(timeout=1)
            observer.schedule(self._handler, str(self.root), recursive=True)
            observer.start()
        self._observer = observer

    def take(self, stop: threading.Event, idle: float | None = None) -> Batch | None:
        """The next change set (see ``Batcher.take``)."""
        return self.batcher.take(stop, idle)

    def drain(self) -> Batch | None:
        """The pending change set at once, or None."""
        return self.batcher.drain()

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None


class WriterFirst:
    """One-at-a-time access to the vault where applying a batch goes before waiting readers,
    so a stream of recall requests can never starve the indexing of a saved file; the steps of
    long work (a first index) go after the readers already waiting (``background``), so they
    never starve the readers either."""

    PATIENCE = 5.0  # seconds a step of long work lets waiting readers go first, at most

    def __init__(self, mutex: threading.RLock):
        self.mutex = mutex
        self._cond = threading.Condition()
        self._writers = 0
        self._readers = 0  # readers waiting for the vault or reading it

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._writers += 1
        try:
            self.mutex.acquire()
        finally:
            with self._cond:
                self._writers -= 1
                self._cond.notify_all()
        try:
            yield
        finally:
            self.mutex.release()

    @contextmanager
    def background(self) -> Iterator[None]:
        """``write`` for a step of long work: after the readers waiting now (PATIENCE at most)."""
        with self._cond:
            self._cond.wait_for(lambda: not self._readers, timeout=self.PATIENCE)
        with self.write():
            yield

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writers:
                self._cond.wait()
            self._readers += 1
        try:
            with self.mutex:
                yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()


@dataclass
class WatchState:
    """What ``vaultmem status`` reports about a running watcher."""

    started: float = field(default_factory=time.time)
    batches: int = 0
    last_batch: dict | None = None
    last_error: str | None = None
    polling: bool = False
    rebuilds: int = 0  # times .vaultmem/ was deleted under the watcher and rebuilt


class Indexing:
    """How far a watcher's long work is: its phase ("keywords": the reconcile; "vectors": notes
    embedded; "contexts": contextual vectors), done of total, and the time left at this phase's
    rate so far (``status``: "indexing N of M, about T left")."""

    def __init__(self) -> None:
        self.phase: str | None = None
        self.done = self.total = self._first = 0
        self._since = 0.0

    def begin(self, phase: str, done: int, total: int) -> None:
        self.phase, self.done, self.total, self._first = phase, done, total, done
        self._since = time.monotonic()

    def step(self, done: int) -> None:
        self.done = done

    def end(self) -> None:
        self.phase = None

    def as_dict(self) -> dict | None:
        if self.phase is None:
            return None
        elapsed, gained = time.monotonic() - self._since, self.done - self._first
        left = (self.total - self.done) * elapsed / gained if gained > 0 else None
        return {"phase": self.phase, "done": self.done, "total": self.total,
                "seconds_left": round(left, 1) if left is not None else None}  # fmt: skip


def _add(total: Summary, part: Summary) -> None:
    """Count a slice's summary into a whole reconcile's."""
    for name in ("added", "updated", "moved", "removed", "embedded", "seconds"):
        setattr(total, name, getattr(total, name) + getattr(part, name))
    total.unchanged = max(0, part.unchanged - len(total.touched))  # the settling pass counts all
    total.errors.update(part.errors)
    total.touched |= part.touched


class Watcher:
    """Keeps one vault's indexes in step with its files (the memory service runs one per vault)."""

    def __init__(self, vault: Any, quiet: float = 0.2, max_delay: float = 1.0,
                 on_batch: Callable[[dict], None] | None = None):  # fmt: skip
        self.vault = vault
        self.root: Path = vault.root
        self.stream = ChangeStream(self.root, self._is_candidate, quiet, max_delay, self._rules_changed,
                                   self._config_changed)  # fmt: skip
        self.batcher = self.stream.batcher
        self.mutex = threading.RLock()
        self.gate = WriterFirst(self.mutex)
        self.state = WatchState()
        self.stop_event = threading.Event()
        self.lock = WriterLock(vault.lock_path)
        self.on_batch = on_batch
        self.housekeeping = Housekeeping()
        self._failures = 0  # batches failed in a row
        self.keywords_first = False  # the service: big work indexed for keywords first, vectors behind
        self._catching_up = False  # the start's reconcile is still to run (``_catch_up``, in the run loop)
        self._todo: list[str] | None = (
            None  # pending notes (no vectors yet) the fill works through; None: ask
        )
        self._rounds = 0  # whole reconciles done (``reindex`` waits for the next)
        self._embedded = 0  # texts the fill embedded since ``reindex`` asked
        self._contexts_due = False  # contextual vectors to make once no note is pending
        self.indexing = Indexing()  # how far the long work is (``status``)
        self.caught_up = Summary()  # what the last reconcile did (``reindex`` through the service)
        self._filled = threading.Condition()  # notified at each commit of vectors and when idle
        self._config_timer: threading.Timer | None = None
        self._config_timer_lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Take the writer lock, reconcile, start the observer."""
        if not self.lock.acquire("watch"):
            holder = self.lock.holder() or {}
            raise VaultError(
                f"another vaultmem process (pid {holder.get('pid', '?')}, {holder.get('role', '?')}) "
                f"is writing this vault's indexes; only one watcher per vault"
            )
        try:
            self.vault.hold_lock(self.lock)
            self.stream.start()
            self.state.polling = self.stream.polling
            if self.keywords_first:  # the run loop reconciles in slices: reads are served meanwhile
                self.vault.refresh()  # (from the index as it is; a read never indexes the vault itself)
                self._catching_up = True
                return
            with self.gate.write():
                self._apply(Batch(full=True))
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ big work, behind the answers

    CATCH_UP = 128  # notes indexed for keywords per hold of the gate (~0.3 s quiet, ~10 s at load 35)
    FILL = 32  # notes embedded per step of the fill (their vectors committed in one moment)
    FIRST_FILL = 8  # ... in its first step: the first vectors answer within a second or two
    INLINE = 32  # a batch of at most this many notes gets its vectors at once (read-your-writes)

    def _catch_up(self) -> None:
        """Reconcile the whole vault for keywords, in slices of CATCH_UP notes with the gate
        released between them (a first index of thousands of notes answers from its first
        slice on); the vectors follow (``_fill_step``)."""
        with self.gate.write():
            paths = self.vault.changed_paths()
        self.indexing.begin("keywords", 0, len(paths))
        total = Summary()
        few = len(paths) <= self.INLINE  # a restart's or a folder event's few notes: with their vectors
        for i in range(0, len(paths), self.CATCH_UP):
            if self.stop_event.is_set():
                return
            with self.gate.background():
                done = self._apply(Batch(set(paths[i : i + self.CATCH_UP])), vectors=few)
            _add(total, done)
            self.indexing.step(min(i + self.CATCH_UP, len(paths)))
        with self.gate.write():  # settles what moved meanwhile; the rules, the day's counts
            _add(total, self._apply(Batch(full=True), vectors=False))
        self.caught_up = total
        self._catching_up = False
        self._contexts_due = True
        self._todo = None
        self._rounds += 1
        self.indexing.end()
        self._notify()

    def busy(self) -> bool:
        """Whether long work is left: the reconcile, notes without vectors, contextual vectors."""
        return self._catching_up or self._contexts_due or bool(self._pending_now())

    def busy_now(self) -> bool:
        """``busy`` as last known (asks nothing: any thread may call it)."""
        return bool(self._catching_up or self._todo is None or self._todo or self._contexts_due
                    or self.batcher.pending)  # fmt: skip

    def _pending_now(self) -> list[str]:
        if self._todo is None:
            with self.gate.write():
                self._todo = self.vault.pending_vectors()
        return self._todo

    def _fill_step(self) -> None:
        """Embed the next FILL pending notes outside the gate (recall answers meanwhile) and
        commit their vectors under it; then, once none is pending, the contextual vectors."""
        todo = self._pending_now()
        if not todo:
            if self._contexts_due:
                self._fill_contexts()
            return
        if self.indexing.phase != "vectors":
            done, total = self.vault.vector_counts()
            self.indexing.begin("vectors", done, total)
        step = self.FIRST_FILL if self.indexing.done == self.indexing._first else self.FILL
        part, self._todo = todo[:step], todo[step:]
        filled = self.vault.embed_pending(part)
        with self.gate.background():
            committed = self.vault.commit_vectors(filled)
        self._embedded += len(filled.vectors)
        self.indexing.step(self.indexing.done + len(committed))
        if not self._todo:
            self._contexts_due = True
            self.indexing.end()
        self._notify()

    def _fill_contexts(self) -> None:
        """The contextual vectors (``index/context.py``) after the plain ones: planned under the
        gate, embedded outside it, written in steps."""
        with self.gate.write():
            work = self.vault.context_work()
        self._contexts_due = False
        if work is None:
            self._notify()
            return
        rows, gone, texts = work
        paths = sorted(rows)
        self.indexing.begin("contexts", 0, len(paths))
        for i in range(0, max(len(paths), 1), self.FILL):
            if self.stop_event.is_set():
                self._contexts_due = True
                return
            part = {p: rows[p] for p in paths[i : i + self.FILL]}
            vectors = self.vault.embed_texts({h: texts[h] for _, h in part.values()})
            with self.gate.background():
                self.vault.commit_contexts(part, gone if i == 0 else [], vectors)
            self.indexing.step(min(i + self.FILL, len(paths)))
        self.indexing.end()
        self._notify()

    @property
    def catching_up(self) -> bool:
        """Whether the start's reconcile (keywords) is still running."""
        return self._catching_up

    def wait_caught_up(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the keyword index to be whole (at once when it
        is, or ``timeout`` is 0: no lock taken)."""
        if timeout <= 0 or not self._catching_up:
            return
        with self._filled:
            self._filled.wait_for(lambda: not self._catching_up, timeout)

    def reindex(self, rebuild: bool = False, emit: Callable[[dict], None] = lambda e: None,
                every: float = 1.0) -> Summary:  # fmt: skip
        """The whole vault indexed again (``rebuild``: from nothing) by the run loop, which keeps
        answering reads; returns once its vectors are in, ``emit``-ting how far it is every
        ``every`` seconds. The summary: what the reconcile did, and the chunks embedded."""
        started = time.perf_counter()
        if rebuild:
            with self.gate.write():
                self.vault.clear_indexes()
        with self._filled:
            rounds, self._embedded = self._rounds, 0
        if rebuild or not self._catching_up:  # else the reconcile under way (the vault just opened) is it
            self.batcher.add(full=True)
        while True:
            with self._filled:
                if self._rounds > rounds and not self.busy_now():
                    break
                self._filled.wait(every)
            if self.stop_event.is_set():
                raise VaultError("the memory service is stopping; run vaultmem index again")
            emit(self.indexing.as_dict() or {"phase": "waiting"})
        summary = self.caught_up
        summary.embedded, summary.seconds = self._embedded, time.perf_counter() - started
        return summary

    def wait_filled(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the next commit of vectors (or the end of a
        step of the long work)."""
        with self._filled:
            self._filled.wait(timeout)

    def _notify(self) -> None:
        with self._filled:
            self._filled.notify_all()

    def _is_candidate(self, rel: str) -> bool:
        return not self.vault.store.rules.ignored(rel)

    def _rules_changed(self) -> None:
        self.vault.store.rules.forget()

    def _config_changed(self) -> None:
        """The vault's config file changed: reload it once it has been quiet for a moment (an
        editor saving in place truncates the file first; that empty moment is not a config)."""
        with self._config_timer_lock:
            if self._config_timer is not None:
                self._config_timer.cancel()
            self._config_timer = threading.Timer(CONFIG_QUIET, self._reload_config)
            self._config_timer.daemon = True
            self._config_timer.start()

    def _reload_config(self) -> None:
        """Recall, adaptive and lifecycle settings apply from the next call; what shapes the
        indexes ([vault], [folders], [embedding]) needs a restart."""
        try:
            with self.gate.write():
                pending = self.vault.reload_config()
        except VaultError as e:
            log.warning("config not reloaded, the settings in use stay: %s", e)
            return
        if pending:
            log.warning(
                "config reloaded; [%s] changed and applies when vaultmem watch restarts", "], [".join(pending)
            )
        else:
            log.info("config reloaded")

    def run(self) -> None:
        """Apply batches until ``stop()``; the pending batch is applied before returning. In
        the service (``keywords_first``) the start's reconcile runs here, in slices, and the
        vectors of what was indexed for keywords are filled in between the batches."""
        try:
            if self._catching_up:
                self._catch_up()
            while True:
                busy = self.keywords_first and self.busy()
                batch = self.stream.take(self.stop_event, idle=0.0 if busy else 1.0)
                if batch is None:
                    return
                if not self.root.is_dir():
                    raise VaultError(f"the vault folder {self.root} disappeared; stopping")
                if self._state_lost():
                    self._rebuild_state()
                if batch.full and self.keywords_first:
                    self._catch_up()
                else:
                    for part in self._slices(batch):
                        with self.gate.write():  # released between slices so recall is never held long
                            self._apply(part)
                if busy and not (batch.paths or batch.full):
                    self._fill_step()
                self.housekeeping.after(applied=bool(batch.paths or batch.full) or busy, caller=self)
        finally:  # an ended watcher no longer keeps a shared schedule busy
            self.housekeeping.after(applied=False, caller=self)

    def _state_lost(self) -> bool:
        """Whether ``.vaultmem/`` was deleted (or replaced) under this watcher: its lock
        file or its manifest is no longer the one it holds open."""
        return not self.lock.still_held() or not (self.vault.index_dir / "manifest.db").exists()

    def _rebuild_state(self) -> None:
        """Let go of the deleted indexes, take the writer lock again and rebuild from the
        files; stops (VaultError) if another process took the new lock first."""
        log.warning("%s/ was deleted under the watcher; rebuilding the indexes from the files", STATE_DIR)
        with self.gate.write():
            self.vault.hold_lock(None)
            self.lock.release()
            self.vault.close()
            if not self.lock.acquire("watch"):
                holder = self.lock.holder() or {}
                raise VaultError(f"{STATE_DIR}/ was deleted and another vaultmem process (pid {holder.get('pid', '?')}) "
                                 "now writes the indexes; this watcher stops")  # fmt: skip
            self.vault.hold_lock(self.lock)
            if self.keywords_first:
                self.vault.refresh()
                self._catching_up = True
            else:
                self._apply(Batch(full=True))
        if self._catching_up:
            self._catch_up()
        self.state.rebuilds += 1

    SLICE = 128  # paths applied per step of a big batch
    RETRIES = 3  # a failing batch is retried this often, then waits for the next file change

    def _slices(self, batch: Batch) -> list[Batch]:
        """A batch in steps of SLICE paths; a huge note (HUGE_CHARS bytes or more) is applied
        after the others, alone, so that recall gets its turn before it and the other saves
        are not held behind it."""
        if batch.full:
            return [batch]
        huge = {p for p in batch.paths if self._size(p) >= HUGE_CHARS}
        paths = sorted(batch.paths - huge)
        return [Batch(set(paths[i : i + self.SLICE])) for i in range(0, len(paths), self.SLICE)] + [
            Batch({p}) for p in sorted(huge)
        ]

    def _size(self, path: str) -> int:
        try:
            return (self.root / path).stat().st_size
        except OSError:
            return 0

    def _apply(self, batch: Batch, vectors: bool | None = None) -> Summary:
        """Index a batch (the gate held); ``vectors`` None: with its vectors when it is small
        (INLINE notes) or no service serves it, else for keywords first (``_fill_step``)."""
        if vectors is None:
            vectors = not self.keywords_first or (not batch.full and len(batch.paths) <= self.INLINE)
        try:
            summary = self.vault.reindex(None if batch.full else sorted(batch.paths), vectors=vectors)
        except VaultError:
            raise
        except Exception as e:  # keep watching; retry a few times, then wait for the next change
            self.state.last_error = f"{type(e).__name__}: {e}"
            self._failures += 1
            if self._failures <= self.RETRIES:
                log.error("could not apply a batch (retrying, %d of %d): %s", self._failures, self.RETRIES,
                          self.state.last_error)  # fmt: skip
                self.batcher.add(full=True)
                time.sleep(0.5 * self._failures)
            else:
                log.error("could not apply a batch: %s; waiting for the next change", self.state.last_error)
            return Summary()
        self._failures = 0
        if not vectors and summary.touched:
            self._todo = None  # asked again: the notes just indexed for keywords are pending
        self.state.batches += 1
        self.state.last_batch = {**summary.as_dict(), "paths": len(batch.paths), "full": batch.full}
        self.state.last_error = None  # recovered: status shows only what is still wrong
        for d in summary.superseded:  # the vault's rules (memory.rules) ran in reindex
            log.info("superseded %s by %s (%s)", d["id"], d["by"], d["rule"])
        for path, reason in summary.errors.items():
            self.state.last_error = f"{path}: {reason}"
            log.warning("skipped %s: %s", path, reason)
        if self.on_batch:
            self.on_batch(self.state.last_batch)
        return summary

    def flush(self) -> None:
        """Apply the changes seen so far now, not after the quiet period: a call about to read
        or write the vault sees every file written before it (an editor's save included)."""
        batch = self.batcher.drain()
        if batch is None:
            return
        if batch.full and self.keywords_first:  # a whole reconcile: the run loop does it in slices,
            self.batcher.add(full=True)  # the gate released between them; a read answers meanwhile
            if not batch.paths:
                return
            batch = Batch(paths=batch.paths)
        for part in self._slices(batch):
            with self.gate.write():
                self._apply(part)

    def stop(self) -> None:
        self.stop_event.set()
        self.batcher.wake()

    def close(self) -> None:
        self.stream.close()
        with self._config_timer_lock:
            if self._config_timer is not None:
                self._config_timer.cancel()
        self.vault.hold_lock(None)
        self.lock.release()

    def status(self) -> dict:
        return {
            "pid": os.getpid(), "started": self.state.started, "batches": self.state.batches,
            "pending": self.batcher.pending, "last_batch": self.state.last_batch,
            "last_error": self.state.last_error, "polling": self.state.polling,
            "indexing": self.indexing.as_dict(),
        }  # fmt: skip
