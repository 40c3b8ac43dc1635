"""What the web view keeps between requests: one ``api.Session`` (its Vault), a lock, and a
change counter.

Page handlers run in worker threads; every use of the session or its Vault holds ``lock``. ``check`` (run by
the app every few seconds) notices changed files and changed indexes: with no watcher it
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
from ..core.errors import NoteParseError, VaultError
from ..index.embed import Embedder
from ..vault import Vault

FULL_EVERY = 30.0  # seconds between looks at the files when no file event said anything


class ViewState:
    """One vault served by the web view."""

    def __init__(self, root: Path, embedder: Embedder | None = None):
        self.session = Session([str(root)], embedder=embedder)
        self.session.warm(model=False)  # the memory service indexes and answers recall, when it runs
        self.vault = self.session.vault
        self.lock = self.session.lock
        self.generation = 0
        self.last_error: str | None = None
        self._files: str | None = None
        self._index: tuple | None = None
        self._doctor: tuple[int, Any] | None = None
        self._recent: tuple[int, list[tuple[Any, str, str]]] | None = None
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
            self._doctor = None

    def doctor(self) -> Any:
        """The doctor report, computed once per generation."""
        from .. import doctor
        from ..agents.hook_runs import doctor_findings

        with self.lock:
            generation, cached = self.generation, self._doctor
        if cached is not None and cached[0] == generation:
            return cached[1]
        # without the lock (a big vault's report takes seconds): a Vault object of its own
        own = Vault(self.vault.root, embedder=self.vault.embedder)
        try:
            report = doctor.diagnose(own, more=doctor_findings(own.root))
        finally:
            own.close()
        with self.lock:
            if self.generation == generation:
                self._doctor = (generation, report)
        return report

    def recent(self, limit: int = 15) -> list[tuple[Any, str, str]]:
        """The notes changed last by their own frontmatter: (record, date, "updated" or
        "created"), newest first; a note with neither date is not "recent" (a copied folder's
        file times say nothing). Computed once per generation.

        A record's ``updated``/``created`` are the frontmatter's or, when missing, file times, so
        a note's own date is never later than the later of the two: notes are read in that
        order until ``limit`` are known to be newer than any note left."""
        with self.lock:
            if self._recent is not None and self._recent[0] == self.generation:
                return self._recent[1]
            order = sorted(self.vault.records().values(), key=_bound, reverse=True)
            found: list[tuple[Any, str, str]] = []
            for rec in order:
                if len(found) >= limit and found[limit - 1][1] >= _bound(rec):
                    break
                try:
                    meta = self.vault.store.read(rec.path).meta
                except (NoteParseError, OSError):
                    continue
                which = next((k for k in ("updated", "created") if meta.get(k) not in (None, "")), None)
                if which:
                    found.append((rec, getattr(rec, which), which))
                    found.sort(key=lambda f: (f[1], f[0].path), reverse=True)
                    del found[limit:]
            self._recent = (self.generation, found)
            return self._recent[1]


def _bound(rec: Any) -> str:
    return max(rec.updated or "", rec.created or "")
