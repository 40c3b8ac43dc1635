"""Memory types: the built-in set, synonyms, default folders and note templates."""

from __future__ import annotations

import re
from pathlib import Path

TYPE_CHECKING = (
    False  # typing.TYPE_CHECKING without importing typing (the CLI's fast paths import this module)
)
if TYPE_CHECKING:  # pragma: no cover
    import datetime as dt
    from typing import Any

TYPES = (
    "decision", "fact", "lesson", "pattern", "preference", "gotcha", "bug_fix", "discovery",
    "trade_off", "progress", "session_summary", "handoff", "commitment", "relationship",
    "project", "architecture", "tech_context",
)  # fmt: skip

SYNONYMS = {
    "solution": "bug_fix", "error_solution": "bug_fix", "error_resolution": "bug_fix",
    "bugfix": "bug_fix", "fix": "bug_fix", "bug": "bug_fix",
    "summary": "session_summary", "session": "session_summary", "sessionsummary": "session_summary",
    "task_update": "progress", "status_update": "progress",
    "decisions": "decision", "adr": "decision", "choice": "decision",
    "learning": "lesson", "lesson_learned": "lesson", "insight": "lesson",
    "pitfall": "gotcha", "warning": "gotcha", "caveat": "gotcha",
    "tradeoff": "trade_off", "preferences": "preference", "convention": "pattern",
    "best_practice": "pattern", "todo": "commitment", "promise": "commitment",
    "person": "relationship", "contact": "relationship", "anchor": "project",
    "tech": "tech_context", "techcontext": "tech_context", "stack": "tech_context",
    "finding": "discovery", "observation": "discovery", "knowledge": "fact",
}  # fmt: skip

FOLDERS = {
    "decision": "decisions", "fact": "facts", "lesson": "lessons", "pattern": "patterns",
    "preference": "preferences", "gotcha": "gotchas", "bug_fix": "bug-fixes",
    "discovery": "discoveries", "trade_off": "trade-offs", "progress": "progress",
    "session_summary": "sessions", "handoff": "handoffs", "commitment": "commitments",
    "relationship": "relationships", "project": "projects", "architecture": "architecture",
    "tech_context": "tech-context",
}  # fmt: skip

BUILTIN_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
PLACEHOLDER_RE = re.compile(r"\{\{\s*(title|date|time)\s*(?::[^}]*)?\}\}")


def normalize_type(value: Any) -> str | None:
    """A type as written (``Bug-Fix``, ``error-solution``) to its canonical name."""
    if value in (None, ""):
        return None
    name = re.sub(r"[\s\-]+", "_", str(value).strip().lower())
    return SYNONYMS.get(name, name)


def template_dirs(vault_templates: Path | None) -> list[Path]:
    """Where templates are looked up: the vault's own folder first, then the built-ins."""
    dirs = [vault_templates] if vault_templates and vault_templates.is_dir() else []
    return dirs + [BUILTIN_TEMPLATES]


def known_types(vault_templates: Path | None = None) -> list[str]:
    """Built-in types plus any type a vault adds by adding a template."""
    found = set(TYPES)
    for d in template_dirs(vault_templates):
        found.update(normalize_type(p.stem) or p.stem for p in d.glob("*.md"))
    return sorted(found)


def load_template(type_: str, vault_templates: Path | None = None) -> str | None:
    """The raw template text for a type, or None when there is none."""
    for d in template_dirs(vault_templates):
        for p in d.glob("*.md"):
            if normalize_type(p.stem) == type_:
                return p.read_text(encoding="utf-8")
    return None


def fill_template(template: str, title: str, now: dt.datetime) -> str:
    """Replace Obsidian core-template placeholders ``{{title}}``, ``{{date}}``, ``{{time}}``."""
    values = {
        "title": title,
        "date": now.date().isoformat(),
        "time": now.strftime("%H:%M"),
    }
    return PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], template)
