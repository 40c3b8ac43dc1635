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
