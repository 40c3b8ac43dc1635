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
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from ..core import config as configmod
from ..core.discovery import STATE_DIR, served_vault
from ..core.errors import VaultError
from ..core.version import VERSION as __version__
from ..index.embed import make_embedder
from . import client, control
from .host import Entry, check_roots, reading_all
from .ops import HANDLERS, KEYWORDS_WAIT, SYNC, NotServed
from .server import Handler, SocketServer
from .watch import Housekeeping, Watcher

log = logging.getLogger("vaultmem.service")
DEFAULT_MODEL = configmod.DEFAULTS["embedding"]["model"]


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
    makes a MultiVault of open vaults by name; ``tasks`` are what ``doctor`` and the hooks'
    operations run on an open vault (``cli.service.tasks``: the layers above hand them over). It
    is the host of the operations' handlers (``ops``) over its socket."""

    def __init__(self, make_vault: Callable[[Path, Any], Any], make_multi: Callable[[dict[str, Any]], Any],
                 idle_exit: float = 1800.0, quiet: float = 0.2, max_delay: float = 1.0,
                 tasks: dict[str, Callable[..., Any]] | None = None):  # fmt: skip
        self.make_vault, self.make_multi = make_vault, make_multi
        self.tasks = tasks or {}  # doctor and the hooks' work: run on an open vault (see ``task``)
        self.idle_exit = idle_exit
        self.quiet, self.max_delay = quiet, max_delay
        self.entries: dict[Path, Entry] = {}
        self.embedders: dict[tuple[str, int], Any] = {}
        self.housekeeping = Housekeeping()  # one garbage-collection schedule for every watcher
        self.ready_event = threading.Event()  # the default model is loaded
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
        self.ready_event.set()
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

    def entry(self, root: str | Path, keywords_first: bool = False, served: bool = False) -> Entry:
        """The served vault at ``root``, opened (and watched) on first use: at once, its indexes
        brought in line behind the answers (keywords first, then the vectors; ``keywords_first``
        is always so now); ``served``: only a vault already served (else ``NotServed``: the
        caller reads it itself)."""
        root = Path(root).resolve()
        with self._lock:
            opening = self._opening.setdefault(root, threading.Lock())
        with opening:
            found = self.entries.get(root)
            if found is not None and found.alive:
                self._check_config(found)
                return found
            if served:
                raise NotServed(f"the memory service does not serve {root}")
            if found is not None:
                self._drop(root, "its watcher stopped")
            served_vault(root)  # an initialised vault of this user's, never `/` (core.discovery)
            found = self._open_entry(root)
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

    def _open_entry(self, root: Path) -> Entry:
        stat = _config_stat(root)
        emb = configmod.load(root)["embedding"]
        vault = self.make_vault(root, self.embedder(emb["model"], emb["batch_size"]))
        if getattr(vault, "read_only", False):  # nothing to keep current: read as its indexes are
            log.info("%s: read-only; serving it from its indexes as they are", root)
            return Entry(root, vault, None, config_stat=stat)
        report = _reporter(root) if self.foreground else None
        watcher = Watcher(vault, quiet=self.quiet, max_delay=self.max_delay, on_batch=report)
        watcher.housekeeping = self.housekeeping
        watcher.keywords_first = True  # opened at once, indexed behind the answers (issue 45)
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
    def reading(self, roots: dict[str, str], mode: str = SYNC, wait: float = KEYWORDS_WAIT) -> Iterator[Any]:
        """One vault (one root) or a MultiVault (several), current, for one call."""
        check_roots(roots)
        entries = {name: self.entry(path) for name, path in roots.items()}
        with reading_all(entries, self.make_multi, wait=wait) as reader:
            yield reader

    # ------------------------------------------------------------------ protocol: the host of ``ops``

    @property
    def ready(self) -> bool:
        return self.ready_event.is_set()

    keywords = False  # the service answers every recall with what it has loaded

    def _handlers(self) -> dict[str, Handler]:
        """One handler per declared operation (``ops.HANDLERS``, run on this host); all but ping
        and stop count as calls (they keep the service from exiting idle)."""
        ops: dict[str, Handler] = {name: partial(fn, self) for name, fn in HANDLERS.items()}
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

    def ping(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "version": __version__, "ready": self.ready, "started": self.started,
                "calls": self.calls, "idle_exit": self.idle_exit, "log": str(control.log_path()),
                "vaults": sorted(str(r) for r in self.entries), "foreground": self.foreground}  # fmt: skip

    def stop(self) -> dict[str, Any]:
        self.stop_event.set()
        return {"pid": os.getpid()}

    def open(self, roots: list[str], sync_every: float | None) -> list[str]:
        opened = [self.entry(root) for root in roots]
        if sync_every:
            for found in opened:
                self._sync_loop(found, sync_every)
        return [str(found.root) for found in opened]

    @contextmanager
    def usage(self, root: str) -> Iterator[Any]:
        with self.entry(root).reading(wait=0) as vault:  # as recall logs its hits
            yield vault.usage

    def task(self, name: str) -> Callable[..., Any]:
        if name not in self.tasks:
            raise VaultError(f"this memory service was started without {name!r}")
        return self.tasks[name]

    def keeper(self, found: Entry) -> dict[str, Any] | None:
        """This service's watcher status of a vault whose indexes it keeps (None: served read-only)."""
        return {**found.watcher.status(), "by": "service"} if found.watcher is not None else None

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
