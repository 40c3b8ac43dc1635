"""Near-duplicate memories from several machines (``vaultmem maintain``).

Two machines that both ``remember`` the same fact write two notes (random ids never clash;
a sync keeps both, the second as ``Title 2.md``). ``plan`` finds active notes of one type
with the same title (case and spacing aside); ``apply`` merges each group into its oldest
note: the others' body text is appended under a heading (nothing dropped), tags, aliases and
links are united, importance takes the highest, and the others are marked superseded by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.filters import EPOCH, parse_time
from ..core.mergedriver import merge_meta
from ..core.note import content_hash, set_fields, split_frontmatter
from .lifecycle import mark_superseded

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState


@dataclass(frozen=True)
class Merge:
    """One note folded into another."""

    path: str  # the duplicate
    into: str  # the note that keeps both


def _key(rec: "Record") -> tuple[str, str]:
    return (rec.type or "", " ".join(rec.title.lower().split()))


def plan(vault: "VaultState") -> list[Merge]:
    """Groups of active notes with one type and one title, each folded into its oldest."""
    groups: dict[tuple[str, str], list[Record]] = {}
    for rec in vault.records().values():
        if rec.status == "active" and rec.type not in (None, "project") and "anchor" not in rec.tags:
            groups.setdefault(_key(rec), []).append(rec)
    merges = []
    for recs in groups.values():
        if len(recs) < 2:
            continue
        recs.sort(key=lambda r: (parse_time(r.created) or EPOCH, r.path))
        merges += [Merge(r.path, recs[0].path) for r in recs[1:]]
    return sorted(merges, key=lambda m: (m.into, m.path))


def _body(text: str) -> str:
    fm, body, _, _ = split_frontmatter(text)
    return body if fm is not None else text


def merge_one(vault: "VaultState", m: Merge, paths: list[str]) -> None:
    """Fold ``m.path`` into ``m.into`` (guarded writes), then mark it superseded."""
    records = vault.records()
    keep, dup = records[m.into], records[m.path]
    keep_note, dup_note = vault.store.read(keep.path), vault.store.read(dup.path)
    meta, _ = merge_meta({}, keep_note.meta, dup_note.meta)
    updates = {k: v for k, v in meta.items() if k in ("tags", "aliases", "context", "importance")
               and keep_note.meta.get(k) != v}  # fmt: skip
    body = _body(dup_note.text).strip()
    title_line = f"# {dup.title}"
    body = body[len(title_line):].strip() if body.startswith(title_line) else body
    text = set_fields(keep_note.text, updates)
    if body and body not in _body(keep_note.text):
        nl = "\r\n" if "\r\n" in text else "\n"
        text = text.rstrip("\r\n") + f"{nl}{nl}## Also remembered ({dup.source or dup.path}){nl}{nl}{body}{nl}"
    if text != keep_note.text:
        vault.store.replace(keep.path, text, content_hash(keep_note.text))
    vault.sync_paths([keep.path])
    mark_superseded(vault, vault.records()[dup.path], vault.records()[keep.path], paths)


def apply(vault: "VaultState", merges: list[Merge]) -> list[dict[str, Any]]:
    paths = vault.store.list_paths() if merges else []
    for m in merges:
        merge_one(vault, m, paths)
    vault.sync_paths(sorted({m.path for m in merges} | {m.into for m in merges}))
    return [as_action(vault, m) for m in merges]


def as_action(vault: "VaultState", m: Merge) -> dict[str, Any]:
    rec = vault.records()[m.path]
    into = vault.records()[m.into]
    return {"kind": "merge", "path": m.path, "id": rec.key, "title": rec.title,
            "reason": f"near-duplicate of {into.key} ({m.into}); its text is kept there"}  # fmt: skip

