"""Match notes against a date range or a date: time questions and ``--as-of`` (pure).

A note's dates are ``created``, ``updated``, the days it names (``Record.dates``: its ``date``
field, dates in its title and body) and its validity (``valid_from``..``valid_until``). A
note matches a range when one of its dates falls in it or its validity overlaps it.

Named events ("since the migration") are the dated notes whose title holds the event's words:
the closest title (fewest other words) wins, then the latest; notes without a type (plain
documents) are not events.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable

from ..core.errors import BadInput
from ..core.timeexpr import DateRange, EventResolver
from ..core.updates import key_words
from ..index.manifest import Record


def day(value: str | None) -> dt.date | None:
    """The day of an ISO 8601 date or datetime string (its UTC day for a datetime)."""
    if not value:
        return None
    text = str(value).strip()
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (when.astimezone(dt.UTC) if when.tzinfo else when).date()
    except ValueError:
        try:
            return dt.date.fromisoformat(text[:10])
        except ValueError:
            return None


def parse_day(value: object, option: str = "date") -> dt.date | None:
    """A day given as a date, datetime or ISO string; BadInput when it is not one."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    parsed = day(str(value)) if len(str(value).strip()) >= 10 else None
    if parsed is None:
        raise BadInput(f"{option}: {value!r} is not a date (2026-09-01) or a datetime")
    return parsed


def parse_now(value: object) -> dt.datetime | None:
    """The clock a query resolves against: a datetime, a date (its noon UTC) or ISO text."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time(12), dt.UTC)
    text = str(value).strip()
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"--now: {value!r} is not a date or a datetime") from None
    if len(text) == 10:
        when = when.replace(hour=12)
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def points(rec: Record) -> list[dt.date]:
    """The days a note is dated by (created, updated, named dates)."""
    out = [day(rec.created), day(rec.updated), *(day(d) for d in rec.dates)]
    return [d for d in out if d is not None]


def validity(rec: Record) -> tuple[dt.date | None, dt.date | None] | None:
    """(from, until) of a note that states its validity, else None."""
    if not (rec.valid_from or rec.valid_until):
        return None
    return day(rec.valid_from) or day(rec.created), day(rec.valid_until)


def matches(rec: Record, rng: DateRange) -> bool:
    """Whether a note is dated inside ``rng`` (a date or its validity)."""
    span = validity(rec)
    if span is not None and rng.overlaps(*span):
        return True
    return any(rng.contains(d) for d in points(rec))


def in_range(records: Iterable[Record], rng: DateRange) -> set[str]:
    return {rec.path for rec in records if matches(rec, rng)}


def valid_on(rec: Record, when: dt.date) -> bool:
    """Whether a note was true on ``when``: from ``valid_from`` (else created) until
    ``valid_until`` (else, for a superseded note, until it was last written; else open)."""
    start = day(rec.valid_from) or day(rec.created)
    end = day(rec.valid_until)
    if end is None and rec.status == "superseded":
        end = day(rec.updated)
    if start is not None and when < start:
        return False
    return end is None or when < end


def event_resolver(records: Collection[Record], today: dt.date) -> EventResolver:
    """A resolver for named events over the vault's typed, dated notes."""

    def resolve(name: str) -> dt.date | None:
        wanted = key_words(name)
        if not wanted:
            return None
        best = None
        for rec in records:
            if not rec.type:
                continue
            words = key_words(rec.title)
            if not wanted <= words:
                continue
            when = min((d for d in map(day, rec.dates) if d), default=None) or day(rec.created)
            if when is None or when > today:
                continue
            rank = (-len(words - wanted), when)
            if best is None or rank > best[0]:
                best = (rank, when)
        return best[1] if best else None

    return resolve
