"""The per-user memory service: one process, one embedding model, every vault the user touches.

It holds the service lock (``control``), listens on the user's service socket, and serves each
vault a request names (registered vaults are opened at start-up, any other on its first
request) through a ``Watcher`` that keeps the vault's indexes in step with its files. A vault
whose indexes another process writes (a foreground ``vaultmem watch``) is served read-only. A
vault deleted or moved under the service is dropped, and opened again if a request names it
once it is back. The service exits after ``idle_exit`` seconds without a call (0: never).

It is handed the facade (``make_vault``, ``make_multi``) by the command that runs it: the
service layer does not import ``vault`` or ``multi`` (data flow, not imports).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core import config as configmod
from ..core.discovery import STATE_DIR, find_vault
from ..core.errors import BadInput, VaultError, VaultNotFound
from ..core.version import VERSION as __version__
from ..index.embed import make_embedder
from ..memory import branches
from . import client, control
from .protocol import OPS
from .server import Handler, SocketServer
from .watch import Housekeeping, Watcher

log = logging.getLogger("vaultmem.service")
DEFAULT_MODEL = configmod.DEFAULTS["embedding"]["model"]


def _vectors_pending(reader: Any) -> bool:
    """Whether one vault's first index holds no vectors yet (``Watcher.keywords_first``); several
    vaults are recalled in full (a vault without vectors yet adds its keyword hits)."""
    if hasattr(reader, "vaults"):
        return False
    from ..index.indexer import PENDING, VECTORS

    return bool(reader.embedder.name != "none" and reader.manifest.get(VECTORS) == PENDING)


@dataclass
class Entry:
    """One vault the service serves: its open Vault and, unless another process writes its
    indexes, the Watcher keeping them current."""

    root: Path
    vault: Any
    watcher: Watcher | None
    mutex: threading.RLock = field(default_factory=threading.RLock)  # read-only vaults: one call at a time
    thread: threading.Thread | None = None
    syncing: bool = False  # a git sync loop runs for it (``watch --sync-every``)
    config_stat: tuple | None = None  # the config file as last read: a changed one is read before a call

    @property
    def alive(self) -> bool:
        if self.watcher is not None:
            return self.thread is not None and self.thread.is_alive()
        return (self.root / STATE_DIR).is_dir()

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """The vault, current, for one call: the changes its watcher has seen applied first, its
        batches waiting meanwhile."""
        if self.watcher is not None:
            self.watcher.flush()
            with self.watcher.gate.read():
                yield self.vault
        else:
            with self.mutex:
                self.vault.sync()
                yield self.vault

    @contextmanager
    def writing(self) -> Iterator[Any]:
        if self.watcher is not None:
            self.watcher.flush()
            with self.watcher.gate.write():
                yield self.vault
        else:
            with self.reading() as vault:
                yield vault

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            if self.thread is not None:
                self.thread.join(timeout=60)
            self.watcher.close()
        self.vault.close()


def _reporter(root: Path) -> Callable[[dict], None]:
    """What a foreground service says about each batch that changed something."""

    def report(b: dict) -> None:
        if b["added"] or b["updated"] or b["moved"] or b["removed"]:
            log.info("%s: indexed: %d added, %d updated, %d moved, %d removed", root.name, b["added"],
                     b["updated"], b["moved"], b["removed"])  # fmt: skip

    return report


def _config_stat(root: Path) -> tuple | None:
    """What tells a changed config file (None: there is none)."""
    try:
        st = configmod.config_path(root).stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class ServiceLock:
    """The per-user service lock: an exclusive flock held for the service's life, the file
    holding its pid and version (``control.holder`` reads it)."""

    def __init__(self) -> None:
        self.fd: int | None = None

    def acquire(self) -> bool:
        control.private_runtime_dir()
        while True:
            fd = os.open(control.lock_path(), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            if _still_there(fd):
                break
            os.close(fd)  # a stopping service removed the file it held: lock the one there now
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "version": __version__}).encode(), 0)
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            if _still_there(self.fd):  # removed while held: nothing is left behind
                os.unlink(control.lock_path())
            os.close(self.fd)  # closing drops the flock
            self.fd = None


def _still_there(fd: int) -> bool:
    """Whether the lock file's path still names the file ``fd`` holds."""
    try:
        st = os.stat(control.lock_path(), follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


class Service:
    """The memory service. ``make_vault(root, embedder)`` opens a Vault; ``make_multi(named)``
    makes a MultiVault of open vaults by name; ``tasks`` are what ``doctor``, ``hook_start`` and
    ``hook_end`` run on an open vault (``cli.service.tasks``: the layers above hand them over)."""

    def __init__(self, make_vault: Callable[[Path, Any], Any], make_multi: Callable[[dict[str, Any]], Any],
                 idle_exit: float = 1800.0, quiet: float = 0.2, max_delay: float = 1.0,
                 tasks: dict[str, Callable[..., Any]] | None = None):  # fmt: skip
        self.make_vault, self.make_multi = make_vault, make_multi
        self.tasks = tasks or {}  # doctor, hook_start, hook_end: run on an open vault (see ``_task``)
        self.idle_exit = idle_exit
        self.quiet, self.max_delay = quiet, max_delay
        self.entries: dict[Path, Entry] = {}
        self.embedders: dict[tuple[str, int], Any] = {}
        self.housekeeping = Housekeeping()  # one garbage-collection schedule for every watcher
        self.ready = threading.Event()  # the default model is loaded
        self.opened = threading.Event()  # and the vaults given at start are open
        self.stop_event = threading.Event()
        self.started = time.time()
        self.calls = 0
        self._in_flight = 0
        self._last_call = time.monotonic()
        self._lock = threading.Lock()  # entries, embedders, counters
        self._opening: dict[Path, threading.Lock] = {}
        self.foreground = False  # `vaultmem watch`: the user sees its log on the terminal
        self.after_sync: Callable[[Entry, float], None] | None = None  # one git sync and its steps
        self.server = SocketServer(client.service_socket(), self._handlers())

    # ------------------------------------------------------------------ life

    def run(self, roots: Iterable[Path] = (), sync_every: float | None = None) -> bool:
        """Serve until stopped or idle; False (at once) when another service holds the lock.
        ``roots`` are opened at start (each synced through git every ``sync_every`` seconds)."""
        lock = ServiceLock()
        if not lock.acquire():
            held = control.holder() or {}
            log.info("another memory service runs (pid %s); this one exits", held.get("pid", "?"))
            return False
        try:
            self.server.start()
            log.info("memory service %s started (pid %d, socket %s, idle exit %s)", __version__, os.getpid(),
                     self.server.path, f"{self.idle_exit:g} s" if self.idle_exit else "never")  # fmt: skip
            threading.Thread(
                target=self._warm, args=(list(roots), sync_every), name="warm", daemon=True
            ).start()
            self._loop()
        finally:
            self.server.stop()
            self._drain()
            for root in list(self.entries):
                self._drop(root, "service stopping")
            lock.release()
            log.info("memory service stopped")
        return True

    def handle_signals(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop_event.set())

    def _warm(self, roots: list[Path], sync_every: float | None = None) -> None:
        """Load the model (then callers stop answering without it), then open the given vaults."""
        try:
            self.embedder(DEFAULT_MODEL, configmod.DEFAULTS["embedding"]["batch_size"]).embed(["warm up"])
        except Exception as e:  # a vault whose config names another model still works
            log.error("could not load the default model: %s", e)
        self.ready.set()
        log.info("model loaded")
        for root in roots:
            try:
                found = self.entry(root)
                with found.reading() as vault:
                    vault.warm()
                if sync_every:
                    self._sync_loop(found, sync_every)
            except Exception as e:  # one broken vault does not keep the others cold
                log.warning("%s: not opened: %s", root, e)
        self.opened.set()

    def _loop(self) -> None:
        while not self.stop_event.wait(0.5):
            self._drop_dead()
            with self._lock:
                idle = time.monotonic() - self._last_call
                busy = self._in_flight
            if self.idle_exit and not busy and idle >= self.idle_exit:
                log.info("no calls for %.0f s: exiting ([service] idle_exit)", idle)
                return

    def _drain(self, timeout: float = 30.0) -> None:
        """Let calls in flight finish before the vaults close."""
        deadline = time.monotonic() + timeout
        while self._in_flight and time.monotonic() < deadline:
            time.sleep(0.02)

    # ------------------------------------------------------------------ vaults

    def embedder(self, model: str, batch_size: int) -> Any:
        with self._lock:
            key = (model, int(batch_size))
            if key not in self.embedders:
                self.embedders[key] = make_embedder(model, int(batch_size))
            return self.embedders[key]

    def entry(self, root: str | Path, keywords_first: bool = False) -> Entry:
        """The served vault at ``root``, opened (and watched) on first use; ``keywords_first``:
        a first index without vectors, filled in behind (a recall of this vault alone)."""
        root = Path(root).resolve()
        with self._lock:
            opening = self._opening.setdefault(root, threading.Lock())
        with opening:
            found = self.entries.get(root)
            if found is not None and found.alive:
                self._check_config(found)
                return found
            if found is not None:
                self._drop(root, "its watcher stopped")
            find_vault(
                root
            )  # a folder named by path is a vault, as in process (its .vaultmem/ comes on open)
            found = self._open_entry(root, keywords_first)
            with self._lock:
                self.entries[root] = found
            return found

    def _check_config(self, found: Entry) -> None:
        """Read the vault's config file again when it changed since it was read, before the
        call that follows: a broken one fails the call (BadInput, exit 2) as it fails a command
        in its own process, until it is mended."""
        now = _config_stat(found.root)
        if now == found.config_stat:
            return
        with found.writing() as vault:
            pending = vault.reload_config()
        found.config_stat = now
        if pending:
            log.warning(
                "%s: [%s] changed and applies when the service restarts", found.root, "], [".join(pending)
            )

    def _open_entry(self, root: Path, keywords_first: bool = False) -> Entry:
        stat = _config_stat(root)
        emb = configmod.load(root)["embedding"]
        vault = self.make_vault(root, self.embedder(emb["model"], emb["batch_size"]))
        report = _reporter(root) if self.foreground else None
        watcher = Watcher(vault, quiet=self.quiet, max_delay=self.max_delay, on_batch=report)
        watcher.housekeeping = self.housekeeping
        watcher.keywords_first = keywords_first
        try:
            watcher.start()
        except VaultError as e:  # another process writes its indexes: serve it read-only
            log.info("%s: %s; serving it read-only", root, e)
            return Entry(root, vault, None, config_stat=stat)
        entry = Entry(root, vault, watcher, config_stat=stat)
        entry.thread = threading.Thread(
            target=self._watch, args=(entry,), name=f"watch-{root.name}", daemon=True
        )
        entry.thread.start()
        log.info("serving %s", root)
        return entry

    @staticmethod
    def _watch(entry: Entry) -> None:
        try:
            entry.watcher.run()  # type: ignore[union-attr]
        except BaseException as e:  # the vault went away: dropped by the loop
            log.warning("%s: %s", entry.root, e)

    def _drop_dead(self) -> None:
        for root, found in list(self.entries.items()):
            if not found.alive:
                self._drop(
                    root, "the vault is gone" if not (root / STATE_DIR).is_dir() else "its watcher stopped"
                )

    def _drop(self, root: Path, why: str) -> None:
        with self._lock:
            found = self.entries.pop(root, None)
        if found is None:
            return
        try:
            found.close()
        except Exception as e:  # its files may be gone
            log.warning("%s: closing: %s", root, e)
        log.info("dropped %s (%s)", root, why)

    @contextmanager
    def reading(self, roots: dict[str, str]) -> Iterator[Any]:
        """One vault (one root) or a MultiVault (several), current, for one call; several are
        taken in a fixed order so two calls never wait on each other crosswise."""
        if not isinstance(roots, dict) or not all(isinstance(p, str) for p in roots.values()):
            raise TypeError("roots must map names to vault folders")
        entries = {name: self.entry(path, keywords_first=len(roots) == 1) for name, path in roots.items()}
        if not entries:
            raise VaultError("no vaults named")
        with ExitStack() as stack:
            opened = {}
            for name, found in sorted(entries.items(), key=lambda item: str(item[1].root)):
                opened[name] = stack.enter_context(found.reading())
            yield next(iter(opened.values())) if len(opened) == 1 else self.make_multi(opened)

    # ------------------------------------------------------------------ protocol

    def _handlers(self) -> dict[str, Handler]:
        """One handler per declared operation (``protocol.OPS``); all but ping and stop count
        as calls (they keep the service from exiting idle)."""
        ops: dict[str, Handler] = {name: getattr(self, f"_{name}") for name in OPS}
        return {name: self._counted(fn) if name not in ("ping", "stop") else fn for name, fn in ops.items()}

    def _counted(self, fn: Handler) -> Handler:
        def run(args: dict) -> Any:
            with self._lock:
                self._in_flight += 1
                self.calls += 1
            try:
                return fn(args)
            finally:
                with self._lock:
                    self._in_flight -= 1
                    self._last_call = time.monotonic()

        return run

    def _ping(self, args: dict) -> dict[str, Any]:
        return {"pid": os.getpid(), "version": __version__, "ready": self.ready.is_set(), "started": self.started,
                "calls": self.calls, "idle_exit": self.idle_exit, "log": str(control.log_path()),
                "vaults": sorted(str(r) for r in self.entries), "foreground": self.foreground}  # fmt: skip

    def _stop(self, args: dict) -> dict[str, Any]:
        self.stop_event.set()
        return {"pid": os.getpid()}

    def _open(self, args: dict) -> list[str]:
        roots = args["roots"]
        if not all(isinstance(root, str) for root in roots):
            raise BadInput("open: roots must be a list of vault folders")
        for root in roots:  # never a folder that is no vault (`/` would be watched whole)
            if not (Path(root) / STATE_DIR).is_dir():
                raise VaultNotFound(f"{root} is not a vault (no {STATE_DIR}/ in it)")
        opened = [self.entry(root) for root in roots]
        if args["sync_every"]:
            for found in opened:
                self._sync_loop(found, args["sync_every"])
        return [str(found.root) for found in opened]

    def _recall(self, args: dict) -> dict[str, Any]:
        """Hits as dicts; without ``wait`` while the model loads, from BM25 and the graph only
        (``degraded``: "bm25"); ``skipped``: the notes left out because they cannot be read."""
        options = dict(args["options"])
        degraded = not args["wait"] and not self.ready.is_set() and options.get("mode", "hybrid") != "bm25"
        if degraded:
            options["mode"] = "bm25"
        if not args["all_branches"]:  # other code branches' memories: left out here, where the index is
            options["shown"] = branches.shown_test(Path(args["cwd"]), args["branch"])
        with self.reading(args["roots"]) as reader:
            filling = not degraded and _vectors_pending(reader) and options.get("mode", "hybrid") != "bm25"
            if filling:
                options["mode"] = "bm25"
            hits = [h.as_dict(args["explain"]) for h in reader.recall(args["query"], **options)]
        skipped = self.skipped(args["roots"])
        return {
            "hits": hits,
            "degraded": "bm25" if degraded else "first-index" if filling else None,
            "skipped": skipped,
        }

    def skipped(self, roots: dict[str, str]) -> dict[str, str]:
        """The notes of these vaults their indexes could not read (``vault:path`` for several)."""
        many = len(roots) > 1
        return {(f"{name}:{path}" if many else path): reason for name, root in roots.items()
                for path, reason in self.entry(root).vault.index_errors().items()}  # fmt: skip

    def _wake(self, args: dict) -> dict[str, Any]:
        shown = None if args["all_branches"] else branches.shown_test(Path(args["cwd"]), args["branch"])
        with self.reading(args["roots"]) as reader:
            return reader.wake(anchor=args["anchor"], task=args["task"], profile=args["profile"],
                               budget=args["budget"], shown=shown)  # fmt: skip

    def _remember(self, args: dict) -> dict[str, Any]:
        fields = dict(args["fields"])
        if isinstance(fields.get("now"), str):  # a fixed clock travels as ISO text
            fields["now"] = datetime.fromisoformat(fields["now"])
        with self.entry(args["root"]).writing() as vault:
            return vault.remember(args["type"], args["title"], args["content"], **fields)

    def _edit(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).writing() as vault:
            return vault.edit(vault.checked_ref(args["ref"]), **args["fields"])

    def _sleep(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).writing() as vault:
            return vault.sleep(args["summary"], **args["fields"])

    def _checkpoint(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).writing() as vault:
            return vault.checkpoint(args["text"], **args["fields"])

    def _shown(self, args: dict) -> None:
        """Memories a client showed (a prompt hook), logged as retrievals in the vault's usage store."""
        ids = args["ids"]
        if not all(isinstance(i, str) for i in ids):
            raise TypeError("ids must be a list of strings")
        with self.entry(args["root"]).reading() as vault:  # as recall logs its hits
            vault.usage.log_retrievals(ids, args["via"])

    def _status(self, args: dict) -> dict[str, Any]:
        found = self.entry(args["root"])
        watcher = found.watcher.status() if found.watcher is not None else {"pid": None}
        return {**watcher, "by": "service" if found.watcher is not None else None,
                **found.vault.index_status(drift=args["drift"])}  # fmt: skip

    def _reindex(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).writing() as vault:
            return vault.reindex(rebuild=args["rebuild"]).as_dict()

    def _sync(self, args: dict) -> dict[str, Any] | None:
        """Index the notes a client just wrote, before it returns (read-your-writes: the next
        call from any client sees them; the watcher later finds them unchanged)."""
        paths = [str(p) for p in args["paths"]]
        with self.entry(args["root"]).writing() as vault:
            summary = vault.sync(paths)
        return summary.as_dict() if summary is not None else None

    def _show(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).reading() as vault:
            return vault.show(vault.checked_ref(args["ref"]))

    def _list(self, args: dict) -> dict[str, Any]:
        """Notes matching the filters, newest first, read from the files (as in process), and the
        notes left out because they cannot be read."""
        entries = {name: self.entry(root) for name, root in args["roots"].items()}
        with self.reading(args["roots"]) as reader:
            for found in entries.values():
                found.vault.skipped.clear()
            rows = reader.list_notes(limit=args["limit"], **args["filters"])
        many = len(entries) > 1
        skipped = {(f"{name}:{path}" if many else path): reason for name, found in entries.items()
                   for path, reason in found.vault.skipped.items()}  # fmt: skip
        return {"rows": rows, "skipped": skipped}

    def _stats(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).reading() as vault:
            return vault.stats()

    def _resolve(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).writing() as vault:
            return vault.resolve(vault.checked_ref(args["ref"]))

    def _reopen(self, args: dict) -> dict[str, Any]:
        with self.entry(args["root"]).writing() as vault:
            return vault.reopen(vault.checked_ref(args["ref"]))

    def _task(self, name: str) -> Callable[..., Any]:
        if name not in self.tasks:
            raise VaultError(f"this memory service was started without {name!r}")
        return self.tasks[name]

    def _doctor(self, args: dict) -> dict[str, Any]:
        """The health report of a served vault, read where its index is; ``keeper``: who keeps
        its indexes (this service, with its watcher's pending changes and last error)."""
        found = self.entry(args["root"])
        keeper = None
        if found.watcher is not None:
            status = found.watcher.status()
            keeper = {
                "pid": os.getpid(),
                "pending": status.get("pending"),
                "last_error": status.get("last_error"),
            }
        with found.reading() as vault:
            return self._task("doctor")(vault, keeper)

    def _hook_start(self, args: dict) -> dict[str, Any]:
        """SessionStart's wake block, other branches' memories left out as wake leaves them."""
        shown = branches.shown_test(Path(args["cwd"]), None)
        with self.entry(args["root"]).reading() as vault:
            return self._task("hook_start")(
                vault, args["payload"], args["anchor"], args["budget"], shown=shown
            )

    def _hook_end(self, args: dict) -> dict[str, Any]:
        """SessionEnd's summary and candidates, scoped to the caller's code branch (``write_scope``)."""
        found = self.entry(args["root"])
        scope = branches.scope_fields(Path(args["cwd"]), found.root)
        with found.writing() as vault:
            return self._task("hook_end")(vault, args["payload"], args["anchor"], scope=scope)

    # ------------------------------------------------------------------ git sync

    def _sync_loop(self, found: Entry, every: float) -> None:
        """``vaultmem sync`` of a served vault every ``every`` seconds, with its post-sync steps
        (``after_sync``), for as long as the service serves it (once per vault)."""
        if found.watcher is None or found.syncing or self.after_sync is None:
            return
        found.syncing = True
        after = self.after_sync

        def loop() -> None:
            while not self.stop_event.wait(every) and self.entries.get(found.root) is found:
                after(found, every)

        threading.Thread(target=loop, name=f"sync-{found.root.name}", daemon=True).start()
