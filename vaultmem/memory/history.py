"""The versions of a fact over time: ``vaultmem history ID|KEY``.

A chain holds the notes with the same subject ``key`` and the notes linked to them by
``supersedes``/``superseded_by``, oldest first, each with the days it was valid: from its
``valid_from`` (else its creation day) until its ``valid_until`` (else the day its successor
started). The newest active one is ``current``; a note past its ``valid_until`` without a
successor is ``expired``, not current.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from ..core.errors import NoteNotFound
from ..core.notedates import subject_key
from ..recall.timefilter import day

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from ..vault import Vault


def _supersede_links(vault: Vault, rec: Record, records: dict[str, Record]) -> list[tuple[str, str]]:
    """(kind, path) of the notes ``rec`` supersedes or is superseded by."""
    resolver = vault.graph().graph["resolver"]
    out = []
    for target, kind in rec.links:
        if kind in ("supersedes", "superseded_by"):
            path = resolver.resolve(target, rec.path)
            if path in records:
                out.append((kind, path))
    return out


def _neighbours(vault: Vault, rec: Record, records: dict[str, Record]) -> list[str]:
    return [path for _, path in _supersede_links(vault, rec, records)]


def _behind(vault: Vault, paths: set[str], records: dict[str, Record]) -> dict[str, int]:
    """How many notes of the chain each note replaces, directly or not: orders versions
    written in the same second (a loop of supersedes cannot make this run forever)."""
    older: dict[str, set[str]] = {p: set() for p in paths}
    for p in paths:
        for kind, other in _supersede_links(vault, records[p], records):
            if other in paths:
                old, new = (other, p) if kind == "supersedes" else (p, other)
                older[new].add(old)
    counts = {}
    for p in paths:
        seen, todo = set(), list(older[p])
        while todo:
            q = todo.pop()
            if q not in seen and q != p:
                seen.add(q)
                todo += older[q]
        counts[p] = len(seen)
    return counts


def chain(vault: Vault, ref: str, today: dt.date | None = None) -> dict[str, Any]:
    """The versions of the fact ``ref`` names (a note reference or a subject key)."""
    records = vault.records()
    key = subject_key({"key": ref})
    start = [p for p, r in records.items() if key and r.subject == key]
    if not start:
        try:
            start = [vault.find(ref, records).path]
        except NoteNotFound:
            raise NoteNotFound(f"no note and no subject key {ref!r} in {vault.root}") from None
    seen, todo = set(), list(start)
    while todo:  # the notes linked by supersedes/superseded_by, and those sharing their keys
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        rec = records[path]
        todo += _neighbours(vault, rec, records)
        if rec.subject:
            todo += [p for p, r in records.items() if r.subject == rec.subject and r.type == rec.type]
    behind = _behind(vault, seen, records)
    versions = sorted((records[p] for p in seen),
                      key=lambda r: (_start(r) or dt.date.min, r.created, behind[r.path], r.path))  # fmt: skip
    return {
        "ref": ref,
        "key": next((r.subject for r in versions if r.subject), None),
        "versions": _dated(versions, today or dt.date.today()),
    }


def _start(rec: Record) -> dt.date | None:
    return day(rec.valid_from) or day(rec.created)


def _dated(versions: list[Record], today: dt.date) -> list[dict[str, Any]]:
    out = []
    for i, rec in enumerate(versions):
        following = versions[i + 1] if i + 1 < len(versions) else None
        until = day(rec.valid_until) or (
            _start(following) if following and rec.status == "superseded" else None
        )
        if rec.status == "active" and until is not None and until <= today and following is None:
            state = "expired"
        elif rec.status == "active" and following is None:
            state = "current"
        else:
            state = rec.status
        out.append(
            {
                "id": rec.key,
                "title": rec.title,
                "path": rec.path,
                "type": rec.type,
                "status": rec.status,
                "state": state,
                "valid_from": _iso(_start(rec)),
                "valid_until": _iso(until),
            }
        )
    return out


def _iso(value: dt.date | None) -> str | None:
    return value.isoformat() if value else None
