"""Links Obsidian does not resolve, and rewriting the ones vaultmem wrote (``doctor --fix``,
``maintain --apply``).

Obsidian resolves a link by file name or path only; vaultmem also resolves a note's title and id
(``links.Resolver`` extras), so ``[[Project: MyApp]]`` worked here while Obsidian saw a link to a
missing ``Project: MyApp.md``. ``obsidian_unresolved`` lists such links; ``plan`` rewrites those
in the properties vaultmem writes (``anchor``, ``may_update``, ``supersedes``,
``superseded_by``), and only those, to the file-name form with the title as label
(``[[Project - MyApp|Project: MyApp]]``); body text and other properties are a person's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.links import WHOLE_LINK_RE, Resolver, parse_link
from ..core.note import parse, set_fields
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


def _fixed(value: str, source: str, resolver: Resolver, records: dict[str, Record], every: list[str]) -> str:
    """A property value in the form Obsidian resolves, or the value itself."""
    m = WHOLE_LINK_RE.match(value.strip()) if isinstance(value, str) else None
    link = parse_link(m.group(1)) if m else None
    if link is None or resolver.resolve_obsidian(link.target, source) is not None:
        return value
    dest = resolver.resolve(link.target, source)
    if dest is None or dest not in records:
        return value
    return link_to(dest, every, link.label or link.target)


def _rewrite(meta: dict[str, Any], source: str, resolver: Resolver, records: dict[str, Record],
             every: list[str]) -> dict[str, Any]:  # fmt: skip
    """The ``WRITTEN`` properties of a note whose links change, with their new values."""
    changed: dict[str, Any] = {}
    for key in WRITTEN:
        value = meta.get(key)
        if isinstance(value, str):
            new: Any = _fixed(value, source, resolver, records, every)
        elif isinstance(value, list):
            new = [_fixed(v, source, resolver, records, every) if isinstance(v, str) else v for v in value]
        else:
            continue
        if new != value:
            changed[key] = new
    return changed


def plan(vault: VaultState) -> list[Relink]:
    """The vaultmem-written property links Obsidian would not resolve, each with its new form."""
    records = vault.records()
    resolver: Resolver = vault.graph().graph["resolver"]
    every = list(records)
    out: list[Relink] = []
    for rec in records.values():
        if not any(k != "body" and resolver.resolve_obsidian(t, rec.path) is None for t, k in rec.links):
            continue
        meta = vault.store.read(rec.path).meta
        for key, new in _rewrite(meta, rec.path, resolver, records, every).items():
            out.append(Relink(rec.path, key, str(meta[key]), str(new)))
    return out


def apply(vault: VaultState, relinks: list[Relink]) -> list[dict[str, Any]]:
    """Rewrite the planned links (each note under its lock, from its current text)."""
    records = vault.records()
    resolver: Resolver = vault.graph().graph["resolver"]
    every = list(records)
    done = []
    for path in dict.fromkeys(r.path for r in relinks):

        def change(text: str, path: str = path) -> str:
            return set_fields(text, _rewrite(parse(text, path).meta, path, resolver, records, every))

        old, new = vault.store.update(path, change)
        if new != old:
            done += [as_action(r) for r in relinks if r.path == path]
    vault.sync_paths(sorted({r.path for r in relinks}))
    return done


def as_action(r: Relink) -> dict[str, Any]:
    return {"kind": "relink", "path": r.path, "key": r.key, "title": r.key,
            "reason": f"{r.key}: {r.old} -> {r.new} (Obsidian resolves links by file name)"}  # fmt: skip
