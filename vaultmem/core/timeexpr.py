"""Time expressions in English queries and dates written in note text (pure, no LLM).

``parse_query("what did we decide last week", now)`` finds the expression, turns it into an
inclusive date range resolved against ``now`` (injectable: tests and benchmarks fix it) and
returns the query without it. Named events ("since the migration", "before the pilot") are
resolved by a callback the caller provides (recall looks them up among the vault's dated
notes); without one, or when it finds nothing, the words stay in the query.

``extract_dates(text)`` finds the dates written in a body ("on 8 May 2023", "2023-05-08",
"May 8, 2023") for the index.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name and name != "May"})
MONTHS["sept"] = 9
MONTH = r"(?P<{}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
WEEKDAY = "(?P<wd>" + "|".join(WEEKDAYS) + ")"
DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
YEAR = r"(?P<{}>(?:19|20)\d\d)"
UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "a few": 3, "few": 3, "couple of": 2, "a couple of": 2}  # fmt: skip
NUM = r"(?P<n>\d{1,3}|a couple of|couple of|a few|few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
UNIT = r"(?P<unit>day|week|fortnight|month|year)s?"
RECENT_DAYS = 30
EventResolver = Callable[[str], "dt.date | None"]


@dataclass(frozen=True)
class DateRange:
    """An inclusive range of days; an open end is None."""

    start: dt.date | None
    end: dt.date | None
    expression: str = ""

    def contains(self, day: dt.date) -> bool:
        return (self.start is None or day >= self.start) and (self.end is None or day <= self.end)

    def overlaps(self, start: dt.date | None, end: dt.date | None) -> bool:
        """Whether [start, end] (open ends allowed) shares a day with this range."""
        return (self.end is None or start is None or start <= self.end) and (
            self.start is None or end is None or end >= self.start
        )

    def as_dict(self) -> dict[str, str | None]:
        return {"expression": self.expression, "from": _iso(self.start), "until": _iso(self.end)}


@dataclass(frozen=True)
class TimeQuery:
    """A query split into its text part and the date range of its time expression (if any)."""

    text: str
    range: DateRange | None = None


def _iso(day: dt.date | None) -> str | None:
    return day.isoformat() if day else None


def _month_range(year: int, month: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])


def _past_month(today: dt.date, month: int, strictly_before: bool = False) -> tuple[dt.date, dt.date]:
    """The most recent ``month`` that has begun (before the current month if ``strictly_before``)."""
    year = (
        today.year
        if month < today.month or (month == today.month and not strictly_before)
        else today.year - 1
    )
    return _month_range(year, month)


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _week(day: dt.date) -> tuple[dt.date, dt.date]:
    start = day - dt.timedelta(days=day.weekday())
    return start, start + dt.timedelta(days=6)


# ------------------------------------------------------------------ absolute points and spans


def _p(pattern: str, *names: str) -> str:
    return pattern.format(*names)


ISO_DAY = r"(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)(?![\d-])"
ISO_MONTH = r"(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)(?![\d-])"
DMY = _p(DAY, "d") + r"\s+(?:of\s+)?" + _p(MONTH, "mon") + r",?\s+" + _p(YEAR, "y")
MDY = _p(MONTH, "mon") + r"\s+" + _p(DAY, "d") + r"(?:,\s*|\s+)" + _p(YEAR, "y")
MY = _p(MONTH, "mon") + r",?\s+" + _p(YEAR, "y")
DM = _p(DAY, "d") + r"\s+(?:of\s+)?" + _p(MONTH, "mon")
MD = _p(MONTH, "mon") + r"\s+" + _p(DAY, "d")
QUARTER = r"(?P<q>q[1-4])\s+" + _p(YEAR, "y")


def _span(m: re.Match, kind: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days an absolute expression of ``kind`` names."""
    g = m.groupdict()
    if kind in ("iso_day", "dmy", "mdy"):
        month = int(g["m"]) if kind == "iso_day" else MONTHS[g["mon"].lower().rstrip(".")]
        day = _date(int(g["y"]), month, int(g["d"]))
        return (day, day) if day else None
    if kind in ("dm", "md"):
        month, d = MONTHS[g["mon"].lower().rstrip(".")], int(g["d"])
        day = _date(today.year, month, d)
        if day and day > today:
            day = _date(today.year - 1, month, d)
        return (day, day) if day else None
    if kind in ("iso_month", "my"):
        month = int(g["m"]) if kind == "iso_month" else MONTHS[g["mon"].lower().rstrip(".")]
        return _month_range(int(g["y"]), month) if 1 <= month <= 12 else None
    if kind == "quarter":
        q, year = int(g["q"][1]), int(g["y"])
        return dt.date(year, 3 * q - 2, 1), _month_range(year, 3 * q)[1]
    if kind == "year":
        return dt.date(int(g["y"]), 1, 1), dt.date(int(g["y"]), 12, 31)
    if kind == "month":
        return _past_month(today, MONTHS[g["mon"].lower().rstrip(".")])
    return None


# Absolute forms, most specific first. ``month`` and ``year`` alone need a preposition (see POINT).
ABSOLUTE = [("iso_day", ISO_DAY), ("dmy", DMY), ("mdy", MDY), ("iso_month", ISO_MONTH), ("my", MY),
            ("quarter", QUARTER), ("dm", DM), ("md", MD)]  # fmt: skip
BARE = [("year", _p(YEAR, "y")), ("month", _p(MONTH, "mon"))]


def _relative(m: re.Match, kind: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    g = m.groupdict()
    if kind == "today":
        return today, today
    if kind == "yesterday":
        day = today - dt.timedelta(days=1)
        return day, day
    if kind == "day_before":
        day = today - dt.timedelta(days=2)
        return day, day
    if kind == "ago":
        n, unit = NUMBERS.get(g["n"].lower()) or int(g["n"]), g["unit"].lower()
        if unit == "day":
            day = today - dt.timedelta(days=n)
            if g["n"].lower() in ("a few", "few"):
                return day - dt.timedelta(days=1), day + dt.timedelta(days=1)
            return day, day
        if unit in ("week", "fortnight"):
            return _week(today - dt.timedelta(days=UNIT_DAYS[unit] * n))
        if unit == "month":
            y, mth = divmod(today.year * 12 + today.month - 1 - n, 12)
            return _month_range(y, mth + 1)
        return dt.date(today.year - n, 1, 1), dt.date(today.year - n, 12, 31)
    if kind == "past_n":
        n = NUMBERS.get((g.get("n") or "one").lower()) or int(g["n"])
        return today - dt.timedelta(days=UNIT_DAYS[g["unit"].lower()] * n), today
    if kind in ("last", "this"):
        unit = g["unit2"].lower()
        if unit == "week":
            start, end = _week(today)
            return (
                (start, today)
                if kind == "this"
                else (start - dt.timedelta(days=7), start - dt.timedelta(days=1))
            )
        if unit == "month":
            if kind == "this":
                return today.replace(day=1), today
            prev = today.replace(day=1) - dt.timedelta(days=1)
            return _month_range(prev.year, prev.month)
        if unit == "year":
            return (
                (dt.date(today.year, 1, 1), today)
                if kind == "this"
                else (dt.date(today.year - 1, 1, 1), dt.date(today.year - 1, 12, 31))
            )
        if unit == "weekend":
            saturday = today - dt.timedelta(days=(today.weekday() - 5) % 7 or 7)
            return saturday, saturday + dt.timedelta(days=1)
    if kind == "last_month_name":
        return _past_month(today, MONTHS[g["mon"].lower().rstrip(".")], strictly_before=True)
    if kind == "weekday":
        back = (today.weekday() - WEEKDAYS[g["wd"].lower()]) % 7 or 7
        day = today - dt.timedelta(days=back)
        return day, day
    if kind == "recent":
        return today - dt.timedelta(days=RECENT_DAYS), today
    return None


RELATIVE = [
    ("day_before", r"the\s+day\s+before\s+yesterday"),
    ("today", r"(?:earlier\s+)?today|this\s+(?:morning|afternoon|evening)|tonight"),
    ("yesterday", r"yesterday(?:\s+(?:morning|afternoon|evening))?|last\s+night"),
    ("ago", NUM + r"\s+" + UNIT + r"\s+ago"),
    (
        "past_n",
        r"(?:in\s+|over\s+|during\s+|within\s+|from\s+)?the\s+(?:last|past|previous)\s+"
        r"(?:" + NUM + r"\s+)?" + UNIT,
    ),
    ("past_n", r"(?:the\s+)?(?:last|past)\s+" + NUM.replace("|an?|", "|") + r"\s+" + UNIT),
    ("last", r"(?:earlier\s+)?(?:last|previous)\s+(?P<unit2>week(?:end)?|month|year)"),
    ("this", r"(?:earlier\s+|later\s+)?this\s+(?P<unit2>week|month|year)"),
    ("last_month_name", r"last\s+" + _p(MONTH, "mon")),
    ("weekday", r"(?:last|on)\s+" + WEEKDAY),
    ("recent", r"recently|lately|these\s+days"),
]

PREP = r"(?P<prep>since|after|from|before|until|till|up\s+to|prior\s+to|by|in|during|on|of|around|for)"
OPEN_AFTER = {"since", "after", "from"}
OPEN_BEFORE = {"before", "until", "till", "up to", "prior to", "by"}
STOP = {"and", "or", "but", "did", "do", "does", "we", "i", "you", "they", "was", "were", "is", "are", "what",
        "which", "who", "how", "when", "why", "where", "that", "this", "to", "for", "of", "in", "on", "with",
        "has", "have", "had", "it", "there", "then", "about", "any", "anything"}  # fmt: skip
EVENT_TAIL = (
    r"(?:\s+(?:started|began|ended|finished|happened|went\s+live|launched|shipped|landed|was\s+done))?"
)
EVENT = (r"(?P<eprep>since|after|before|until|prior\s+to)\s+(?:the|our|my)\s+"
         r"(?P<event>[a-z0-9][\w-]*(?:\s+[a-z0-9][\w-]*){0,2})")  # fmt: skip
BOUNDARY_L, BOUNDARY_R = r"(?<![\w-])", r"(?![\w-])"


def _compile(body: str) -> re.Pattern:
    return re.compile(BOUNDARY_L + body + BOUNDARY_R, re.IGNORECASE)


POINT = [(k, _compile(r"(?:" + PREP + r"\s+(?:the\s+)?)?" + p)) for k, p in ABSOLUTE]
POINT += [(k, _compile(PREP + r"\s+(?:early\s+|late\s+|mid\s*-?\s*)?" + p)) for k, p in BARE]
RELS = [(k, _compile(p)) for k, p in RELATIVE]
BETWEEN = re.compile(BOUNDARY_L + r"(?:between|from)\s+", re.IGNORECASE)
SEPARATOR = re.compile(r"\s+(?:and|to|until|till|-)\s+", re.IGNORECASE)
EVENT_RE = _compile(EVENT)


def _clean(text: str, start: int, end: int) -> str:
    out = (text[:start] + " " + text[end:]).strip()
    out = re.sub(r"\s+([,.;:?!])", r"\1", re.sub(r"\s{2,}", " ", out))
    return out.strip(" ,;:") or out


def _find_point(text: str, today: dt.date) -> tuple[re.Match, tuple[dt.date, dt.date]] | None:
    """The first (leftmost, most specific) date expression of ``text`` and its days."""
    best = None
    for table, resolve in ((RELS, _relative), (POINT, _span)):
        for kind, pattern in table:
            for m in pattern.finditer(text):
                days = resolve(m, kind, today)
                if days is None:
                    continue
                here, there = (m.start(), -m.end()), (best[0].start(), -best[0].end()) if best else None
                if there is None or here < there:  # leftmost, then longest
                    best = (m, days)
                break
    return best


def _open(
    prep: str | None, days: tuple[dt.date, dt.date], today: dt.date
) -> tuple[dt.date | None, dt.date | None]:
    prep = " ".join((prep or "").lower().split())
    if prep in OPEN_AFTER:
        return (days[0] if prep != "after" else days[1] + dt.timedelta(days=1)), today
    if prep in OPEN_BEFORE:
        return None, (days[0] - dt.timedelta(days=1) if prep in ("before", "prior to") else days[1])
    return days


def _between(text: str, today: dt.date) -> TimeQuery | None:
    """``between X and Y`` / ``from X to Y`` where X and Y are both date expressions."""
    for m in BETWEEN.finditer(text):
        rest = text[m.end() :]
        for sep in SEPARATOR.finditer(rest):
            a = _find_point(rest[: sep.start()], today)
            if not a or a[0].start() != 0 or a[0].end() != sep.start():
                continue
            b = _find_point(rest[sep.end() :], today)
            if not b or b[0].start() != 0:
                continue
            start, end = min(a[1][0], b[1][0]), max(a[1][1], b[1][1])
            stop = m.end() + sep.end() + b[0].end()
            return TimeQuery(_clean(text, m.start(), stop), DateRange(start, end, text[m.start() : stop]))
    return None


def _event(text: str, today: dt.date, events: EventResolver | None) -> TimeQuery | None:
    if events is None:
        return None
    for m in EVENT_RE.finditer(text):
        words = m.group("event").split()
        cut = [i for i, w in enumerate(words) if w.lower() in STOP]
        words = words[: cut[0]] if cut else words
        for n in range(len(words), 0, -1):  # the longest name the vault knows
            name = " ".join(words[:n])
            when = events(name)
            if when is None:
                continue
            end = m.start("event") + len(name)
            tail = re.match(EVENT_TAIL, text[end:], re.IGNORECASE)
            end += tail.end() if tail else 0
            start, until = _open(m.group("eprep"), (when, when), today)
            return TimeQuery(_clean(text, m.start(), end), DateRange(start, until, text[m.start() : end]))
    return None


def today_of(now: dt.datetime | dt.date) -> dt.date:
    return now.date() if isinstance(now, dt.datetime) else now


def parse_query(query: str, now: dt.datetime | dt.date, events: EventResolver | None = None) -> TimeQuery:
    """Split ``query`` into its text and the date range of its first time expression.

    A query without one comes back unchanged, with ``range`` None."""
    today = today_of(now)
    found = _between(query, today)
    if found:
        return found
    point = _find_point(query, today)
    if point is not None:
        m, days = point
        start, end = _open(m.groupdict().get("prep"), days, today)
        return TimeQuery(_clean(query, m.start(), m.end()), DateRange(start, end, m.group(0)))
    return _event(query, today, events) or TimeQuery(query)


# ------------------------------------------------------------------ dates written in note text

BODY = [("iso_day", _compile(ISO_DAY)), ("dmy", _compile(DMY)), ("mdy", _compile(MDY))]
MAX_BODY_DATES = 32


def extract_dates(text: str, limit: int = MAX_BODY_DATES) -> list[dt.date]:
    """Full dates (day, month and year) written in ``text``, sorted, without repeats."""
    found: set[dt.date] = set()
    today = dt.date.today()
    for kind, pattern in BODY:
        for m in pattern.finditer(text):
            days = _span(m, kind, today)
            if days:
                found.add(days[0])
            if len(found) >= limit:
                return sorted(found)
    return sorted(found)
