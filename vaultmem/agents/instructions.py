"""Agents' instruction files as rules: ``CLAUDE.md``, ``AGENTS.md``, ``GEMINI.md``,
``.cursor/rules/*.mdc``, ``.github/copilot-instructions.md``, ``.github/instructions/*.instructions.md``
and ``.claude/rules/*.md``.

Each bullet is a rule, and so is a short section without bullets (its heading's text); fenced
code, HTML comments, ``@file`` import lines and vaultmem's own exported section are not.
Frontmatter (``globs``, ``applyTo``, ``paths``, ``alwaysApply``) is read leniently: Cursor
accepts ``globs: **/*.sql``, which is not YAML, so a line-wise ``key: value`` reading is the
fallback. A rule's type is guessed from its words: ``lesson`` (a reason or a trap: "because",
"otherwise", "beware"), ``preference`` (a norm: always, never, must, prefer, use, ...) or
``pattern`` (how the project is laid out or run).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import BadInput, NoteParseError
from ..core.note import load_yaml_value
from ..memory.agents_md import BEGIN, END

MAX_FILE = 2 << 20  # an instruction file larger than this is not one
SHORT_SECTION = 400  # a section without bullets up to this many characters is one rule
NAMES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "GEMINI.md", ".cursorrules")
GLOBS = (".cursor/rules/**/*.mdc", ".cursor/rules/**/*.md", ".github/copilot-instructions.md",
         ".github/instructions/**/*.instructions.md", ".claude/rules/**/*.md", ".claude/CLAUDE.md")  # fmt: skip
BULLET_RE = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LESSON_RE = re.compile(
    r"\b(because|otherwise|gotcha|beware|careful|watch out|remember|note that|known issue|trap|breaks?)\b",
    re.I,
)
NORM_RE = re.compile(r"^(?:always|never|don'?t|do not|must|should|prefer|avoid|only|use|keep|run|make sure|ensure|stop|write"
                     r"|put|add|format|represent|store|follow|treat|no)\b|\b(?:must|should|never|always|only|prefer)\b", re.I)  # fmt: skip


@dataclass
class Rule:
    text: str
    section: str
    type: str


@dataclass
class InstructionFile:
    path: Path
    root: Path  # the project folder the file belongs to
    rules: list[Rule] = field(default_factory=list)
    scope: dict[str, Any] = field(default_factory=dict)  # globs / applyTo / paths / alwaysApply

    @property
    def rel(self) -> str:
        try:
            return self.path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return self.path.name


def find_files(folder: Path) -> list[Path]:
    """The instruction files of a project folder (not its subprojects' trees beyond the known places)."""
    found = [folder / n for n in NAMES if (folder / n).is_file()]
    found += [p for g in GLOBS for p in sorted(folder.glob(g)) if p.is_file()]
    return list(dict.fromkeys(found))


def project_root(path: Path) -> Path:
    """The project a file belongs to: the nearest folder above holding ``.git``, else the folder
    holding its ``.cursor``/``.github``/``.claude`` folder, else its own folder."""
    path = path.resolve()
    for parent in path.parents:
        if (parent / ".git").exists():
            return parent
    for parent in path.parents:
        if parent.name in (".cursor", ".github", ".claude"):
            return parent.parent
    return path.parent


def read(path: Path, root: Path | None = None) -> InstructionFile:
    """Parse one instruction file; BadInput for one that is not readable text."""
    try:
        if path.stat().st_size > MAX_FILE:
            raise BadInput(
                f"{path}: larger than {MAX_FILE >> 20} MB, not an instruction file; nothing was imported"
            )
        data = path.read_bytes()
    except OSError as e:
        raise BadInput(f"{path}: cannot be read ({e.strerror}); nothing was imported") from None
    if b"\0" in data:
        raise BadInput(f"{path}: a binary file, not an instruction file; nothing was imported")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text, not an instruction file; nothing was imported") from None
    f = InstructionFile(path, (root or project_root(path)).resolve())
    body, f.scope = frontmatter(text)
    f.rules = list(rules_of(body))
    return f


def frontmatter(text: str) -> tuple[str, dict[str, Any]]:
    """(body, scope keys) of a file with an optional ``---`` block, read as YAML, else line-wise."""
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return text, {}
    end = text.find("\n---", 4)
    if end < 0:
        return text, {}
    head, body = text[4:end], text[end + 4 :].split("\n", 1)[-1] if "\n" in text[end + 4 :] else ""
    try:
        meta: Any = load_yaml_value(head, "frontmatter")
    except NoteParseError:  # Cursor's `globs: **/*.sql` is not YAML
        meta = None
    if not isinstance(meta, dict):
        meta = dict(
            ln.split(":", 1) for ln in head.splitlines() if ":" in ln and not ln.startswith((" ", "-"))
        )
        meta = {k.strip(): v.strip() for k, v in meta.items()}
    keys = ("globs", "applyTo", "paths", "alwaysApply", "description")
    return body, {k: meta[k] for k in keys if meta.get(k) not in (None, "", [])}


def _lines(body: str) -> Iterator[tuple[str, str]]:
    """(current heading, line) for every line outside fences, comments and vaultmem's section."""
    heading, fence, skip = "", False, False
    for line in body.splitlines():
        s = line.strip()
        if s.startswith(BEGIN):
            skip = True
        if skip:
            skip = not s.startswith(END)
            continue
        if s.startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence or s.startswith("<!--") or re.match(r"^@\S+$", s):
            continue
        m = HEADING_RE.match(line)
        if m:
            heading = m.group(2)
            yield heading, ""
            continue
        yield heading, line


def rules_of(body: str) -> Iterator[Rule]:
    """The rules of a file's body: each bullet (its continuation lines joined), and each short
    section that has no bullet."""
    sections: dict[str, list[str]] = {}
    bullets: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for heading, line in _lines(body):
        sections.setdefault(heading, [])
        m = BULLET_RE.match(line)
        if m and len(m.group(1)) < 2:
            current = [m.group(2).strip()]
            bullets.append((heading, current))
        elif line.strip() and current is not None and line.startswith((" ", "\t")):
            current.append(line.strip())
        else:
            current = None
            if line.strip():
                sections[heading].append(line.strip())
    with_bullets = {h for h, _ in bullets}
    for heading, parts in bullets:
        text = " ".join(" ".join(parts).split())
        if len(text) >= 4:
            yield Rule(text, heading, classify(text, heading))
    for heading, lines in sections.items():
        text = " ".join(" ".join(lines).split())
        if text and heading not in with_bullets and len(text) <= SHORT_SECTION and len(text) >= 12:
            yield Rule(text, heading, classify(text, heading))


def classify(text: str, heading: str = "") -> str:
    if LESSON_RE.search(text):
        return "lesson"
    if NORM_RE.search(text) or re.search(
        r"\b(conventions?|rules?|style|guidelines?|preferences?|memories)\b", heading, re.I
    ):
        return "preference"
    return "pattern"
