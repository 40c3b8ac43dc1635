"""Branch-scoped memory: the code repository's git state, and which memories a branch sees.

A memory written while a code repository is on a feature branch carries ``branch:`` (the
branch) and ``repo:`` (the project, identified by its remote URL, so every clone of the
code repository names it the same) in its frontmatter. Recall leaves out memories of other
branches unless asked; ``maintain`` promotes or archives a branch's memories once it is
merged or deleted (see ``plan``).
"""

from __future__ import annotations

import re
from collections import namedtuple
from pathlib import Path

from ..core import environment

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: recall's fast path imports this module
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Iterable
    from typing import Any

_BRANCH_NAME = re.compile(
    r"[^\s\x00-\x1f\x7f~^:?*\[\\-][^\s\x00-\x1f\x7f~^:?*\[\\]*"
)  # git check-ref-format, roughly
TASK_TYPES = ("progress", "handoff", "session_summary", "commitment")
PROMOTE_IMPORTANCE = 7


class CodeState(namedtuple("CodeState", "top branch default repo")):
    """Where a working directory's code repository stands: its ``top`` folder, ``branch`` (None:
    detached HEAD), ``default`` branch and ``repo`` (the project: normalised remote URL, else the
    top folder's path). Named tuples here, not dataclasses: those import ``inspect`` (~5 ms)."""

    __slots__ = ()
    top: Path
    branch: str | None
    default: str | None
    repo: str

    @property
    def on_feature_branch(self) -> bool:
        return self.branch is not None and self.branch != self.default


# The user's code repository may configure programs git runs on its own (an external diff,
# a textconv driver, an fsmonitor, gpg for signatures, a pager): vaultmem only reads, and runs none.
SAFE_CONFIG = ("-c", "core.fsmonitor=false", "-c", "log.showSignature=false", "-c", "core.pager=cat",
               "-c", "diff.external=", "--no-pager")  # fmt: skip
NO_PROGRAMS = ("--no-ext-diff", "--no-textconv")  # for commands that show diffs
_SHOWS_DIFFS = {"log", "diff", "show"}


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str | None:
    """Run a read-only git command in the code repository; None when it fails."""
    if args and args[0] in _SHOWS_DIFFS:
        args = (args[0], *NO_PROGRAMS, *args[1:])
    env = environment.for_child(drop=("GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER"))
    env["GIT_OPTIONAL_LOCKS"] = "0"
    import subprocess  # here: recall's fast path asks git nothing for notes without a branch

    try:
        proc = subprocess.run(["git", *SAFE_CONFIG, *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                              timeout=10, env=env)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def normalize_remote(url: str) -> str:
    """``git@github.com:Me/App.git``, ``https://user@github.com/Me/App`` -> ``github.com/me/app``."""
    text = url.strip()
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text, flags=re.I)
    text = re.sub(r"^[^@/]+@", "", text)
    m = re.match(r"^([^/:]+):(?!\d+/)(.*)$", text)  # scp-like host:path (not host:port/)
    if m:
        text = f"{m.group(1)}/{m.group(2)}"
    text = re.sub(r"^([^/]+):\d+/", r"\1/", text)
    return re.sub(r"(\.git)?/*$", "", text).lower()


def code_state(cwd: Path) -> CodeState | None:
    """The git state of the code repository ``cwd`` is in, or None outside one."""
    top = _git(cwd, "rev-parse", "--show-toplevel")
    if not top:
        return None
    root = Path(top)
    branch = _git(root, "symbolic-ref", "-q", "--short", "HEAD") or None
    remote = _git(root, "remote", "get-url", "origin") or _first_remote_url(root)
    repo = normalize_remote(remote) if remote else str(root)
    return CodeState(root, branch, default_branch(root), repo)


def _first_remote_url(top: Path) -> str | None:
    names = (_git(top, "remote") or "").split()
    return _git(top, "remote", "get-url", names[0]) if names else None


def default_branch(top: Path) -> str | None:
    """The remote's default branch (origin/HEAD), else a local main/master, else init.defaultBranch."""
    head = _git(top, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD")
    if head:
        return head.split("/", 1)[1]
    for name in ("main", "master", "trunk", "develop"):
        if _git(top, "rev-parse", "-q", "--verify", f"refs/heads/{name}") is not None:
            return name
    return _git(top, "config", "init.defaultBranch") or None


def branch_fate(top: Path, branch: str, default: str) -> str:
    """``merged`` (into the default branch, locally or on origin; squash and rebase merges
    included), ``open`` or ``deleted``. A name git would not take as a branch (it comes from
    a note's frontmatter: ``-D``, ``a..b``) is ``open``, so nothing acts on it."""
    if not _BRANCH_NAME.fullmatch(branch) or ".." in branch or "@{" in branch:
        return "open"
    tip = _git(top, "rev-parse", "-q", "--verify", f"refs/heads/{branch}")
    for ref in (default, f"origin/{default}"):
        if _git(top, "rev-parse", "-q", "--verify", ref) in (None, tip):
            continue  # (a branch still at the default's tip has no work of its own yet)
        for listing in (_git(top, "branch", "--list", "--merged", ref, branch),
                        _git(top, "branch", "-r", "--list", "--merged", ref, f"origin/{branch}")):  # fmt: skip
            if listing:
                return "merged"
    last = tip or _last_tip(top, branch)
    if last and any(_landed_as_patches(top, last, ref) for ref in (default, f"origin/{default}")):
        return "merged"
    if (
        tip is not None
        or _git(top, "rev-parse", "-q", "--verify", f"refs/remotes/origin/{branch}") is not None
    ):
        return "open"
    # a branch merged and then deleted: its name is in a merge commit's message on the default branch
    log = _git(top, "log", default, "--merges", "--format=%s", "-n", "500") or ""
    return (
        "merged" if re.search(rf"(?:branch|from \S+/) ?'?{re.escape(branch)}'?(?:\s|$)", log) else "deleted"
    )


def _last_tip(top: Path, branch: str) -> str | None:
    """The commit a deleted branch was at when HEAD last left it (from HEAD's reflog), if known."""
    log = _git(top, "reflog", "show", "--format=%H %gs", "-n", "2000", "HEAD") or ""
    lines = log.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.split(" ", 1)[-1].startswith(f"checkout: moving from {branch} to "):
            return lines[i + 1].split(" ", 1)[0]
    return None


def _landed_as_patches(top: Path, tip: str, ref: str) -> bool:
    """Whether the work of ``tip`` since it left ``ref`` is on ``ref`` as other commits: one
    commit with the same change (a squash merge) or each of its commits (a rebase merge),
    compared by git's patch ids, so the commits' hashes and messages need not match."""
    base = _git(top, "merge-base", ref, tip)
    if base is None or base == tip:
        return False
    landed = _patch_ids(
        top, _git(top, "log", "-p", "--no-merges", "--format=commit %H", "-n", "500", f"{base}..{ref}")
    )
    if not landed:
        return False
    squashed = _patch_ids(top, _git(top, "diff", base, tip))
    if squashed and squashed <= landed:
        return True
    cherry = (_git(top, "cherry", ref, tip) or "").split()
    return bool(cherry) and all(mark == "-" for mark in cherry[::2])


def _patch_ids(top: Path, patch: str | None) -> set[str]:
    if not patch:
        return set()
    out = _git(top, "patch-id", "--stable", stdin=patch)
    return {line.split()[0] for line in (out or "").splitlines() if line.strip()}


def scope_fields(cwd: Path, vault_root: Path) -> dict[str, str]:
    """``branch``/``repo`` for a memory written from ``cwd``: only on a feature branch of a
    code repository that is not the vault's own repository."""
    state = code_state(cwd)
    if state is None or not state.on_feature_branch:
        return {}
    try:
        vault_root.resolve().relative_to(state.top.resolve())
        if (vault_root / ".git").exists() or state.top.resolve() == vault_root.resolve():
            return {}  # the vault's own repository: syncing memory is not code work
    except ValueError:
        pass
    return {"branch": str(state.branch), "repo": state.repo}


def visible(scope: tuple[str | None, str | None], state: CodeState | None, branch: str | None = None,
            all_branches: bool = False) -> bool:  # fmt: skip
    """Whether recall shows a memory with this (branch, repo) scope from this code state."""
    note_branch, note_repo = scope
    if note_branch is None or all_branches:
        return True
    if branch is not None:  # as if the code repository were on that branch
        return note_branch == branch or (state is not None and note_branch == state.default)
    if state is None:
        return False
    same_repo = note_repo in (None, state.repo)
    return same_repo and note_branch in (state.branch, state.default)


def shown_test(cwd: Path, branch: str | None = None,
               all_branches: bool = False) -> Callable[[Path, str], bool]:  # fmt: skip
    """The one rule recall and wake share: ``test(vault_root, path)`` says whether the memory at
    ``path`` is shown from the code state of ``cwd`` (a note that cannot be read is shown: it
    is not ours to hide). Cheap on the recall path: a note without a ``branch:`` line is shown
    without parsing, and git is asked for the code state only when a scoped note turns up."""
    state: list[CodeState | None] = []

    def test(root: Path, path: str) -> bool:
        if all_branches:
            return True
        try:
            text = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return True
        if not _BRANCH_LINE.search(text):
            return True
        from ..core.notedates import note_scope  # parsing (yaml) only for scoped notes

        if not state:
            state.append(code_state(cwd))
        return visible(note_scope(text), state[0], branch)

    return test


_BRANCH_LINE = re.compile(r"^branch:", re.M)


class BranchAction(namedtuple("BranchAction", "path kind branch reason")):
    """What maintain does with one branch-scoped memory (``kind``: promote or archive)."""

    __slots__ = ()
    path: str
    kind: str
    branch: str
    reason: str


def plan(
    records: Iterable[Any], scopes: dict[str, tuple[str | None, str | None]], state: CodeState
) -> list[BranchAction]:
    """For memories of this project's branches that were merged or deleted: promote decisions
    and high-importance memories of a merged branch (the scope is removed), archive the rest;
    a branch deleted unmerged archives its task memory (and keeps the rest scoped)."""
    if state.default is None:
        return []
    fates: dict[str, str] = {}
    actions = []
    for rec in records:
        branch, repo = scopes.get(rec.path, (None, None))
        if branch is None or repo not in (None, state.repo) or rec.status not in ("active",):
            continue
        fate = fates.setdefault(branch, branch_fate(state.top, branch, state.default))
        if fate == "merged":
            keep = rec.type == "decision" or rec.importance >= PROMOTE_IMPORTANCE
            actions.append(BranchAction(rec.path, "promote" if keep else "archive", branch,
                                        f"branch {branch} merged into {state.default}"))  # fmt: skip
        elif fate == "deleted" and rec.type in TASK_TYPES:
            actions.append(BranchAction(rec.path, "archive", branch, f"branch {branch} deleted unmerged"))
    return actions


def maintain(vault: Any, state: CodeState, apply: bool) -> list[dict[str, Any]]:
    """The branch rules of ``vaultmem maintain`` for the code repository ``state`` describes:
    planned actions as dicts; with ``apply``, promotions drop the scope (``branch``/``repo``)
    and archives set ``status: archived`` with a link in the anchor's history note."""
    from ..core.notedates import note_scope
    from ..index import graph as graphmod
    from . import aging
    from .lifecycle import change

    records = vault.records()
    scopes = {}
    for path in records:
        try:
            scopes[path] = note_scope(vault.store.read_text(path))
        except (OSError, UnicodeDecodeError):
            continue
    actions = plan(records.values(), scopes, state)
    out = [{"kind": a.kind, "path": a.path, "id": records[a.path].key, "title": records[a.path].title,
            "reason": a.reason} for a in actions]  # fmt: skip
    if not apply or not actions:
        return out
    g = vault.graph()
    anchor_set = set(graphmod.anchors(g))
    archives = []
    for a in actions:
        rec = records[a.path]
        if a.kind == "promote":
            change(vault, rec, {}, remove=("branch", "repo"))
            continue
        near = (set(g.successors(a.path)) | set(g.predecessors(a.path))) if a.path in g else set()
        anchor = next(iter(sorted(near & anchor_set)), None)
        archives.append(aging.Action("archive", a.path, rec.key, rec.title, a.reason, anchor=anchor))
    aging.apply(vault, archives)
    vault.sync_paths(sorted(a.path for a in actions))
    return out
