"""Which files under a vault are notes: the ignore rules every component shares.

Ignored: any dot-folder or dot-file (``.vaultmem/``, ``.obsidian/``, ``.git/``, ``.trash/``,
``.#lock`` files), editor temp/swap/backup files, non-markdown files, the configured
``exclude`` patterns (gitignore syntax: the template folder and the vault's own README by
default), and whatever the vault's ``.gitignore`` files (root and nested) ignore.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pathspec

NOTE_SUFFIXES = (".md", ".markdown")
JUNK_PATTERNS = (
    "*.swp", "*.swo", "*.swx", "*.swpx", "*~", "#*#", "*.tmp", "*.temp", "*.bak", "*.orig",
    "*.part", "*.crdownload", "~$*", "*.sync-conflict-*", "*.icloud",
)  # fmt: skip


def is_junk_name(name: str) -> bool:
    """Dot-files, editor swap/backup/temp files and anything that is not markdown."""
    if name.startswith(".") or not name.lower().endswith(NOTE_SUFFIXES):
        return True
    lower = name.lower()
    return any(fnmatch.fnmatchcase(lower, p) for p in JUNK_PATTERNS)


class IgnoreRules:
    """Ignore rules of one vault; ``.gitignore`` files are read once and cached."""

    def __init__(self, root: Path, exclude: tuple[str, ...] = ()):
        self.root = root
        self.exclude = pathspec.GitIgnoreSpec.from_lines(exclude)
        self._specs: dict[str, pathspec.PathSpec | None] = {}

    def spec(self, rel_dir: str) -> pathspec.PathSpec | None:
        """The compiled ``.gitignore`` of a vault-relative folder ('' is the root), if any."""
        if rel_dir not in self._specs:
            path = self.root / rel_dir / ".gitignore"
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                self._specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(lines)
            except OSError:
                self._specs[rel_dir] = None
        return self._specs[rel_dir]

    def forget(self, rel_dir: str | None = None) -> None:
        """Drop cached ``.gitignore`` specs (all, or one folder's) after they changed."""
        if rel_dir is None:
            self._specs.clear()
        else:
            self._specs.pop(rel_dir, None)

    def _git_ignored(self, rel: str, is_dir: bool) -> bool:
        """Like git: the deepest ``.gitignore`` with a matching pattern decides, so a nested
        ``!keep.md`` re-includes what a parent folder's ``*.md`` ignores."""
        parts = rel.split("/")
        for i in range(len(parts) - 1, -1, -1):
            spec = self.spec("/".join(parts[:i]))
            if spec is not None:
                sub = "/".join(parts[i:]) + ("/" if is_dir else "")
                decision = spec.check_file(sub).include
                if decision is not None:
                    return decision
        return False

    def dir_ignored(self, rel: str) -> bool:
        """Whether a vault-relative folder (and so all below it) is skipped."""
        name = rel.rsplit("/", 1)[-1]
        return name.startswith(".") or self.exclude.match_file(rel + "/") or self._git_ignored(rel, True)

    def ignored(self, rel: str) -> bool:
        """Whether a vault-relative file path is not a note (checks every parent folder too)."""
        parts = rel.split("/")
        if is_junk_name(parts[-1]):
            return True
        for i in range(1, len(parts)):
            if self.dir_ignored("/".join(parts[:i])):
                return True
        return self.exclude.match_file(rel) or self._git_ignored(rel, False)

    def walk(self) -> list[str]:
        """Every note path under the root, vault-relative with '/' separators, sorted."""
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            rel_dir = "" if rel_dir == "." else rel_dir
            prefix = rel_dir + "/" if rel_dir else ""
            dirnames[:] = sorted(d for d in dirnames if not self.dir_ignored(prefix + d))
            for name in filenames:
                rel = prefix + name
                if not is_junk_name(name) and not self.exclude.match_file(rel) and not self._git_ignored(rel, False):
                    found.append(rel)
        return sorted(found)
