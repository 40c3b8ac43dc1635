"""Issue 46, the agent loop's seams in process (the real CLIs: tests/agents_e2e/): one hook run
per event when an agent also runs another's hooks, every session keeps its note, one service
whatever an agent strips from the environment, hook timings."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultmem.cli.app import app

FIXTURES = Path(__file__).parent / "fixtures" / "agents"
SID = "714bfd7c-a8ef-4bde-8bea-ec39ceec45e8"


@pytest.fixture
def hook(demo_copy, fake_embedder, tmp_path, monkeypatch):
    """``hook(name, payload, *args)``: a hook run in process on the demo copy, its stdout."""
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    log = tmp_path / "copilot" / "session-state" / SID / "events.jsonl"
    log.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "copilot" / "transcript.jsonl", log)

    def run(name: str, payload: dict, *args: str) -> str:
        text = json.dumps(payload).replace("TRANSCRIPT", str(log))
        done = CliRunner().invoke(app, ["hook", name, *args, "--vault", str(demo_copy)], input=text)
        assert done.exit_code == 0, done.output
        return done.stdout

    return run


def copilot(name: str) -> dict:
    return json.loads((FIXTURES / "copilot" / name).read_text())


def as_claudes(payload: dict, event: str) -> dict:
    """The same event as Copilot CLI tells it to a hook of ``.claude/settings.local.json``
    (seen in 1.0.102): snake_case, the same instant as an ISO time."""
    at = dt.datetime.fromtimestamp(payload["timestamp"] / 1000, dt.UTC).isoformat(timespec="milliseconds")
    out = {
        "hook_event_name": event,
        "session_id": payload["sessionId"],
        "timestamp": at.replace("+00:00", "Z"),
    }
    for key, value in payload.items():
        if key not in ("sessionId", "timestamp"):
            out[{"transcriptPath": "transcript_path", "stopReason": "stop_reason"}.get(key, key)] = value
    return out


def test_copilot_running_claudes_hooks_too_answers_each_event_once(hook):
    """Before: in a repository set up for Claude Code and Copilot CLI, Copilot ran both sets of
    hooks and each answered: the start block reached the model twice."""
    start = copilot("start.json")
    assert "[MEMORY" in hook("start", start, "--agent", "copilot")
    assert hook("start", as_claudes(start, "SessionStart"), "--agent", "claude").strip() == ""
    prompt = copilot("prompt.json")
    first = hook("prompt", as_claudes(prompt, "UserPromptSubmit"), "--agent", "claude")
    assert "[MEMORY" in first
    assert hook("prompt", prompt, "--agent", "copilot").strip() == ""
    end = copilot("end.json")
    summaries = [json.loads(hook("end", p, "--agent", a, "--json"))["summary"]
                 for p, a in ((end, "copilot"), (as_claudes(end, "SessionEnd"), "claude"))]  # fmt: skip
    assert summaries[0] is not None and summaries[1] is None


def test_a_new_event_of_the_same_session_is_answered(hook):
    """Idempotent per event, not per session: the next prompt (another time) gets its block."""
    prompt = copilot("prompt.json")
    assert "[MEMORY" in hook("prompt", prompt, "--agent", "copilot")
    later = {**prompt, "timestamp": prompt["timestamp"] + 60_000,
             "prompt": "How do we refund a JPY payment without rounding it?"}  # fmt: skip
    assert "[MEMORY" in hook("prompt", later, "--agent", "copilot")


# ---------------------------------------------------------------------- every session keeps its note

HOOKS_DATA = Path(__file__).parent / "data" / "hooks"


def claude_end(session: str) -> dict:
    payload = json.loads((HOOKS_DATA / "session_end.json").read_text())
    return {**payload, "session_id": session, "transcript_path": str(HOOKS_DATA / "coding_session.jsonl")}


def test_two_identical_sessions_leave_two_notes_the_second_linked(hook, demo_copy):
    """Before: a session whose summary read like an earlier one was taken for a duplicate and
    left no note (two identical Claude sessions in a row: one note)."""
    first = json.loads(hook("end", claude_end("5f0c2a9e-aaaa-4a2b-9c3d-abcdef012345"), "--json"))["summary"]
    second = json.loads(hook("end", claude_end("77d1e0b3-bbbb-4a2b-9c3d-abcdef012345"), "--json"))["summary"]
    assert second["duplicate_of"] is None and second["path"] != first["path"], second
    assert second["like"] == first["id"]
    body = (demo_copy / second["path"]).read_text()
    assert "Like an earlier session: [[" in body and Path(first["path"]).stem in body


def test_a_session_written_again_stays_one_note(open_vault, empty_vault):
    """Dedupe by the session's identity: the same source written again (a resumed session, an end
    hook the agent ran twice) rewrites its note with the newer summary."""
    vault = open_vault(empty_vault)
    one = vault.remember("session_summary", "Session 2026-11-20 1405 Fix the refund test", "Fixed the test.",
                         source="codex-019a7c3e-55d1-7a12")  # fmt: skip
    two = vault.remember("session_summary", "Session 2026-11-20 1405 Fix the refund test",
                         "Fixed the test, then the JPY rounding.", source="codex-019a7c3e-55d1-7a12")  # fmt: skip
    assert two["duplicate_of"] == one["id"] and two["path"] == one["path"] and two["updated"]
    assert "JPY rounding" in (vault.root / one["path"]).read_text()
    day = [vault.remember("session_summary", f"Session 2026-11-20 {t} Notes", "Same words.", source="session-2026-11-20")
           for t in ("1405", "1610")]  # fmt: skip
    assert day[0]["path"] != day[1]["path"]  # a day's name is no session: two sleeps, two notes
