"""Metadata filters shared by ``list``, ``recall`` and ``wake`` (work on Notes and Records)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import BadInput
from .memtypes import normalize_type
from .note import IMPORTANCE_WORDS

HIDDEN_STATUSES = ("resolved", "superseded", "archived")
DURATION_RE = re.compile(r"^(\d+)\s*([mhdw])$")
UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
EPOCH = dt.datetime.min.replace(tzinfo=dt.UTC)  # sorts before any parsed time


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def parse_since(value: str | None, now: dt.datetime | None = None) -> dt.datetime | None:
    """``7d``, ``24h``, ``30m``, ``2w`` or an ISO date/datetime -> an aware datetime."""
    if not value:
        return None
    text = value.strip().lower()
    m = DURATION_RE.match(text)
    if m:
        try:
            return (now or now_utc()) - dt.timedelta(**{UNITS[m.group(2)]: int(m.group(1))})
        except OverflowError:  # 99999999d reaches before year 1
            return dt.datetime.min.replace(tzinfo=dt.UTC)
    parsed = parse_time(text)
    if parsed is None:
        raise BadInput(f"--since: {value!r} is not a duration (7d, 24h) or a date (2026-01-01)")
    return parsed


def parse_time(text: str | None) -> dt.datetime | None:
    """An ISO 8601 date or datetime string -> aware datetime (UTC if naive); None if invalid."""
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        try:
            value = dt.datetime.combine(dt.date.fromisoformat(str(text).strip()[:10]), dt.time())
        except ValueError:
            return None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def parse_importance(value: str | int | None) -> int | None:
    """Minimum importance: a number 1-10 or high/medium/low."""
    if value in (None, ""):
        return None
    text = str(value).strip().lower()
    if text in IMPORTANCE_WORDS:
        return IMPORTANCE_WORDS[text]
    if text.isdigit() and 1 <= int(text) <= 10:
        return int(text)
    raise BadInput(f"--importance: {value!r} is not 1-10 or high/medium/low")


def is_expired(note: Any, today: dt.date | None = None) -> bool:
    """Whether a note's ``expires`` date has passed, or its ``valid_until`` has come without
    a successor (``superseded_by``)."""
    today = today or now_utc().date()
    when = parse_time(getattr(note, "expires", None))
    if when is not None and when.date() < today:
        return True
    until = parse_time(getattr(note, "valid_until", None))
    return until is not None and not getattr(note, "superseded_by", None) and until.date() <= today


@dataclass(frozen=True)
class Filters:
    """Metadata conditions; every set condition must hold."""

    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    since: dt.datetime | None = None
    scope: str | None = None
    min_importance: int | None = None
    include_hidden: bool = False

    @classmethod
    def build(
        cls, types: Iterable[str] = (), tags: Iterable[str] = (), statuses: Iterable[str] = (),
        since: str | None = None, scope: str | None = None, importance: str | int | None = None,
        include_hidden: bool = False,
    ) -> Filters:  # fmt: skip
        if scope not in (None, "project", "user"):
            raise BadInput(f"--scope: {scope!r} is not 'project' or 'user'")
        return cls(
            types=tuple(t for t in (normalize_type(x) for x in types) if t),
            tags=tuple(t.lstrip("#").lower() for t in tags),
            statuses=tuple(s.lower() for s in statuses),
            since=parse_since(since),
            scope=scope,
            min_importance=parse_importance(importance),
            include_hidden=include_hidden or bool(statuses),
        )

    def metadata_match(self, note: Any) -> bool:
        """Type, tag, status, date, scope and importance conditions (not lifecycle)."""
        if self.types and note.type not in self.types:
            return False
        if self.tags and not all(_has_tag(note.tags, t) for t in self.tags):
            return False
        if self.statuses and note.status not in self.statuses:
            return False
        if self.scope and note.scope != self.scope:
            return False
        if self.min_importance and note.importance < self.min_importance:
            return False
        if self.since:
            when = parse_time(note.updated) or parse_time(note.created)
            if when is None or when < self.since:
                return False
        return True

    def visible(self, note: Any) -> bool:
        """Lifecycle: resolved/superseded/archived/expired notes are hidden unless asked for."""
        return self.include_hidden or (note.status not in HIDDEN_STATUSES and not is_expired(note))

    def match(self, note: Any) -> bool:
        return self.metadata_match(note) and self.visible(note)

    @property
    def restrictive(self) -> bool:
        return bool(
            self.types or self.tags or self.statuses or self.since or self.scope or self.min_importance
        )


def _has_tag(tags: Iterable[str], wanted: str) -> bool:
    """Obsidian nested tags: ``project`` matches ``project/tidewater``."""
    return any(t == wanted or t.startswith(wanted + "/") for t in tags)
