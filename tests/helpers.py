"""Small helpers shared by the test modules."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class HashEmbedder:
    """A small deterministic embedder for tests: hashed bag of words, no model."""

    def __init__(self, dim: int = 64, name: str = "test/hash-bow"):
        self.name, self.dim, self.max_tokens = name, dim, 64
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                word = word.strip(".,:;!?()[]\"'")
                if word:
                    h = int(hashlib.md5(word.encode()).hexdigest(), 16)
                    out[i, h % self.dim] += 1.0 if (h >> 8) % 2 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """One role: a query embeds as a stored text does (as MiniLM's)."""
        return self.embed(texts)


def write(root: Path, rel: str, text: str) -> Path:
    """Write a file under ``root`` (creating folders) and return its path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def failed(result, code: int | None = None) -> str:
    """Assert a clean CLI failure: the exit code, one ``vaultmem:`` line on stderr, no traceback."""
    assert result.exit_code != 0, result.output
    if code is not None:
        assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultmem: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@contextmanager
def environ(env: dict[str, str]) -> Iterator[None]:
    """``os.environ`` is exactly ``env`` inside (restored after): a call in this process sees the
    environment a subprocess given ``env=env`` would."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def noon_today() -> float:
    """Today's noon, local time: a run started then is still "today" after the 15 minutes it
    takes to count as killed (from 23:45 on, now + 15 minutes was tomorrow)."""
    import datetime as dt

    return dt.datetime.now().replace(hour=12, minute=0, second=0, microsecond=0).timestamp()


def wait_for(condition, timeout: float = 60.0, what: str = "condition", interval: float = 0.05):  # type: ignore[no-untyped-def]
    """Poll ``condition`` until it is truthy and return its value; fail after ``timeout`` seconds
    (generous: it only bounds how long a failing test takes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def wait_listening(port: int, proc, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``proc`` (a server subprocess) accepts connections on 127.0.0.1:``port``."""
    import socket

    def up() -> bool:
        assert proc.poll() is None, proc.communicate()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False

    wait_for(up, timeout=timeout, interval=0.1, what=f"a server on port {port}")


class Running:
    """A watcher running in a background thread, with helpers to query its vault. ``serve``:
    the memory service itself, in this process (its watcher; clients of this test use it)."""

    def __init__(self, root: Path, embedder, serve: bool = False):
        from vaultmem.service.watch import Watcher
        from vaultmem.vault import Vault

        self.service = None
        self.error: BaseException | None = None
        if serve:
            self._serve(root, embedder)
            return
        self.vault = Vault(root, embedder=embedder)
        self.watcher = Watcher(self.vault, quiet=0.05, max_delay=0.5)
        self.watcher.start()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _serve(self, root: Path, embedder) -> None:
        from vaultmem.api import service_parts
        from vaultmem.cli.service import tasks
        from vaultmem.core.discovery import find_vault
        from vaultmem.service.daemon import Service

        find_vault(root)  # named by path: a vault from now on, as the CLI makes it before asking the service

        self._off = os.environ.pop("VAULTMEM_NO_SERVICE", None)
        self.service = Service(*service_parts(), idle_exit=0, quiet=0.05, max_delay=0.5, tasks=tasks())
        self.service.embedder = lambda model, batch_size: embedder
        self.thread = threading.Thread(target=self.service.run, args=([root],), daemon=True)
        self.thread.start()
        wait_for(self.service.opened.is_set, what="the service")
        entry = self.service.entry(root)
        self.vault, self.watcher = entry.vault, entry.watcher

    def _run(self) -> None:
        try:
            self.watcher.run()
        except BaseException as e:  # surfaced by the tests
            self.error = e

    def settle(self) -> None:
        """Wait until every file event before this call is applied: a barrier note written, then
        removed, reaches the watcher through the same ordered event queue after them."""
        barrier = self.vault.root / "zz-settle-barrier.md"
        barrier.write_text("# settle\n", encoding="utf-8")
        wait_for(lambda: barrier.name in self.paths(), what="the barrier note indexed")
        barrier.unlink()
        wait_for(lambda: barrier.name not in self.paths(), what="the barrier note removed")

    def paths(self) -> set[str]:
        with self.watcher.mutex:
            return set(self.vault.manifest.records())

    def titles(self) -> set[str]:
        with self.watcher.mutex:
            return {r.title for r in self.vault.manifest.records().values()}

    def find(self, query: str) -> list[str]:
        with self.watcher.mutex:
            return [h.path for h in self.vault.recall(query, mode="bm25")]

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop_event.set()
            self.thread.join(timeout=30)
            if self._off is not None:
                os.environ["VAULTMEM_NO_SERVICE"] = self._off
            return
        self.watcher.stop()
        self.thread.join(timeout=15)
        self.watcher.close()
        self.vault.close()


def recall_json(root: Path, query: str, *args: str) -> list[dict]:
    """``vaultmem recall QUERY --vault ROOT --json --explain ARGS`` through typer's runner: its hits
    (it must exit 0)."""
    import json

    from typer.testing import CliRunner

    from vaultmem.cli import app as cli

    result = CliRunner().invoke(
        cli.app, ["recall", query, "--vault", str(root), "--json", "--explain", *args]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["results"]


@dataclass
class Done:
    """What a `vaultmem` call run in this process printed and exited with (as a subprocess's)."""

    returncode: int
    stdout: str
    stderr: str


def vaultmem(capsys, *argv: str, stdin: str = "") -> Done:  # type: ignore[no-untyped-def]
    """``vaultmem ARGV`` through the console entry (``vaultmem.cli.main.main``) in this process,
    ``capsys`` capturing its output: where a subprocess proves nothing more (no process start,
    no model load of its own). Not for what a process owns: exit-time work, signals, a service."""
    import io
    import logging

    import pytest

    from vaultmem.cli.main import main

    capsys.readouterr()  # only this call's output
    code: int = 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["vaultmem", *argv])
        mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8"))
        # a process's logging: no handler but logging's last resort, which writes warnings to stderr
        mp.setattr(logging.root, "handlers", [])
        try:
            main()
        except SystemExit as e:
            if isinstance(e.code, str):  # as the interpreter does: the message on stderr, exit 1
                print(e.code, file=sys.stderr)
                code = 1
            else:
                code = e.code or 0
    out = capsys.readouterr()
    return Done(code, out.out, out.err)


def buffered(env) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """``env`` without PYTHONUNBUFFERED: a child's stdout to a pipe buffered, as it is when a
    user runs vaultmem from their shell (a test runner's environment may set it)."""
    return {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}
