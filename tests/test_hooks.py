"""Agent hooks end to end through the CLI, with recorded Claude Code hook payloads and
transcripts written for the tests in Claude Code's JSONL shape (tests/data/hooks/)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultmem.agents import events, hooks, summary, transcript
from vaultmem.cli.app import app
from vaultmem.core import fence

DATA = Path(__file__).parent / "data" / "hooks"
SESSION = "5f0c2a9e-1111-4a2b-9c3d-abcdef012345"


@pytest.fixture
def run(demo_copy, fake_embedder, monkeypatch):
    """Run `vaultmem` on the demo copy with the small test embedder; payload files go on stdin
    with TRANSCRIPT replaced by a transcript fixture."""
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)

    def _run(*args: str, payload: str | None = None, transcript: str = "coding_session.jsonl", vault: Path = demo_copy,
             session: str | None = None):  # fmt: skip
        stdin = None
        if payload is not None:
            stdin = (DATA / payload).read_text().replace("TRANSCRIPT", str(DATA / transcript))
            if session:  # whatever session the payload file names
                data = json.loads(stdin)
                stdin = (
                    json.dumps({**data, "session_id": session})
                    if "session_id" in data
                    else stdin.replace(SESSION, session)
                )
        return CliRunner().invoke(app, [*args, "--vault", str(vault)], input=stdin)

    return _run


def ok(result) -> str:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def context_of(out: str, event: str) -> str:
    data = json.loads(out)
    assert data["hookSpecificOutput"]["hookEventName"] == event
    return data["hookSpecificOutput"]["additionalContext"]


# ---------------------------------------------------------------------- the transcript


def test_transcript_reader_skips_broken_and_unknown_lines():
    events = transcript.read_events(DATA / "coding_session.jsonl")
    prompts = [e.text for e in events if e.kind == "prompt"]
    assert len(prompts) == 2 and prompts[0].startswith("The refund test")  # no /cost echo, no isMeta line
    assert [e.tool for e in events if e.kind == "tool"] == ["Bash", "Read", "Edit", "Write", "Bash", "Bash"]
    assert transcript.read_events("/nonexistent/x.jsonl") == []


def test_transcript_reader_bounds_hostile_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    good = json.dumps({"type": "user", "message": {"role": "user", "content": "fix the bug"}})
    huge = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * (events.MAX_LINE + 10)}})
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text("\n".join([huge, deep, "\x00\x01 control", good]) + "\n")
    assert [e.text for e in transcript.read_events(path)] == ["fix the bug"]


def test_summary_names_the_fix_and_the_rules():
    s = summary.summarise(transcript.read_events(DATA / "coding_session.jsonl"), "/home/dev/tidewater")
    assert s.files == ["app/payments/refunds.py", "app/payments/currency.py"]
    [fail] = s.failures
    assert fail["command"] == "pytest tests/test_refunds.py -q" and fail["fixed"]
    assert fail["fixed_by"] == ["app/payments/refunds.py", "app/payments/currency.py"]
    assert "AssertionError" in fail["error"]
    assert s.rules == [("lesson", "Remember that JPY amounts have no minor unit."),
                       ("preference", "Always run ruff before committing."),
                       ("preference", "I prefer small commits with one change each.")]  # fmt: skip


@pytest.mark.parametrize("text, expected", [
    ("never force-push to main.", [("preference", "never force-push to main.")]),
    ("Please always use UTC in logs. Should we always use UTC?", [("preference", "Please always use UTC in logs.")]),
    ("From now on, write tests first.", [("preference", "From now on, write tests first.")]),
    ("Keep in mind that staging has no Redis.", [("lesson", "Keep in mind that staging has no Redis.")]),
    ("It always fails on CI. Can you look?", []),
    ("thanks!", []),
])  # fmt: skip
def test_rule_sentences(text, expected):
    assert summary.rule_sentences(text) == expected


# ---------------------------------------------------------------------- prompt


def test_prompt_about_webhooks_injects_the_right_memory_and_thanks_nothing(run):
    text = context_of(ok(run("hook", "prompt", payload="prompt_webhooks.json")), "UserPromptSubmit")
    nonce = re.match(r"\[MEMORY ([0-9a-f]{12})\]\n", text).group(1)
    assert text.endswith(f"[/MEMORY {nonce}]") and fence.NOTICE in text
    assert "Stripe webhooks can arrive twice or out of order" in text or "Idempotent webhook handler" in text
    lines = text.splitlines()[3:-1]
    assert lines and all(ln.startswith("- [") for ln in lines)  # an id on every line
    assert hooks.estimate_tokens(text) <= 400
    assert ok(run("hook", "prompt", payload="prompt_thanks.json")) == ""
    # the same prompt again in the same session: what was shown is not repeated
    again = ok(run("hook", "prompt", payload="prompt_webhooks.json"))
    assert not (
        ids_in(again)
        & ids_in(json.dumps({"hookSpecificOutput": {"hookEventName": "x", "additionalContext": text}}))
    )


def ids_in(out: str) -> set[str]:
    if not out:
        return set()
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return {ln[3:].split("]")[0] for ln in text.splitlines() if ln.startswith("- [")}


def test_prompt_budget_bounds_the_block(run):
    text = context_of(
        ok(run("hook", "prompt", "--budget", "90", payload="prompt_webhooks.json")), "UserPromptSubmit"
    )
    assert hooks.estimate_tokens(text) <= 90 and text.count("\n- [") == 1  # the fence and its notice take ~52


def test_memory_shown_at_start_is_not_injected_again(run):
    alone = ids_in(ok(run("hook", "prompt", payload="prompt_webhooks.json", session="other-session")))
    out = ok(run("hook", "start", payload="session_start.json"))
    start = context_of(out, "SessionStart")
    assert (
        start.startswith("[MEMORY ") and "# Memory for Project: Tidewater" in start
    )  # anchor from the folder name
    shown_at_start = ids_in(out)
    assert alone & shown_at_start  # without the start block, the prompt would have shown some of them
    after_start = ids_in(ok(run("hook", "prompt", payload="prompt_webhooks.json")))
    assert not after_start & shown_at_start


def test_memories_the_agent_recalled_itself_are_not_injected(run):
    assert events.shown_by_tools(transcript.read_events(DATA / "mcp_recall_session.jsonl")) == {
        "c3er1spq",
        "f29d4x5j",
        "vhsxd4fw",
    }
    for name in (
        "mcp_recall_session.jsonl",
        "coding_session.jsonl",
        "saved_session.jsonl",
    ):  # the fast scan agrees
        path = DATA / name
        assert transcript.shown_in_transcript(path, 1 << 20) == events.shown_by_tools(
            transcript.read_events(path)
        )
    fresh = ids_in(ok(run("hook", "prompt", payload="prompt_webhooks.json", session="s-a")))
    assert fresh & {"c3er1spq", "f29d4x5j", "vhsxd4fw"}  # what this prompt brings without the tool calls
    after = ids_in(
        ok(
            run(
                "hook",
                "prompt",
                payload="prompt_webhooks.json",
                session="s-b",
                transcript="mcp_recall_session.jsonl",
            )
        )
    )
    assert not after & {"c3er1spq", "f29d4x5j", "vhsxd4fw"}


def test_prompt_goes_through_a_running_watcher(run, demo_copy, fake_embedder, monkeypatch):
    from helpers import Running

    r = Running(demo_copy, fake_embedder, serve=True)
    try:
        monkeypatch.setattr(
            "vaultmem.vault.Vault.__init__", lambda *a, **k: pytest.fail("recall ran in process")
        )
        text = context_of(ok(run("hook", "prompt", payload="prompt_webhooks.json")), "UserPromptSubmit")
    finally:
        monkeypatch.undo()
        r.stop()
    assert "webhook" in text.lower()


@pytest.mark.parametrize("argv, parsed", [
    ([], {}),
    (["--vault", "/v", "--budget", "300"], {"vault": "/v", "budget": 300}),
    (["--agent", "gemini", "-V", "/v"], {"vault": "/v", "agent": "gemini"}), (["--agent=codex"], {"agent": "codex"}),
    (["-V", "/v"], {"vault": "/v"}),
    (["--vault=/v", "--budget=90"], {"vault": "/v", "budget": 90}),
    (["--help"], None), (["--budget", "many"], None), (["--vault"], None), (["extra"], None),
])  # fmt: skip
def test_fast_entry_parses_only_what_it_knows(argv, parsed):
    from vaultmem.cli.argv import parse
    from vaultmem.cli.main import HOOKS

    assert parse(argv, HOOKS["prompt"], 0) == (None if parsed is None else ([], parsed))


def test_console_script_answers_hook_prompt_through_the_watcher(demo_copy, fake_embedder):
    import shutil
    import subprocess
    import sys

    from helpers import Running

    exe = shutil.which("vaultmem", path=str(Path(sys.executable).parent))
    payload = (
        (DATA / "prompt_webhooks.json").read_text().replace("TRANSCRIPT", str(DATA / "coding_session.jsonl"))
    )
    r = Running(demo_copy, fake_embedder, serve=True)
    try:
        done = subprocess.run([exe, "hook", "prompt", "--vault", str(demo_copy)], input=payload, text=True,
                              capture_output=True, timeout=120)  # fmt: skip
    finally:
        r.stop()
    assert done.returncode == 0, done.stderr
    assert "webhook" in context_of(done.stdout, "UserPromptSubmit").lower()
    helped = subprocess.run([exe, "hook", "prompt", "--help"], capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "UserPromptSubmit" in helped.stdout
    bad = subprocess.run([exe, "hook", "prompt", "--vault", "/nonexistent/vault"], input="{}", capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert bad.returncode == 1 and bad.stderr.startswith("vaultmem: ") and bad.stdout == ""


def test_bad_payload_is_one_line_and_never_exit_2(run):
    result = CliRunner().invoke(app, ["hook", "prompt", "--vault", "/nonexistent/vault"], input="{}")
    assert result.exit_code == 1 and result.stderr.startswith("vaultmem: ")
    result = run("hook", "prompt", payload="stop.json")  # no prompt field: nothing to do
    assert ok(result) == ""
    bad = CliRunner().invoke(app, ["hook", "stop"], input="not json")
    assert bad.exit_code == 1 and "not JSON" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------- stop


def test_stop_blocks_once_and_only_once(run):
    assert ok(run("hook", "stop", payload="stop_active.json")) == ""  # never a loop
    first = json.loads(ok(run("hook", "stop", payload="stop.json")))
    assert first["decision"] == "block"
    assert "remember" in first["reason"] and "sleep" in first["reason"] and "gotcha" in first["reason"]
    assert "2 file edit(s)" in first["reason"]
    assert ok(run("hook", "stop", payload="stop.json")) == ""


@pytest.mark.parametrize("fixture", ["saved_session.jsonl", "chat_only.jsonl"])
def test_stop_stays_quiet_when_saved_or_no_work(run, fixture):
    assert ok(run("hook", "stop", payload="stop.json", transcript=fixture)) == ""


# ---------------------------------------------------------------------- end, candidates, confirm


def test_end_writes_a_real_summary_and_candidates(run, demo_copy):
    out = json.loads(ok(run("hook", "end", "--json", payload="session_end.json")))
    note = (demo_copy / out["summary"]["path"]).read_text()
    assert "type: session_summary" in note and "source: claude-code-5f0c2a9e" in note
    assert "The refund test for JPY bookings fails" in note
    assert "`app/payments/refunds.py`" in note and "`app/payments/currency.py`" in note
    assert "`pytest tests/test_refunds.py -q` failed: FAILED tests/test_refunds.py::test_jpy_refund" in note
    assert "passed after editing `app/payments/refunds.py`, `app/payments/currency.py`" in note
    assert "[[Project - Tidewater|Project: Tidewater]]" in note
    cands = {c["title"]: c for c in out["candidates"]}
    assert set(cands) == {"JPY amounts have no minor unit", "Always run ruff before committing",
                          "Small commits with one change each",
                          "test_jpy_refund failed with AssertionError, fixed by editing refunds.py, currency.py"}  # fmt: skip
    assert (
        cands["test_jpy_refund failed with AssertionError, fixed by editing refunds.py, currency.py"]["type"]
        == "bug_fix"
    )
    ruff = demo_copy / cands["Always run ruff before committing"]["path"]
    text = ruff.read_text()
    assert "status: candidate" in text and "type: preference" in text and "scope: user" in text
    # wake lists them for confirmation
    start = context_of(ok(run("hook", "start", payload="session_start.json")), "SessionStart")
    assert "## Candidates to Confirm" in start and "vaultmem confirm" in start
    rid = cands["Always run ruff before committing"]["id"]
    assert f"[{rid}]" in start
    # recall ranks a candidate low until confirmed
    hits = json.loads(ok(run("recall", "run ruff before committing", "--json", "--explain")))["results"]
    before = next(h for h in hits if h["id"] == rid)
    assert before["status"] == "candidate"
    assert ok(run("confirm", rid)).startswith(f"confirmed {rid}")
    assert "status: active" in ruff.read_text()
    hits = json.loads(ok(run("recall", "run ruff before committing", "--json", "--explain")))["results"]
    after = next(h for h in hits if h["id"] == rid)
    assert after["explain"]["profile"] == pytest.approx(before["explain"]["profile"] * 2)
    again = run("confirm", rid)
    assert again.exit_code == 2 and "not a candidate" in again.stderr


def test_end_of_a_chat_without_requests_writes_nothing(run, demo_copy, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("garbage\n{}\n")
    before = sorted(p.name for p in demo_copy.rglob("*.md"))
    ok(run("hook", "end", payload="session_end.json", transcript=str(empty)))
    assert sorted(p.name for p in demo_copy.rglob("*.md")) == before


def test_pre_compact_checkpoints_the_session(run, demo_copy):
    assert ok(run("hook", "pre-compact", payload="pre_compact.json")) == ""
    [handoff] = [p for p in (demo_copy / "handoffs").glob("*.md") if "claude-code-5f0c2a9e" in p.read_text()]
    text = handoff.read_text()
    assert "before compaction (auto): 2 request(s)" in text and "app/payments/refunds.py" in text


def test_session_state_expires_old_sessions(tmp_path):
    (tmp_path / ".vaultmem").mkdir()
    with hooks.SessionState(tmp_path, now=1000.0) as st:
        st.mark_shown("old", ["a", "b"], "prompt")
        st.set_stop_asked("old")
    with hooks.SessionState(tmp_path, now=1000.0 + hooks.KEEP_DAYS * 86400 - 1) as st:
        assert st.shown("old") == {"a", "b"} and st.stop_asked("old")
    with hooks.SessionState(tmp_path, now=1000.0 + hooks.KEEP_DAYS * 86400 + 1) as st:
        assert st.shown("old") == set() and not st.stop_asked("old")


# ---------------------------------------------------------------------- setup claude --write


def test_setup_claude_write_merges_hooks_idempotently(empty_vault, tmp_path, monkeypatch):
    """The hooks go to Claude Code's personal `.claude/settings.local.json`; an older set-up's
    vaultmem hook in the committed `.claude/settings.json` is taken out, the user's stay."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shared = tmp_path / ".claude" / "settings.json"
    settings = tmp_path / ".claude" / "settings.local.json"
    shared.parent.mkdir()
    user_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
    mixed = {"hooks": [{"type": "command", "command": "echo hello"},
                       {"type": "command", "command": f"vaultmem wake --vault {empty_vault}"}]}  # fmt: skip
    original = {"model": "opus", "hooks": {"PreToolUse": [user_hook], "SessionStart": [mixed]}}
    shared.write_text(json.dumps(original))
    runner = CliRunner()
    out = ok(runner.invoke(app, ["setup", "claude", "--vault", str(empty_vault), "--write"]))
    assert f"merged the vaultmem hooks into {settings}" in out
    kept = json.loads(shared.read_text())
    assert kept == {"model": "opus", "hooks": {"PreToolUse": [user_hook], "SessionStart": [
        {"hooks": [{"type": "command", "command": "echo hello"}]}]}}  # fmt: skip  # the user's hook stays, bare wake goes
    data = json.loads(settings.read_text())
    start = data["hooks"]["SessionStart"]
    exe = Path(sys.executable).with_name("vaultmem")  # the absolute path: the agent's PATH may not have it
    assert (
        start[0]["hooks"][0]["command"] == f"{exe} hook start --agent claude --vault {empty_vault.resolve()}"
    )
    assert set(data["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}
    after = settings.read_text()
    out = ok(runner.invoke(app, ["setup", "claude", "--vault", str(empty_vault), "--write"]))
    assert "already has these vaultmem hooks" in out and settings.read_text() == after
    assert not list(shared.parent.glob("*.bak-*"))  # backups live in vaultmem's state folder


# ---------------------------------------------------------------------- issue 29: session capture


def _summary(demo_copy, out) -> str:
    return (demo_copy / out["summary"]["path"]).read_text()


def test_end_summary_is_dated_by_the_transcript_linked_and_relative(run, demo_copy):
    """A transcript of 2026-11-20 captured later is dated 2026-11-20; a payload without cwd
    still lists files relative to the transcript's project; the summary links the anchor the
    session woke with (not an orphan), as the pre-compact handoff does."""
    ok(
        run(
            "hook",
            "start",
            "--anchor",
            "Project: Tidewater",
            payload="start_repo.json",
            transcript="first_hour.jsonl",
        )
    )
    out = json.loads(
        ok(run("hook", "end", "--json", payload="session_end_nocwd.json", transcript="first_hour.jsonl"))
    )
    path = out["summary"]["path"]
    assert Path(path).name.startswith("Session 2026-11-20 1405 ") and ";" not in path
    note = _summary(demo_copy, out)
    assert re.search(r"^created: 2026-11-20T14:05:00$", note, re.M)
    assert "`app/refunds.py`" in note and "/repo/" not in note
    assert "[[Project - Tidewater|Project: Tidewater]]" in note


def test_end_summary_requests_recalls_and_fixes(run, demo_copy):
    """ "thanks!" is not a request; recalled memories are listed by id and title, never a bare
    query; the summary says what was fixed and how."""
    out = json.loads(
        ok(run("hook", "end", "--json", payload="session_end_nocwd.json", transcript="first_hour.jsonl"))
    )
    note = _summary(demo_copy, out)
    requests = note.split("## Requests")[1].split("##")[0]
    assert "- thanks!" not in requests and "1 request(s)" in note
    recalled = note.split("## Memories recalled")[1].split("##")[0].strip().splitlines()
    assert recalled == [
        "- [c3er1spq] Stripe webhooks can arrive twice or out of order (recall: refund rounding)"
    ]
    fixed = note.split("## Fixed")[1].split("##")[0]
    assert "AssertionError: assert 100000 == 1000" in fixed and "by editing `app/refunds.py`" in fixed
    assert "1 failure(s) fixed" in note
    assert "## Outcome\nThe JPY refund now converts with the currency's minor units" in note


def test_end_titles_a_rule_by_the_rule_and_skips_known_rules(run, demo_copy):
    out = json.loads(
        ok(run("hook", "end", "--json", payload="session_end_nocwd.json", transcript="first_hour.jsonl"))
    )
    [cand, fix] = out["candidates"]  # the rule, then the failing test fixed by the edit (a bug fix)
    assert cand["title"] == "Integer cents for money, never floats" and fix["type"] == "bug_fix"
    text = (demo_copy / cand["path"]).read_text()
    assert "Also, remember that I always want integer cents for money, never floats." in text
    # the same rule, already an active memory, is not proposed again
    (demo_copy / cand["path"]).unlink()
    ok(run("remember", "preference", "Money is integer cents, never floats", "Amounts are ints."))
    again = json.loads(ok(run("hook", "end", "--json", payload="session_end_nocwd.json", transcript="first_hour.jsonl",
                              session="9a8b7c6d-3333-4b3c-8d4e-0123456789ab")))  # fmt: skip
    assert again["candidates"] == [] and [k["title"] for k in again["known"]] == [
        "Money is integer cents, never floats",
        fix["title"],
    ]


def test_sleep_summary_file_name_has_no_semicolon(run, demo_copy):
    out = json.loads(ok(run("sleep", "--summary", "Fixed refunds; added tests; cache live", "--json")))
    assert ";" not in out["summary"]["path"]


def test_pre_compact_cuts_at_a_word_boundary(run, demo_copy, tmp_path):
    request = "Please look at why the nightly export job drops rows when the cache is warm and keep the cache live " \
              "while you investigate the replica lag"  # fmt: skip
    t = tmp_path / "long.jsonl"
    t.write_text("\n".join(json.dumps(o) for o in [
        {"type": "user", "cwd": "/repo", "message": {"role": "user", "content": request}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "e", "name": "Edit", "input": {"file_path": "/repo/export.py"}}]}},
    ]) + "\n")  # fmt: skip
    ok(run("hook", "pre-compact", payload="pre_compact_repo.json", transcript=str(t)))
    [handoff] = [p for p in (demo_copy / "handoffs").glob("*.md") if "claude-code-9a8b7c6d" in p.read_text()]
    latest = handoff.read_text().split("latest: ")[1].split(";")[0]
    assert latest.endswith("…")
    words = latest.rstrip("…").split()
    assert words == request.split()[: len(words)]  # whole words of the request, nothing cut mid-word
