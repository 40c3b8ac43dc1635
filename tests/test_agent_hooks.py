"""The memory loop for every agent with hooks (Gemini CLI, Codex CLI, Cursor, Copilot CLI), end to
end: the real CLI in a subprocess (tests/agent_cli.py: the console entry with the small test
embedder), payloads and transcripts written from each agent's documented schema
(tests/fixtures/agents/<agent>/; sources in docs/agents.md)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vaultmem.agents import adapters, transcript

FIXTURES = Path(__file__).parent / "fixtures" / "agents"
CLI = str(Path(__file__).parent / "agent_cli.py")
AGENTS = ("gemini", "codex", "cursor", "copilot")
WEBHOOK_IDS = {"c3er1spq", "f29d4x5j", "vhsxd4fw"}
# the exact keys of each agent's answers (Codex refuses any other key)
SHAPES = {
    "gemini": {
        "start": ("hookSpecificOutput", "SessionStart"),
        "prompt": ("hookSpecificOutput", "BeforeAgent"),
    },
    "codex": {
        "start": ("hookSpecificOutput", "SessionStart"),
        "prompt": ("hookSpecificOutput", "UserPromptSubmit"),
    },
    "cursor": {"start": ("additional_context", None), "prompt": ("additional_context", None)},
    "copilot": {"start": ("additionalContext", None), "prompt": ("additionalContext", None)},
}


class Agent:
    """One agent's hooks run on a demo vault copy, as the agent would run them."""

    def __init__(self, name: str, vault: Path, tmp: Path, env: dict[str, str]):
        self.name, self.vault, self.env = name, vault, env
        self.transcript = tmp / f"{name}-transcript.jsonl"
        if (
            name == "copilot"
        ):  # only agentStop and preCompact say where it is: the others find it by session id
            env["COPILOT_HOME"] = str(tmp / "copilot-home")
            sid = json.loads((FIXTURES / name / "prompt.json").read_text())["sessionId"]
            self.transcript = tmp / "copilot-home" / "session-state" / sid / "events.jsonl"
            self.transcript.parent.mkdir(parents=True)
        shutil.copy(FIXTURES / name / "transcript.jsonl", self.transcript)

    def run(self, hook: str, fixture: str, *args: str, session: str | None = None, flag: bool = True) -> subprocess.CompletedProcess:  # fmt: skip
        stdin = (FIXTURES / self.name / fixture).read_text().replace("TRANSCRIPT", str(self.transcript))
        if session:
            stdin = json.dumps({**json.loads(stdin), **session_fields(self.name, session)})
        agent = ["--agent", self.name] if flag else []  # without --agent the payload tells
        done = subprocess.run([sys.executable, CLI, "hook", hook, *agent, "--vault", str(self.vault), *args],
                              input=stdin, capture_output=True, text=True, timeout=180, env=self.env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done

    def context(self, hook: str, fixture: str, **kw) -> str:
        """The text a start or prompt hook injected, checking the agent's shape key by key."""
        out = json.loads(self.run(hook, fixture, **kw).stdout)
        key, event = SHAPES[self.name][hook]
        if event:
            assert out == {key: {"hookEventName": event, "additionalContext": out[key]["additionalContext"]}}
            return out[key]["additionalContext"]
        extra = {"continue": True} if self.name == "cursor" and hook == "prompt" else {}
        assert out == {key: out[key], **extra}
        return out[key]


def session_fields(agent: str, session: str) -> dict[str, str]:
    return {"copilot": {"sessionId": session}, "cursor": {"conversation_id": session}}.get(
        agent, {"session_id": session}
    )


def ids(text: str) -> set[str]:
    return {ln[3:].split("]")[0] for ln in text.splitlines() if ln.startswith("- [")}


@pytest.fixture
def env(monkeypatch) -> dict[str, str]:
    import os

    for var in ("CURSOR_VERSION", "GEMINI_SESSION_ID", "GEMINI_PROJECT_DIR", "CODEX_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(var, raising=False)
    return dict(os.environ)


@pytest.mark.parametrize("name", AGENTS)
def test_the_whole_loop(name, demo_copy, tmp_path, env):
    """Before: `vaultmem hook` read only Claude Code's payloads and answered only in its shape
    (a Cursor or Copilot payload had no session, no prompt, or no transcript it could read)."""
    agent = Agent(name, demo_copy, tmp_path, env)
    start = agent.context("start", "start.json")
    assert (
        re.match(r"\[MEMORY [0-9a-f]{12}\]\n", start) and "# Memory for Project: Tidewater" in start
    )  # anchor from the folder name
    prompt = agent.context("prompt", "prompt.json")
    assert (
        re.match(r"\[MEMORY [0-9a-f]{12}\]\nMemories for this prompt", prompt) and ids(prompt) & WEBHOOK_IDS
    )
    assert not ids(prompt) & ids(start)  # what the start block showed is not injected again
    assert agent.run("prompt", "prompt.json").stdout == ""  # nor what this prompt showed
    assert agent.run("prompt", "prompt_thanks.json").stdout == ""
    # stop: asks once, never while continuing because of a stop hook
    assert agent.run("stop", "stop_active.json").stdout == ""
    asked = json.loads(agent.run("stop", "stop.json").stdout)
    reason = asked.pop("followup_message" if name == "cursor" else "reason")
    assert asked == ({} if name == "cursor" else {"decision": "block"})
    assert "remember" in reason and ("1 file edit(s)" in reason or "2 file edit(s)" in reason)
    assert agent.run("stop", "stop.json").stdout == ""
    # end: returns at once, a detached process writes the summary
    before = set(demo_copy.rglob("*.md"))
    started = time.monotonic()
    assert agent.run("end", "end.json").stdout == ""
    returned = time.monotonic() - started
    note = wait_for_new_note(demo_copy, before)
    assert time.monotonic() - started > returned  # the note came after the hook had returned
    text = note.read_text()
    label = adapters.ADAPTERS[name].label
    assert (
        "type: session_summary" in text
        and f"source: {label}-" in text
        and "[[Project - Tidewater|Project: Tidewater]]" in text
    )
    assert "The refund test for JPY bookings fails" in text and "`app/payments/refunds.py`" in text
    if name != "cursor":  # Cursor's transcript has no tool results
        assert (
            "`pytest -q tests/test_refunds.py` failed: FAILED tests/test_refunds.py::test_jpy_refund" in text
        )
    assert "(shown at start)" in text  # what the hooks showed the session


def wait_for_new_note(vault: Path, before: set[Path], timeout: float = 120) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        new = [p for p in set(vault.rglob("*.md")) - before if "session_summary" in p.read_text()]
        if new:
            return new[0]
        time.sleep(0.2)
    log = vault / ".vaultmem" / "hook-end.log"
    pytest.fail(f"no session summary written; {log.read_text() if log.exists() else 'no log'}")


def test_end_waits_when_asked_and_pre_compact_checkpoints(demo_copy, tmp_path, env):
    agent = Agent("gemini", demo_copy, tmp_path, env)
    out = json.loads(
        agent.run("end", "end.json", "--json").stdout
    )  # --json: in the foreground, what it wrote
    assert "gemini-cli-3f2a9c1b" in (demo_copy / out["summary"]["path"]).read_text()
    assert agent.run("pre-compact", "pre-compact.json").stdout == ""
    [handoff] = [p for p in (demo_copy / "handoffs").glob("*.md") if "gemini-cli-3f2a9c1b" in p.read_text()]
    assert "before compaction (auto): 1 request(s)" in handoff.read_text()


def test_two_agents_on_one_project_keep_their_own_shown_sets(demo_copy, tmp_path, env):
    """Before: a Cursor and a Copilot payload both fell back to the one session "unknown-session",
    so the memories shown to one agent were withheld from the other."""
    cursor = Agent("cursor", demo_copy, tmp_path, env)
    copilot = Agent("copilot", demo_copy, tmp_path, env)
    first = ids(cursor.context("prompt", "prompt.json", flag=False))
    second = ids(copilot.context("prompt", "prompt.json", flag=False))
    assert first and first == second
    same_id = "shared-0000"  # even with one session id, each agent has its own state
    assert ids(cursor.context("prompt", "prompt.json", session=same_id)) == first
    assert ids(copilot.context("prompt", "prompt.json", session=same_id)) == first


@pytest.mark.parametrize("fixture", ["vscode-SessionStart.json", "vscode-UserPromptSubmit.json"])
def test_copilot_snake_case_payloads_from_claude_hooks(fixture, demo_copy, tmp_path, env):
    """Copilot CLI also runs `.claude/settings.json` hooks (installed with --agent claude), with
    its snake_case payloads: they are told apart and answered in Copilot's flat shape."""
    stdin = (FIXTURES / "copilot" / fixture).read_text()
    assert adapters.detect(json.loads(stdin), {}) == "copilot"
    done = subprocess.run([sys.executable, CLI, "hook", "start" if "Start" in fixture else "prompt", "--agent", "claude",
                           "--vault", str(demo_copy)], input=stdin, capture_output=True, text=True, timeout=180, env=env)  # fmt: skip
    out = json.loads(done.stdout)
    assert re.match(r"\[MEMORY [0-9a-f]{12}\]", out["additionalContext"])
    assert out["hookSpecificOutput"]["additionalContext"] == out["additionalContext"]


TRANSCRIPTS = {"gemini": "/home/dev/.gemini/tmp/tidewater/chats/session-2026-11-24T20-06-3f2a9c1b.jsonl",
               "codex": "/home/dev/.codex/sessions/2026/11/24/rollout-2026-11-24T20-06-11-019a7c3e.jsonl",
               "cursor": "/home/dev/.cursor/projects/home-dev-tidewater/agent-transcripts/b6f1/b6f1.jsonl",
               "copilot": "/home/dev/.copilot/session-state/714bfd7c-a8ef-4bde-8bea-ec39ceec45e8/events.jsonl",
               "claude": "/home/dev/.claude/projects/-home-dev-tidewater/5f0c2a9e.jsonl"}  # fmt: skip


@pytest.mark.parametrize("name", AGENTS + ("claude",))
def test_payloads_tell_their_agent(name):
    folder = FIXTURES / name if name != "claude" else Path(__file__).parent / "data" / "hooks"
    for path in sorted(folder.glob("*.json")):
        raw = json.loads(path.read_text().replace("TRANSCRIPT", TRANSCRIPTS[name]))
        assert adapters.detect(raw, {}) == name, path.name
    assert adapters.detect({"session_id": "x"}, {"CURSOR_VERSION": "3.20.17"}) == "cursor"


def test_unknown_agent_is_one_line(demo_copy, env):
    done = subprocess.run([sys.executable, CLI, "hook", "prompt", "--agent", "vim", "--vault", str(demo_copy)],
                          input="{}", capture_output=True, text=True, timeout=180, env=env)  # fmt: skip
    assert (
        done.returncode == 1
        and done.stderr.strip().startswith("vaultmem: unknown agent 'vim'")
        and done.stdout == ""
    )


def test_cursor_never_follows_up_an_aborted_turn():
    cursor = adapters.ADAPTERS["cursor"]
    assert cursor.payload({"loop_count": 0, "status": "completed"}, {})["stop_hook_active"] is False
    assert cursor.payload({"loop_count": 0, "status": "aborted"}, {})["stop_hook_active"] is True
    assert cursor.payload({"loop_count": 1, "status": "completed"}, {})["stop_hook_active"] is True


def test_hostile_payload_fields_are_ignored():
    raw = {
        "sessionId": {"x": 1},
        "transcriptPath": ["/etc/passwd"],
        "cwd": 7,
        "prompt": None,
        "source": "new",
    }
    payload = adapters.ADAPTERS["copilot"].payload(raw, {})
    assert payload["session_id"] is None and payload["transcript_path"] is None and payload["cwd"] == "7"
    assert payload["source"] == "startup" and payload["prompt"] is None
    assert (
        adapters.ADAPTERS["copilot"].payload({"sessionId": "../../etc"}, {"HOME": "/h"})["transcript_path"]
        is None
    )


# ---------------------------------------------------------------------- the transcripts


@pytest.mark.parametrize("name", AGENTS)
def test_transcripts_read_like_claude_codes(name):
    events = transcript.read_events(FIXTURES / name / "transcript.jsonl", fmt=name)
    s = transcript.summarise(events, "/home/dev/tidewater")
    assert s.requests == ["The refund test for JPY bookings fails, can you fix it?"]
    assert "app/payments/refunds.py" in s.files and s.commands >= 1
    assert transcript.unsaved_work(events)
    if name == "cursor":
        assert s.failures == []  # no tool results in Cursor's transcripts
    else:
        [fail] = s.failures
        assert fail["command"] == "pytest -q tests/test_refunds.py" and "AssertionError" in fail["error"]
        assert fail["fixed"] is (name == "codex")  # only the Codex sample runs the tests again


@pytest.mark.parametrize("name", AGENTS)
def test_memories_the_agent_recalled_itself_are_found(name):
    path = FIXTURES / name / "recall_session.jsonl"
    full = transcript.shown_by_tools(transcript.read_events(path, fmt=name))
    assert transcript.shown_in_transcript(path, 1 << 20, name) == full  # the fast scan agrees
    assert full == (set() if name == "cursor" else WEBHOOK_IDS)  # Cursor logs no tool results
    saves = [e for e in transcript.read_events(path, fmt=name) if transcript.memory_action(e) == "recall"]
    assert saves  # the agent's own spelling of the vaultmem tools is understood


def test_gemini_records_are_rewritten_and_rewound(tmp_path):
    lines = [{"id": "u1", "type": "user", "content": [{"text": "first request"}]},
             {"id": "g1", "type": "gemini", "content": "draft"},
             {"id": "g1", "type": "gemini", "content": "final answer"},
             {"id": "u2", "type": "user", "content": "second request"},
             {"id": "g2", "type": "gemini", "content": "gone"},
             {"$rewindTo": "u2"},
             {"id": "u3", "type": "user", "content": [{"text": "<hook_context>[MEMORY]</hook_context>"}, {"text": "third"}]}]  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"truncated": ')
    events = transcript.read_events(path, fmt="gemini")
    assert [(e.kind, e.text) for e in events] == [
        ("prompt", "first request"),
        ("text", "final answer"),
        ("prompt", "third"),
    ]
    old = tmp_path / "session-old.json"  # before Gemini CLI 0.39: one JSON object
    old.write_text(json.dumps({"sessionId": "s", "messages": lines[:3]}, indent=2))
    assert [e.text for e in transcript.read_events(old, fmt="gemini")] == [
        "first request",
        "draft",
        "final answer",
    ]


def test_transcripts_are_read_from_regular_files_only(tmp_path):
    import os

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    for fmt in ("claude", *AGENTS):
        assert transcript.read_events(fifo, fmt=fmt) == [] and transcript.read_events(tmp_path, fmt=fmt) == []
    assert time.monotonic() - started < 5


def test_a_detached_end_still_refuses_a_missing_vault_at_once(env, tmp_path):
    stdin = (FIXTURES / "codex" / "end.json").read_text()
    done = subprocess.run([sys.executable, CLI, "hook", "end", "--agent", "codex", "--vault", str(tmp_path / "nowhere")],
                          input=stdin, capture_output=True, text=True, timeout=180, env=env)  # fmt: skip
    assert (
        done.returncode == 1
        and done.stderr.startswith("vaultmem: no vault named or at")
        and done.stdout == ""
    )


def test_a_detached_end_logs_its_errors(demo_copy, tmp_path, env):
    (demo_copy / ".vaultmem").mkdir(exist_ok=True)
    (demo_copy / ".vaultmem.toml").write_text(
        "not = [valid toml\n"
    )  # the detached process cannot open the vault
    agent = Agent("cursor", demo_copy, tmp_path, env)
    assert agent.run("end", "end.json").stdout == ""
    log = demo_copy / ".vaultmem" / "hook-end.log"
    deadline = time.monotonic() + 120
    while not (log.exists() and log.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.2)
    [line] = log.read_text().strip().splitlines()
    assert line.startswith("vaultmem: ") and ".vaultmem.toml" in line
