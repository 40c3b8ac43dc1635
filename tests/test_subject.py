"""Questions about a speaker (issue 18, multi-hop): the second recall round, end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import recall_json
from typer.testing import CliRunner

from vaultmem.cli import app as cli
from vaultmem.recall import subject

TURNS = [
    ("t1", "Caroline", "Hey Melanie! How was the week, Melanie?"),
    ("t2", "Melanie", "Busy! I signed up for a pottery class yesterday."),
    ("t3", "Caroline", "Melanie, a pottery class sounds lovely, Melanie."),
    ("t4", "Melanie", "Thanks! Painting sunsets relaxes me too."),
    ("t5", "Caroline", "Melanie, you always find time for the kids, Melanie."),
    ("t6", "Melanie", "We went swimming at the lake with the kids."),
    ("t7", "Caroline", "Melanie, I read a book about hiking, Melanie."),
    ("t8", "Melanie", "Camping in the forest is our favourite weekend."),
]
QUESTION = "What activities does Melanie do with the kids?"


@pytest.mark.parametrize("body, expected", [
    ("Melanie: I signed up for a pottery class.\n\n8 May 2023\n", "Melanie"),
    ("\n  Mary Ann Lee: hello there\n", "Mary Ann Lee"),
    ("# Heading\nMelanie: not on the first line\n", None),
    ("melanie: lower case is not a name\n", None),
    ("Note: see below\n", "Note"),  # looks like a speaker; only a question naming it makes it one
    ("Time:12:30\n", None),
    ("", None),
])  # fmt: skip
def test_speaker_is_the_name_a_note_opens_with(body, expected):
    assert subject.speaker(body) == expected


@pytest.mark.parametrize("question, expected", [
    ("What activities does Melanie partake in?", True),
    ("What books has Melanie read?", True),
    ("What do Jon and Gina both have in common?", True),
    ("In what ways is Caroline participating in the community?", True),
    ("What did Caroline research?", False),
    ("What is Caroline's identity?", False),
    ("When did Melanie paint a sunrise?", False),
    ("Bariatric surgery reduces mortality.", False),
])  # fmt: skip
def test_is_list(question, expected):
    assert subject.is_list(question) is expected


def test_third_person_out():
    assert subject.third_person_out("What do Melanie's kids like?", ["Melanie"]) == "What do their kids like?"
    assert subject.third_person_out("Where has Melanie camped?", ["Melanie"]) == "Where has they camped?"
    assert subject.third_person_out("Did Jon and Gina both dance?", ["Gina", "Jon"]) == "Did and both dance?"
    assert subject.third_person_out("Where did Melanies go?", ["Melanie"]) == "Where did Melanies go?"


def test_find_needs_a_named_speaker_of_several_top_hits():
    hits = [("a", "Melanie"), ("b", "Caroline"), ("c", "Melanie"), ("d", None)]
    found = subject.find("What books has Melanie read?", hits)
    assert found is not None and found.names == ("Melanie",) and found.found_in == ("a", "c")
    assert found.vector_query == "What books has they read?"
    assert found.lift == pytest.approx(subject.WEIGHT + subject.LIST_WEIGHT)
    assert subject.find("What did Melanie say?", hits).lift == pytest.approx(subject.WEIGHT)
    assert subject.find("What did Caroline say?", hits) is None  # one note is not enough
    assert subject.find("What did they say?", hits) is None  # nobody named
    late = [("x", None)] * subject.FIRST + [("a", "Melanie"), ("c", "Melanie")]
    assert subject.find("What did Melanie say?", late) is None  # only the top hits count


@pytest.fixture
def turns(tmp_path, fake_model) -> Path:
    """A linked conversation: a session note, each turn linked to it and to the turn before."""
    root = tmp_path / "v"
    (root / ".vaultmem").mkdir(parents=True)
    (root / "s1.md").write_text(
        "---\nid: s1\n---\nSession 1 of the conversation between Caroline and Melanie.\n"
    )
    previous = None
    for key, who, text in TURNS:
        meta = f'id: {key}\nsession: "[[s1]]"\n' + (f'follows: "[[{previous}]]"\n' if previous else "")
        (root / f"{key}.md").write_text(f"---\n{meta}---\n{who}: {text}\n")
        previous = key
    return root


def _recall(root: Path, query: str, *extra: str) -> list[dict]:
    return recall_json(root, query, "-k", "4", *extra)


def test_a_question_about_a_speaker_brings_in_their_notes_and_explain_says_why(turns):
    hits = {h["id"]: h["explain"] for h in _recall(turns, QUESTION)}
    assert {"t2", "t8"} <= set(hits)  # Melanie's own pottery and camping turns
    for key in ("t2", "t8"):
        e = hits[key]
        assert e["subject"] == pytest.approx(subject.WEIGHT + subject.LIST_WEIGHT)
        assert e["first_round_rank"] > 4  # below the top 4 before the second round
        assert "question about Melanie" in e["subject_via"] and "t6" in e["subject_via"]
        assert "'What activities does they do with the kids?'" in e["subject_via"]
    assert all(e["subject"] == 0 for k, e in hits.items() if k in ("t1", "t3", "t5", "t7", "s1"))
    text = (
        CliRunner()
        .invoke(cli.app, ["recall", QUESTION, "--vault", str(turns), "--explain", "-k", "4"])
        .output
    )
    assert "second round; rank" in text and "question about Melanie (speaker of first-round hits" in text


def test_switched_off_the_second_round_does_not_happen(turns):
    # the turn part off too: it lifts t8 (Melanie telling, "our") into the top 4 by itself
    (turns / ".vaultmem.toml").write_text("[recall]\nsubject = false\nturn_weight = 0\n")
    hits = {h["id"]: h["explain"] for h in _recall(turns, QUESTION)}
    assert not {"t2", "t8"} & set(hits)
    assert all(e["subject"] == 0 and "first_round_rank" not in e for e in hits.values())


def test_no_second_round_without_a_named_speaker(turns):
    for query in ("pottery class and camping", "What activities do the kids like?", "What did Sophia read?"):
        hits = _recall(turns, query)
        assert all("first_round_rank" not in h["explain"] for h in hits), query


def test_names_in_skips_the_first_word_and_non_names():
    assert subject.names_in("What did Melanie paint in May?") == {"Melanie", "May"}
    assert subject.names_in("Melanie painted what?") == set()
    assert subject.names_in("ALDH1 expression in BRCA1 carriers") == set()


def test_the_feedback_round_scores_the_speakers_notes_by_their_best_notes(turns):
    """``recall.feedback_weight`` (off by default; ``feedback.py``): a list question about a
    speaker gets a third round whose part only that speaker's notes carry."""
    assert all(h["explain"]["feedback"] == 0 for h in _recall(turns, QUESTION, "-k", "9"))
    (turns / ".vaultmem.toml").write_text("[recall]\nfeedback_weight = 1.0\nfeedback_part = 0.2\n")
    hits = {h["id"]: h["explain"] for h in _recall(turns, QUESTION, "-k", "9")}
    assert any(e["feedback"] != 0 for e in hits.values())
    assert all(e["feedback"] == 0 for k, e in hits.items() if k in ("t1", "t3", "t5", "t7", "s1"))
