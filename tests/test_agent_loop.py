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
