"""One index writer per vault: an advisory ``flock`` on ``.vaultmem/index/writer.lock``.

The holder records its pid and role (``watch`` for a running watcher, ``index`` for a
one-off command) in the file so others can say who holds it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from .errors import VaultError


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
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

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
