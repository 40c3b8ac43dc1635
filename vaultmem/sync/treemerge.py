"""Merging two commits into a new commit without touching the working tree or the index.

``git merge-tree --write-tree`` (git >= 2.38) merges the trees (renames followed); every path
it reports as conflicted is resolved here from its stages by ``threeway.merge_three`` in a
temporary index of our own; paths vaultmem owns are dropped from the result whatever the
other side committed. Nothing runs in the working tree, so a person or an agent writing
notes meanwhile is never in the way (the result reaches the files later, file by file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import GitError
from .threeway import is_owned, merge_three, unsafe_name

if TYPE_CHECKING:
    from .git import Git

NO_DRIVER = ["-c", "merge.vaultmem.driver=false"]  # notes come back as conflicts: merged here, in-process


@dataclass
class TreeMerge:
    """A commit to move to, the paths whose text kept both sides, and owned paths left out."""

    commit: str
    conflicts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)  # notes brought back out of .trash/


class TempIndex:
    """A private index file under the git dir (never the repository's own index)."""

    def __init__(self, git: Git, gitdir):
        self.git = git
        self.path = gitdir / "vaultmem-sync.index"
        self.path.unlink(missing_ok=True)
        self.env = {"GIT_INDEX_FILE": str(self.path)}

    def run(self, *args: str, input: bytes | None = None):
        return self.git.run(*args, input=input, env=self.env)

    def drop_owned(self) -> list[str]:
        """Remove every path vaultmem owns from this index; returns them."""
        listed = self.run("ls-files", "-z").stdout.decode("utf-8", "surrogateescape").split("\0")
        owned = [p for p in listed if p and is_owned(p)]
        if owned:
            self.run("update-index", "--force-remove", "-z", "--stdin",
                     input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in owned) + b"\0")  # fmt: skip
        return owned

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def snapshot(git: Git, gitdir, parent: str, message: str) -> str:
    """A commit (child of ``parent``) of the working tree as it is, without what vaultmem owns,
    made in a private index: the repository's index and branch are not touched."""
    index = TempIndex(git, gitdir)
    try:
        index.run("read-tree", parent)
        index.run("add", "-A", "--", ":/")
        index.drop_owned()
        tree = index.run("write-tree").stdout.decode().strip()
        return (
            git.run("commit-tree", tree, "-p", parent, "-F", "-", input=message.encode())
            .stdout.decode()
            .strip()
        )
    finally:
        index.close()


def merge_commits(git: Git, gitdir, ours: str, theirs: str, message: str) -> TreeMerge:
    """A commit holding both ``ours`` and ``theirs`` (``theirs`` itself when ours is already in
    it and it holds nothing vaultmem owns), never a working-tree operation."""
    index = TempIndex(git, gitdir)
    try:
        fast_forward = git.ok("merge-base", "--is-ancestor", ours, theirs)
        result = TreeMerge("")
        if fast_forward:
            index.run("read-tree", theirs)
        else:
            tree, conflicted = _merge_tree(git, ours, theirs)
            index.run("read-tree", tree)
            result.conflicts = _resolve(git, index, conflicted)
            result.restored = _out_of_trash(git, index, ours, theirs)
        result.refused = index.drop_owned()
        tree = index.run("write-tree").stdout.decode().strip()
        if fast_forward and tree == git.text("rev-parse", f"{theirs}^{{tree}}"):
            result.commit = theirs
            return result
        parents = ["-p", theirs] if fast_forward else ["-p", ours, "-p", theirs]
        if fast_forward:
            message = "vaultmem sync: leave out paths vaultmem owns\n"
        result.commit = (
            git.run("commit-tree", tree, *parents, "-F", "-", input=message.encode()).stdout.decode().strip()
        )
        return result
    finally:
        index.close()


TRASH = ".trash"


def clean(git: Git, commit: str) -> tuple[str, list[str]]:
    """``commit``, or when its tree holds entries no checkout may hold (``.git``, ``..``: git
    itself refuses them, so every later sync would fail) a child of it without them; and the
    paths left out. Only the trees on the way to such an entry are rebuilt (``git mktree``)."""
    listed = git.run("ls-tree", "-r", "-t", "-z", "--full-tree", commit).stdout.decode(
        "utf-8", "surrogateescape"
    )
    bad = [row.split("\t", 1)[1] for row in listed.split("\0") if row and any(
        unsafe_name(part) for part in row.split("\t", 1)[1].split("/"))]  # fmt: skip
    bad = [p for p in bad if not any(p.startswith(q + "/") for q in bad)]  # the outermost of each
    if not bad:
        return commit, []
    tree = _without(git, f"{commit}^{{tree}}", [p.split("/") for p in bad])
    message = f"vaultmem sync: leave out {len(bad)} path(s) no checkout may hold\n"
    child = (
        git.run("commit-tree", tree, "-p", commit, "-F", "-", input=message.encode()).stdout.decode().strip()
    )
    return child, bad


def _without(git: Git, tree: str, drop: list[list[str]]) -> str:
    """``tree`` rebuilt without the entries at the paths ``drop`` (as lists of names)."""
    here = {p[0] for p in drop if len(p) == 1}
    deeper: dict[str, list[list[str]]] = {}
    for p in drop:
        if len(p) > 1:
            deeper.setdefault(p[0], []).append(p[1:])
    rows = []
    for row in git.run("ls-tree", "-z", tree).stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not row:
            continue
        info, name = row.split("\t", 1)
        if name in here:
            continue
        if name in deeper:
            mode, kind, sha = info.split()
            info = f"{mode} {kind} {_without(git, sha, deeper[name])}"
        rows.append(f"{info}\t{name}")
    data = ("\0".join(rows) + "\0").encode("utf-8", "surrogateescape") if rows else b""
    return git.run("mktree", "-z", input=data).stdout.decode().strip()


def _out_of_trash(git: Git, index: TempIndex, ours: str, theirs: str) -> list[str]:
    """A note one side moved to ``.trash/`` (``vaultmem delete``) and the other edited: git's
    rename detection carries the edit into the trash, which git tracks, so the note would leave
    both clones. It goes back to its path instead (an edit wins over a deletion, as everywhere
    in a sync). Returns the paths restored."""
    base = git.text("merge-base", ours, theirs, check=False)
    if not base:
        return []
    sides = [_renames_and_edits(git, base, side) for side in (ours, theirs)]
    restored = []
    for (moved, _), (_, edited) in zip(sides, sides[::-1]):
        for src, dest in moved.items():
            if src in edited and TRASH in dest.split("/")[:-1]:
                row = index.run("ls-files", "-s", "-z", "--", dest).stdout.decode("utf-8", "surrogateescape")
                if not row.strip("\0"):
                    continue
                mode, sha = row.split()[0], row.split()[1]
                index.run("update-index", "--force-remove", "--", dest)
                index.run("update-index", "--add", "--cacheinfo", f"{mode},{sha},{src}")
                restored.append(src)
    return restored


def _renames_and_edits(git: Git, base: str, side: str) -> tuple[dict[str, str], set[str]]:
    """(renamed path -> new path, modified paths) from ``base`` to ``side``."""
    out = git.run("diff-tree", "-r", "-z", "-M", "--name-status", "--no-ext-diff", base, side).stdout
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    moved, edited, i = {}, set(), 0
    while i < len(parts) and parts[i]:
        code = parts[i][0]
        if code in "RC":
            if code == "R":
                moved[parts[i + 1]] = parts[i + 2]
            i += 3
        else:
            if code == "M":
                edited.add(parts[i + 1])
            i += 2
    return moved, edited


def _merge_tree(git: Git, ours: str, theirs: str) -> tuple[str, dict[str, dict[int, tuple[str, str]]]]:
    """git's tree merge: (tree, conflicted path -> {stage: (mode, blob)})."""
    proc = git.run(*NO_DRIVER, "merge-tree", "--write-tree", "-z", "--no-messages",
                   "--allow-unrelated-histories", ours, theirs, check=False)  # fmt: skip
    if proc.returncode not in (0, 1):
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(
            f"git merge-tree failed: {msg[-1] if msg else proc.returncode} (git 2.38 or newer is needed)"
        )
    parts = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    tree, conflicted = parts[0], dict[str, dict[int, tuple[str, str]]]()
    for row in parts[1:]:
        if not row:
            break
        info, path = row.split("\t", 1)
        mode, sha, stage = info.split()
        conflicted.setdefault(path, {})[int(stage)] = (mode, sha)
    return tree, conflicted


def _resolve(git: Git, index: TempIndex, conflicted: dict[str, dict[int, tuple[str, str]]]) -> list[str]:
    """Resolve each conflicted path in the temporary index; returns those with marked blocks."""
    shas = sorted({sha for stages in conflicted.values() for _, sha in stages.values()})
    blobs = dict(zip(shas, git.blobs(shas)))
    listed = set(index.run("ls-files", "-z").stdout.decode("utf-8", "surrogateescape").split("\0"))
    marked = []
    for path, stages in conflicted.items():
        if any(mode == "160000" for mode, _ in stages.values()):
            continue  # a submodule: git's own result stays
        base, ours, theirs = (blobs[stages[s][1]] if s in stages else None for s in (1, 2, 3))
        res = merge_three(path, base, ours, theirs, taken=lambda p: p in listed or p in conflicted)
        mode = (stages.get(2) or stages.get(3) or stages[1])[0]
        _stage(git, index, path, res.data, mode)
        if res.extra is not None:
            _stage(git, index, res.extra[0], res.extra[1], mode)
            listed.add(res.extra[0])
        if res.conflicted:
            marked.append(path)
    return marked


def _stage(git: Git, index: TempIndex, path: str, data: bytes | None, mode: str) -> None:
    if data is None:
        index.run("update-index", "--force-remove", "--", path)
        return
    sha = git.run("hash-object", "-w", "--no-filters", "--stdin", input=data).stdout.decode().strip()
    index.run("update-index", "--add", "--cacheinfo", f"{mode},{sha},{path}")
