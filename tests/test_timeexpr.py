"""Time expressions in queries and dates in note text (vaultmem.core.timeexpr, pure)."""

import datetime as dt

import pytest

from vaultmem.core.timeexpr import DateRange, extract_dates, parse_query

NOW = dt.datetime(2026, 11, 22, 15, 30, tzinfo=dt.UTC)  # a Sunday
EVENTS = {"migration": dt.date(2026, 8, 14), "postgres migration": dt.date(2026, 8, 14),
          "pilot": dt.date(2026, 9, 20)}  # fmt: skip


@pytest.mark.parametrize("query, text, start, end", [
    ("what did we decide last week", "what did we decide", "2026-11-09", "2026-11-15"),
    ("bugs fixed yesterday", "bugs fixed", "2026-11-21", "2026-11-21"),
    ("what was done today", "what was done", "2026-11-22", "2026-11-22"),
    ("the day before yesterday deploy", "deploy", "2026-11-20", "2026-11-20"),
    ("decisions in October", "decisions", "2026-10-01", "2026-10-31"),
    ("decisions in Oct.", "decisions", "2026-10-01", "2026-10-31"),
    ("progress in 2026-10", "progress", "2026-10-01", "2026-10-31"),
    ("notes on 2026-09-03", "notes", "2026-09-03", "2026-09-03"),
    ("what happened on 8 May 2023", "what happened", "2023-05-08", "2023-05-08"),
    ("May 8, 2023 meeting", "meeting", "2023-05-08", "2023-05-08"),
    ("the meeting on May 8", "the meeting", "2026-05-08", "2026-05-08"),
    ("the review on December 3", "the review", "2025-12-03", "2025-12-03"),  # not yet this year
    ("deploy notes from the last 3 days", "deploy notes", "2026-11-19", "2026-11-22"),
    ("two weeks ago standup", "standup", "2026-11-02", "2026-11-08"),
    ("what broke 3 days ago", "what broke", "2026-11-19", "2026-11-19"),
    ("a month ago we chose", "we chose", "2026-10-01", "2026-10-31"),
    ("changes in the past month", "changes", "2026-10-23", "2026-11-22"),
    ("this week's plan", "'s plan", "2026-11-16", "2026-11-22"),
    ("last month releases", "releases", "2026-10-01", "2026-10-31"),
    ("last year budget", "budget", "2025-01-01", "2025-12-31"),
    ("earlier this month", "", "2026-11-01", "2026-11-22"),
    ("last October outage", "outage", "2026-10-01", "2026-10-31"),
    ("the November plan", "the November plan", None, None),  # a bare month name is not a range
    ("since September", "", "2026-09-01", "2026-11-22"),
    ("before August", "", None, "2026-07-31"),
    ("until August", "", None, "2026-08-31"),
    ("after 2026-10-05", "", "2026-10-06", "2026-11-22"),
    ("in 2025", "", "2025-01-01", "2025-12-31"),
    ("Q3 2026 roadmap", "roadmap", "2026-07-01", "2026-09-30"),
    ("between 1 September and 15 October", "", "2026-09-01", "2026-10-15"),
    ("what shipped between October 3 and October 9, 2026?", "what shipped?", "2026-10-03", "2026-10-09"),
    ("from May 1 to May 10 what shipped", "what shipped", "2026-05-01", "2026-05-10"),
    ("on Tuesday", "", "2026-11-17", "2026-11-17"),
    ("last friday deploy", "deploy", "2026-11-20", "2026-11-20"),
    ("recently changed config", "changed config", "2026-10-23", "2026-11-22"),
    ("in early September", "", "2026-09-01", "2026-09-30"),
    ("what changed since the migration", "what changed", "2026-08-14", "2026-11-22"),
    ("what did we plan before the pilot started?", "what did we plan?", None, "2026-09-19"),
    ("what broke after the postgres migration", "what broke", "2026-08-15", "2026-11-22"),
])  # fmt: skip
def test_expressions(query, text, start, end):
    got = parse_query(query, NOW, EVENTS.get)
    assert got.text == text
    if start is None and end is None:
        assert got.range is None
    else:
        assert got.range is not None
        assert got.range.as_dict()["from"] == start and got.range.as_dict()["until"] == end


@pytest.mark.parametrize("query", [
    "what did we decide about caching",
    "it may rain on the build",
    "the march to production",
    "between hip fractures and statin use",
    "between 7 and 12 kb/min",
    "since the cache is cold the first call is slow",
    "after the retry the job passed",
    "1 in 5 million in UK have abnormal PrP positivity.",
])  # fmt: skip
def test_no_expression_leaves_query_untouched(query):
    got = parse_query(query, NOW, EVENTS.get)
    assert got.range is None and got.text == query


def test_unknown_event_keeps_its_words():
    got = parse_query("what changed since the rewrite", NOW, EVENTS.get)
    assert got.range is None and got.text == "what changed since the rewrite"
    assert parse_query("what changed since the migration", NOW).range is None  # no resolver


def test_relative_expressions_follow_the_injected_now():
    assert parse_query("yesterday", dt.date(2024, 3, 1)).range.start == dt.date(2024, 2, 29)
    assert parse_query("last month", dt.date(2026, 1, 10)).range == DateRange(
        dt.date(2025, 12, 1), dt.date(2025, 12, 31), "last month"
    )
    assert parse_query("in October", dt.date(2026, 2, 1)).range.start == dt.date(2025, 10, 1)


def test_range_contains_and_overlaps():
    r = DateRange(dt.date(2026, 10, 1), dt.date(2026, 10, 31))
    assert r.contains(dt.date(2026, 10, 31)) and not r.contains(dt.date(2026, 11, 1))
    assert r.overlaps(dt.date(2026, 9, 1), None) and r.overlaps(None, dt.date(2026, 10, 1))
    assert not r.overlaps(dt.date(2026, 11, 1), dt.date(2026, 12, 1))
    assert DateRange(None, dt.date(2026, 1, 1)).contains(dt.date(1990, 1, 1))


def test_body_dates():
    text = (
        "We met on 8 May 2023, again 2023-05-08 and May 8, 2023. Launch: Sept 3rd, 2024. "
        "Not dates: 31 February 2024, 2026-13-01, version 2.10.3, 1 in 5 million."
    )
    assert extract_dates(text) == [dt.date(2023, 5, 8), dt.date(2024, 9, 3)]
    assert extract_dates("12 of October 2026") == [dt.date(2026, 10, 12)]
    assert len(extract_dates(" ".join(f"2026-01-{d:02d}" for d in range(1, 32)), limit=5)) == 5
