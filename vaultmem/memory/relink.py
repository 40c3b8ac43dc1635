"""Links Obsidian does not resolve, and rewriting the ones vaultmem wrote (``doctor --fix``,
``maintain --apply``).

Obsidian resolves a link by file name or path only; vaultmem also resolves a note's title and id
(``links.Resolver`` extras), so ``[[Project: MyApp]]`` worked here while Obsidian saw a link to a
missing ``Project: MyApp.md``. ``obsidian_unresolved`` lists such links; ``plan`` rewrites those
in the properties vaultmem writes (``anchor``, ``may_update``, ``supersedes``,
``superseded_by``), and only those, to the file-name form with the title as label
(``[[Project - MyApp|Project: MyApp]]``); body text and other properties are a person's. It also
drops the ``may_update`` entries an older vaultmem wrote against the project rule (one anchor
"possibly updating" another project's, session summaries of one another).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.links import WHOLE_LINK_RE, Resolver, link_target, parse_link
from ..core.note import parse, set_fields
from ..core.updates import NEVER_UPDATES
from . import projects
from .lifecycle import link_to

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState

WRITTEN = ("anchor", "may_update", "supersedes", "superseded_by")  # the link properties vaultmem writes


@dataclass(frozen=True)
class Relink:
    """One property link rewritten in the form Obsidian resolves."""

    path: str
    key: str  # the property
    old: str
    new: str


def obsidian_unresolved(records: dict[str, Record], resolver: Resolver) -> dict[str, list[str]]:
    """Link target -> notes holding it, for links vaultmem resolves (by title or id) and
    Obsidian does not (links nothing resolves are ``graph.unresolved``'s)."""
    out: dict[str, list[str]] = {}
    for rec in records.values():
        for target, _ in rec.links:
            if resolver.resolve_obsidian(target, rec.path) is None and resolver.resolve(target, rec.path):
                out.setdefault(target, [])
                if rec.path not in out[target]:
                    out[target].append(rec.path)
    return {t: sorted(src) for t, src in sorted(out.items())}


@dataclass
class _Vault:
    """What a rewrite looks at: the records, their resolver, every path."""

    records: dict[str, Record]
    resolver: Resolver
    every: list[str]

    @classmethod
    def of(cls, vault: VaultState) -> _Vault:
        records = vault.records()
        return cls(records, vault.graph().graph["resolver"], list(records))

    def project(self, path: str) -> str | None:
        return projects.record_project(self.records[path], self.records, self.resolver.resolve)


def stray_updates(records: dict[str, Record], resolver: Resolver) -> list[tuple[str, str]]:
    """(note, target) of each ``may_update`` entry against the project rule (doctor's check)."""
    v = _Vault(records, resolver, [])
    return [(r.path, t) for r in records.values() for t, k in r.links
            if k == "may_update" and not _possible(f"[[{t}]]", r.path, v)]  # fmt: skip


def _fixed(value: str, source: str, v: _Vault) -> str:
    """A property value in the form Obsidian resolves, or the value itself."""
    m = WHOLE_LINK_RE.match(value.strip()) if isinstance(value, str) else None
    link = parse_link(m.group(1)) if m else None
    if link is None or v.resolver.resolve_obsidian(link.target, source) is not None:
        return value
    dest = v.resolver.resolve(link.target, source)
    if dest is None or dest not in v.records:
        return value
    return link_to(dest, v.every, link.label or link.target)


def _own_record(rec: Record) -> bool:
    """An anchor (a project note under no other note), a session summary or a handoff."""
    anchored = any(k == "frontmatter" for _, k in rec.links)
    return rec.type in NEVER_UPDATES and (rec.type != "project" or not anchored)


def _possible(value: Any, source: str, v: _Vault) -> bool:
    """Whether a ``may_update`` entry keeps to the rule: never between anchors, session summaries
    and handoffs, never across projects (an older vaultmem wrote such entries)."""
    target = link_target(value) if isinstance(value, str) else None
    dest = v.resolver.resolve(target, source) if target else None
    if dest is None or dest not in v.records or source not in v.records:
        return True
    old, new = v.records[dest], v.records[source]
    if any(_own_record(r) for r in (old, new)):
        return False
    return "user" in (old.scope, new.scope) or projects.same_project(v.project(dest), v.project(source))


def _rewrite(meta: dict[str, Any], source: str, v: _Vault) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The ``WRITTEN`` properties of a note whose links change, with their new values, and the
    ones to remove (a ``may_update`` left empty)."""
    changed: dict[str, Any] = {}
    for key in WRITTEN:
        value = meta.get(key)
        if isinstance(value, str):
            new: Any = _fixed(value, source, v)
        elif isinstance(value, list):
            new = [_fixed(x, source, v) if isinstance(x, str) else x for x in value]
        else:
            continue
        if key == "may_update":
            new = [x for x in (new if isinstance(new, list) else [new]) if _possible(x, source, v)]
            new = new if isinstance(value, list) or len(new) != 1 else new[0]
        if new != value:
            changed[key] = new
    removed = ("may_update",) if changed.get("may_update") == [] else ()
    return {k: x for k, x in changed.items() if k not in removed}, removed


def plan(vault: VaultState) -> list[Relink]:
    """The vaultmem-written property links Obsidian would not resolve, each with its new form,
    and the ``may_update`` entries that break the project rule, dropped."""
    v = _Vault.of(vault)
    out: list[Relink] = []
    for rec in v.records.values():
        kinds = {k for _, k in rec.links}
        if "may_update" not in kinds and not any(
            k != "body" and v.resolver.resolve_obsidian(t, rec.path) is None for t, k in rec.links
        ):
            continue
        meta = vault.store.read(rec.path).meta
        changed, removed = _rewrite(meta, rec.path, v)
        for key, new in changed.items():
            out.append(Relink(rec.path, key, str(meta[key]), str(new)))
        out += [Relink(rec.path, key, str(meta[key]), "(removed)") for key in removed]
    return out


def apply(vault: VaultState, relinks: list[Relink]) -> list[dict[str, Any]]:
    """Rewrite the planned links (each note under its lock, from its current text)."""
    v = _Vault.of(vault)
    done = []
    for path in dict.fromkeys(r.path for r in relinks):

        def change(text: str, path: str = path) -> str:
            return set_fields(text, *_rewrite(parse(text, path).meta, path, v))

        old, new = vault.store.update(path, change)
        if new != old:
            done += [as_action(r) for r in relinks if r.path == path]
    vault.sync_paths(sorted({r.path for r in relinks}))
    return done


def as_action(r: Relink) -> dict[str, Any]:
    return {"kind": "relink", "path": r.path, "key": r.key, "title": r.key,
            "reason": f"{r.key}: {r.old} -> {r.new} (Obsidian resolves links by file name)"}  # fmt: skip
