"""Which files under a vault are notes: the ignore rules every component shares.

Ignored: any dot-folder or dot-file (``.vaultmem/``, ``.obsidian/``, ``.git/``, ``.trash/``,
``.#lock`` files), editor temp/swap/backup files, non-markdown files, the configured
``exclude`` patterns (gitignore syntax: the template folder and the vault's own README by
default), and whatever the vault's ``.gitignore`` files (root and nested) ignore.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from pathlib import Path

import pathspec

NOTE_SUFFIXES = (".md", ".markdown")
JUNK_PATTERNS = (
    "*.swp", "*.swo", "*.swx", "*.swpx", "*~", "#*#", "*.tmp", "*.temp", "*.bak", "*.orig",
    "*.part", "*.crdownload", "~$*", "*.sync-conflict-*", "*.icloud",
)  # fmt: skip
JUNK_RE = re.compile("|".join(fnmatch.translate(p) for p in JUNK_PATTERNS))  # one match, not 15 fnmatch calls


MISNAMED = "its file name is not valid UTF-8 (rename it to use it)"


def utf8(name: str) -> bool:
    """Whether a name read from the disk is valid UTF-8 (a name that is not holds surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A name that is not valid UTF-8 as it can be shown and stored: its bad bytes as ``\\xe9``."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def is_junk_name(name: str) -> bool:
    """Dot-files, editor swap/backup/temp files and anything that is not markdown."""
    if name.startswith(".") or not name.lower().endswith(NOTE_SUFFIXES):
        return True
    return JUNK_RE.match(name.lower()) is not None


class IgnoreRules:
    """Ignore rules of one vault; ``.gitignore`` files are read once and cached."""

    def __init__(self, root: Path, exclude: tuple[str, ...] = ()):
        self.root = root
        self.exclude = pathspec.GitIgnoreSpec.from_lines(exclude)
        patterns = [p for p in self.exclude.patterns if p.include is not None]
        # no negated pattern: a file is excluded when any pattern matches (one regex each)
        regexes = [p.regex for p in patterns]  # type: ignore[attr-defined]  # RegexPattern.regex
        self._exclude_any = regexes if all(p.include for p in patterns) else None
        self._specs: dict[str, pathspec.PathSpec | None] = {}
        self.misnamed: dict[str, str] = {}  # the last scan's notes left out for their name (shown -> why)

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

    def _excluded(self, rel: str) -> bool:
        """``exclude.match_file`` for a file path, without its per-call overhead when it can."""
        if self._exclude_any is None:
            return self.exclude.match_file(rel)
        for regex in self._exclude_any:
            if regex.match(rel):
                return True
        return False

    def dir_ignored(self, rel: str) -> bool:
        """Whether a vault-relative folder (and so all below it) is skipped."""
        name = rel.rsplit("/", 1)[-1]
        return name.startswith(".") or self.exclude.match_file(rel + "/") or self._git_ignored(rel, True)

    def ignored(self, rel: str) -> bool:
        """Whether a vault-relative file path is not a note (checks every parent folder too)."""
        parts = rel.split("/")
        if is_junk_name(parts[-1]) or not utf8(rel):
            return True
        for i in range(1, len(parts)):
            if self.dir_ignored("/".join(parts[:i])):
                return True
        return self.exclude.match_file(rel) or self._git_ignored(rel, False)

    def walk(self) -> list[str]:
        """Every note path under the root, vault-relative with '/' separators, sorted."""
        return [rel for rel, _ in self.scan()]

    def scan(self) -> list[tuple[str, os.DirEntry]]:
        """(path, directory entry) of every note under the root, sorted by path: one
        ``scandir`` per folder, so a caller can stat each file through its entry (symlinked
        folders are not entered, as ``os.walk`` does not; unreadable folders are skipped)."""
        found: list[tuple[str, os.DirEntry]] = []
        self.misnamed = {}
        folders = [("", self.spec("") is not None)]  # (folder, a .gitignore applies to it)
        while folders:
            rel_dir, gitignored = folders.pop()
            prefix = rel_dir + "/" if rel_dir else ""
            try:
                entries = os.scandir(os.path.join(self.root, rel_dir) if rel_dir else self.root)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    rel = prefix + entry.name
                    if _is_dir(entry):
                        if not entry.is_symlink() and not self.dir_ignored(rel):
                            folders.append((rel, gitignored or self.spec(rel) is not None))
                    elif not is_junk_name(entry.name) and not self._excluded(rel) \
                            and not (gitignored and self._git_ignored(rel, False)):  # fmt: skip
                        if utf8(rel):
                            found.append((rel, entry))
                        else:  # no index, reply or link can hold its name: said, not listed
                            self.misnamed[shown_name(rel)] = MISNAMED
        found.sort(key=lambda item: item[0])
        return found


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # as os.walk: an entry that cannot be inspected is listed as a file
        return False


OBSIDIAN_TEMPLATES = ".obsidian/templates.json"  # the core Templates plugin's settings


def obsidian_templates(root: Path) -> str | None:
    """The folder Obsidian's core Templates plugin takes templates from (``{"folder": ...}`` in
    ``.obsidian/templates.json``), vault-relative without slashes; None when not set. Its notes
    hold ``{{date}}`` placeholders, not memories, so vaultmem leaves that folder out."""
    try:
        data = json.loads((root / OBSIDIAN_TEMPLATES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    folder = data.get("folder") if isinstance(data, dict) else None
    if not isinstance(folder, str):
        return None
    folder = folder.replace("\\", "/").strip().strip("/")
    return folder if folder and ".." not in folder.split("/") else None


def vault_files(root: Path, limit: int = 1_000_000) -> list[str]:
    """Every file under the root as Obsidian sees the vault (what links may point at): no
    dot-files, nothing in dot-folders, symlinked folders not entered; at most ``limit``."""
    found: list[str] = []
    folders = [""]
    while folders and len(found) < limit:
        rel_dir = folders.pop()
        prefix = rel_dir + "/" if rel_dir else ""
        try:
            entries = os.scandir(os.path.join(root, rel_dir) if rel_dir else root)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if _is_dir(entry):
                    if not entry.is_symlink():
                        folders.append(prefix + entry.name)
                else:
                    found.append(prefix + entry.name)
    return sorted(found)
