"""One index writer per vault: an advisory ``flock`` on ``.vaultmem/index/writer.lock``.

The holder records its pid and role (``watch`` for a running watcher, ``index`` for a
one-off command) in the file so others can say who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from .discovery import private_dir
from .errors import Conflict, VaultError


class WatcherRunning(VaultError):
    """A watcher owns the indexes; hand the work to it (or just read)."""

    def __init__(self, pid: int | None):
        super().__init__(f"vaultmem watch (pid {pid}) is maintaining this vault's indexes")
        self.pid = pid


class WriterLock:
    """An exclusive, non-reentrant writer lock on one vault's indexes."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def holder(self) -> dict | None:
        """Who holds the lock (pid, role), or None when it is free."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        except BlockingIOError:
            try:
                return json.loads(os.pread(fd, 4096, 0) or b"{}")
            except ValueError:
                return {}
        finally:
            os.close(fd)

    def acquire(self, role: str, wait: float = 0.0) -> bool:
        """Take the lock, waiting up to ``wait`` seconds; False if another holder keeps it."""
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "role": role, "since": time.time()}).encode(), 0)
        self._fd = fd
        return True

    def still_held(self) -> bool:
        """Whether the file this process locked is still the one at the lock's path (it is
        not when someone deleted ``.vaultmem/``: a new lock file would not be locked)."""
        return self._fd is not None and _same_file(self._fd, self.path)

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


NOTE_LOCK_WAIT = 10.0  # seconds a writer waits for another writer of the same note


class NoteBusy(Conflict):
    """Another process held a note's lock for longer than a writer waits."""


@contextlib.contextmanager
def note_lock(path: Path, wait: float = NOTE_LOCK_WAIT) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on one note file for a read-modify-write.

    The lock sits on the file itself (nothing to create or clean up). Writers replace a
    note by renaming a new file over it, so after locking, the path must still name the
    locked file: if it was replaced meanwhile, lock the new one. Yields False when the
    note does not exist (nothing to lock; the caller's changed-since-read check decides).
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            yield False
            return
        try:
            if not _flock_until(fd, deadline):
                raise NoteBusy(f"{path.name} is being changed by another process; try again")
            if _same_file(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # replaced while we waited: lock the file the path names now
    try:
        yield True
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def named_lock(folder: Path, name: str, wait: float = NOTE_LOCK_WAIT) -> Iterator[None]:
    """Hold an exclusive ``flock`` named ``name`` in the private ``folder`` (for a step that
    creates a note, where there is no file to lock yet: e.g. one agent session's handoff)."""
    import hashlib

    private_dir(folder)
    path = folder / (hashlib.sha1(name.encode("utf-8")).hexdigest()[:16] + ".lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        if not _flock_until(fd, time.monotonic() + wait):
            raise NoteBusy(f"{name} is being changed by another process; try again")
        yield
    finally:
        os.close(fd)


def _flock_until(fd: int, deadline: float) -> bool:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    here = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino)
