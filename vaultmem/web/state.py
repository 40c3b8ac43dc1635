"""What the web view keeps between requests: one Vault, a lock, and a change counter.

Page handlers run in worker threads; every use of the Vault holds ``lock``. ``check`` (run by
the app every few seconds) notices changed files and changed indexes: with no watcher it
reconciles the indexes itself; with a watcher it drops its cached views once the watcher has
written. Each change bumps ``generation``, which the pages poll to reload themselves.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

from ..embed import Embedder
from ..errors import VaultError
from ..lock import WatcherRunning
from ..vault import Vault


class ViewState:
    """One vault served by the web view."""

    def __init__(self, root: Path, embedder: Embedder | None = None):
        self.vault = Vault(root, embedder)
        self.lock = threading.RLock()
        self.generation = 0
        self.last_error: str | None = None
        self._files: str | None = None
        self._index: tuple | None = None
        self._doctor: tuple[int, Any] | None = None
        self.check()

    def close(self) -> None:
        with self.lock:
            self.vault.close()

    def _files_signature(self) -> str:
        h = hashlib.blake2b(digest_size=16)
        store = self.vault.store
        for path in store.list_paths():
            st = store.stat(path)
            h.update(f"{path}\0{st.mtime_ns if st else 0}\0{st.size if st else 0}\n".encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def _index_signature(self) -> tuple:
        out = []
        for name in ("manifest.db", "manifest.db-wal"):
            try:
                st = os.stat(self.vault.index_dir / name)
                out.append((st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def check(self) -> bool:
        """Pick up changed files or indexes; True (and a new generation) when something changed."""
        with self.lock:
            files = self._files_signature()
            changed = False
            if files != self._files:
                changed = self._files is not None
                self._files = files
                try:
                    self.vault.reindex()
                    self.last_error = None
                except WatcherRunning:
                    pass  # the watcher indexes; its write changes the index signature below
                except VaultError as e:
                    self.last_error = str(e)
                else:
                    self._index = self._index_signature()  # our own write: views already current
            index = self._index_signature()
            if index != self._index:
                if self._index is not None:
                    self.vault.refresh()
                    changed = True
                self._index = index
            if changed:
                self.bump()
            return changed

    def bump(self) -> None:
        """Something changed (a check, or a write from a page)."""
        with self.lock:
            self.generation += 1
            self._doctor = None

    def doctor(self) -> Any:
        """The doctor report, computed once per generation."""
        from .. import doctor

        with self.lock:
            if self._doctor is None or self._doctor[0] != self.generation:
                self._doctor = (self.generation, doctor.diagnose(self.vault))
            return self._doctor[1]
