"""Project scope is a rule, not a similarity (issue 36): possible updates, wake, `hook start`,
the prompt hook and imported candidates keep to the project they belong to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vaultmem.cli.app import app


@pytest.fixture
def cli(empty_vault, fake_model):
    def _run(*args: str, stdin: str | None = None) -> str:
        result = CliRunner().invoke(app, [*args, "--vault", str(empty_vault)], input=stdin)
        assert result.exit_code == 0, (result.stdout, result.stderr)
        return result.stdout

    return _run


def meta(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---")[1])


def two_projects(cli) -> None:
    """The issue's reproduction: one decision for each of two projects."""
    cli("remember", "decision", "Use Go for the CLI", "Single static binary.", "--anchor", "Project: Alpha")
    cli("remember", "decision", "Use Rust for the parser", "Speed.", "--anchor", "Project: Beta")


def test_another_projects_anchor_is_no_possible_update_and_wake_keeps_to_its_project(cli, empty_vault):
    two_projects(cli)
    for anchor in (empty_vault / "projects").glob("*.md"):
        assert "may_update" not in meta(anchor), anchor.read_text()
    text = cli("wake", "--anchor", "Project: Alpha")
    assert "Use Go for the CLI" in text
    assert "Rust" not in text and "Project: Beta" not in text


def wake_block(payload_out: str) -> str:
    return json.loads(payload_out)["hookSpecificOutput"]["additionalContext"]


def test_wake_and_hook_start_never_show_another_projects_sessions_or_candidates(cli, empty_vault, tmp_path):
    two_projects(cli)
    cli("sleep", "--summary", "Beta: rewrote the parser in Rust, benchmarks pass.", "--anchor", "Project: Beta",
        "--source", "beta-session")  # fmt: skip
    from helpers import HashEmbedder

    from vaultmem.vault import Vault

    v = Vault(empty_vault, embedder=HashEmbedder())
    try:  # a lesson captured in a Beta session, as `hook end` and the importers write it
        v.remember("lesson", "Always run the parser fuzzer before a release", "Stated in a Beta session.",
                   anchor="Project: Beta", status="candidate", source="beta-session")  # fmt: skip
    finally:
        v.close()
    for text in (
        cli("wake", "--anchor", "Project: Alpha"),
        wake_block(
            cli(
                "hook",
                "start",
                stdin=json.dumps(
                    {"session_id": "s1", "cwd": str(tmp_path / "alpha"), "hook_event_name": "SessionStart"}
                ),
            )
        ),  # fmt: skip
    ):
        assert "Use Go for the CLI" in text
        assert "Last Session" not in text and "rewrote the parser" not in text
        assert "fuzzer" not in text and "Candidates to Confirm" not in text
    beta = cli("wake", "--anchor", "Project: Beta")
    assert "rewrote the parser" in beta and "fuzzer" in beta  # its own project's session and candidate


def test_session_summaries_and_handoffs_are_never_possible_updates_of_one_another(cli, empty_vault):
    for n in (1, 2):
        out = json.loads(cli("sleep", "--summary", "Worked on the parser and its benchmarks today.",
                             "--next", "finish the parser benchmarks", "--anchor", "Project: Beta",
                             "--source", f"session-{n}", "--json"))  # fmt: skip
        assert out["summary"]["possible_updates"] == []
    for note in empty_vault.rglob("*.md"):
        assert "may_update" not in note.read_text(encoding="utf-8"), note


def claude_session(folder: Path, cwd: str, text: str) -> Path:
    """A finished Claude Code session in ``cwd`` whose user says ``text``."""
    import os
    import time

    sid = "5e0c1d2a-0000-4000-8000-00000000000a"
    rows = [{"type": "user", "cwd": cwd, "sessionId": sid, "uuid": "u1", "timestamp": "2026-03-01T10:00:00.000Z",
             "message": {"role": "user", "content": text}},
            {"type": "assistant", "cwd": cwd, "sessionId": sid, "uuid": "a1", "parentUuid": "u1",
             "timestamp": "2026-03-01T10:00:05.000Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted, I will keep that in mind."}]}},
            ]  # fmt: skip
    path = folder / ("-" + cwd.strip("/").replace("/", "-")) / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return folder


def test_imported_lesson_candidates_carry_the_sessions_anchor(cli, empty_vault, tmp_path):
    projects = claude_session(tmp_path / "cc", "/home/dev/src/shop",
                              "Remember that the staging database is reset every night at 2am.")  # fmt: skip
    out = json.loads(cli("import", "--from", "claude-code", str(projects), "--json"))
    lessons = [row for row in out["candidates"] if row["type"] == "lesson"]
    assert lessons, out
    for row in lessons:
        assert meta(empty_vault / row["path"])["anchor"] == "[[Project - shop|Project: shop]]"
    cli("remember", "decision", "Use Go for the CLI", "Single static binary.", "--anchor", "Project: Alpha")
    assert "staging database" not in cli("wake", "--anchor", "Project: Alpha")
    assert "staging database" in cli("wake", "--anchor", "Project: shop")


def test_the_prompt_hook_injects_its_projects_memories_never_another_projects_session(
    cli, empty_vault, tmp_path
):
    cli("remember", "decision", "Webhook retry queue uses Redis", "The webhook retry queue runs on Redis streams.",
        "--anchor", "Project: Alpha")  # fmt: skip
    cli("sleep", "--summary", "Webhook retry queue: moved the retry queue for webhooks to SQS.",
        "--anchor", "Project: Beta", "--source", "beta")  # fmt: skip
    payload = {"session_id": "p1", "cwd": str(tmp_path / "alpha"), "hook_event_name": "UserPromptSubmit",
               "prompt": "how does the webhook retry queue work?"}  # fmt: skip
    out = cli("hook", "prompt", stdin=json.dumps(payload))
    text = wake_block(out)
    assert "Webhook retry queue uses Redis" in text
    assert "SQS" not in text and "session_summary" not in text


def test_an_anchor_made_on_two_clones_is_folded_by_maintain(cli, empty_vault):
    cli("remember", "decision", "Sync with git", "Every 5 minutes.", "--anchor", "Project: Sync")
    first = (empty_vault / "projects" / "Project - Sync.md").read_text(encoding="utf-8")
    # the other clone's anchor, as a sync that kept both left it
    (empty_vault / "projects" / "Project - Sync 2.md").write_text(
        first.replace(meta(empty_vault / "projects" / "Project - Sync.md")["id"], "zz9clone"),
        encoding="utf-8",
    )
    cli("remember", "decision", "Push after each commit", "Less drift.", "--anchor", "Project: Sync")
    cli("sleep", "--summary", "Set up the sync timer.", "--anchor", "Project: Sync")  # aging finds its anchor
    assert sorted(p.name for p in (empty_vault / "projects").iterdir()) == [
        "Project - Sync 2.md",
        "Project - Sync.md",
    ]
    dry = json.loads(cli("maintain", "--json"))
    assert any(a["kind"] == "merge" and a["path"] == "projects/Project - Sync 2.md" for a in dry["actions"])
    assert (
        meta(empty_vault / "projects" / "Project - Sync 2.md")["status"] == "active"
    )  # a dry run changes nothing
    cli("maintain", "--apply")
    assert meta(empty_vault / "projects" / "Project - Sync 2.md")["status"] == "superseded"
    assert meta(empty_vault / "projects" / "Project - Sync.md")["status"] == "active"
    text = cli("wake", "--anchor", "Project: Sync")
    assert "Sync with git" in text and "Push after each commit" in text


def test_an_anchor_file_already_there_is_that_anchor(cli, empty_vault):
    """The anchor's file name is deterministic: a file at that path (another clone's, pulled
    and not yet indexed) is used, never a second ``Project - Sync 2.md``."""
    (empty_vault / "projects").mkdir()
    (empty_vault / "projects" / "Project - Sync.md").write_text(
        "---\nid: zz9clone\ntitle: 'Project - Sync'\ntype: project\ntags: [anchor]\n---\nAnchor.\n",
        encoding="utf-8",
    )
    out = json.loads(cli("remember", "decision", "Sync with git", "Every 5 minutes.", "--anchor", "Project: Sync",
                         "--json"))  # fmt: skip
    assert out["created_anchor"] is None
    assert [p.name for p in (empty_vault / "projects").iterdir()] == ["Project - Sync.md"]


def _prompt(cli, cwd: Path, prompt: str) -> str:
    payload = {
        "session_id": f"p-{cwd.name}",
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    out = cli("hook", "prompt", stdin=json.dumps(payload))
    return wake_block(out) if out.strip() else ""


def test_the_prompt_hook_finds_the_project_from_a_subfolder_and_leaves_unknown_folders_alone(cli, tmp_path):
    cli("remember", "decision", "Webhook retry queue uses Redis", "The webhook retry queue runs on Redis streams.",
        "--anchor", "Project: Alpha")  # fmt: skip
    cli("sleep", "--summary", "Webhook retry queue: moved the retry queue for webhooks to SQS.",
        "--anchor", "Project: Beta", "--source", "beta")  # fmt: skip
    prompt = "how does the webhook retry queue work?"
    inside = _prompt(cli, tmp_path / "alpha" / "backend" / "src", prompt)  # deep in Alpha's folder
    assert "Webhook retry queue uses Redis" in inside and "SQS" not in inside
    start = wake_block(cli("hook", "start", stdin=json.dumps({"session_id": "s9", "hook_event_name": "SessionStart",
                                                              "cwd": str(tmp_path / "alpha" / "backend")})))  # fmt: skip
    assert "Memory for Project: Alpha" in start and "SQS" not in start
    elsewhere = _prompt(cli, tmp_path / "scratch", prompt)  # no project the vault knows: as before
    assert "Webhook retry queue uses Redis" in elsewhere and "SQS" in elsewhere


def test_wake_shows_no_loose_note_of_no_project_and_nothing_of_another(cli):
    cli("remember", "fact", "Redis cluster has three nodes", "One per zone.", "--anchor", "Cache layer")
    cli(
        "remember", "fact", "Invoices are numbered per year", "INV-2026-0001."
    )  # no anchor, linked from nowhere
    cli("remember", "decision", "Use Go for the CLI", "Single static binary.", "--anchor", "Project: Alpha")
    text = cli("wake", "--anchor", "Cache layer", "--task", "redis cluster nodes", "--budget", "4000")
    assert "Redis cluster has three nodes" in text
    assert "Invoices" not in text and "Use Go for the CLI" not in text


def test_doctor_fix_drops_the_possible_updates_an_older_vaultmem_wrote_across_projects(cli, empty_vault):
    """A vault written before: Beta's anchor 'may update' Alpha's (the issue's grep), so wake
    for Alpha said "may be outdated by [[Project: Beta]]". doctor reports it; --fix drops it."""
    two_projects(cli)
    beta = empty_vault / "projects" / "Project - Beta.md"
    text = beta.read_text(encoding="utf-8")
    beta.write_text(text.replace("---\n", "---\nmay_update: ['[[Project - Alpha]]']\n", 1), encoding="utf-8")
    assert "may be outdated by" in cli("wake", "--anchor", "Project: Alpha")
    report = json.loads(CliRunner().invoke(app, ["doctor", "--json", "--vault", str(empty_vault)]).stdout)
    assert [f["path"] for f in report["findings"] if f["check"] == "stray_possible_update"] == [
        "projects/Project - Beta.md"
    ]
    assert "may_update" in meta(beta)  # reporting changes nothing
    CliRunner().invoke(app, ["doctor", "--fix", "--vault", str(empty_vault)])
    assert "may_update" not in meta(beta)
    assert "may be outdated by" not in cli("wake", "--anchor", "Project: Alpha")
