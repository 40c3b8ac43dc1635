"""The memory state of one vault at a glance (the ``overview`` operation; the web view's state
page): counts by type and status and by month, the candidates waiting for a person, the notes
changed last by their own dates, and the daily counts over time."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from ..core.errors import NoteParseError

RECENT = 15  # notes listed as changed last
MONTHS = 24  # months of the "created per month" chart


def overview(vault: Any, days: int = 365) -> dict[str, Any]:
    """``counts`` (type -> status -> n), ``months`` ([month, {type: n}], the last ``MONTHS``),
    ``candidates`` and ``recent`` (path, title, type; recent: date and which, "updated" or
    "created"), ``history`` ([day, [[type, status, n], ...]], oldest first, today's recorded)."""
    records = vault.catalog()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    months: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records.values():
        counts[r.type or "note"][r.status] += 1
        if r.created:
            months[r.created[:7]][r.type or "note"] += 1
    vault.snapshot_counts()  # today's row set, if no reconcile took it yet
    history = [[day, [[t, s, n] for (t, s), n in row.items()]] for day, row in vault.count_history(days)]
    return {
        "counts": {t: dict(c) for t, c in counts.items()},
        "months": [[m, dict(c)] for m, c in sorted(months.items())[-MONTHS:]],
        "candidates": [_row(r) for r in records.values() if r.status == "candidate"],
        "recent": recent(vault, records),
        "history": history,
    }


def _row(rec: Any) -> dict[str, Any]:
    return {"path": rec.path, "title": rec.title, "type": rec.type}


def recent(vault: Any, records: dict[str, Any], limit: int = RECENT) -> list[dict[str, Any]]:
    """The notes changed last by their own frontmatter, newest first; a note with neither date
    is not "recent" (a copied folder's file times say nothing).

    A record's ``updated``/``created`` are the frontmatter's or, when missing, file times, so
    a note's own date is never later than the later of the two: notes are read in that order
    until ``limit`` are known to be newer than any note left."""
    found: list[tuple[Any, str, str]] = []
    for rec in sorted(records.values(), key=_bound, reverse=True):
        if len(found) >= limit and found[limit - 1][1] >= _bound(rec):
            break
        try:
            meta = vault.store.read(rec.path).meta
        except (NoteParseError, OSError):
            continue
        which = next((k for k in ("updated", "created") if meta.get(k) not in (None, "")), None)
        if which:
            found.append((rec, getattr(rec, which), which))
            found.sort(key=lambda f: (f[1], f[0].path), reverse=True)
            del found[limit:]
    return [{**_row(rec), "date": date, "which": which} for rec, date, which in found]


def _bound(rec: Any) -> str:
    return max(rec.updated or "", rec.created or "")
