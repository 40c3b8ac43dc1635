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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import environment
from ..core.discovery import private_dir
from ..core.errors import BadInput, VaultError
from ..core.lock import WriterLock
from ..core.note import split_frontmatter
from ..core.store import STATE_DIR, BeingWritten, wait_settled
from . import treemerge, worktree
from .errors import GitError, NotARepo
from .threeway import NOTE_SUFFIXES, is_owned

if TYPE_CHECKING:
    from ..service.watch import Watcher

DRIVER = "vaultmem"
GUARD = "* -working-tree-encoding"  # .git/info/attributes: a remote cannot make git re-encode notes
MASS_DELETE = 5  # a merge removing at least this many notes, and a fifth of them, is warned about
ATTRIBUTES = ("*.md merge=vaultmem", "*.markdown merge=vaultmem")
LIST_MAX = 40  # notes listed per kind in a commit message
KILL_AT = environment.VAULTMEM_SYNC_KILL_AT  # tests: the step at which a sync kills itself (SIGKILL)


def _step(name: str) -> None:
    """A named point of a sync; the multi-clone tests kill a sync here to prove recovery."""
    if KILL_AT.get() == name:
        os.kill(os.getpid(), 9)


log = logging.getLogger("vaultmem.sync")


# ---------------------------------------------------------------- running git


def git_message(text: str) -> str:
    """What git said, whole: its ``fatal:``/``error:`` lines (and the ``ssh:`` one naming the
    cause), else every line joined; never a sentence cut at a line break."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith(("fatal:", "error:", "ssh:"))]
    message = "; ".join(said or [" ".join(lines)])
    return message if len(message) <= 400 else message[:399] + "…"


class Git:
    """Runs ``git`` in one folder; records the child's pid so a killed sync can be recovered."""

    def __init__(self, cwd: Path, pid_file: Path | None = None, interactive: bool = True):
        self.cwd = cwd
        self.pid_file = pid_file
        self.env = environment.for_child({"LC_ALL": "C", "GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no"})
        if not interactive:
            self.env["GIT_TERMINAL_PROMPT"] = "0"

    def run(self, *args: str, check: bool = True, input: bytes | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:  # fmt: skip
        if shutil.which("git") is None:
            raise GitError("git is not installed (vaultmem sync runs your git)")
        proc = subprocess.Popen(["git", *args], cwd=self.cwd, env={**self.env, **(env or {})}, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        if self.pid_file is not None:
            self.pid_file.write_text(str(proc.pid))
        out, err = proc.communicate(input)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if check and proc.returncode != 0:
            msg = git_message((err or out).decode(errors="replace"))
            raise GitError(f"git {args[0]} failed: {msg or 'exit ' + str(proc.returncode)}")
        return result

    def text(self, *args: str, check: bool = True) -> str:
        return self.run(*args, check=check).stdout.decode("utf-8", "surrogateescape").strip()

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).returncode == 0

    def blobs(self, specs: list[str]) -> list[bytes | None]:
        """Many objects in one ``git cat-file --batch`` (contents in the order asked; None: missing)."""
        if not specs:
            return []
        out = self.run(
            "cat-file", "--batch", input=("\n".join(specs) + "\n").encode("utf-8", "surrogateescape")
        ).stdout
        found: list[bytes | None] = []
        i = 0
        for _ in specs:
            end = out.index(b"\n", i)
            header = out[i:end].split()
            if len(header) < 3 or header[-1] == b"missing":
                found.append(None)
                i = end + 1
                continue
            size = int(header[2])
            found.append(out[end + 1 : end + 1 + size])
            i = end + 1 + size + 1
        return found


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


def stage_notes(git: Git) -> None:
    """Stage every change in the vault except what vaultmem owns (``.vaultmem/``, the usage
    store ``.vaultmem-usage/``, at any depth), which is never committed whatever .gitignore
    says: it is taken out of the index, so a repository that tracked it stops tracking it
    (the files stay). A file someone is saving right now (written within the settle window)
    is staged once it is quiet, or left for the next sync if it keeps changing: a commit never
    holds half of an in-place save."""
    busy = [f":(exclude,literal){rel}" for rel in _being_written(git)]
    git.run("add", "-A", "--", ".", *busy)
    listed = git.run("ls-files", "-z", "--full-name").stdout.decode("utf-8", "surrogateescape").split("\0")
    owned = [p for p in listed if p and is_owned(p)]
    if owned:
        git.run("-C", str(Path(git.text("rev-parse", "--show-toplevel"))), "update-index", "--force-remove", "-z", "--stdin",
                input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in owned) + b"\0")  # fmt: skip


def _being_written(git: Git) -> list[str]:
    """The changed or new files (paths relative to the vault) still being written after
    waiting for each to settle (one stat for a file left alone)."""
    out = git.run("ls-files", "-z", "-m", "-o", "--exclude-standard", "--", ".").stdout
    busy = []
    for rel in dict.fromkeys(out.decode("utf-8", "surrogateescape").split("\0")):
        if not rel or is_owned(rel):
            continue
        try:
            wait_settled(git.cwd / rel, rel)
        except BeingWritten:
            busy.append(rel)
    return busy


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
    withheld: dict[str, list[str]] = field(default_factory=dict)  # note -> kinds of secret (not committed)

    def as_dict(self) -> dict:
        return {"committed": self.committed, "message": self.message, "pushed": self.pushed,
                "incoming": [{"change": c, "path": p} for c, p in self.incoming],
                "conflicts": self.conflicts, "notes": self.notes, "withheld": self.withheld}  # fmt: skip


class Syncer:
    """One vault's sync: recover, commit, fetch, merge (aside), move the files, push.

    The working tree is never held mid-rebase or mid-merge: the merge is made in a temporary
    index (``treemerge``) and reaches the files one by one (``worktree.move``), each only when
    nobody changed it since it was committed, else merged with the change; the branch moves
    (compare-and-swap) only once every file is there. A kill at any moment leaves the branch
    checked out and every change on disk or in a commit.
    """

    ATTEMPTS = 3  # a push refused because someone pushed first: fetch, merge, push again

    def __init__(self, root: Path, interactive: bool = True, allow_secrets: bool = False):
        self.root = root.resolve()
        self.allow_secrets = allow_secrets  # commit notes holding a secret, on purpose
        top = repo_top(self.root)
        if top is None:
            raise NotARepo(
                f"{self.root} is not a git repository; make it one with: "
                f"vaultmem init --git {self.root} [--remote URL]"
            )
        self.top = top.resolve()
        state = private_dir(self.root / STATE_DIR)
        self.pid_file = state / "sync-git.pid"
        self.lock = WriterLock(state / "sync.lock")
        self.git = Git(self.root, self.pid_file, interactive)
        self.gitdir = Path(self.git.text("rev-parse", "--absolute-git-dir"))
        prefix = self.git.text("rev-parse", "--show-prefix")
        self.prefix = prefix  # the vault's folder inside the repository ("" at its top)

    def run(self, message: str | None = None, push: bool = True,
            before_pull: Callable[[], None] | None = None) -> SyncReport:  # fmt: skip
        if not self.lock.acquire("sync", wait=30):
            raise GitError("another vaultmem sync is running on this vault")
        try:
            report = SyncReport()
            self._guard_attributes(report)
            self._recover(report)
            self._commit(report, message)
            self._exchange(report, push, before_pull)
            return report
        finally:
            self.lock.release()

    def _guard_attributes(self, report: SyncReport) -> None:
        """Notes are UTF-8 bytes as committed: a ``working-tree-encoding`` a remote's
        ``.gitattributes`` sets would make every ``git add`` fail ("failed to encode"). It is
        switched off for this repository in ``.git/info/attributes`` (which ranks above every
        ``.gitattributes``), and said once when a ``.gitattributes`` asks for it."""
        info = self.gitdir / "info" / "attributes"
        text = _read_text(info)
        if GUARD not in text.splitlines():
            info.parent.mkdir(exist_ok=True)
            info.write_text((text + "\n" if text else "") + GUARD + "\n", encoding="utf-8")
        asked = [p for p in (self.root / ".gitattributes", self.top / ".gitattributes")
                 if "working-tree-encoding" in _read_text(p)]  # fmt: skip
        if asked:
            report.notes.append(f"{asked[0].relative_to(self.top)} sets working-tree-encoding: ignored (vaultmem "
                                "keeps notes as committed; remove that line to silence this)")  # fmt: skip

    # ------------------------------------------------------------ recovery

    def _recover(self, report: SyncReport) -> None:
        """Take over what a killed sync, an older vaultmem or a person left: a stale
        index.lock, a rebase or merge in progress. The files stay exactly as they are (they
        are committed next); the branch is checked out again at its own commit."""
        lock = self.gitdir / "index.lock"
        if lock.exists() and not self._git_child_alive():
            lock.unlink(missing_ok=True)
            report.notes.append("removed a stale .git/index.lock left by an interrupted sync")
        if self._rebasing():
            report.notes.append(
                "finishing an interrupted rebase: your files are kept as they are and committed"
            )
            self._leave_rebase()
        elif (self.gitdir / "MERGE_HEAD").exists():
            report.notes.append(
                "finishing an interrupted merge: your files are kept as they are and committed"
            )
            self.git.run("merge", "--quit")
            self.git.run("reset", "-q")

    def _leave_rebase(self) -> None:
        """Quit a rebase without losing anything: the files as they are (the rebase's progress
        and any save made since) become a commit on the rebase's HEAD, that commit is merged
        with the branch (which still holds the commits the rebase had not replayed), the files
        are brought to the merge, and what the rebase's autostash held is merged into them."""
        folder = next(f for f in (self.gitdir / "rebase-merge", self.gitdir / "rebase-apply") if f.exists())
        head_name = _read_text(folder / "head-name")
        stash = _read_text(folder / "autostash")
        if not head_name.startswith("refs/heads/"):
            raise GitError(
                "an interrupted rebase of a detached HEAD is in progress; finish it with "
                f"git rebase --continue or --abort in {self.top}"
            )
        files = treemerge.snapshot(
            self.git,
            self.gitdir,
            self._sha("HEAD") or "",
            "vaultmem sync: files during an interrupted rebase\n",
        )
        branch = self._sha(head_name)
        if branch is None:
            raise GitError(
                f"an interrupted rebase of {head_name.removeprefix('refs/heads/')}, a branch that no longer "
                f"exists, is in progress; finish it with git rebase --continue or --abort in {self.top}"
            )
        self.git.run("rebase", "--quit")
        self.git.run("symbolic-ref", "HEAD", head_name)
        self.git.run("reset", "-q")  # the index follows the branch; the files do not move
        merged = treemerge.merge_commits(
            self.git, self.gitdir, branch, files, "vaultmem sync: recover an interrupted rebase\n"
        )
        self._move_files(files, merged.commit, f"your files are in commit {files[:10]}")
        self.git.run(
            "update-ref",
            "-m",
            "vaultmem sync: recover an interrupted rebase",
            head_name,
            merged.commit,
            branch,
        )
        self.git.run("reset", "-q")
        if stash:
            self._move_files(f"{stash}^1", stash, f"your stashed changes are in commit {stash[:10]}")

    def _move_files(self, old: str, new: str, where: str) -> None:
        moved = worktree.move(self.git, self.top, old, new)
        if not moved.complete:
            raise GitError(f"{', '.join(moved.busy[:3])} is being written; run vaultmem sync again ({where})")

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
        if not self.allow_secrets:
            self._withhold_secrets(report, has_head)
            if has_head and self.git.ok("diff", "--cached", "--quiet"):
                return
        changes = self._staged_changes(has_head)
        text = commit_message(changes, message)
        self.git.run("commit", "-q", "-F", "-", input=text.encode())
        _step("committed")
        report.committed = self.git.text("rev-parse", "--short", "HEAD")
        report.message = text

    def _staged_rows(self, has_head: bool) -> list[tuple[str, str]]:
        """(A/M/D/R, vault-relative path) of every staged change to a note."""
        if has_head:
            rows = _name_status(
                self.git.text("diff", "--cached", "--relative", "--name-status", "-M", "-z", "HEAD")
            )
        else:
            rows = [("A", p) for p in self.git.text("ls-files", "-z").split("\0") if p]
        return [(c, p) for c, p in rows if p.lower().endswith(NOTE_SUFFIXES)]

    def _withhold_secrets(self, report: SyncReport, has_head: bool) -> None:
        """Unstage every note about to be committed that holds a secret (``core.secrets``): it
        stays on disk, unchanged, and is named in the report with the kinds found."""
        from ..core import secrets

        paths = [p for c, p in self._staged_rows(has_head) if c != "D"]
        for path, text in zip(paths, self._texts([f":./{p}" for p in paths])):
            found = secrets.scan(text)
            if found:
                report.withheld[path] = [f"{f.kind} on line {f.line}" for f in found[:5]]
        if report.withheld:
            held = list(report.withheld)
            if has_head:
                self.git.run("reset", "-q", "--", *held)
            else:
                self.git.run("rm", "-q", "--cached", "--", *held)

    def _staged_changes(self, has_head: bool) -> dict[str, list[str]]:
        """Notes in the index vs HEAD, by kind: added, changed, resolved, superseded, removed."""
        notes = self._staged_rows(has_head)
        modified = [p for c, p in notes if c == "M"]
        before = self._texts([f"HEAD:./{p}" for p in modified]) if modified else []
        after = self._texts([f":./{p}" for c, p in notes if c != "D"])
        after_by = dict(zip([p for c, p in notes if c != "D"], after))
        kinds: dict[str, list[str]] = {
            k: [] for k in ("added", "changed", "resolved", "superseded", "removed")
        }
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

    def _texts(self, specs: list[str]) -> list[str]:
        return [(b or b"").decode("utf-8", "replace") for b in self.git.blobs(specs)]

    # ------------------------------------------------------------ fetch, merge, push

    def _upstream(self) -> tuple[str | None, str]:
        """(remote, branch) this vault syncs with; remote None when there is none."""
        branch = self._branch()
        remote = self.git.text("config", f"branch.{branch}.remote", check=False)
        remotes = self.git.text("remote").split()
        if not remote:
            remote = "origin" if "origin" in remotes else (remotes[0] if remotes else "")
        merge = self.git.text("config", f"branch.{branch}.merge", check=False)
        return (remote or None), (merge.removeprefix("refs/heads/") or branch)

    def _branch(self) -> str:
        branch = self.git.text("symbolic-ref", "-q", "--short", "HEAD", check=False)
        if not branch:
            raise GitError("the vault's repository is not on a branch (detached HEAD); check one out first")
        return branch

    def _exchange(self, report: SyncReport, push: bool, before_pull: Callable[[], None] | None) -> None:
        remote, branch = self._upstream()
        if remote is None:
            report.notes.append("no remote: committed locally only (add one: git remote add origin URL)")
            return
        tracking = f"refs/remotes/{remote}/{branch}"
        old = fetched = self._sha(tracking)
        for attempt in range(self.ATTEMPTS):
            self.git.run("fetch", "-q", "--no-recurse-submodules", remote)
            fetched = self._sha(tracking)
            _step("fetched")
            target = self._sha("HEAD")
            if fetched and not self.git.ok("merge-base", "--is-ancestor", fetched, "HEAD"):
                if before_pull is not None:
                    before_pull()
                target = self._merge(report, self._clean(report, fetched, remote, branch), remote, branch)
            if not push or (fetched and target == fetched):
                break
            result = self.git.run("push", "-q", *(["-u"] if not fetched else []), remote,
                                  f"{target}:refs/heads/{branch}", check=False)  # fmt: skip
            if result.returncode == 0:
                report.pushed = True
                break
            if attempt == self.ATTEMPTS - 1:
                err = result.stderr.decode(errors="replace").strip().splitlines()
                raise GitError(
                    f"push to {remote} failed: {err[-1] if err else 'unknown error'}; "
                    "your notes are committed locally, run vaultmem sync again"
                )
        if fetched and fetched != old:
            if old and not self.git.ok("merge-base", "--is-ancestor", old, fetched):
                report.notes.append(f"{remote}/{branch} was force-pushed (its history was rewritten): nothing of "
                                    "yours was dropped; your notes are merged and pushed back")  # fmt: skip
            self._mark_incoming(report, old, fetched)

    def _clean(self, report: SyncReport, fetched: str, remote: str, branch: str) -> str:
        """``fetched``, or a child of it without the paths git refuses to check out."""
        commit, dropped = treemerge.clean(self.git, fetched)
        if dropped:
            shown = ", ".join(dropped[:3]) + (f" and {len(dropped) - 3} more" if len(dropped) > 3 else "")
            report.notes.append(f"left out {len(dropped)} path(s) of {remote}/{branch} no checkout may hold "
                                f"({shown}): the rest is synced; ask whoever pushed them to remove them")  # fmt: skip
        return commit

    def _mark_incoming(self, report: SyncReport, old: str | None, fetched: str) -> None:
        """Notes the fetched commits changed are data until the person confirms them
        (``core.provenance``): shown with their author, held back when they give orders."""
        from ..core import provenance

        marked = provenance.mark_range(self.root, old, fetched)
        if marked:
            report.notes.append(f"{len(marked)} note(s) came from other machines and stay unconfirmed (shown "
                                "as data, held back when they give the agent orders): vaultmem confirm ID")  # fmt: skip

    def _merge(self, report: SyncReport, fetched: str, remote: str, branch: str) -> str:
        """Merge ``fetched`` aside, bring the files over, move the branch; returns the commit
        to push (the merge, even when the files could not all be brought over yet)."""
        head = self._sha("HEAD") or _EMPTY_TREE
        message = f"vaultmem sync: merge {remote}/{branch}\n"
        merged = treemerge.merge_commits(self.git, self.gitdir, head, fetched, message)
        _step("merged")
        if merged.refused:
            shown = ", ".join(merged.refused[:3]) + (
                f" and {len(merged.refused) - 3} more" if len(merged.refused) > 3 else ""
            )
            report.notes.append(f"refused {len(merged.refused)} path(s) vaultmem owns from {remote}/{branch} "
                                f"({shown}): never checked out; the merge leaves them out")  # fmt: skip
        self._what_came(report, head, merged.commit, f"{remote}/{branch}")
        if merged.restored:
            report.notes.append(f"kept {len(merged.restored)} note(s) deleted on one side and edited on the other "
                                f"at their place, out of .trash/ ({', '.join(merged.restored[:3])})")  # fmt: skip
        moved = worktree.move(self.git, self.top, head, merged.commit)
        _step("applied")
        report.touched |= {self._vault_rel(p) for p in moved.touched if p.startswith(self.prefix)}
        conflicts = set(merged.conflicts) | set(moved.conflicts)
        report.conflicts += sorted(self._vault_rel(p) for p in conflicts if p.startswith(self.prefix))
        if not moved.complete:
            report.notes.append(f"{', '.join(moved.busy[:3])} being written now: the pull finishes at the "
                                "next sync (nothing was overwritten)")  # fmt: skip
            return merged.commit
        self.git.run("update-ref", "-m", f"vaultmem sync: {remote}/{branch}", f"refs/heads/{self._branch()}",
                     merged.commit, head)  # fmt: skip
        _step("moved")
        self.git.run("reset", "-q")  # the index follows the branch (the files are already there)
        return merged.commit

    def _what_came(self, report: SyncReport, head: str, merged: str, where: str) -> None:
        """The notes the merge changes here (not what the remote's own history says: a note it
        deleted that is kept here is no "removed"); a warning when it removes many."""
        came = [row for row in _name_status(self.git.text(
            "diff", "--no-ext-diff", "--no-textconv", "--relative", "--name-status", "-M", "-z",
            head, merged, check=False)) if row[1].lower().endswith(NOTE_SUFFIXES)]  # fmt: skip
        report.incoming += [row for row in came if row not in report.incoming]
        gone = [p for c, p in came if c == "D"]
        if len(gone) >= MASS_DELETE:
            before = sum(1 for p in self.git.text("ls-tree", "-r", "-z", "--name-only", head, check=False).split("\0")
                         if p.lower().endswith(NOTE_SUFFIXES))  # fmt: skip
            if len(gone) * 5 >= before:
                report.notes.append(f"warning: {where} deleted {len(gone)} of {before} notes, and this sync removes "
                                    f"them here; they are in the history: git -C {self.root} checkout {head[:12]} -- "
                                    "<note> brings one back (git revert the deleting commit brings all)")  # fmt: skip

    def _vault_rel(self, path: str) -> str:
        return path[len(self.prefix) :]

    def _sha(self, ref: str) -> str | None:
        return self.git.text("rev-parse", "-q", "--verify", ref, check=False) or None


def _read_text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


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
         before_pull: Callable[[], None] | None = None, allow_secrets: bool = False) -> SyncReport:  # fmt: skip
    """Commit the vault's changes (notes holding a secret left out unless ``allow_secrets``),
    fetch, merge, update the files, push (see ``Syncer``)."""
    return Syncer(root, interactive, allow_secrets).run(message, push, before_pull)


def parse_interval(text: str) -> float:
    """``30s``, ``5m``, ``1h`` (or plain seconds) as seconds; at least 5 s."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text or "")
    if not m:
        raise BadInput(f"--sync-every {text!r}: use a duration such as 30s, 5m or 1h")
    seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    if seconds < 5:
        raise BadInput("--sync-every must be at least 5s")
    return seconds


def sync_watched(w: Watcher) -> SyncReport | None:
    """One sync of a vault a watcher ``w`` keeps (``vaultmem watch --sync-every``): the
    watcher's batcher is held meanwhile, so everything a pull brings reaches the indexer as one
    burst. The report, or None when the sync failed (logged)."""
    try:
        with w.batcher.held():
            report = sync(w.root, interactive=False)
            w.batcher.add({p for p in report.touched if not w.vault.store.rules.ignored(p)})
    except VaultError as e:
        log.warning("%s: sync failed: %s", w.root.name, e)
        return None
    for path, kinds in report.withheld.items():
        log.warning("%s: not committed: %s holds a secret (%s)", w.root.name, path, ", ".join(kinds))
    came = len(report.incoming)
    if report.committed or came or report.conflicts:
        log.info("%s: synced (%s committed, %d notes came in, %d conflicts kept)", w.root.name,
                 report.committed or "nothing", came, len(report.conflicts))  # fmt: skip
    return report
