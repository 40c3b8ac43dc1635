"""Date arithmetic in a question: "the week before the wedding", "two weeks before 11 August" (pure).

``core.timeexpr`` reads "before X" as an open range (every day before X). A span written in
front of it ("the week", "two weeks", "three days", "the month", "the Sunday") closes it:
"the week before X" is the 7 days up to X, "two weeks after X" the 14 days from X. The anchor
day X itself is kept in the range: a note written on X is where "last week" is told (a diary
entry, a conversation that day). X may be any expression ``timeexpr`` reads, a named event
included ("the week before the migration").
"""

from __future__ import annotations

import datetime as dt
import re

from ..core.timeexpr import DateRange, TimeQuery

NUMBERS = {"a": 1, "an": 1, "the": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
UNITS = {"day": 1, "week": 7, "weekend": 7, "month": 30, "monday": 7, "tuesday": 7, "wednesday": 7,
         "thursday": 7, "friday": 7, "saturday": 7, "sunday": 7}  # fmt: skip
SPAN_RE = re.compile(
    r"(?:\b(?P<n>a|an|the|one|two|three|four|five|six|\d{1,2})\s+)?\b(?P<unit>days?|weeks?|weekend|months?|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+$",
    re.IGNORECASE,
)


def shift(query: str, parsed: TimeQuery) -> TimeQuery:
    """``parsed`` (``timeexpr.parse_query(query)``) with a span before its "before/after X"
    applied: the closed range next to X, and the span's words out of the text."""
    rng = parsed.range
    words = rng.expression.split(None, 1) if rng is not None else []
    if rng is None or len(words) < 2 or words[0].lower() not in ("before", "after"):
        return parsed
    at = query.find(rng.expression)
    m = SPAN_RE.search(query[:at]) if at > 0 else None
    if m is None:
        return parsed
    count = NUMBERS.get((m.group("n") or "the").lower()) or int(m.group("n"))
    days = dt.timedelta(days=count * UNITS[m.group("unit").lower().rstrip("s") or "days"])
    if words[0].lower() == "before" and rng.end is not None:
        anchor = rng.end + dt.timedelta(days=1)
        span = DateRange(anchor - days, anchor, m.group(0) + rng.expression)
    elif words[0].lower() == "after" and rng.start is not None:
        anchor = rng.start - dt.timedelta(days=1)
        span = DateRange(anchor, anchor + days, m.group(0) + rng.expression)
    else:
        return parsed
    before = re.sub(r"\b(in|on|at|during)\s*$", "", query[: m.start()].rstrip(), flags=re.IGNORECASE)
    text = " ".join((before + " " + query[at + len(rng.expression) :]).split())
    return TimeQuery(re.sub(r"\s+([?.!,])", r"\1", text), span)
