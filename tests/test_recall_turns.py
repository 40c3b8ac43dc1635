"""A question lifts a conversation turn that tells over one that asks (issue 37, ``turns.py``), end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import recall_json
from typer.testing import CliRunner

from vaultmem.cli import app as cli
from vaultmem.core.config import DEFAULTS
from vaultmem.recall import turns

QUESTION = "What pets does Nate have?"
NOTES = {  # file stem -> body: the two turns share their words but for "do you" / "I"
    "a-asks": "Nate: Pets like turtles and dogs, do you have pets?",
    "z-tells": "Nate: Pets like turtles and dogs, I have pets.",
    "m-other": "Joanna: The screenplay went to three studios this week.",
    "n-other": "Joanna: I walked the trail by the lake again.",
}


@pytest.fixture
def talk(tmp_path, fake_model) -> Path:
    root = tmp_path / "v"
    (root / ".vaultmem").mkdir(parents=True)
    for stem, body in NOTES.items():
        (root / f"{stem}.md").write_text(f"---\nid: {stem}\n---\n{body}\n")
    return root


def _recall(root: Path, query: str, *args: str) -> list[dict]:
    return recall_json(root, query, *args)


def test_the_turn_that_tells_ranks_first(talk):
    (talk / ".vaultmem.toml").write_text("[recall]\nturn_weight = 0\n")
    assert [h["id"] for h in _recall(talk, QUESTION, "-k", "1")] == ["a-asks"]  # off: the asking turn wins
    (talk / ".vaultmem.toml").unlink()  # the default
    hits = _recall(talk, QUESTION, "-k", "1")
    assert [h["id"] for h in hits] == ["z-tells"]
    assert hits[0]["explain"]["turn"] == pytest.approx(DEFAULTS["recall"]["turn_weight"])
    e = {h["id"]: h["explain"] for h in _recall(talk, QUESTION)}
    assert e["a-asks"]["turn"] == pytest.approx(-DEFAULTS["recall"]["turn_weight"])
    assert "n-other" not in e  # the prior is no evidence: a telling turn sharing nothing is no hit
    text = CliRunner().invoke(cli.app, ["recall", QUESTION, "--vault", str(talk), "--explain"]).output
    assert "a conversation turn that tells" in text and "a conversation turn that asks" in text


@pytest.mark.parametrize("query", ["pets turtles dogs", "Pets like turtles and dogs."])
def test_a_statement_gets_no_turn_part(talk, query):
    assert all(h["explain"]["turn"] == 0 for h in _recall(talk, query))


def test_value_of_a_turn():
    assert turns.value("Nate: I just got a new dog, this is Max!\n\n(image: a dog)") == ("Nate", 1.0)
    assert turns.value("Nate: Pets make everyone happier. Have you thought of getting one?") == ("Nate", -1.0)
    assert turns.value("Nate: My turtles are great. Do you like them?") == ("Nate", 0.0)  # tells and asks
    assert turns.value("Nate: Wow, that looks amazing!") == ("Nate", 0.0)  # reacts
    assert turns.value("Nate: The US team won, we cheered.") == ("Nate", 1.0)
    assert turns.value("Nate: The US team won.") == ("Nate", 0.0)  # "US" is no "us"
    assert turns.value("# A decision\n\nUse PostgreSQL: I checked the load.") == (None, 0.0)  # no turn
    assert turns.said("Caroline: Thanks, Mel!\n\n8 May, 2023") == ("Caroline", "Thanks, Mel!")


def test_a_note_opening_with_a_label_once_is_no_turn(talk):
    (talk / "summary.md").write_text("---\nid: summary\n---\nSummary: I have pets, turtles and dogs.\n")
    e = {h["id"]: h["explain"] for h in _recall(talk, QUESTION)}
    assert e["summary"]["turn"] == 0 and e["z-tells"]["turn"] > 0  # "Summary" opens one note, Nate two
