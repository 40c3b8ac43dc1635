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
from .threeway import is_owned, merge_three

if TYPE_CHECKING:
    from .git import Git

NO_DRIVER = ["-c", "merge.vaultmem.driver=false"]  # notes come back as conflicts: merged here, in-process


@dataclass
class TreeMerge:
    """A commit to move to, the paths whose text kept both sides, and owned paths left out."""

    commit: str
    conflicts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


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
    tree, conflicted = parts[0], {}
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
