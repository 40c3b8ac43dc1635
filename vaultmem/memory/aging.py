"""Aging rules (``vaultmem maintain``): keep progress and session summaries bounded, honour
``expires``, archive low-importance memories nobody recalls. Nothing is ever deleted.

Rules, per anchor (a note belongs to the anchors it links to or is linked from):
1. only the latest active ``progress`` memory stays active; older ones are superseded by it;
2. at most ``max_session_summaries`` (3) active ``session_summary`` memories; older ones are
   archived and linked from a "Session history: <anchor>" note;
and across the vault:
3. memories whose ``expires`` date has passed are archived;
4. memories (anchors aside) with importance <= ``archive_max_importance`` (3) not recalled for
   ``archive_after_days`` (90) days (or, never recalled, created that long ago) are archived.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..core.filters import EPOCH, is_expired, now_utc, parse_time
from ..core.note import note_time, render
from ..index import graph as graphmod
from .lifecycle import change, link_to, mark_superseded

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState

HISTORY_TAG = "session-history"


@dataclass(frozen=True)
class Action:
    """One planned change."""

    kind: str  # supersede | archive
    path: str
    id: str
    title: str
    reason: str
    by: str | None = None  # the replacing note's path (supersede)
    anchor: str | None = None  # the anchor's path (archived session summaries)


def _when(rec: Record) -> dt.datetime:
    return parse_time(rec.created) or parse_time(rec.updated) or EPOCH


def _by_anchor(vault: VaultState, type_: str, only: str | None) -> dict[str, list[Record]]:
    g = vault.graph()
    records = vault.records()
    anchors = [only] if only else graphmod.anchors(g)
    groups: dict[str, list[Record]] = {}
    for anchor in anchors:
        near = set(g.successors(anchor)) | set(g.predecessors(anchor)) if anchor in g else set()
        members = [
            records[p]
            for p in near
            if p in records and records[p].type == type_ and records[p].status == "active"
        ]
        if members:
            groups[anchor] = sorted(members, key=lambda r: (_when(r), r.path), reverse=True)
    return groups


def plan(vault: VaultState, anchor: str | None = None, days: int | None = None, now: dt.datetime | None = None,
         per_anchor_only: bool = False) -> list[Action]:  # fmt: skip
    """What the aging rules would change (``anchor``: only that anchor's progress/summaries)."""
    cfg = vault.config["lifecycle"]
    now = now or now_utc()
    actions: dict[str, Action] = {}
    for anc, notes in _by_anchor(vault, "progress", anchor).items():
        latest = notes[0]
        for old in notes[1:]:
            actions.setdefault(old.path, Action("supersede", old.path, old.key, old.title,
                                                f"older progress of {vault.records()[anc].title}", by=latest.path))  # fmt: skip
    keep = int(cfg["max_session_summaries"])
    for anc, notes in _by_anchor(vault, "session_summary", anchor).items():
        for old in notes[keep:]:
            actions.setdefault(old.path, Action("archive", old.path, old.key, old.title,
                                                f"more than {keep} session summaries for {vault.records()[anc].title}",
                                                anchor=anc))  # fmt: skip
    if not per_anchor_only:
        for action in _expired_and_unused(vault, days, now):
            actions.setdefault(action.path, action)
    return sorted(actions.values(), key=lambda a: (a.kind, a.path))


def _expired_and_unused(vault: VaultState, days: int | None, now: dt.datetime) -> list[Action]:
    cfg = vault.config["lifecycle"]
    days = int(cfg["archive_after_days"] if days is None else days)
    limit = int(cfg["archive_max_importance"])
    records = [r for r in vault.records().values() if r.status == "active"]
    usage = vault.usage.usage([r.key for r in records])
    cutoff = (now - dt.timedelta(days=days)).timestamp()
    out = []
    for rec in records:
        if is_expired(rec, now.date()):
            out.append(Action("archive", rec.path, rec.key, rec.title, f"expired on {rec.expires}"))
        elif rec.importance <= limit and rec.type != "project" and "anchor" not in rec.tags:  # anchors stay
            last = usage[rec.key].last_access if rec.key in usage else None
            if (last if last is not None else _when(rec).timestamp()) < cutoff:
                out.append(Action("archive", rec.path, rec.key, rec.title,
                                  f"importance {rec.importance}, not recalled for {days} days"))  # fmt: skip
    return out


def apply(vault: VaultState, actions: list[Action], now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """Carry out planned actions with guarded writes; returns what was done."""
    records = vault.records()
    paths = vault.store.list_paths() if actions else []
    done: list[dict[str, Any]] = []
    touched: set[str] = set()
    histories: dict[str, list[str]] = {}
    for a in actions:
        rec = records[a.path]
        if a.kind == "supersede":
            assert a.by is not None  # plan() names the replacing note of every supersede
            mark_superseded(vault, rec, records[a.by], paths)
            touched |= {a.path, a.by}
        else:
            change(vault, rec, {"status": "archived"})
            touched.add(a.path)
            if a.anchor:
                histories.setdefault(a.anchor, []).append(a.path)
        done.append(asdict(a))
    for anchor, archived in histories.items():
        touched.add(
            _record_history(vault, records[anchor], [records[p] for p in archived], now or now_utc(), paths)
        )
    vault.sync_paths(sorted(touched))
    return done


def _record_history(vault: VaultState, anchor: Record, archived: list[Record], now: dt.datetime,
                    paths: list[str]) -> str:  # fmt: skip
    """Add links to archived session summaries to the anchor's "Session history" note."""
    title = f"Session history: {anchor.title}"
    lines = [
        f"- {link_to(r.path, paths, r.title)} ({(r.created or '')[:10]})"
        for r in sorted(archived, key=_when, reverse=True)
    ]
    existing = next((r for r in vault.catalog().values() if r.title == title and HISTORY_TAG in r.tags), None)
    if existing is None:
        from ..core.store import new_id

        stamp = note_time(now)
        taken = {r.id for r in vault.catalog().values() if r.id}
        meta = {"id": new_id(taken), "title": title, "type": "fact", "tags": [HISTORY_TAG],
                "anchor": link_to(anchor.path, paths, anchor.title), "created": stamp, "updated": stamp}  # fmt: skip
        body = (
            f"Archived session summaries of {link_to(anchor.path, paths, anchor.title)}, newest first:\n\n"
            + "\n".join(lines)
            + "\n"
        )
        folder = vault.config["folders"].get("session_summary", "sessions")
        return vault.store.create(vault.store.unique_path(folder, title), render(meta, body))

    def add(text: str) -> str:  # under the note's lock
        new_lines = [ln for ln in lines if ln.split(" (")[0] not in text]
        if not new_lines:
            return text
        newline = "\r\n" if "\r\n" in text else "\n"
        block = newline.join(new_lines) + newline
        at = text.find(newline + "- [[")  # newest first: above the entries already listed
        return (
            text[: at + len(newline)] + block + text[at + len(newline) :]
            if at >= 0
            else text.rstrip("\r\n") + newline + block
        )

    vault.store.update(existing.path, add)
    return existing.path
