"""Where the operations' handlers (``ops``) reach a vault: an ``Entry`` (one vault, its reading
and writing discipline) and ``LocalHost``, the host of a session that works in its own process.

The memory service (``daemon.Service``) serves each vault through an Entry whose Watcher keeps
its indexes current: a call first applies the changes the watcher has seen, then runs under the
watcher's reader (or writer) side. A vault whose indexes another process writes, and every vault
a session opens in its own process, has no watcher: a call then reconciles the vault with its
files first (``Vault.sync``; while the service owns the indexes, this process's cached views are
dropped instead), one call at a time. The handlers never see the difference.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.discovery import STATE_DIR, writable
from ..core.errors import ReadOnlyVault, VaultError
from ..core.version import VERSION
from . import ops
from .ops import KEYWORDS_WAIT, SYNC, VIEWS

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from .watch import Watcher  # watchdog and the indexer: only the service loads them

Fresh = Callable[[Any], Any]  # brings a vault in line with its files before a call (``Vault.sync``)


def _sync(vault: Any) -> Any:
    return vault.sync()


@dataclass
class Entry:
    """One vault a host serves: its open Vault and, unless another process writes its indexes
    (or the host is this process), the Watcher keeping them current."""

    root: Path
    vault: Any
    watcher: Watcher | None
    mutex: threading.RLock = field(default_factory=threading.RLock)  # no watcher: one call at a time
    thread: threading.Thread | None = None
    syncing: bool = False  # a git sync loop runs for it (``watch --sync-every``)
    config_stat: tuple | None = None  # the config file as last read: a changed one is read before a call
    fresh: Fresh = _sync
    local: bool = False  # this process's (``LocalHost``): a call says how current it needs the vault

    @property
    def alive(self) -> bool:
        if self.watcher is not None:
            return self.thread is not None and self.thread.is_alive()
        return (self.root / STATE_DIR).is_dir()

    @contextmanager
    def reading(self, mode: str = SYNC, wait: float = KEYWORDS_WAIT) -> Iterator[Any]:
        """The vault, current, for one call: the changes its watcher has seen applied first, its
        batches waiting meanwhile (a vault being opened: its keyword index first, waited for at
        most ``wait`` seconds, then what is indexed so far); without a watcher, one call at a
        time, reconciled with its files here first (in this process, as ``mode`` says: SYNC,
        AS_IS or VIEWS)."""
        if self.watcher is not None:
            self.watcher.wait_caught_up(wait)
            self.watcher.flush()
            with self.watcher.gate.read():
                yield self.vault
            return
        with self.mutex:
            mode = mode if self.local else SYNC
            if mode == SYNC:
                self.fresh(self.vault)
            elif mode == VIEWS:
                self.vault.refresh()
            yield self.vault

    @contextmanager
    def writing(self, mode: str = SYNC, wait: float = KEYWORDS_WAIT) -> Iterator[Any]:
        """The vault for one call that writes it; ReadOnlyVault (one line) when it cannot be
        written, before anything is tried. A vault being opened gets its keyword index first
        (waited for at most ``wait`` seconds), as a read does: a plan over its notes
        (``maintain``) saw none of them while the service indexed it behind the answers."""
        if getattr(self.vault, "read_only", False):
            raise ReadOnlyVault(f"{self.root} is read-only: nothing can be written to it")
        if self.watcher is not None:
            self.watcher.wait_caught_up(wait)
            self.watcher.flush()
            with self.watcher.gate.write():
                yield self.vault
        else:
            with self.reading(mode) as vault:
                yield vault

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            if self.thread is not None:
                self.thread.join(timeout=60)
            self.watcher.close()
        self.vault.close()


@contextmanager
def reading_all(entries: dict[str, Entry], make_multi: Callable[[dict[str, Any]], Any],
                mode: str = SYNC, wait: float = KEYWORDS_WAIT) -> Iterator[Any]:  # fmt: skip
    """One vault (one entry) or a MultiVault (several), current, for one call; several are taken
    in a fixed order so two calls never wait on each other crosswise."""
    if not entries:
        raise VaultError("no vaults named")
    with ExitStack() as stack:
        opened = {}
        for name, found in sorted(entries.items(), key=lambda item: str(item[1].root)):
            opened[name] = stack.enter_context(found.reading(mode, wait))
        ordered = {name: opened[name] for name in entries}
        yield next(iter(ordered.values())) if len(ordered) == 1 else make_multi(ordered)


def check_roots(roots: Any) -> None:
    if not isinstance(roots, dict) or not all(isinstance(p, str) for p in roots.values()):
        raise TypeError("roots must map names to vault folders")


class LocalHost:
    """The handlers' host in this process: each vault opened here once (``open_vault``) and
    reconciled with its files before each call (``fresh``); ``keywords``: recall answers from
    keywords only (while the service warms); ``tasks``: the checks and hooks of the layers above
    (``doctor``, ``hook_start``, ``hook_end``, ``hook_precompact``) that this process may run."""

    ready = True  # the model loads here when a call needs it

    def __init__(self, open_vault: Callable[[Path], Any], make_multi: Callable[[dict[str, Any]], Any],
                 fresh: Fresh = _sync, tasks: dict[str, Callable[..., Any]] | None = None,
                 keywords: bool = False):  # fmt: skip
        self.open_vault, self.make_multi, self.fresh = open_vault, make_multi, fresh
        self.tasks = tasks or {}
        self.keywords = keywords
        self.entries: dict[Path, Entry] = {}
        self.progress: Any = None  # a reindex's progress callback (``Session.reindex``)

    def run(self, name: str, args: dict[str, Any], emit: Callable[[dict], None] | None = None) -> Any:
        return ops.run(self, name, args, emit)

    def entry(self, root: str | Path, keywords_first: bool = False, served: bool = False) -> Entry:
        root = Path(root).resolve()
        if root not in self.entries:
            self.entries[root] = Entry(root, self.open_vault(root), None, fresh=self.fresh, local=True)
        return self.entries[root]

    @contextmanager
    def reading(self, roots: dict[str, str], mode: str = SYNC, wait: float = KEYWORDS_WAIT) -> Iterator[Any]:
        check_roots(roots)
        with reading_all({name: self.entry(p) for name, p in roots.items()}, self.make_multi, mode) as reader:
            yield reader

    @contextmanager
    def usage(self, root: str) -> Iterator[Any]:
        """The vault's usage store: the open vault's, else opened for this call alone (a prompt
        hook logs what it showed without opening the vault)."""
        found = self.entries.get(Path(root).resolve())
        if found is not None:
            yield found.vault.usage
            return
        from ..index.usage import UsageStore

        store = UsageStore.of(Path(root), readonly=not writable(Path(root)))
        try:
            yield store
        finally:
            store.close()

    def task(self, name: str) -> Callable[..., Any]:
        if name not in self.tasks:
            raise VaultError(f"{name!r} cannot run in this process (it was not handed over)")
        return self.tasks[name]

    def keeper(self, found: Entry) -> dict[str, Any] | None:
        """The memory service's status of this vault when it keeps its indexes (asked whether or
        not this session works through it: status and doctor tell who keeps the indexes)."""
        from . import client, control

        info = control.ping()
        if info is None or str(found.root) not in info.get("vaults", []):
            return None
        reply = client.call("status", {"root": str(found.root), "drift": False})
        if not (reply and reply.get("ok")):
            return None
        status = reply["result"]
        return {k: status.get(k) for k in ("pid", "by", "started", "batches", "pending", "last_batch",
                                           "last_error", "polling", "indexing")}  # fmt: skip

    def ping(self) -> dict[str, Any]:
        return {
            "pid": None,
            "version": VERSION,
            "ready": True,
            "vaults": sorted(str(r) for r in self.entries),
        }

    def stop(self) -> dict[str, Any]:
        return {"pid": None}

    def open(self, roots: Iterable[str], sync_every: float | None) -> list[str]:
        return [str(self.entry(root).root) for root in roots]

    def close(self) -> None:
        self.entries.clear()  # the session closes the vaults it opened
