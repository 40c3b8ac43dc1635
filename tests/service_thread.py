"""The real memory service in a thread of the test process (``conftest.service_thread``).

Most service tests need the service's behaviour, not a process of its own: ``ServiceThread``
runs ``daemon.Service`` (the same handlers, watchers and socket server as ``vaultmem service
run``) with the small test embedder, on a socket in the test's own temp folder, and stops it
cleanly: no thread, socket or folder is left behind (``stop`` checks). Clients in the test
process and its subprocesses reach it as they reach a real one (``XDG_RUNTIME_DIR`` and
``VAULTMEM_SERVICE_KEY`` point at it; ``VAULTMEM_NO_SERVICE`` is unset for the test).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

THREADS = ("vaultmem-socket", "warm", "watch-", "sync-")  # what a Service starts (daemon.Service, server)


class ServiceThread:
    """A ``daemon.Service`` running in a thread; ``runtime`` is its private runtime folder.
    ``ready`` False: return once it listens, its model maybe still loading."""

    def __init__(self, runtime: Path, embedder: Any, roots: tuple[Path, ...] = (), ready: bool = True):
        from vaultmem.api import service_parts
        from vaultmem.cli.service import tasks
        from vaultmem.service.daemon import Service

        self.runtime = runtime
        self.before = {t.ident for t in threading.enumerate()}  # another service's threads are not ours
        self.service = Service(*service_parts(), idle_exit=0, quiet=0.05, max_delay=0.5, tasks=tasks())
        self.service.embedder = lambda model, batch_size: embedder  # type: ignore[method-assign]
        self.result: bool | None = None
        self.thread = threading.Thread(
            target=self._run, args=(list(roots),), name="test-service", daemon=True
        )
        self.thread.start()
        if not ready:  # a service still loading its model (``seams``): listening is enough
            from helpers import wait_for

            wait_for(lambda: self.result is False or self.service.server.path.exists(), timeout=30,
                     what="the in-process memory service to listen")  # fmt: skip
        elif not self.service.opened.wait(30):
            raise AssertionError("the in-process memory service did not start")
        if self.result is False:
            raise AssertionError("another memory service holds this test's service lock")

    def _run(self, roots: list[Path]) -> None:
        self.result = self.service.run(roots)

    @property
    def socket(self) -> Path:
        return self.service.server.path

    def stop(self) -> None:
        """Stop the service as SIGTERM does, and check that it left nothing running or on disk."""
        from helpers import wait_for

        self.service.stop_event.set()
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the in-process memory service did not stop"
        assert not self.socket.exists(), f"{self.socket} was left behind"
        try:
            wait_for(lambda: not self._threads(), timeout=60, what="the service's threads to end")
        except AssertionError:
            raise AssertionError(f"the service's threads did not end: {self._threads()}") from None
        shutil.rmtree(self.runtime, ignore_errors=True)

    def _threads(self) -> list[str]:
        """The service threads this one started that still run (a module's service running
        beside a test's own is not this one's)."""
        return [t.name for t in threading.enumerate()
                if t.is_alive() and t.name.startswith(THREADS) and t.ident not in self.before]  # fmt: skip


def start(
    monkeypatch: pytest.MonkeyPatch, folder: Path, embedder: Any, key: str = "thread", ready: bool = True
) -> ServiceThread:
    """A ServiceThread whose runtime folder is ``folder`` (created 0700), made the one clients of
    this test (and its subprocesses) reach."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("VAULTMEM_SERVICE_KEY", key)
    monkeypatch.delenv("VAULTMEM_NO_SERVICE", raising=False)
    return ServiceThread(folder, embedder, ready=ready)
