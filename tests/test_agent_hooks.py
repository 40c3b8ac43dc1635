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
from helpers import noon_today, wait_for

from vaultmem.agents import adapters, events, summary, transcript

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
@pytest.mark.integration  # the CLI in subprocesses
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
    log = vault / ".vaultmem" / "hook-end.log"
    try:
        return wait_for(lambda: next((p for p in set(vault.rglob("*.md")) - before
                                      if "session_summary" in p.read_text()), None), timeout=timeout)  # fmt: skip
    except AssertionError:
        pytest.fail(f"no session summary written; {log.read_text() if log.exists() else 'no log'}")


@pytest.mark.integration  # the CLI in subprocesses
def test_end_waits_when_asked_and_pre_compact_checkpoints(demo_copy, tmp_path, env):
    agent = Agent("gemini", demo_copy, tmp_path, env)
    out = json.loads(
        agent.run("end", "end.json", "--json").stdout
    )  # --json: in the foreground, what it wrote
    assert "gemini-cli-3f2a9c1b" in (demo_copy / out["summary"]["path"]).read_text()
    assert agent.run("pre-compact", "pre-compress_manual.json").stdout == ""  # Gemini: only /compress
    [handoff] = [p for p in (demo_copy / "handoffs").glob("*.md") if "gemini-cli-3f2a9c1b" in p.read_text()]
    assert "before compaction (manual): 1 request(s)" in handoff.read_text()


@pytest.mark.integration  # the CLI in subprocesses
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
@pytest.mark.integration  # the CLI in subprocesses
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


@pytest.mark.integration  # the CLI in subprocesses
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
    read = transcript.read_events(FIXTURES / name / "transcript.jsonl", fmt=name)
    s = summary.summarise(read, "/home/dev/tidewater")
    assert s.requests == ["The refund test for JPY bookings fails, can you fix it?"]
    assert "app/payments/refunds.py" in s.files and s.commands >= 1
    assert events.unsaved_work(read)
    if name == "cursor":
        assert s.failures == []  # no tool results in Cursor's transcripts
    else:
        [fail] = s.failures
        assert fail["command"] == "pytest -q tests/test_refunds.py" and "AssertionError" in fail["error"]
        assert fail["fixed"] is (name == "codex")  # only the Codex sample runs the tests again


@pytest.mark.parametrize("name", AGENTS)
def test_memories_the_agent_recalled_itself_are_found(name):
    path = FIXTURES / name / "recall_session.jsonl"
    full = events.shown_by_tools(transcript.read_events(path, fmt=name))
    assert transcript.shown_in_transcript(path, 1 << 20, name) == full  # the fast scan agrees
    assert full == (set() if name == "cursor" else WEBHOOK_IDS)  # Cursor logs no tool results
    saves = [e for e in transcript.read_events(path, fmt=name) if events.memory_action(e) == "recall"]
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


@pytest.mark.integration  # the CLI in subprocesses
def test_a_detached_end_still_refuses_a_missing_vault_at_once(env, tmp_path):
    stdin = (FIXTURES / "codex" / "end.json").read_text()
    done = subprocess.run([sys.executable, CLI, "hook", "end", "--agent", "codex", "--vault", str(tmp_path / "nowhere")],
                          input=stdin, capture_output=True, text=True, timeout=180, env=env)  # fmt: skip
    assert (
        done.returncode == 1
        and done.stderr.startswith("vaultmem: no vault named or at")
        and done.stdout == ""
    )


@pytest.mark.integration  # the CLI in subprocesses
def test_a_detached_end_logs_its_errors(demo_copy, tmp_path, env):
    (demo_copy / ".vaultmem").mkdir(exist_ok=True)
    (demo_copy / ".vaultmem.toml").write_text(
        "not = [valid toml\n"
    )  # the detached process cannot open the vault
    agent = Agent("cursor", demo_copy, tmp_path, env)
    assert agent.run("end", "end.json").stdout == ""
    log = demo_copy / ".vaultmem" / "hook-end.log"
    wait_for(
        lambda: log.exists() and log.read_text().strip(), timeout=120, what="the detached hook's log line"
    )
    [line] = log.read_text().strip().splitlines()
    assert line.startswith("vaultmem: ") and ".vaultmem.toml" in line


# ---------------------------------------------------------------------- issue 35, "Required 2"


@pytest.mark.integration  # the CLI in subprocesses
def test_gemini_precompress_before_each_model_call_checkpoints_nothing(demo_copy, tmp_path, env):
    """Before: Gemini's PreCompress (fired, trigger auto, before every model call) wrote a
    "before compaction (auto)" checkpoint each time though nothing was compacted."""
    agent = Agent("gemini", demo_copy, tmp_path, env)
    assert agent.run("pre-compact", "pre-compress_auto.json").stdout == ""
    mine = lambda: [
        p for p in (demo_copy / "handoffs").glob("*.md") if "gemini-cli-3f2a9c1b" in p.read_text()
    ]
    assert mine() == []
    assert agent.run("pre-compact", "pre-compress_manual.json").stdout == ""  # /compress: a real compaction
    [handoff] = mine()
    assert "before compaction (manual): 1 request(s)" in handoff.read_text()


@pytest.mark.integration  # the CLI in subprocesses
def test_headless_gemini_prompt_recalls_on_the_question(demo_copy, tmp_path, env):
    """Before: `gemini -p` prepends the SessionStart context (7,500 characters here) to the
    user's words; the 4,000-character cut kept only the memory block, so recall searched it."""
    agent = Agent("gemini", demo_copy, tmp_path, env)
    headless = ids(agent.context("prompt", "prompt_headless.json"))
    typed = ids(agent.context("prompt", "prompt.json", session="another-session"))
    assert headless == typed and "f29d4x5j" in headless  # the same memories as for the question alone


def gemini_user(text: str, n: int) -> str:
    return json.dumps({"id": f"u-{n}", "timestamp": f"2026-11-24T20:5{n}:00.000Z", "type": "user",
                       "content": [{"text": text}]}) + "\n"  # fmt: skip


def copilot_user(text: str, n: int) -> str:
    return json.dumps({"type": "user.message", "data": {"content": text, "attachments": []}, "id": f"u{n}",
                       "timestamp": f"2026-11-24T20:5{n}:00.000Z", "parentId": None}) + "\n"  # fmt: skip


@pytest.mark.parametrize("name", ["gemini", "copilot"])
@pytest.mark.integration  # the CLI in subprocesses
def test_the_stop_reminder_sent_back_is_no_request(name, demo_copy, tmp_path, env):
    """Before: after `hook stop` blocked, Gemini and Copilot send its reason back as a user
    message: the prompt hook recalled on it and the summary listed it as a request (a headless
    Gemini session's note was titled "Before you finish")."""
    agent = Agent(name, demo_copy, tmp_path, env)
    reason = json.loads(agent.run("stop", "stop.json").stdout)["reason"]
    fixture = tmp_path / "reminder.json"
    payload = json.loads((FIXTURES / name / "prompt.json").read_text())
    fixture.write_text(json.dumps({**payload, "prompt": reason}))
    shutil.copy(fixture, FIXTURES / name / "_reminder.json")
    try:
        assert agent.run("prompt", "_reminder.json").stdout == ""
    finally:
        (FIXTURES / name / "_reminder.json").unlink()
    with agent.transcript.open("a") as f:
        f.write((gemini_user if name == "gemini" else copilot_user)(reason, 8))
    out = json.loads(agent.run("end", "end.json", "--json").stdout)
    text = (demo_copy / out["summary"]["path"]).read_text()
    assert "Before you finish" not in text and "JPY bookings" in text


def test_gemini_transcript_keeps_the_request_behind_hook_context(tmp_path):
    """Before: a user record starting with `<hook_context>` was dropped whole, so a headless
    Gemini session's real request never reached its summary."""
    chat = tmp_path / "chat.jsonl"
    block = (
        "<hook_context>[MEMORY 0123456789ab]\n- [zz000000] Marina slip sizes\n[/MEMORY]</hook_context>\n\n"
    )
    chat.write_text(gemini_user(block + "Make the checkout webhook idempotent", 1) + gemini_user(block, 2))
    s = summary.summarise(transcript.read_events(chat, fmt="gemini"))
    assert s.requests == ["Make the checkout webhook idempotent"]


UUID7_A = "019a7c3e-55d1-7a12-9c4e-2b1f6e8d0a93"
UUID7_B = "019a7c3e-6a09-7b44-8f10-3c2d1e0f9a71"  # started 5 s later: the same first 8 hex digits


@pytest.mark.integration  # the CLI in subprocesses
def test_codex_sessions_started_seconds_apart_stay_apart(demo_copy, tmp_path, env):
    """Before: `codex-<first 8 hex>` of a UUIDv7 changes every ~65 s: two sessions 5 s apart
    shared one source (one handoff, one session anchor)."""
    agent = Agent("codex", demo_copy, tmp_path, env)
    first = json.loads(agent.run("end", "end.json", "--json", session=UUID7_A).stdout)
    rollout = agent.transcript.read_text().replace(UUID7_A, UUID7_B)
    agent.transcript.write_text(
        rollout.replace("The refund test for JPY bookings fails", "The KRW payout rounds wrong")
    )
    second = json.loads(agent.run("end", "end.json", "--json", session=UUID7_B).stdout)
    texts = [(demo_copy / out["summary"]["path"]).read_text() for out in (first, second)]
    assert first["summary"]["path"] != second["summary"]["path"]
    assert f"source: codex-{UUID7_A}" in texts[0] and f"source: codex-{UUID7_B}" in texts[1]


@pytest.mark.integration  # the CLI in subprocesses
def test_codex_import_after_hook_capture_says_already_imported(demo_copy, tmp_path, env):
    """Before: `hook end` named a Codex session `codex-<8 hex>` and `import --from codex`
    `codex-<whole id>`, so importing after the hook captured it wrote every session twice."""
    import os

    agent = Agent("codex", demo_copy, tmp_path, env)
    agent.run("end", "end.json", "--json", session=UUID7_A)
    old = time.time() - 3600
    os.utime(agent.transcript, (old, old))  # not "still being written"
    done = subprocess.run([sys.executable, CLI, "import", "--from", "codex", str(agent.transcript), "--vault",
                           str(demo_copy), "--json"], capture_output=True, text=True, timeout=180, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["written"] == [] and out["already_imported"] == [f"codex-{UUID7_A}"]


def test_one_source_rule_per_agent():
    """Hooks and importers name a session with the same rule."""
    from vaultmem.agents import hooks
    from vaultmem.agents.importers import base as importers
    from vaultmem.agents.transcripts.history import Transcript

    for adapter in adapters.ADAPTERS.values():
        payload = adapter.payload({"session_id": UUID7_A, "sessionId": UUID7_A, "conversation_id": UUID7_A})
        assert hooks.source_name(payload) == importers.source_of(Transcript(adapter.label, UUID7_A, "x"))
    assert hooks.STOP_REASON.endswith(events.REMINDER_MARK)


# ---------------------------------------------------------------------- issue 35, "Required 3"


def cli(
    *args: str, env: dict[str, str], cwd: Path | None = None, stdin: str = ""
) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, CLI, *args], input=stdin, capture_output=True, text=True, timeout=180,
                          env=env, cwd=cwd)  # fmt: skip


@pytest.mark.integration  # the CLI in subprocesses
def test_status_names_a_killed_and_a_never_run_hook(demo_copy, tmp_path, env):
    """Before: nothing recorded whether an agent's hooks ran; a killed SessionEnd (Claude Code's
    1.5 s) or an untrusted Codex folder (no hook runs at all) went unnoticed for months."""
    project = tmp_path / "tidewater"
    project.mkdir()
    for agent in ("claude", "codex"):
        assert cli("setup", agent, "--vault", str(demo_copy), "--write", env=env, cwd=project).returncode == 0
    start = json.dumps({"session_id": "5f0c2a9e-1", "cwd": str(project), "hook_event_name": "SessionStart",
                        "source": "startup"})  # fmt: skip
    assert (
        cli("hook", "start", "--agent", "claude", "--vault", str(demo_copy), stdin=start, env=env).returncode
        == 0
    )
    # a SessionEnd the agent kills: the hook has started (and waits for its payload) when it is killed
    log = Path(env["XDG_STATE_HOME"]) / "vaultmem" / "hook-runs.jsonl"
    proc = subprocess.Popen([sys.executable, CLI, "hook", "end", "--agent", "claude", "--vault", str(demo_copy)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    wait_for(lambda: '"hook": "end"' in (log.read_text() if log.exists() else ""), timeout=120,
             what="the hook's start logged")  # fmt: skip
    proc.kill()
    proc.wait()
    status = cli("status", "--vault", str(demo_copy), env=env, cwd=project)
    assert status.returncode == 0, status.stderr
    out = status.stdout
    assert re.search(
        r"hooks of claude: last ran (just now|\d+ minutes? ago) \(2 runs\); the agent waited p50", out
    )
    assert re.search(
        r"SessionEnd hook of claude was killed 1 time since today: its timeout is 30\.0 s\n", out
    )
    assert "hooks of codex: set up (" in out and "but never ran: Codex runs no hook until you trust it" in out
    assert "/hooks" in out
    doctor = cli("doctor", "--vault", str(demo_copy), "--json", env=env, cwd=project)
    checks = {f["check"] for f in json.loads(doctor.stdout)["findings"]}
    assert {"hook_killed", "hook_never_ran"} <= checks


def test_a_session_end_set_up_without_a_timeout_is_named_with_its_1_5_s(empty_vault, tmp_path, monkeypatch):
    """A SessionEnd hook written by an older `setup` (no `timeout`) and killed four times: status
    says which hook, how often, since when, and Claude Code's 1.5 s."""
    from vaultmem.agents import hook_io, hook_runs

    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    command = f"/opt/venv/bin/vaultmem hook end --agent claude --vault {empty_vault}"
    hooks = {"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": command}]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(hooks))
    monkeypatch.chdir(project)
    noon = noon_today()  # 15 minutes later is still today, whenever the test runs
    with monkeypatch.context() as mp:
        mp.setattr("time.time", lambda: noon)
        for _ in range(4):
            hook_io.HookRun("end", "claude", str(empty_vault))  # started, never ended
    [head, killed] = hook_runs.lines(empty_vault, now=noon + hook_runs.KILLED_AFTER + 1)
    assert re.match(r"hooks of claude: last ran \d+ minutes ago \(4 runs\)$", head)
    assert killed == ("  SessionEnd hook of claude was killed 4 times since today: its timeout is 1.5 s "
                      "(`vaultmem setup claude --write` declares 30.0 s)")  # fmt: skip


# ---------------------------------------------------------------------- the real Gemini CLI's payloads

REAL = FIXTURES / "real" / "gemini"  # recorded from Gemini CLI 0.61.0 by benchmarks/agents_e2e.py --record


def real(name: str, root: Path) -> str:
    """A recorded payload, its scrubbed paths under ``root``, its chat recording put where it says."""
    text = (REAL / name).read_text().replace("/tmp/e2e", str(root))
    log = Path(json.loads(text)["transcript_path"])
    log.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REAL / "transcript.jsonl", log)
    return text


@pytest.mark.integration  # the CLI in subprocesses
def test_the_real_gemini_session_end_to_end(demo_copy, tmp_path, env):
    """Gemini CLI 0.61.0 headless: its PreCompress before a model call (trigger auto) checkpoints
    nothing; its BeforeAgent prompt (the SessionStart context, then the question) recalls on the
    question; the Stop reminder it sends back is no prompt; its chat recording's summary keeps
    the question and not the reminder."""
    hook = lambda name, payload, *a: cli("hook", name, "--agent", "gemini", "--vault", str(demo_copy), *a,
                                        stdin=real(payload, tmp_path), env=env)  # fmt: skip
    assert hook("pre-compact", "PreCompress.json").stdout == ""
    assert not [p for p in (demo_copy / "handoffs").glob("*.md") if "gemini-cli-22d40251" in p.read_text()]
    headless = json.loads(hook("prompt", "BeforeAgent.json").stdout)["hookSpecificOutput"][
        "additionalContext"
    ]
    assert "f29d4x5j" in ids(headless)  # the idempotent webhook handler, not the start block's notes
    assert hook("prompt", "BeforeAgent-2.json").stdout == ""  # the reminder sent back
    s = summary.summarise(transcript.read_events(REAL / "transcript.jsonl", fmt="gemini"))
    assert s.requests == ["How does our Stripe webhook handler avoid processing the same event twice?"]
