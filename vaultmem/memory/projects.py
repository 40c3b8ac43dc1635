"""Projects: the project of a folder (the active project note named like it, the anchor that hooks,
importers and the AGENTS.md export link a folder's memories to) and the project rule (issue 36):
which project a memory belongs to, and what wake, the start hook and the prompt hook show of
another project's memories (``Scope``, ``scope_hits``). The prompt hook imports this module: it
stays light (no YAML, no typing)."""

from __future__ import annotations

import os
import re
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Iterable

    from ..index.manifest import Record
    from .state import VaultState


def find_anchor(vault: VaultState, cwd: str | None) -> str | None:
    """The project note that names the project folder (``Project: <folder>`` or a project note
    whose title or alias is the folder's name, ignoring case, dashes and underscores); the
    folder's parents are tried next (up to PARENTS: ``src/shop/backend`` is in ``shop``)."""
    if not cwd:
        return None
    projects = [r for r in vault.records().values() if r.type == "project" and r.status == "active"]
    path = Path(cwd)
    for folder in [path, *list(path.parents)[:PARENTS]]:
        name = _fold(folder.name)
        for rec in projects if name else ():
            if any(
                _fold(re.sub(r"^project:\s*", "", n, flags=re.I)) == name for n in (rec.title, *rec.aliases)
            ):
                return rec.title
    return None


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[-_.]+", " ", text).lower().split())


# ---------------------------------------------------------------- project scope (a rule)
#
# A memory belongs to the project its ``anchor`` names (the anchor note's title, followed along
# anchors until a project note), a project note to itself; ``scope: user`` belongs to the user,
# everywhere. Projects are compared by ``project_key`` ("Project: My-App", "Project - my_app",
# the folder ``my_app`` are one project). What wake and the hooks show from another project is
# decided here, never by similarity alone.

PROJECT_PREFIX_RE = re.compile(r"^\s*project\s*(?::|-|\u2013|\u2014)\s*", re.I)
SEPARATORS_RE = re.compile(r"[\s\-_.:]+")
SERIES_TYPES = ("session_summary", "handoff", "progress")  # a project's own record of its sessions
# another project's memory is injected only this close to the prompt, and with a term match
# (benchmarks/project_scope.py: at 0.6 a third of the prompt hook's lines came from other projects)
OTHER_PROJECT_COS = 0.7
MAX_HOPS = 3


def project_key(name: str | None) -> str | None:
    """The key projects are compared by: the name without a ``Project:`` / ``Project -`` prefix,
    case, spaces, dashes, dots and underscores; None for an empty name."""
    if not name:
        return None
    key = SEPARATORS_RE.sub("", PROJECT_PREFIX_RE.sub("", name).casefold())
    return key or None


def anchor_names(value: object) -> list[str]:
    """The names an ``anchor`` property gives: the link's target and its label, for either
    form vaultmem wrote (``[[Project: X]]``, ``[[Project - X|Project: X]]``)."""
    from ..core.links import WHOLE_LINK_RE, parse_link

    text = value if isinstance(value, str) else (value[0] if isinstance(value, list) and value else None)
    if not isinstance(text, str) or not text.strip():
        return []
    m = WHOLE_LINK_RE.match(text.strip())
    link = parse_link(m.group(1)) if m else None
    if link is None:
        return [text.strip()]
    return [n for n in (link.label, link.target.rsplit("/", 1)[-1]) if n]


def record_project(
    rec: Record, records: dict[str, Record], resolve: Callable[[str, str], str | None]
) -> str | None:
    """The key of a record's project: a project note's own title; else the note its first
    frontmatter link (the ``anchor``) resolves to, followed up to MAX_HOPS anchors until a
    project note; None when it names none. ``resolve(target, source_path)``: a path or None."""
    seen: set[str] = set()
    for _ in range(MAX_HOPS + 1):
        if rec.type == "project":
            return project_key(rec.title)
        target = next((t for t, kind in rec.links if kind == "frontmatter"), None)
        if target is None or rec.path in seen:
            return None
        seen.add(rec.path)
        path = resolve(target, rec.path)
        if path is None or path not in records:
            return project_key(target) if PROJECT_PREFIX_RE.match(target) else None
        rec = records[path]
    return None


class Scope:
    """Which project a vault's memories belong to, computed once per call (wake, remember)."""

    def __init__(self, vault: VaultState):
        self.records = vault.records()
        resolver = vault.graph().graph["resolver"]
        self._resolve = resolver.resolve
        self._cache: dict[str, str | None] = {}

    def of(self, path: str) -> str | None:
        """The project key of the note at ``path`` (None: no project)."""
        if path not in self._cache:
            rec = self.records.get(path)
            self._cache[path] = record_project(rec, self.records, self._resolve) if rec else None
        return self._cache[path]

    def of_anchor(self, anchor: str | None) -> str | None:
        """The project key of an ``--anchor`` name (its note's project when there is one)."""
        if not anchor:
            return None
        from ..core.links import link_target

        target = link_target(anchor) or anchor
        path = self._resolve(target)
        return self.of(path) if path in self.records else project_key(target)

    def name(self, path: str) -> str | None:
        """The title of the project note a memory belongs to (for a label)."""
        key = self.of(path)
        if key is None:
            return None
        return next((r.title for r in self.records.values() if r.type == "project" and project_key(r.title) == key),
                    key)  # fmt: skip


def same_project(a: str | None, b: str | None) -> bool:
    """Whether two memories' projects allow one to update the other: the same project, or
    either without one (a memory nobody tied to a project)."""
    return a is None or b is None or a == b


# ---------------------------------------------------------------- prompt hits (light: the prompt hook)

FIELD_RE = re.compile(r"^(anchor|scope|type|title):[ \t]*(.*?)[ \t]*$", re.M)


def _head(path: Path) -> dict[str, str]:
    """``anchor``, ``scope``, ``type`` and ``title`` of a note's frontmatter, read without YAML
    (the prompt hook loads no PyYAML); {} when unreadable."""
    try:
        with path.open(encoding="utf-8") as f:
            text = f.read(8192)
    except (OSError, UnicodeDecodeError):
        return {}
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    fields = {k: v.strip("'\"") for k, v in FIELD_RE.findall(text[: end if end > 0 else len(text)])}
    return fields


def hit_project(fields: dict[str, str], known: set[str] = frozenset()) -> str | None:  # type: ignore[assignment]
    """The project key of a hit's note from its frontmatter fields: the project note itself, or
    its anchor's name when that is a project (``Project: X``, or a ``known`` project's name)."""
    if fields.get("type") == "project":
        return project_key(fields.get("title"))
    for name in anchor_names(fields.get("anchor", "").replace("''", "'")):
        if PROJECT_PREFIX_RE.match(name) or project_key(name) in known:
            return project_key(name)
    return None


PROJECT_FOLDER = "projects"  # where anchors are made (core.memtypes.FOLDERS)
PARENTS = 4  # a working folder's project may be this many folders up (src/app/backend)


def known_projects(roots: Iterable[str | Path]) -> set[str]:
    """The project keys of the anchor notes in the vaults' ``projects/`` folder (any case)."""
    keys: set[str] = set()
    for root in roots:
        try:
            folders = [e.path for e in os.scandir(root) if e.is_dir() and e.name.casefold() == PROJECT_FOLDER]
            for folder in folders:
                keys.update(
                    k
                    for e in os.scandir(folder)
                    if e.name.endswith(".md") and (k := project_key(e.name[:-3]))
                )
        except OSError:
            continue
    return keys


def folder_project(cwd: str, known: set[str]) -> str | None:
    """The project of a working folder: the key of the folder, or of one of its PARENTS
    parents, that names a known project; None when none does."""
    path = Path(cwd)
    for folder in [path, *list(path.parents)[:PARENTS]]:
        key = project_key(folder.name)
        if key and key in known:
            return key
    return None


def scope_hits(hits: list[dict], roots: dict[str, Path], cwd: str | None) -> list[dict]:
    """Prompt hits by the project rule: the working folder's project's memories, the user's and
    those of no project; another project's only when close to the prompt (``OTHER_PROJECT_COS``
    and a term match), labelled with its project, and never its sessions or candidates."""
    if not hits or not roots or not cwd:
        return hits
    known = known_projects(roots.values())
    mine = folder_project(cwd, known)
    if mine is None:  # a folder of no project the vault knows: nothing to tell apart
        return hits
    default_root = next(iter(roots.values()))
    out = []
    for hit in hits:
        root = roots.get(hit.get("vault") or "", default_root)
        fields = _head(Path(root) / hit["path"]) if hit.get("path") else {}
        project = hit_project(fields, known)
        if fields.get("scope") == "user" or project is None or project == mine:
            out.append(hit)
            continue
        e = hit.get("explain") or {}
        close = float(e.get("vector_raw", 0.0)) >= OTHER_PROJECT_COS and float(e.get("bm25_raw", 0.0)) > 0
        if close and hit.get("type") not in SERIES_TYPES and hit.get("status") != "candidate":
            label = next(iter(anchor_names(fields.get("anchor"))), None) or fields.get("title") or project
            out.append({**hit, "title": f"{hit['title']} (from {label})"})
    return out
