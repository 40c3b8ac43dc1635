"""What the web view keeps between requests: one ``api.Session``, a lock, and a change counter.

Pages read the vault only through the session's operations (``graph``, ``overview``, ``usage``,
``stats``, ``gaps``, ``doctor``, the lifecycle writes), as every front end does: through the
memory service when it serves the vault, else in this process. What stays here, on the
session's own ``Vault``, is noticing change, which no operation can do without loss: a stream
of file events and a look at every file's stat, both of this process's own files-watching.

Page handlers run in worker threads; the session runs calls one at a time (``lock``). ``check``
(run by the app every few seconds) notices changed files and changed indexes: with no watcher it
reconciles the indexes itself; with a watcher it drops its cached views once the watcher has
written. Each change bumps ``generation``, which the pages poll to reload themselves.
Listing and stat-ing every note costs ~0.1-0.4 s at 5,000 notes, so the vault's change stream
(``service.watch.ChangeStream``, the one the watcher consumes) says when to look; without it,
and every ``FULL_EVERY`` seconds anyway, it looks regardless.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from ..api import Session
from ..core.errors import VaultError
from ..index.embed import Embedder

FULL_EVERY = 30.0  # seconds between looks at the files when no file event said anything


class ViewState:
    """One vault served by the web view."""

    def __init__(self, root: Path, embedder: Embedder | None = None):
        self.root = Path(root).resolve()
        self.embedder = embedder
        self.session = Session([str(root)], embedder=embedder)
        self.session.warm(model=False)  # the memory service indexes and answers recall, when it runs
        # noticing change only (``check``): the pages read through the session's operations
        self.vault = self.session.vault
        self.lock = self.session.lock
        self.generation = 0
        self.last_error: str | None = None
        self._files: str | None = None
        self._index: tuple | None = None
        self._doctor: tuple[int, Any] | None = None
        self._overview: tuple[int, dict[str, Any]] | None = None
        self._dirty = True
        self._looked = 0.0
        self._stream: Any = None
        self.check()

    def watch_files(self) -> bool:
        """Read the vault's change stream (True if file events work here)."""
        from ..service.watch import ChangeStream

        store = self.vault.store
        stream = ChangeStream(self.vault.root, lambda rel: not store.rules.ignored(rel),
                              on_rules_change=store.rules.forget, on_config_change=self._config_changed)  # fmt: skip
        try:
            stream.start()
        except OSError:
            return False
        self._stream = stream
        return True

    def _config_changed(self) -> None:
        self._dirty = True

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        with self.lock:
            self.session.close()

    def _files_signature(self) -> str:
        h = hashlib.blake2b(digest_size=16)
        store = self.vault.store
        for path in store.list_paths():
            st = store.stat(path)
            h.update(
                f"{path}\0{st.mtime_ns if st else 0}\0{st.size if st else 0}\n".encode(
                    "utf-8", "surrogatepass"
                )
            )
        return h.hexdigest()

    def _index_signature(self) -> tuple:
        """Changes when another process (a watcher) commits to the manifest: SQLite's
        ``data_version`` of this process's connection ignores its own commits and checkpoints."""
        return (self.vault.manifest.db.execute("PRAGMA data_version").fetchone()[0],)

    def check(self) -> bool:
        """Pick up changed files or indexes; True (and a new generation) when something changed."""
        with self.lock:
            changed = False
            if self._stream is not None and self._stream.drain() is not None:
                self._dirty = True
            look = self._stream is None or self._dirty or time.monotonic() - self._looked > FULL_EVERY
            files = self._files
            if look:
                self._dirty = False  # before looking: an event while we look is not lost
                self._looked = time.monotonic()
                files = self._files_signature()
            if files != self._files:
                changed = self._files is not None
                self._files = files
                try:
                    # indexes here, or (a watcher indexes) drops the cached views; the
                    # watcher's commit then also moves the index signature below
                    self.vault.sync()
                    self.last_error = None
                except VaultError as e:
                    self.last_error = str(e)
                else:
                    self._index = self._index_signature()
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
            self._doctor = self._overview = None

    def overview(self) -> dict[str, Any]:
        """The memory state (the ``overview`` operation), asked once per generation: counts and
        dates change only with the notes, which bump it."""
        with self.lock:
            if self._overview is None or self._overview[0] != self.generation:
                self._overview = (self.generation, self.session.overview())
            return self._overview[1]

    def doctor(self) -> Any:
        """The doctor report (``doctor.Report``), computed once per generation, through a session
        of its own (the ``doctor`` operation: a big vault's report takes seconds, and other pages
        answer meanwhile)."""
        from ..agents.hook_runs import doctor_report
        from ..doctor import Report

        with self.lock:
            generation, cached = self.generation, self._doctor
        if cached is not None and cached[0] == generation:
            return cached[1]
        with Session([str(self.root)], embedder=self.embedder) as own:
            report = Report.from_dict(doctor_report(own))
        with self.lock:
            if self.generation == generation:
                self._doctor = (generation, report)
        return report
