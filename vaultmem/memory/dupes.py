"""Near-duplicate memories from several machines (``vaultmem maintain``).

Two machines that both ``remember`` the same fact write two notes (random ids never clash;
a sync keeps both, the second as ``Title 2.md``). ``plan`` finds active notes of one type
with the same title (case and spacing aside); ``apply`` merges each group into its oldest
note: the others' body text is appended under a heading (nothing dropped), tags, aliases and
links are united, importance takes the highest, and the others are marked superseded by it.
Anchors are folded too: the same project's anchor made on two clones (``Project - Sync.md`` and
``Project - Sync 2.md``). ``remember`` does not write such a second note in the first place: a memory with the title
and type of a similar active one is that one (``same_title``); what it adds is appended.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.filters import EPOCH, parse_time
from ..core.mergedriver import merge_meta
from ..core.note import content_hash, set_fields, split_frontmatter
from ..core.titles import folded
from ..index.chunking import plain_text
from .lifecycle import mark_superseded
from .projects import project_key

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState


@dataclass(frozen=True)
class Merge:
    """One note folded into another."""

    path: str  # the duplicate
    into: str  # the note that keeps both


def _key(rec: Record) -> tuple[str, str]:
    if _is_anchor(rec):  # one project, one anchor: "Project: Sync" from two clones
        return ("project", f"anchor:{project_key(rec.title)}")
    return (rec.type or "", folded(rec.title))


def _is_anchor(rec: Record) -> bool:
    """An anchor note vaultmem made (tagged ``anchor``); other project notes are a person's."""
    return "anchor" in rec.tags


def plan(vault: VaultState) -> list[Merge]:
    """Groups of active notes with one type and one title (anchors: one project, as
    ``projects.project_key`` compares them), each folded into its oldest."""
    groups: dict[tuple[str, str], list[Record]] = {}
    for rec in vault.records().values():
        if rec.status != "active" or rec.type is None:
            continue
        if (project_key(rec.title) is not None) if _is_anchor(rec) else rec.type != "project":
            groups.setdefault(_key(rec), []).append(rec)
    merges = []
    for recs in groups.values():
        if len(recs) < 2:
            continue
        if _is_anchor(recs[0]):  # into the anchor at the path its title gives (what links find first)
            recs.sort(key=lambda r: (len(r.path), r.path))
        else:
            recs.sort(key=lambda r: (parse_time(r.created) or EPOCH, r.path))
        merges += [Merge(r.path, recs[0].path) for r in recs[1:]]
    return sorted(merges, key=lambda m: (m.into, m.path))


def _body(text: str) -> str:
    fm, body, _, _ = split_frontmatter(text)
    return body if fm is not None else text


def merge_one(vault: VaultState, m: Merge, paths: list[str]) -> None:
    """Fold ``m.path`` into ``m.into`` (guarded writes), then mark it superseded."""
    records = vault.records()
    keep, dup = records[m.into], records[m.path]
    keep_note, dup_note = vault.store.read(keep.path), vault.store.read(dup.path)
    meta, _ = merge_meta({}, keep_note.meta, dup_note.meta)
    updates = {k: v for k, v in meta.items() if k in ("tags", "aliases", "context", "importance")
               and keep_note.meta.get(k) != v}  # fmt: skip
    body = _body(dup_note.text).strip()
    title_line = f"# {dup.title}"
    body = body[len(title_line) :].strip() if body.startswith(title_line) else body
    text = set_fields(keep_note.text, updates)
    if body and body not in _body(keep_note.text):
        nl = "\r\n" if "\r\n" in text else "\n"
        text = (
            text.rstrip("\r\n") + f"{nl}{nl}## Also remembered ({dup.source or dup.path}){nl}{nl}{body}{nl}"
        )
    if text != keep_note.text:
        vault.store.replace(keep.path, text, content_hash(keep_note.text))
    vault.sync_paths([keep.path])
    mark_superseded(vault, vault.records()[dup.path], vault.records()[keep.path], paths)


def apply(vault: VaultState, merges: list[Merge]) -> list[dict[str, Any]]:
    paths = vault.store.list_paths() if merges else []
    for m in merges:
        merge_one(vault, m, paths)
    vault.sync_paths(sorted({m.path for m in merges} | {m.into for m in merges}))
    return [as_action(vault, m) for m in merges]


def as_action(vault: VaultState, m: Merge) -> dict[str, Any]:
    rec = vault.records()[m.path]
    into = vault.records()[m.into]
    return {"kind": "merge", "path": m.path, "id": rec.key, "title": rec.title,
            "reason": f"near-duplicate of {into.key} ({m.into}); its text is kept there"}  # fmt: skip


# ---------------------------------------------------------------- on remember


def same_title(title: str, similar: list[tuple[Record, float | None]]) -> Record | None:
    """Of the similar active memories ``remember`` found (same type and branch scope, each
    close enough to be an update), the one with the new memory's title: the same memory again."""
    wanted = folded(title)
    return next((rec for rec, _ in similar if folded(rec.title) == wanted), None)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def new_sentences(vault: VaultState, rec: Record, content: str) -> list[str]:
    """The sentences of ``content`` whose words the note ``rec`` does not already have in a row
    (case, spacing and punctuation aside)."""
    have = _words(plain_text(vault.body(rec.path)))
    return [s.strip() for s in _sentences(plain_text(content)) if _words(s) not in have]


def add_text(
    vault: VaultState, rec: Record, sentences: list[str], source: str | None, stamp: dt.datetime
) -> None:
    """Append what a repeated memory adds to the existing note, under a heading as ``merge_one``
    does; ``stamp``: its new ``updated`` time."""

    def append(text: str) -> str:
        nl = "\r\n" if "\r\n" in text else "\n"
        heading = f"## Also remembered{f' ({source})' if source else ''}"
        text = text.rstrip("\r\n") + f"{nl}{nl}{heading}{nl}{nl}{' '.join(sentences)}{nl}"
        return set_fields(text, {"updated": stamp})

    vault.store.update(rec.path, append)
