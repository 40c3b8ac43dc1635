"""A question's notes lifted by their session's best note (issue 37, ``spread.py``), end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import recall_json
from typer.testing import CliRunner

from vaultmem.cli import app as cli
from vaultmem.core.config import DEFAULTS
from vaultmem.recall import spread

QUESTION = "When did Caroline paint the lake sunrise?"
NOTES = {  # file stem -> (day, body)
    "z-best": ("2023-05-08", "Caroline: I painted the lake sunrise last year, Caroline's painting."),
    "x-reply": ("2023-05-08", "Melanie: That lake trip was lovely."),
    "a-other": ("2023-06-09", "Melanie: That lake trip was lovely."),  # as x: the same scores
    "w-filler": ("2023-06-09", "Melanie: The kids played football all day."),
}


@pytest.fixture
def sessions(tmp_path, fake_model) -> Path:
    """Two days of turns: the best match and a reply on the first, a like reply on the second."""
    root = tmp_path / "v"
    (root / ".vaultmem").mkdir(parents=True)
    for stem, (day, body) in NOTES.items():
        (root / f"{stem}.md").write_text(f"---\nid: {stem}\ndate: {day}\n---\n{body}\n")
    return root


def _recall(root: Path, query: str) -> list[dict]:
    return recall_json(root, query)


def _order(hits: list[dict]) -> list[str]:
    return [h["id"] for h in hits]


def test_a_reply_in_the_best_match_session_outranks_a_like_note_elsewhere(sessions):
    (sessions / ".vaultmem.toml").write_text("[recall]\nsession_weight = 0\n")
    before = _recall(sessions, QUESTION)
    assert _order(before).index("a-other") < _order(before).index("x-reply")  # a tie: by path
    assert all(h["explain"]["session"] == 0 for h in before)
    (sessions / ".vaultmem.toml").unlink()  # the default
    hits = _recall(sessions, QUESTION)
    order = _order(hits)
    assert order[0] == "z-best" and order.index("x-reply") < order.index("a-other")
    e = {h["id"]: h["explain"] for h in hits}
    weight = DEFAULTS["recall"]["session_weight"]
    assert e["x-reply"]["session"] == pytest.approx(e["z-best"]["session"], abs=1e-3)  # the same session
    assert e["x-reply"]["session_via"] == "2023-05-08" and e["a-other"]["session_via"] == "2023-06-09"
    text = CliRunner().invoke(cli.app, ["recall", QUESTION, "--vault", str(sessions), "--explain"]).output
    assert "+ session" in text and "best match of the notes dated 2023-05-08" in text
    assert e["z-best"]["session"] == pytest.approx(
        weight * (e["z-best"]["bm25"] + e["z-best"]["vector"]), abs=2e-3
    )


@pytest.mark.parametrize("query", ["What things did Caroline paint at the lake?", "lake sunrise painting"])
def test_a_list_question_or_a_statement_gets_no_session_part(sessions, query):
    assert all(h["explain"]["session"] == 0 for h in _recall(sessions, query))


def test_applies_to_questions_that_do_not_ask_for_a_list():
    assert spread.applies("When did Caroline paint the lake sunrise?")
    assert not spread.applies("What books has John read?")  # a list: answers spread over sessions
    assert not spread.applies("How many tournaments has Nate won?")  # a count, as a list
    assert not spread.applies("lake sunrise painting")  # a statement (SciFact's claims too)


def test_session_best_is_the_best_score_of_each_session():
    groups = {"a": "d1", "b": "d1", "c": "d2", "d": None}
    best = spread.session_best(groups, {"a": 0.4, "b": 0.1, "c": -0.3, "d": 0.9})
    assert best == {"d1": 0.4, "d2": 0.0}  # floored at 0; a note without a day has no session
