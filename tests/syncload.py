"""A mixed load on clones of one vault, for the fault-injection test and the soak benchmark.

Per clone: a writer through the real CLI (``remember``, ``edit --add-tag`` on shared notes),
a simulated editor saving shared notes (truncate-and-write in slow chunks, or write-then-rename,
re-reading when the file changed under it as editors do), and a sync driver that runs
``vaultmem sync`` and SIGKILLs many of them at random moments or at named steps; optionally a
watcher with ``--sync-every``. Every write is recorded once it is acknowledged (the CLI exited
0, the editor's write returned). ``settle`` syncs until the clones agree; ``check`` lists what
is missing anywhere (must be nothing): lines, tags, notes, commits, and index drift.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gitcluster import KILL, Cluster

from vaultmem.core.note import parse
from vaultmem.core.renameat import exchange
from vaultmem.core.store import SETTLE

SHARED = 4  # notes every editor appends to
TAGGED = 3  # notes every CLI writer adds tags to
STEPS = ("staged", "committed", "fetched", "merged", "applied", "moved")
NOTE = "---\nid: {id}\ntitle: {title}\ntype: fact\ntags: [start]\n---\n# {title}\n\nStarted.\n"


@dataclass
class Counts:
    writes: int = 0
    editor_saves: int = 0
    editor_overwrote: int = 0  # saves that wrote over content a sync brought after the editor read
    editor_overwrote_unread: int = 0  # of which truncated in place (the wiped text unknown)
    editor_replaced_while_writing: int = 0  # saves in place whose file left the path before the save ended
    editor_stalled: int = 0  # of which this editor had paused SETTLE/2 or more mid-save (saved again)
    cli_writes: int = 0
    syncs: int = 0
    kills: int = 0
    sync_errors: int = 0
    sync_error_lines: dict[str, int] = field(default_factory=dict)  # last line of each failed sync -> count
    cli_timeouts: list[str] = field(
        default_factory=list
    )  # CLI writes that took over 120 s (not acknowledged)
    errors: list[str] = field(default_factory=list)


class Load:
    def __init__(self, cluster: Cluster, names: tuple[str, ...] = ("laptop", "server", "mate"), seed: int = 1,
                 watch: str | None = "mate"):  # fmt: skip
        self.c, self.names, self.rng = cluster, names, random.Random(seed)
        self.watch = watch
        self.lines: list[tuple[str, str]] = []  # (rel, line) acknowledged editor saves
        self.tags: list[tuple[str, str]] = []  # (rel, tag) acknowledged edit --add-tag
        self.remembered: list[str] = []  # body lines of acknowledged remember calls
        self.overwritten: set[tuple[str, str]] = set()  # (rel, line) an editor save wrote over
        self.started: dict[tuple[str, str], float] = {}  # (rel, line) -> when its save began (``clock``)
        # truncate-saves over a file that replaced the one read: (rel, when opened, the lines kept)
        self.unread: list[tuple[str, float, frozenset[str]]] = []
        self.clock = time.monotonic
        self.counts = Counts()
        self.stepped = 0  # syncs told to kill themselves at a named step (STEPS in turn)
        self.stop = threading.Event()
        self.mutex = threading.Lock()

    # ------------------------------------------------------------ set-up

    def start(self) -> None:
        c = self.c
        first = self.names[0]
        c.first(first)
        for i in range(SHARED):
            c.write(first, f"shared/S{i}.md", NOTE.format(id=f"shared0{i}", title=f"S{i}"))
        for i in range(TAGGED):
            c.write(first, f"tagged/T{i}.md", NOTE.format(id=f"tagged0{i}", title=f"T{i}"))
        c.vm(first, "sync")
        for name in self.names[1:]:
            c.clone(name)
        if self.watch:
            c.watch(self.watch, "--sync-every", "5s")

    def run(self, seconds: float, until: Callable[[Counts], bool] | None = None) -> None:
        """The load for ``seconds``, then on until ``until`` holds of the counts (at most as long
        again: a loaded machine runs fewer syncs, so fewer are killed, in the same time)."""
        threads = []
        for name in self.names:
            for target in (self._editor, self._cli_writer, self._syncer):
                threads.append(threading.Thread(target=target, args=(name,), daemon=True))
        for t in threads:
            t.start()
        self.stop.wait(seconds)
        deadline = time.monotonic() + seconds
        while until is not None and time.monotonic() < deadline:
            with self.mutex:
                if until(self.counts):
                    break
            self.stop.wait(0.5)
        self.stop.set()
        for t in threads:
            t.join(timeout=180)

    # ------------------------------------------------------------ writers

    def _editor(self, name: str) -> None:
        rng = random.Random(hash((name, "editor")))
        n = 0
        while not self.stop.is_set():
            rel = f"shared/S{rng.randrange(SHARED)}.md"
            n += 1
            line = f"{name} editor save {n}."
            mode = "truncate" if n % 2 else "rename"
            if self._save(self.c.vaults[name] / rel, line, mode, rng):
                with self.mutex:
                    self.lines.append((rel, line))
                    self.counts.writes += 1
                    self.counts.editor_saves += 1
            self.stop.wait(rng.uniform(0.05, 0.4))

    def _save(self, path: Path, line: str, mode: str, rng: random.Random) -> bool:
        """One editor save appending ``line``: re-read when the file changed since it was read
        (what editors check before writing); a truncate-and-write save writes in slow chunks.

        Like a real editor it can still write over a file a sync replaced between its last look
        and its write (it then wipes out the lines the sync brought, and the next sync commits
        that as a deletion): that loss is the editor's, so the save is recorded (``overwrote``)
        with the lines it may have wiped out, and ``check`` does not count those as vaultmem's."""
        with self.mutex:
            self.started.setdefault((_rel(path), line), self.clock())
        for _ in range(50):
            try:
                before = os.stat(path)
                text = path.read_text(encoding="utf-8")
            except (FileNotFoundError, UnicodeDecodeError):
                time.sleep(0.05)
                continue
            new = text + ("" if text.endswith("\n") else "\n") + line + "\n"
            now = os.stat(path)
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (
                before.st_ino,
                before.st_size,
                before.st_mtime_ns,
            ):
                continue
            if mode == "rename":
                self._rename_save(path, new, now)
                return True
            if self._write_in_place(path, new, now, line, rng):
                return True
        return False

    def _write_in_place(self, path: Path, new: str, read: os.stat_result, line: str,
                        rng: random.Random) -> bool:  # fmt: skip
        """Truncate and write in slow chunks (well under SETTLE apart). False when the save did
        not land because this editor itself paused mid-save (a loaded machine stalls a thread):
        its half-written file, quiet for SETTLE, was rightly taken as settled and replaced by a
        sync, and the rest went to the unlinked file. A real editor writes its buffer at once, so
        the save is made again (``editor_stalled``), the lines the half-written file lacked
        recorded as this editor's loss. A file replaced mid-save with no such pause is vaultmem's
        loss: counted (``editor_replaced_while_writing``) and left for ``check`` to find."""
        marks = [self.clock()]
        with open(path, "w", encoding="utf-8") as f:
            marks.append(self.clock())
            if os.fstat(f.fileno()).st_ino != read.st_ino:  # truncated a file that replaced the one read
                self._overwrote(path, new, None, marks[0])
            cut = [0, len(new) // 3, 2 * len(new) // 3, len(new)]
            for a, b in zip(cut, cut[1:]):
                f.write(new[a:b])
                f.flush()
                marks.append(self.clock())
                time.sleep(rng.uniform(0.005, 0.03))
            mine = os.fstat(f.fileno())
        if mine.st_nlink and _inode(path) == mine.st_ino:
            return True
        stalled = max(b - a for a, b in zip(marks, marks[1:])) >= SETTLE / 2
        with self.mutex:
            self.counts.editor_replaced_while_writing += 1
            self.counts.editor_stalled += stalled
        if not stalled:
            return True
        try:
            there = set(path.read_text(encoding="utf-8").splitlines())
        except (FileNotFoundError, UnicodeDecodeError):
            there = set()
        with self.mutex:
            self.overwritten |= {
                (_rel(path), ln) for ln in new.splitlines() if ln and ln != line and ln not in there
            }
        return False

    def _rename_save(self, path: Path, new: str, read: os.stat_result) -> None:
        """Write-then-rename; the rename is an exchange (same result on the path), so the file it
        took off the path can be compared with the one read."""
        tmp = path.with_name(f".{path.name}.editor-tmp")
        tmp.write_text(new, encoding="utf-8")
        try:
            swapped = exchange(tmp, path)
        except FileNotFoundError:  # the note is away for a moment (a checked removal): a plain save
            swapped = False
        if not swapped:
            os.replace(tmp, path)
            return
        out = os.stat(tmp)
        if (out.st_ino, out.st_size, out.st_mtime_ns) != (read.st_ino, read.st_size, read.st_mtime_ns):
            self._overwrote(path, new, tmp.read_text(encoding="utf-8"))
        tmp.unlink()

    def _overwrote(self, path: Path, kept: str, wiped: str | None, opened: float = 0.0) -> None:
        """Record a save that wrote over newer content: the lines it wiped out (``wiped`` None,
        a truncated file whose text is gone, ``opened`` at that time: see ``wiped``)."""
        rel, have = _rel(path), frozenset(kept.splitlines())
        with self.mutex:
            if wiped is None:
                self.unread.append((rel, opened, have))
            else:
                self.overwritten |= {(rel, ln) for ln in set(wiped.splitlines()) - have}
            self.counts.editor_overwrote += 1
            self.counts.editor_overwrote_unread += wiped is None

    def wiped(self) -> set[tuple[str, str]]:
        """The acknowledged lines an editor save may have written over: those known, and for a
        truncated file whose text is gone every line of the note whose save had begun before it
        was opened and that it lacked (one acknowledged later included: a sync can bring a line
        before its editor's save returns, so what was acknowledged when it was opened is not
        enough)."""
        with self.mutex:
            maybe = {(rel, ln) for rel, ln in self.lines for r, opened, have in self.unread
                     if r == rel and ln not in have and self.started.get((rel, ln), 0.0) < opened}  # fmt: skip
            return self.overwritten | maybe

    def _cli_writer(self, name: str) -> None:
        rng = random.Random(hash((name, "cli")))
        n = 0
        while not self.stop.is_set():
            try:
                n = self._cli_write(name, rng, n)
            except subprocess.TimeoutExpired as e:
                with self.mutex:
                    self.counts.cli_timeouts.append(" ".join(str(a) for a in e.cmd[3:6]))

    def _cli_write(self, name: str, rng: random.Random, n: int) -> int:
        """One CLI write (edit --add-tag or remember); returns the write counter."""
        n += 1
        if n % 2:
            tag = f"{name}-tag-{n}"
            rel = f"tagged/T{rng.randrange(TAGGED)}.md"
            key = rel.split("/")[1][:-3].replace("T", "tagged0")
            proc = self.c.vm(name, "edit", key, "--add-tag", tag, real=True, check=False)
            ok = proc.returncode == 0
            if ok:
                with self.mutex:
                    self.tags.append((rel, tag))
        else:
            body = f"Remembered on {name}, number {n}."
            proc = self.c.vm(name, "remember", "fact", f"{name} memory {n}", body, real=True, check=False)
            ok = proc.returncode == 0
            if ok:
                with self.mutex:
                    self.remembered.append(body)
        if ok:
            with self.mutex:
                self.counts.writes += 1
                self.counts.cli_writes += 1
        elif "Traceback" in proc.stderr:
            with self.mutex:
                self.counts.errors.append(f"{name}: {proc.stderr.strip().splitlines()[-1]}")
        return n

    # ------------------------------------------------------------ syncs, killed or not

    def _syncer(self, name: str) -> None:
        rng = random.Random(hash((name, "sync")))
        while not self.stop.is_set():
            choice = rng.random()
            env = {**self.c.env}
            if choice < 0.2:
                env[KILL] = self._next_step()
            proc = subprocess.Popen([sys.executable, "-m", "vaultmem", "sync", "--vault", str(self.c.vaults[name])],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
            if 0.2 <= choice < 0.55:
                time.sleep(rng.uniform(0.2, 2.5))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
            try:
                _, err = proc.communicate(timeout=180)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            with self.mutex:
                if proc.returncode == -9:
                    self.counts.kills += 1
                elif proc.returncode == 0:
                    self.counts.syncs += 1
                else:
                    self.counts.sync_errors += 1
                    last = re.sub(r"/\S+", "PATH", (err.strip().splitlines() or ["(no message)"])[-1])[:200]
                    self.counts.sync_error_lines[last] = self.counts.sync_error_lines.get(last, 0) + 1
                    if "Traceback" in err:
                        self.counts.errors.append(f"{name} sync: {err.strip().splitlines()[-1]}")
            self.stop.wait(rng.uniform(0.2, 1.5))

    def _next_step(self) -> str:
        """The named steps in turn across the clones: a short run still kills at each of them."""
        with self.mutex:
            self.stepped += 1
            return STEPS[(self.stepped - 1) % len(STEPS)]

    # ------------------------------------------------------------ the end

    def settle(self, rounds: int = 6) -> None:
        """Stop the watchers, then sync every clone until all hold the remote's commit."""
        self.c.stop_watchers()
        for _ in range(rounds):
            for name in self.names:
                self.c.vm(name, "sync", real=True)
            heads = {self.c.git(self.c.vaults[n], "rev-parse", "HEAD").strip() for n in self.names}
            remote = self.c.git(self.c.remote, "rev-parse", "main").strip()
            if heads == {remote} and all(
                not self.c.git(self.c.vaults[n], "status", "--porcelain") for n in self.names
            ):
                return

    def check(self) -> dict[str, list]:
        """What is missing where (every list must be empty)."""
        lost: dict[str, list] = {
            "lines": [],
            "tags": [],
            "notes": [],
            "commits": [],
            "unclean": [],
            "errors": [],
        }
        remote = self.c.git(self.c.remote, "rev-parse", "main").strip()
        wiped = self.wiped()
        for name in self.names:
            root = self.c.vaults[name]
            texts = self.c.notes(name)
            lost["lines"] += [(name, rel, line) for rel, line in self.lines
                              if line not in texts.get(rel, "") and (rel, line) not in wiped]  # fmt: skip
            tags = {
                rel: set(parse(texts[rel], rel).tags) for rel in {r for r, _ in self.tags} if rel in texts
            }
            lost["tags"] += [(name, rel, tag) for rel, tag in self.tags if tag not in tags.get(rel, set())]
            every = "\n".join(texts.values())
            lost["notes"] += [(name, body) for body in self.remembered if body not in every]
            for sha in set(self.c.git(root, "reflog", "show", "--format=%H", "refs/heads/main").split()):
                if subprocess.run(
                    ["git", "merge-base", "--is-ancestor", sha, remote], cwd=root, env=self.c.env
                ).returncode:
                    lost["commits"].append((name, sha))
            if self.c.git(root, "status", "--porcelain"):
                lost["unclean"].append((name, self.c.git(root, "status", "--porcelain")))
        lost["errors"] = list(self.counts.errors)
        return lost

    def index_drift(self) -> list[str]:
        """Clones whose indexes, brought up to date, differ from a rebuild from the files."""
        from vaultmem.vault import Vault

        differ = []
        for name, root in self.c.vaults.items():
            v = Vault(root)
            v.reindex()
            watched = (v.manifest.records(), v.bm25.documents(), v.manifest.chunk_hashes())
            v.reindex(rebuild=True)
            fresh = (v.manifest.records(), v.bm25.documents(), v.manifest.chunk_hashes())
            v.close()
            if fresh != watched:
                differ.append(name)
        return differ


def _rel(path: Path) -> str:
    """A note's path in its clone (``shared/S0.md``)."""
    return path.relative_to(path.parents[1]).as_posix()


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None
