"""Problems found walking the README's tour as a new user, each pinned by the command that showed it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import write
from typer.testing import CliRunner

from vaultmem.agents import setups as agents
from vaultmem.cli.app import app


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def test_graph_links_names_a_missing_target_once_in_parentheses(demo_copy, fake_model):
    r = cli("graph", "links", "Payment flow and Stripe webhook pipeline", "--vault", str(demo_copy))
    assert r.exit_code == 0, r.output
    assert "Refund policy for cancelled bookings  (missing note)  [body]" in r.stdout
    assert "((" not in r.stdout


@pytest.mark.integration  # the CLI in subprocesses
def test_closed_pipe_ends_quietly(demo_copy):
    """`vaultmem graph export | head -1`: the reader going away is not an error worth a line."""
    proc = subprocess.Popen([sys.executable, "-m", "vaultmem", "graph", "export", "--vault", str(demo_copy)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    proc.stdout.close()  # the reader is gone before the first line is written
    _, stderr = proc.communicate(timeout=120)
    assert stderr.decode() == ""
    assert proc.returncode == 141  # 128 + SIGPIPE, what git and coreutils report


def test_setup_claude_write_keeps_the_event_order(empty_vault, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.local.json"  # Claude Code's personal settings
    settings.write_text(
        json.dumps({"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "notify"}]}]}})
    )
    monkeypatch.chdir(project)
    r = cli("setup", "claude", "--vault", str(empty_vault), "--write")
    assert r.exit_code == 0, r.output
    events = list(json.loads(settings.read_text())["hooks"])
    assert events == ["Notification", *agents.HOOK_EVENTS]  # the user's first, then ours as printed


def test_edit_set_importance_is_checked_like_remember(empty_vault, fake_model):
    write(empty_vault, "a.md", "---\nid: aaaa1111\ntitle: Alpha\nimportance: 5\n---\n# Alpha\n")
    before = (empty_vault / "a.md").read_text()
    for bad in ("importance=banana", "importance=11", "importance=0"):
        r = cli("edit", "aaaa1111", "--set", bad, "--vault", str(empty_vault))
        assert r.exit_code == 2, (bad, r.output)
        assert "importance" in r.stderr and "1-10" in r.stderr
        assert (empty_vault / "a.md").read_text() == before
    r = cli("edit", "aaaa1111", "--set", "importance=high", "--vault", str(empty_vault))
    assert r.exit_code == 0, r.output
    assert "importance: 8" in (empty_vault / "a.md").read_text()  # stored as its number (one property type)
    r = cli("edit", "aaaa1111", "--set", "importance=7", "--vault", str(empty_vault))
    assert r.exit_code == 0 and "importance: 7" in (empty_vault / "a.md").read_text()


def test_edit_set_status_is_checked_like_importance(empty_vault, fake_model):
    write(empty_vault, "a.md", "---\nid: aaaa1111\ntitle: Alpha\nstatus: active\n---\n# Alpha\n")
    before = (empty_vault / "a.md").read_text()
    for bad in ("status=bogus", "status=[a, b]", "status=7"):
        r = cli("edit", "aaaa1111", "--set", bad, "--vault", str(empty_vault))
        assert r.exit_code == 2, (bad, r.output)
        assert "status" in r.stderr and "resolved" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert (empty_vault / "a.md").read_text() == before
    r = cli("edit", "aaaa1111", "--set", "status=resolved", "--vault", str(empty_vault))
    assert r.exit_code == 0 and "status: resolved" in (empty_vault / "a.md").read_text()


def test_help_shows_defaults_without_markup_escapes():
    r = cli("recall", "--help")
    assert r.exit_code == 0
    assert "[default: hybrid]" in r.stdout and "\\[" not in r.stdout
