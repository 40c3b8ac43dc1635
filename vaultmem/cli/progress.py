"""Progress of long work (``index``, ``import``, a first index through the memory service), on
standard error so standard output keeps only the result: a bar with counts and an estimate of
the time left on a terminal (rich, which typer brings), a plain line every few seconds when no
terminal watches, and one JSON object a line with ``--json`` (for programs).

A reporter takes ``(done, total)`` calls (the indexer's and the importers' callbacks) in its
current ``phase``, and the memory service's progress events (``event``: phase, done, total,
seconds_left) when ``vaultmem index`` streams them from the service.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

PHASES = {"keywords": "keywords", "vectors": "vectors", "contexts": "contextual vectors",
          "chunks": "embedding", "reading": "reading", "writing": "writing"}  # fmt: skip


def about(seconds: float | None) -> str:
    """``about 40 s left``, ``about 3 min left``, ``about 1 h 20 min left`` ("" when unknown)."""
    if seconds is None:
        return ""
    s = max(1, round(seconds))
    if s < 90:
        return f"about {s} s left"
    if s < 5400:
        return f"about {round(s / 60)} min left"
    return f"about {s // 3600} h {round(s % 3600 / 60)} min left"


class Reporter:
    """Counts by phase and the time left at the phase's rate so far; ``show`` renders."""

    def __init__(self, what: str = "indexing", phase: str = "chunks", names: dict[str, str] | None = None):
        self.what, self.phase, self.names = what, phase, names or {}
        self.done = self.total = 0
        self.left: float | None = None
        self._since, self._first = time.monotonic(), 0

    def __call__(self, done: int, total: int) -> None:
        """A ``(done, total)`` report of the current phase (the indexer's callback)."""
        if total != self.total or done < self.done:  # a new count: its rate starts again
            self._since, self._first = time.monotonic(), done
        gained, elapsed = done - self._first, time.monotonic() - self._since
        left = (total - done) * elapsed / gained if gained > 0 else None
        self.update(self.phase, done, total, left)

    def event(self, event: dict[str, Any]) -> None:
        """A progress event of the memory service (``Watcher.indexing``)."""
        if event.get("total") is None:
            return
        self.update(str(event.get("phase") or self.phase), int(event["done"]), int(event["total"]),
                    event.get("seconds_left"))  # fmt: skip

    def start(self, phase: str) -> None:
        """The next phase (its counts start again)."""
        self.phase, self.done, self.total = phase, 0, 0

    def update(self, phase: str, done: int, total: int, left: float | None) -> None:
        self.phase, self.done, self.total, self.left = phase, done, total, left
        self.show()

    def label(self) -> str:
        if self.phase in self.names:
            return self.names[self.phase]
        name = PHASES.get(self.phase, self.phase)
        return self.what if name == "embedding" and self.what == "indexing" else f"{self.what} {name}"

    def show(self) -> None:  # pragma: no cover - each kind renders
        raise NotImplementedError

    def close(self) -> None:
        """End the display (the bar's last frame, the last line)."""


class Lines(Reporter):
    """A plain line on stderr: the first report, then at most one every ``every`` seconds, and
    the last of each phase; nothing before ``after`` seconds (work that short needs none)."""

    def __init__(self, what: str = "indexing", phase: str = "chunks", names: dict[str, str] | None = None,
                 every: float = 2.0, after: float = 0.0):  # fmt: skip
        super().__init__(what, phase, names)
        self.every, self._last = every, 0.0
        self._quiet_until = time.monotonic() + after

    def show(self) -> None:
        now = time.monotonic()
        if now < self._quiet_until or self.done and self.done < self.total and now - self._last < self.every:
            return
        self._last = now
        left = about(self.left) if self.done < self.total else ""
        pct = 100 * self.done // max(self.total, 1)
        print(f"vaultmem: {self.label()} {self.done}/{self.total} ({pct}%){', ' + left if left else ''}",
              file=sys.stderr, flush=True)  # fmt: skip


class Events(Reporter):
    """One JSON object a line on stderr (``--json``): ``{"event": "progress", "what", "phase",
    "done", "total", "seconds_left"}``, at most one every ``every`` seconds and the last of each
    phase."""

    def __init__(self, what: str = "indexing", phase: str = "chunks", names: dict[str, str] | None = None,
                 every: float = 1.0):  # fmt: skip
        super().__init__(what, phase, names)
        self.every, self._last = every, 0.0

    def show(self) -> None:
        now = time.monotonic()
        if self.done and self.done < self.total and now - self._last < self.every:
            return
        self._last = now
        left = None if self.left is None else round(self.left, 1)
        print(json.dumps({"event": "progress", "what": self.what, "phase": self.phase, "done": self.done,
                          "total": self.total, "seconds_left": left}), file=sys.stderr, flush=True)  # fmt: skip


class Bar(Reporter):
    """A rich progress bar on stderr: the phase, the bar, done/total and the time left."""

    def __init__(self, what: str = "indexing", phase: str = "chunks", names: dict[str, str] | None = None):
        super().__init__(what, phase, names)
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def show(self) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(TextColumn("vaultmem: {task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[left]}"), console=Console(stderr=True),
                                 transient=False)  # fmt: skip
            self._bar.start()
        task = self._tasks.get(self.phase)
        if task is None:
            task = self._tasks[self.phase] = self._bar.add_task(self.label(), total=self.total, left="")
        left = about(self.left) if self.done < self.total else ""
        self._bar.update(task, completed=self.done, total=self.total, left=left)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def reporter(what: str = "indexing", as_json: bool = False, phase: str = "chunks",
             names: dict[str, str] | None = None, after: float = 0.0) -> Reporter:  # fmt: skip
    """JSON events with ``--json``, a bar on a terminal, plain lines otherwise (``after``: not
    before that many seconds)."""
    if as_json:
        return Events(what, phase, names)
    return Bar(what, phase, names) if sys.stderr.isatty() else Lines(what, phase, names, after=after)
