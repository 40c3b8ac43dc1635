"""Git as the vault's distributed engine: set-up, and ``sync`` (commit, pull --rebase, push).

vaultmem runs the user's own ``git`` as a subprocess: it uses their credentials, helpers,
SSH agent, hooks and config as they are, and a vault stays an ordinary repository any git
tool can work on. (A library such as dulwich or pygit2 would need its own credential and
transport handling and does not run the merge-driver/attribute machinery the same way.)

A sync never force-pushes and never leaves a note behind: a rebase stopped by a conflict is
finished here (notes merged by ``mergedriver``, a note deleted on one side and edited on the
other kept), and a sync killed at any step is finished by the next one (a rebase in
progress is continued, a stale ``index.lock`` left by a killed git is removed).
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..core.discovery import USAGE_DIR
from ..core.errors import BadInput, VaultError
from ..core.lock import WriterLock
from ..core.mergedriver import merge_lines, merge_notes
from ..core.note import split_frontmatter
from ..core.store import STATE_DIR

DRIVER = "vaultmem"
ATTRIBUTES = ("*.md merge=vaultmem", "*.markdown merge=vaultmem")
NOTE_SUFFIXES = (".md", ".markdown")
LIST_MAX = 40  # notes listed per kind in a commit message
KILL_AT = "VAULTMEM_SYNC_KILL_AT"  # tests: the step at which a sync kills itself (SIGKILL)


def _step(name: str) -> None:
    """A named point of a sync; the multi-clone tests kill a sync here to prove recovery."""
    if os.environ.get(KILL_AT) == name:
        os.kill(os.getpid(), 9)


log = logging.getLogger("vaultmem.sync")


class GitError(VaultError):
    """A git command failed, or the vault is not in a state sync can work with."""


class NotARepo(GitError):
    exit_code = 2


# ---------------------------------------------------------------- running git


class Git:
    """Runs ``git`` in one folder; records the child's pid so a killed sync can be recovered."""

    def __init__(self, cwd: Path, pid_file: Path | None = None, interactive: bool = True):
        self.cwd = cwd
        self.pid_file = pid_file
        self.env = {**os.environ, "LC_ALL": "C", "GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no"}
        if not interactive:
            self.env["GIT_TERMINAL_PROMPT"] = "0"

    def run(self, *args: str, check: bool = True, input: bytes | None = None) -> subprocess.CompletedProcess:
        if shutil.which("git") is None:
            raise GitError("git is not installed (vaultmem sync runs your git)")
        proc = subprocess.Popen(["git", *args], cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        if self.pid_file is not None:
            self.pid_file.write_text(str(proc.pid))
        out, err = proc.communicate(input)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if check and proc.returncode != 0:
            msg = (err or out).decode(errors="replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
        return result

    def text(self, *args: str, check: bool = True) -> str:
        return self.run(*args, check=check).stdout.decode("utf-8", "surrogateescape").strip()

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).returncode == 0


def repo_top(path: Path) -> Path | None:
    """The work tree's top folder when ``path`` is inside a git repository, else None."""
    if shutil.which("git") is None:
        return None
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True)
    return Path(proc.stdout.decode().strip()) if proc.returncode == 0 else None


def driver_command() -> str:
    """How git should call the note merge driver from this installation."""
    script = Path(sys.executable).with_name("vaultmem")
    if script.exists():
        return f"{shlex.quote(str(script))} merge-driver %O %A %B %P"
    return f"{shlex.quote(sys.executable)} -m vaultmem merge-driver %O %A %B %P"


def driver_config() -> list[str]:
    """``-c`` options that register the driver for one git command."""
    return ["-c", f"merge.{DRIVER}.name=vaultmem note merge", "-c", f"merge.{DRIVER}.driver={driver_command()}"]


# ---------------------------------------------------------------- set-up


def setup(root: Path) -> list[str]:
    """Register the note merge driver: .gitattributes lines in the vault and the repo's git
    config (never the user's global config). Returns what changed."""
    top = repo_top(root)
    if top is None:
        raise NotARepo(f"{root} is not in a git repository; run: vaultmem init --git {root} [--remote URL]")
    git = Git(root)
    changed = []
    attrs = root / ".gitattributes"
    text = attrs.read_text(encoding="utf-8") if attrs.exists() else ""
    have = {line.strip() for line in text.splitlines()}
    missing = [line for line in ATTRIBUTES if line not in have]
    if missing:
        sep = "" if not text or text.endswith("\n") else "\n"
        attrs.write_text(text + sep + "\n".join(missing) + "\n", encoding="utf-8")
        changed.append(".gitattributes (note merge driver)")
    command = driver_command()
    if git.text("config", "--local", "--get", f"merge.{DRIVER}.driver", check=False) != command:
        git.run("config", "--local", f"merge.{DRIVER}.name", "vaultmem note merge")
        git.run("config", "--local", f"merge.{DRIVER}.driver", command)
        changed.append(f"git config merge.{DRIVER}.driver")
    return changed


def stage_notes(git: "Git") -> None:
    """Stage every change in the vault except this machine's usage store (queries and
    ratings), which is never committed even where .gitignore does not say so (an exclude
    pathspec would fail where .gitignore does say so, hence the unstaging)."""
    git.run("add", "-A", "--", ".")
    git.run("reset", "-q", "--", USAGE_DIR)


def init_git(root: Path, remote: str | None = None) -> list[str]:
    """Make the vault a git repository (if it is not in one), register the merge driver,
    add ``origin`` when a remote is given, and commit what is there."""
    done = []
    top = repo_top(root)
    if top is None or (top != root and Git(top).ok("check-ignore", "-q", str(root))):
        Git(root).run("init", "-q")  # a vault inside a repository that ignores it gets its own
        done.append("git repository")
    done += setup(root)
    git = Git(root)
    if remote:
        current = git.text("remote", "get-url", "origin", check=False)
        if not current:
            git.run("remote", "add", "origin", remote)
            done.append(f"remote origin -> {remote}")
        elif current != remote:
            raise GitError(f"origin already points at {current}; change it with git remote set-url")
    stage_notes(git)
    if not git.ok("diff", "--cached", "--quiet") or not git.ok("rev-parse", "-q", "--verify", "HEAD"):
        git.run("commit", "-q", "--allow-empty", "-m", "vaultmem: start versioning this vault")
        done.append("first commit")
    return done


# ---------------------------------------------------------------- sync


@dataclass
class SyncReport:
    """What a sync did; ``touched`` are vault-relative paths the indexes must look at."""

    committed: str | None = None
    message: str = ""
    incoming: list[tuple[str, str]] = field(default_factory=list)  # (A/M/D/R, path)
    pushed: bool = False
    conflicts: list[str] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # things the user should know

    def as_dict(self) -> dict:
        return {"committed": self.committed, "message": self.message, "pushed": self.pushed,
                "incoming": [{"change": c, "path": p} for c, p in self.incoming],
                "conflicts": self.conflicts, "notes": self.notes}  # fmt: skip


class Syncer:
    """One vault's sync: recover, commit, fetch, rebase (finishing conflicts), push."""

    ATTEMPTS = 3  # a push refused because someone pushed first: fetch, rebase, push again

    def __init__(self, root: Path, interactive: bool = True):
        self.root = root.resolve()
        top = repo_top(self.root)
        if top is None:
            raise NotARepo(f"{self.root} is not a git repository; make it one with: "
                           f"vaultmem init --git {self.root} [--remote URL]")
        self.top = top
        state = self.root / STATE_DIR
        state.mkdir(exist_ok=True)
        self.pid_file = state / "sync-git.pid"
        self.lock = WriterLock(state / "sync.lock")
        self.git = Git(self.root, self.pid_file, interactive)
        self.gitdir = Path(self.git.text("rev-parse", "--absolute-git-dir"))

    def run(self, message: str | None = None, push: bool = True,
            before_pull: Callable[[], None] | None = None) -> SyncReport:  # fmt: skip
        if not self.lock.acquire("sync", wait=30):
            raise GitError("another vaultmem sync is running on this vault")
        try:
            report = SyncReport()
            self._recover(report)
            self._commit(report, message)
            self._exchange(report, push, before_pull)
            return report
        finally:
            self.lock.release()

    # ------------------------------------------------------------ recovery

    def _recover(self, report: SyncReport) -> None:
        """Finish what a killed or stopped sync left: a stale index.lock, a rebase, a merge."""
        lock = self.gitdir / "index.lock"
        if lock.exists() and not self._git_child_alive():
            lock.unlink(missing_ok=True)
            report.notes.append("removed a stale .git/index.lock left by an interrupted sync")
        if self._rebasing():
            report.notes.append("finishing an interrupted rebase")
            self._finish_rebase(report)
        elif (self.gitdir / "MERGE_HEAD").exists():
            report.notes.append("finishing an interrupted merge")
            self._resolve_all(report)
            self.git.run("commit", "-q", "--no-edit")

    def _git_child_alive(self) -> bool:
        try:
            pid = int(self.pid_file.read_text())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return False
        for _ in range(100):  # an orphaned git from a killed sync: let it finish
            try:
                os.kill(pid, 0)
            except OSError:
                return False
            time.sleep(0.1)
        return True

    def _rebasing(self) -> bool:
        return (self.gitdir / "rebase-merge").exists() or (self.gitdir / "rebase-apply").exists()

    # ------------------------------------------------------------ commit

    def _commit(self, report: SyncReport, message: str | None) -> None:
        stage_notes(self.git)
        _step("staged")
        has_head = self.git.ok("rev-parse", "-q", "--verify", "HEAD")
        if has_head and self.git.ok("diff", "--cached", "--quiet"):
            return
        changes = self._staged_changes(has_head)
        text = commit_message(changes, message)
        self.git.run("commit", "-q", "-F", "-", input=text.encode())
        _step("committed")
        report.committed = self.git.text("rev-parse", "--short", "HEAD")
        report.message = text

    def _staged_changes(self, has_head: bool) -> dict[str, list[str]]:
        """Notes in the index vs HEAD, by kind: added, changed, resolved, superseded, removed."""
        if has_head:
            rows = _name_status(self.git.text("diff", "--cached", "--relative", "--name-status", "-M", "-z", "HEAD"))
        else:
            rows = [("A", p) for p in self.git.text("ls-files", "-z").split("\0") if p]
        notes = [(c, p) for c, p in rows if p.lower().endswith(NOTE_SUFFIXES)]
        modified = [p for c, p in notes if c == "M"]
        before = self._blobs([f"HEAD:./{p}" for p in modified]) if modified else []
        after = self._blobs([f":./{p}" for c, p in notes if c != "D"])
        after_by = dict(zip([p for c, p in notes if c != "D"], after))
        kinds: dict[str, list[str]] = {k: [] for k in ("added", "changed", "resolved", "superseded", "removed")}
        old_status = dict(zip(modified, (_status(t) for t in before)))
        for change, path in notes:
            label = f"{_title(after_by.get(path, ''), path)} ({path})"
            if change == "D":
                kinds["removed"].append(path)
            elif change in ("A", "C"):
                kinds["added"].append(label)
            else:
                new = _status(after_by[path])
                kind = new if new in ("resolved", "superseded") and old_status.get(path) != new else "changed"
                kinds[kind].append(label)
        return kinds

    def _blobs(self, specs: list[str]) -> list[str]:
        """Many blobs in one ``git cat-file --batch`` (texts in the order asked)."""
        if not specs:
            return []
        out = self.git.run("cat-file", "--batch", input=("\n".join(specs) + "\n").encode()).stdout
        texts, i = [], 0
        for _ in specs:
            end = out.index(b"\n", i)
            header = out[i:end].split()
            if len(header) < 3 or header[-1] == b"missing":
                texts.append("")
                i = end + 1
                continue
            size = int(header[2])
            texts.append(out[end + 1 : end + 1 + size].decode("utf-8", "replace"))
            i = end + 1 + size + 1
        return texts

    # ------------------------------------------------------------ fetch, rebase, push

    def _upstream(self) -> tuple[str | None, str]:
        """(remote, branch) this vault syncs with; remote None when there is none."""
        branch = self.git.text("symbolic-ref", "-q", "--short", "HEAD", check=False)
        if not branch:
            raise GitError("the vault's repository is not on a branch (detached HEAD); check one out first")
        remote = self.git.text("config", f"branch.{branch}.remote", check=False)
        remotes = self.git.text("remote").split()
        if not remote:
            remote = "origin" if "origin" in remotes else (remotes[0] if remotes else "")
        merge = self.git.text("config", f"branch.{branch}.merge", check=False)
        return (remote or None), (merge.removeprefix("refs/heads/") or branch)

    def _exchange(self, report: SyncReport, push: bool, before_pull: Callable[[], None] | None) -> None:
        remote, branch = self._upstream()
        if remote is None:
            report.notes.append("no remote: committed locally only (add one: git remote add origin URL)")
            return
        tracking = f"refs/remotes/{remote}/{branch}"
        old = fetched = self._sha(tracking)
        for attempt in range(self.ATTEMPTS):
            self.git.run("fetch", "-q", remote)
            new = fetched = self._sha(tracking)
            _step("fetched")
            if new and not self.git.ok("merge-base", "--is-ancestor", new, "HEAD"):
                if before_pull is not None:
                    before_pull()
                pre = self._sha("HEAD")
                self._rebase(report, new)
                changed = self._changed_paths(pre, "HEAD")
                report.touched |= changed
                report.conflicts += sorted(p for p in changed - set(report.conflicts) if self._in_conflict(p))
            _step("rebased")
            if not push:
                break
            if new and self._sha("HEAD") == new:
                break
            result = self.git.run("push", "-q", *(["-u"] if not new else []), remote,
                                  f"HEAD:refs/heads/{branch}", check=False)  # fmt: skip
            if result.returncode == 0:
                report.pushed = True
                break
            if attempt == self.ATTEMPTS - 1:
                err = result.stderr.decode(errors="replace").strip().splitlines()
                raise GitError(f"push to {remote} failed: {err[-1] if err else 'unknown error'}; "
                               "your notes are committed locally, run vaultmem sync again")
        if fetched and fetched != old:
            report.incoming = [row for row in _name_status(self.git.text(
                "diff", "--relative", "--name-status", "-M", "-z", old or _EMPTY_TREE, fetched, check=False))
                if row[1].lower().endswith(NOTE_SUFFIXES)]  # fmt: skip

    def _sha(self, ref: str) -> str | None:
        return self.git.text("rev-parse", "-q", "--verify", ref, check=False) or None

    def _changed_paths(self, a: str | None, b: str) -> set[str]:
        out = self.git.text("diff", "--relative", "--name-only", "-z", a or _EMPTY_TREE, b, check=False)
        return {p for p in out.split("\0") if p}

    def _rebase(self, report: SyncReport, onto: str) -> None:
        result = self.git.run(*driver_config(), "-c", "rebase.autoStash=true", "rebase", "-q", onto, check=False)
        if result.returncode != 0 or self._rebasing():
            _step("rebase-stopped")
            self._finish_rebase(report)

    def _finish_rebase(self, report: SyncReport) -> None:
        for _ in range(10_000):  # one round per replayed commit that stopped
            if not self._rebasing():
                return
            self._resolve_all(report)
            if self.git.ok("diff", "--cached", "--quiet"):  # resolution equals upstream: nothing to replay
                result = self.git.run(*driver_config(), "rebase", "--skip", check=False)
            else:
                result = self.git.run(*driver_config(), "rebase", "--continue", check=False)
            if result.returncode != 0 and not self._unmerged() and self._rebasing():
                err = result.stderr.decode(errors="replace").strip().splitlines()
                raise GitError(f"rebase could not continue: {err[-1] if err else 'unknown'}; "
                               f"see git status in {self.root}")

    def _unmerged(self) -> dict[str, dict[int, str]]:
        """Unmerged paths (vault-relative) -> {stage: blob sha}."""
        out = self.git.text("ls-files", "-u", "-z", check=False)
        paths: dict[str, dict[int, str]] = {}
        for row in filter(None, out.split("\0")):
            info, path = row.split("\t", 1)
            _, sha, stage = info.split()
            paths.setdefault(path, {})[int(stage)] = sha
        return paths

    def _resolve_all(self, report: SyncReport) -> None:
        """Resolve every unmerged path keeping all text: notes merged, deletions lose to edits."""
        for path, stages in self._unmerged().items():
            base, ours, theirs = (self._blobs([stages[s]])[0] if s in stages else None for s in (1, 2, 3))
            if ours is None or theirs is None:  # deleted on one side, changed on the other: keep it
                text, conflicted = (ours if ours is not None else theirs) or "", False
            elif path.lower().endswith(NOTE_SUFFIXES):
                merged = merge_notes(base or "", ours, theirs, path)
                text, conflicted = merged.text, bool(merged.conflicts)
                if not merged.clean and base is None and merged.conflicts == ["id"]:
                    other = self._free_path(path)  # two notes created at one path: both stay
                    self._write_inside(other, theirs)
                    self.git.run("add", "--", other)
                    report.touched.add(other)
                    conflicted = False
            else:
                text, n = merge_lines(base or "", ours, theirs, path)
                conflicted = bool(n)
            self._write_inside(path, text)
            self.git.run("add", "--", path)
            report.touched.add(path)
            if conflicted:
                report.conflicts.append(path)


    def _in_conflict(self, path: str) -> bool:
        """Whether a note a merge just wrote carries ``status: conflict`` (the driver's mark)."""
        file = self.root / path
        if not path.lower().endswith(NOTE_SUFFIXES) or not file.is_file():
            return False
        return _status(file.read_text(encoding="utf-8", errors="replace")) == "conflict"

    def _write_inside(self, path: str, text: str) -> None:
        """Write a resolved file as a regular file inside the vault: a symlink at the path is
        replaced, never followed, and a folder leading outside the vault is refused."""
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        parent = target.parent.resolve()
        if parent != self.root and self.root not in parent.parents:
            raise VaultError(f"{path} leads outside the vault; not writing there")
        if target.is_symlink():
            target.unlink()
        target.write_text(text, encoding="utf-8", newline="")

    def _free_path(self, path: str) -> str:
        stem, dot, ext = path.rpartition(".")
        n = 2
        while (self.root / f"{stem} {n}.{ext}").exists():
            n += 1
        return f"{stem} {n}.{ext}"


_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _name_status(out: str) -> list[tuple[str, str]]:
    """``--name-status -z`` output as (A/M/D/R, path) rows (a rename gives its new path)."""
    parts = [p for p in out.split("\0")]
    rows, i = [], 0
    while i < len(parts) and parts[i]:
        code = parts[i][0]
        if code in "RC":
            rows.append((code, parts[i + 2]))
            i += 3
        else:
            rows.append((code, parts[i + 1]))
            i += 2
    return rows


def _field(text: str, key: str) -> str | None:
    """A top-level scalar frontmatter value read by line, without YAML (commit messages only:
    a sync lists hundreds of notes and must not parse each one)."""
    fm, _, _, _ = split_frontmatter(text)
    if not fm:
        return None
    m = re.search(rf"^{key}:[ \t]*(.*?)[ \t]*$", fm, re.M)
    if not m:
        return None
    value = m.group(1)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value or None


def _status(text: str) -> str:
    return (_field(text, "status") or "active").lower()


def _title(text: str, path: str) -> str:
    return _field(text, "title") or Path(path).stem


def commit_message(kinds: dict[str, list[str]], message: str | None = None) -> str:
    """A commit message listing the memories added, changed, resolved, superseded, removed."""
    counts = ", ".join(f"{len(v)} {k}" for k, v in kinds.items() if v) or "no note changes"
    lines = [message.strip() if message else f"vaultmem sync: {counts}", ""]
    if message:
        lines += [counts, ""]
    for kind, items in kinds.items():
        for item in items[:LIST_MAX]:
            lines.append(f"{kind}: {item}")
        if len(items) > LIST_MAX:
            lines.append(f"{kind}: ... and {len(items) - LIST_MAX} more")
    return "\n".join(lines).rstrip() + "\n"


def sync(root: Path, message: str | None = None, push: bool = True, interactive: bool = True,
         before_pull: Callable[[], None] | None = None) -> SyncReport:  # fmt: skip
    """Commit the vault's changes, pull with rebase, push (see ``Syncer``)."""
    return Syncer(root, interactive).run(message, push, before_pull)


def parse_interval(text: str) -> float:
    """``30s``, ``5m``, ``1h`` (or plain seconds) as seconds; at least 5 s."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text or "")
    if not m:
        raise BadInput(f"--sync-every {text!r}: use a duration such as 30s, 5m or 1h")
    seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    if seconds < 5:
        raise BadInput("--sync-every must be at least 5s")
    return seconds


def start_sync_loops(watchers: list, every: float, stop) -> list:  # type: ignore[no-untyped-def]
    """One thread per watched vault that syncs it every ``every`` seconds while watching.

    The watcher's batcher is held during a sync, so everything a pull brings reaches the
    indexer as one burst.
    """
    def loop(w) -> None:  # type: ignore[no-untyped-def]
        while not stop.wait(every):
            try:
                with w.batcher.held():
                    report = sync(w.root, interactive=False)
                    w.batcher.add({p for p in report.touched if not w.vault.store.rules.ignored(p)})
            except VaultError as e:
                log.warning("%s: sync failed: %s", w.root.name, e)
                continue
            came = len(report.incoming)
            if report.committed or came or report.conflicts:
                log.info("%s: synced (%s committed, %d notes came in, %d conflicts kept)", w.root.name,
                         report.committed or "nothing", came, len(report.conflicts))

    threads = [threading.Thread(target=loop, args=(w,), name=f"sync-{w.root.name}", daemon=True) for w in watchers]
    for t in threads:
        t.start()
    return threads
