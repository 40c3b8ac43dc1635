"""Date arithmetic in a question (issue 37, ``datemath.py``): "the week before X", end to end."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultmem.cli import app as cli
from vaultmem.core.timeexpr import parse_query
from vaultmem.recall.datemath import shift

NOW = dt.datetime(2026, 11, 27, 12, tzinfo=dt.UTC)


@pytest.mark.parametrize("query, start, end, text", [
    ("Where was Tim in the week before 16 November 2023?", "2023-11-09", "2023-11-16", "Where was Tim?"),
    ("What puppy did Maria get two weeks before August 11, 2023?", "2023-07-28", "2023-08-11",
     "What puppy did Maria get?"),
    ("What happened 3 days after 2023-05-01?", "2023-05-01", "2023-05-04", "What happened?"),
])  # fmt: skip
def test_a_span_before_or_after_a_day_is_the_days_next_to_it(query, start, end, text):
    parsed = shift(query, parse_query(query, NOW))
    assert parsed.range is not None
    assert (parsed.range.start, parsed.range.end) == (
        dt.date.fromisoformat(start),
        dt.date.fromisoformat(end),
    )
    assert parsed.text == text


@pytest.mark.parametrize("query", ["What did we ship before May 2023?", "deploys last week", "plain words"])
def test_without_a_span_the_range_is_as_timeexpr_reads_it(query):
    assert shift(query, parse_query(query, NOW)) == parse_query(query, NOW)


@pytest.fixture
def adoptions(tmp_path, fake_model) -> Path:
    root = tmp_path / "v"
    (root / ".vaultmem").mkdir(parents=True)
    for stem, day, body in [("puppy", "2023-08-10", "We adopted a puppy called Coco."),
                            ("cat", "2023-03-01", "We adopted a cat called Miso."),
                            ("parrot", "2023-09-01", "We adopted a parrot called Kiwi.")]:  # fmt: skip
        (root / f"{stem}.md").write_text(f"---\nid: {stem}\ndate: {day}\n---\n{body}\n")
    return root


def _times(root: Path) -> dict[str, float]:
    result = CliRunner().invoke(cli.app, ["recall", "What did we adopt the week before August 11, 2023?",
                                          "--vault", str(root), "--json", "--explain", "--now", "2026-11-27"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return {h["id"]: h["explain"].get("time", 0.0) for h in json.loads(result.stdout)["results"]}


def test_the_week_before_a_day_boosts_that_week_only(adoptions):
    times = _times(adoptions)
    assert times["puppy"] > 0 and times["cat"] == 0 and times["parrot"] == 0
    (adoptions / ".vaultmem.toml").write_text("[recall]\ndate_arithmetic = false\n")
    times = _times(adoptions)  # every day before 11 August: the cat of March too
    assert times["puppy"] > 0 and times["cat"] > 0 and times["parrot"] == 0
