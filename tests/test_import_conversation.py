"""An imported chat answers like the raw conversation (issue 37): the note of an imported
conversation keeps what the user said (facts, numbers, names on any line of any message), so a
later question about it finds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultmem.cli.app import app

FACTS = {
    2: "Planning the move.\nMy sister Alma lives in Porto and we signed the lease on 12 March for 1450 euros.",
    14: "One more thing: the removal firm is called Vantastic, booking ref QX-2291.",
}


def export(path: Path) -> Path:
    """A ChatGPT export of one conversation: 14 requests, facts beyond each request's first line
    and beyond the first 12 requests."""
    mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
    n = 28
    for k in range(n):
        user = k % 2 == 0
        text = FACTS.get(k // 2 + 1, f"Question {k // 2 + 1} about packing boxes and labels?") if user else (
            f"Here is advice number {k // 2 + 1} about boxes.")  # fmt: skip
        mapping[f"m{k}"] = {"id": f"m{k}", "parent": "root" if k == 0 else f"m{k - 1}",
                            "children": [f"m{k + 1}"] if k + 1 < n else [],
                            "message": {"id": f"m{k}", "author": {"role": "user" if user else "assistant"},
                                        "create_time": 1741946400 + 30 * k, "recipient": "all",
                                        "content": {"content_type": "text", "parts": [text]}}}  # fmt: skip
    conv = {"title": "Moving house", "create_time": 1741946400, "mapping": mapping, "current_node": f"m{n - 1}",
            "id": "conv-move"}  # fmt: skip
    path.write_text(json.dumps([conv]))
    return path


@pytest.fixture
def run(empty_vault, fake_embedder, monkeypatch, backend):
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)

    def _run(*args: str):
        result = CliRunner().invoke(app, [*args, "--vault", str(empty_vault)])
        assert result.exit_code == 0, (result.stdout, result.stderr)
        return result.stdout

    return _run


def test_an_imported_conversation_keeps_what_the_user_said(run, empty_vault, tmp_path):
    out = json.loads(
        run("import", "--from", "chatgpt", str(export(tmp_path / "conversations.json")), "--json")
    )
    [conv] = out["written"]
    text = (empty_vault / conv["path"]).read_text()
    for fact in ("Alma lives in Porto", "12 March for 1450 euros", "Vantastic, booking ref QX-2291"):
        assert fact in text, fact
    for question in ("Where does Alma live?", "What is the booking reference of the removal firm?"):
        hits = json.loads(run("recall", question, "-k", "3", "--json"))["results"]
        assert hits and hits[0]["path"] == conv["path"], (question, hits)


LONG_ANSWER = (
    "Good question. "
    + "Packing fragile things takes some care, so wrap each plate on its own. " * 6
    + "For the piano, the mover I would book is Kestrelworks in Braga, who quote 380 euros."
)  # the fact at ~450 characters: past an answer's opening
LATE_REQUEST = (
    "Last thing: the new flat's wifi is run by Lumenara, and the router sits in the hallway cupboard."
)


def chat(cid: str, turns: list[tuple[str, str]], start: int) -> dict:
    """One ChatGPT conversation of (role, text) messages."""
    mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
    for k, (role, text) in enumerate(turns):
        mapping[f"m{k}"] = {"id": f"m{k}", "parent": "root" if k == 0 else f"m{k - 1}",
                            "children": [f"m{k + 1}"] if k + 1 < len(turns) else [],
                            "message": {"id": f"m{k}", "author": {"role": role}, "create_time": start + 30 * k,
                                        "recipient": "all", "content": {"content_type": "text", "parts": [text]}}}  # fmt: skip
    return {
        "title": cid,
        "create_time": start,
        "mapping": mapping,
        "current_node": f"m{len(turns) - 1}",
        "id": cid,
    }


def long_export(path: Path, answer: str = LONG_ANSWER) -> Path:
    """Two conversations: a long one about a move (a fact past the opening of its second answer,
    another in its 61st request) and a short one about a garden (the decoy)."""
    turns: list[tuple[str, str]] = []
    for n in range(1, 62):
        ask = LATE_REQUEST if n == 61 else f"Question {n} about packing boxes and labels for the move?"
        turns += [("user", ask), ("assistant", answer if n == 2 else f"Advice {n}: label the boxes by room.")]
    garden = [("user", "How deep should I plant tulip bulbs in the garden?"),
              ("assistant", "About three times the bulb's height, pointy end up.")]  # fmt: skip
    path.write_text(
        json.dumps([chat("conv-move", turns, 1741946400), chat("conv-garden", garden, 1742946400)])
    )
    return path


def test_a_fact_deep_in_an_answer_or_the_61st_request_is_found(run, empty_vault, tmp_path):
    """Before, the note held each answer's first 300 characters and the first 60 requests: the
    piano mover and the wifi provider were not in it, and recall did not find the conversation."""
    out = json.loads(run("import", "--from", "chatgpt", str(long_export(tmp_path / "c.json")), "--json"))
    [move] = [w for w in out["written"] if "packing" in w["title"].lower()]
    text = (empty_vault / move["path"]).read_text()
    assert "Kestrelworks in Braga" in text and "Lumenara" in text
    assert "## Transcript" in text and "**User:** Question 1 about packing" in text
    for question in ("Which mover in Braga for the piano?", "Who runs the wifi at the new flat?"):
        hits = json.loads(run("recall", question, "-k", "3", "--json"))["results"]
        assert hits and hits[0]["path"] == move["path"], (question, hits)


def test_a_secret_or_private_span_in_a_long_answer_is_not_written(run, empty_vault, tmp_path):
    """The transcript keeps whole answers: a key and a ``<private>`` span in one are not written;
    a span that the per-message cap cuts leaves no open ``<private>`` hiding the rest of the note."""
    key = "sk-ant-api03-" + "Zq7" * 30
    filler = "Here is the plan in detail, step after step, for the whole move. " * 20  # 1,300 characters
    answer = (f"Sure. {filler[:400]}Use the key {key} for the mover's API.\n{filler * 2}\n<private>\nmy bank PIN is "
              f"4471\n{filler}\n</private>\nKestrelworks in Braga.")  # fmt: skip
    out = json.loads(
        run("import", "--from", "chatgpt", str(long_export(tmp_path / "c.json", answer)), "--json")
    )
    [move] = [w for w in out["written"] if "packing" in w["title"].lower()]
    notes = "".join((empty_vault / w["path"]).read_text() for w in out["written"])
    for leaked in ("Zq7Zq7", "4471", "bank PIN", "<private>"):
        assert leaked not in notes, leaked
    assert "[REDACTED:" in notes
    assert "**User:** Question 3 about packing" in (empty_vault / move["path"]).read_text()


def test_a_message_in_the_transcript_keeps_its_lines_and_its_note_keeps_its_sections():
    """A heading in an answer becomes bold (not a section of the note), a long code block keeps
    its first lines and says how many more, a cut inside code closes the fence."""
    from vaultmem.agents.summary import turn_text

    code = "\n".join(f"x{i} = compute({i})" for i in range(200))
    text = turn_text(f"## Steps\n\n\n\nRun this:\n```python\n{code}\n```\nThen Kestrelworks.", code=200)
    assert text.startswith("**Steps**\n\nRun this:\n```python\nx0 = compute(0)")
    assert "more lines)\n```\nThen Kestrelworks." in text and "x199" not in text
    cut = turn_text(f"```\n{code}\n```", width=300, code=5000)
    assert cut.endswith("…\n```") and len(cut) < 320
