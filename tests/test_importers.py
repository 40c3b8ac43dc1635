"""Importers end to end through the CLI (issue 28): Claude Code and Codex histories, instruction
files, the MCP memory graph, and the export of a project's rules into AGENTS.md. The fixtures in
tests/fixtures/importers/ were written from each tool's documented format (see their README in
the research notes): tool use, results, failures, a rejected tool call, subagents in both layouts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultmem.cli.app import app

FIX = Path(__file__).parent / "fixtures" / "importers"
MAIN = "7c1d9e2a-4b3f-4e8a-9d21-5f0a6b3c8e17"
LEGACY = "0b8e4f6a-2c71-4d3e-8f5a-1e9c7d2b6a40"


def aged(folder: Path, seconds: float = 3600) -> Path:
    """Every file under ``folder`` last modified ``seconds`` ago (a finished session)."""
    old = time.time() - seconds
    for p in folder.rglob("*"):
        if p.is_file():
            os.utime(p, (old, old))
    return folder


@pytest.fixture
def data(tmp_path) -> Path:
    return aged(Path(shutil.copytree(FIX, tmp_path / "fx")))


@pytest.fixture
def run(empty_vault, fake_embedder, monkeypatch, backend):
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)

    def _run(*args: str, vault: Path = empty_vault):
        return CliRunner().invoke(app, [*args, "--vault", str(vault)])

    return _run


def ok(result) -> str:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def notes(vault: Path) -> dict[str, str]:
    return {
        p.relative_to(vault).as_posix(): p.read_text()
        for p in vault.rglob("*.md")
        if ".vaultmem" not in p.parts
    }


# ---------------------------------------------------------------------- claude code


def test_claude_code_sessions_become_dated_linked_summaries_once(run, data, empty_vault):
    projects = data / "claude-code" / "projects"
    res = run("import", "--from", "claude-code", str(projects), "--json")
    out = json.loads(ok(res))
    done = [json.loads(line) for line in res.stderr.splitlines() if '"event": "done"' in line]
    assert done and done[0]["files"] == 2  # --json: the progress as events, the last one "done"
    by_session = {w["session"]: w for w in out["written"]}
    assert set(by_session) == {MAIN, LEGACY}  # the subagent files are not sessions of their own
    main = notes(empty_vault)[by_session[MAIN]["path"]]
    assert (
        Path(by_session[MAIN]["path"]).name
        == "Session 2026-03-14 0900 Add a POST orders id refund endpoint.md"
    )
    assert Path(by_session[LEGACY]["path"]).name.startswith("Session 2025-11-02 1610 ")
    assert "created: 2026-03-14T09:00:02\n" in main and "source: claude-code-7c1d9e2a" in main
    assert "anchor: '[[Project - shop_api.v2|Project: shop_api.v2]]'" in main and out["anchors_created"] == [
        "Project: shop_api.v2"
    ]
    assert "- btw refunds must be idempotent" in main  # typed while the agent was busy (queued_command)
    assert "Caveat" not in main  # isMeta lines are not requests
    assert (
        "`app/models.py`" in main and "migrations/0007_refunds.py" not in main
    )  # the rejected Write changed nothing
    assert (
        "AssertionError: assert 12.5 == 1250 (`pytest -q tests/test_refunds.py`) by editing `app/models.py`"
        in main
    )
    assert "## Subagents\n- Explore: Find float money handling" in main
    assert (
        "Find every place in app/" not in main.split("## Subagents")[0]
    )  # the subagent's prompt is the model's
    legacy = notes(empty_vault)[by_session[LEGACY]["path"]]
    assert "## Subagents\n- agent-b71d0e4" in legacy  # the 2.0.x sibling agent file
    cands = {c["title"]: c for c in out["candidates"]}
    assert set(cands) == {"Always use integer cents for money — never floats",
                          "Don't write migrations by hand — we generate them with `make migrations`"}  # fmt: skip
    text = notes(empty_vault)[cands["Always use integer cents for money — never floats"]["path"]]
    assert "status: candidate" in text and "created: 2026-03-14T09:00:02\n" in text
    # a second run adds nothing and says so
    before = notes(empty_vault)
    again = ok(run("import", "--from", "claude-code", str(projects)))
    assert "2 already imported" in again and "nothing new" in again
    assert notes(empty_vault) == before


def test_a_session_captured_by_hook_end_is_not_imported_again(run, data, empty_vault):
    session = data / "claude-code" / "projects" / "-home-dev-src-shop-api-v2" / f"{MAIN}.jsonl"
    payload = json.dumps(
        {"session_id": MAIN, "transcript_path": str(session), "cwd": "/home/dev/src/shop_api.v2"}
    )
    hook = CliRunner().invoke(app, ["hook", "end", "--vault", str(empty_vault)], input=payload)
    assert hook.exit_code == 0, hook.stderr
    out = json.loads(ok(run("import", "--from", "claude-code", str(session), "--json")))
    assert out["written"] == [] and out["already_imported"] == ["claude-code-7c1d9e2a"]


def test_a_session_still_being_written_is_left_for_later(run, data, empty_vault):
    folder = data / "claude-code" / "projects" / "-home-dev-src-shop-api-v2"
    (folder / f"{MAIN}.jsonl").touch()  # written to just now
    out = json.loads(ok(run("import", "--from", "claude-code", str(folder), "--json")))
    assert [w["session"] for w in out["written"]] == [LEGACY]
    assert out["still_active"] == [str(folder / f"{MAIN}.jsonl")]
    aged(folder)
    later = json.loads(ok(run("import", "--from", "claude-code", str(folder), "--json")))
    assert [w["session"] for w in later["written"]] == [MAIN]


def test_since_and_project_choose_the_sessions(run, data):
    projects = str(data / "claude-code" / "projects")
    out = json.loads(
        ok(run("import", "--from", "claude-code", projects, "--since", "2026-01-01", "--dry-run", "--json"))
    )
    assert [w["session"] for w in out["written"]] == [MAIN] and out["filtered"] == 1
    other = json.loads(
        ok(run("import", "--from", "claude-code", projects, "--project", "/home/dev/elsewhere", "--json"))
    )
    assert other["written"] == [] and other["files"] == 0  # no project folder can be that folder's
    mine = json.loads(ok(run("import", "--from", "claude-code", projects, "--project", "/home/dev/src/shop_api.v2",
                             "--dry-run", "--json")))  # fmt: skip
    assert len(mine["written"]) == 2


def test_dry_run_writes_nothing(run, data, empty_vault):
    before = notes(empty_vault)
    for args in (["claude-code", str(data / "claude-code" / "projects")], ["codex", str(data / "codex")],
                 ["rules", str(data / "rules" / "shop_api.v2")], ["mcp-memory", str(data / "mcp-memory" / "memory.jsonl")]):  # fmt: skip
        out = ok(run("import", "--from", *args, "--dry-run"))
        assert out.startswith("would write") or "new," in out
    assert notes(empty_vault) == before


def test_a_truncated_transcript_imports_what_was_written(run, data, empty_vault):
    session = data / "claude-code" / "projects" / "-home-dev-src-shop-api-v2" / f"{MAIN}.jsonl"
    text = session.read_bytes()
    session.write_bytes(text[: len(text) - 400])  # the last line cut half-way, as by a crash
    aged(session.parent)
    out = json.loads(ok(run("import", "--from", "claude-code", str(session), "--json")))
    [written] = out["written"]
    assert "Add a POST" in notes(empty_vault)[written["path"]]


def test_huge_lines_are_skipped_in_bounded_memory(run, tmp_path):
    from vaultmem.agents.events import MAX_LINE

    f = tmp_path / "big.jsonl"
    good = {"type": "user", "timestamp": "2026-01-02T03:04:05Z", "cwd": "/p", "sessionId": "s1",
            "message": {"role": "user", "content": "Fix the login redirect"}}  # fmt: skip
    with f.open("w") as out:
        out.write('{"type":"user","message":{"role":"user","content":"' + "x" * (MAX_LINE * 3) + '"}}\n')
        out.write(json.dumps(good) + "\n")
    aged(tmp_path)
    res = json.loads(ok(run("import", "--from", "claude-code", str(f), "--json", "--dry-run")))
    assert [w["title"] for w in res["written"]] == ["Session 2026-01-02 0304 Fix the login redirect"]


def _cli(*args: str, vault: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run([sys.executable, "-m", "vaultmem", *args, "--vault", str(vault)], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip


@pytest.mark.parametrize("source", ["claude-code", "codex", "rules", "mcp-memory", "chatgpt", "claude-ai"])
def test_a_binary_file_is_a_one_line_error_and_nothing_is_written(source, tmp_path, empty_vault):
    binary = tmp_path / ("rollout-x.jsonl" if source == "codex" else "x.jsonl")
    binary.write_bytes(bytes(range(256)) * 64)
    aged(tmp_path)
    before = notes(empty_vault)
    res = _cli("import", "--from", source, str(binary), vault=empty_vault)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "nothing was" in res.stderr, res.stderr
    assert notes(empty_vault) == before


def test_a_folder_with_a_bad_file_imports_the_good_ones_and_names_the_bad(run, data, empty_vault):
    folder = data / "claude-code" / "projects" / "-home-dev-src-shop-api-v2"
    (folder / "broken.jsonl").write_bytes(b"\x00\x01\x02 not json\n")
    aged(folder)
    out = json.loads(ok(run("import", "--from", "claude-code", str(folder), "--json")))
    assert len(out["written"]) == 2 and [s["path"] for s in out["skipped"]] == [str(folder / "broken.jsonl")]


def test_unknown_source_and_missing_path_are_one_line_errors(run, tmp_path):
    bad = run("import", "--from", "obsidian", "x")
    assert (
        bad.exit_code != 0
        and "not one of: claude-code, codex, rules, mcp-memory, chatgpt, claude-ai" in bad.stderr
    )
    missing = run("import", "--from", "claude-code", str(tmp_path / "nope"))
    assert missing.exit_code != 0 and "no such file or folder" in missing.stderr


def test_backup_restore_still_works(run, demo_copy, empty_vault):
    backup = CliRunner().invoke(app, ["export", "--vault", str(demo_copy)])
    path = empty_vault.parent / "backup.json"
    path.write_text(backup.stdout)
    assert ok(run("import", str(path))).startswith("imported ")


# ---------------------------------------------------------------------- codex


def test_codex_rollouts_are_imported_defensively(run, data, empty_vault):
    out = json.loads(ok(run("import", "--from", "codex", str(data / "codex"), "--json")))
    by_session = {w["session"]: w for w in out["written"]}
    assert set(by_session) == {"019ce8a4-7b21-7c3d-9e5f-2a6b8c0d1e34", "5973b6c0-94b8-487b-a530-2aeb6098ae0e"}
    new = notes(empty_vault)[by_session["019ce8a4-7b21-7c3d-9e5f-2a6b8c0d1e34"]["path"]]
    assert Path(by_session["019ce8a4-7b21-7c3d-9e5f-2a6b8c0d1e34"]["path"]).name.startswith(
        "Session 2026-03-14 1005 Fix the failing refund test"
    )
    assert (
        "AGENTS.md instructions" not in new and "environment_context" not in new
    )  # injected context is not a request
    assert (
        "AssertionError: assert 12.5 == 1250 (`pytest -q tests/test_refunds.py`) by editing `app/models.py`"
        in new
    )
    assert "anchor: '[[Project - shop_api.v2|Project: shop_api.v2]]'" in new
    legacy = notes(empty_vault)[by_session["5973b6c0-94b8-487b-a530-2aeb6098ae0e"]["path"]]
    assert "Use uv instead of pip in the Makefile." in legacy and "created: 2025-05-07T17:24:21" in legacy
    assert [c["title"] for c in out["candidates"]] == [
        "Use integer cents for money, never floats",  # the user's rule, then the failure fixed (a bug fix)
        "AssertionError: assert 12.5 == 1250 in pytest -q, fixed by editing models.py",
    ]
    again = ok(run("import", "--from", "codex", str(data / "codex")))
    assert "2 already imported" in again


def test_codex_compressed_rollouts(run, data, empty_vault, monkeypatch):
    zstandard = pytest.importorskip("zstandard")
    day = data / "codex" / "sessions" / "2026" / "03" / "14"
    [plain] = day.glob("*.jsonl")
    Path(f"{plain}.zst").write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    plain.unlink()
    aged(day)
    from vaultmem.agents.transcripts import rollouts

    real = rollouts.zstd_available
    monkeypatch.setattr(rollouts, "zstd_available", lambda: False)
    skipped = ok(run("import", "--from", "codex", str(data / "codex"), "--dry-run"))
    assert "1 compressed rollout(s) (.jsonl.zst) skipped: install zstandard" in skipped
    monkeypatch.setattr(rollouts, "zstd_available", real)
    out = json.loads(ok(run("import", "--from", "codex", str(data / "codex"), "--dry-run", "--json")))
    assert any(w["session"] == "019ce8a4-7b21-7c3d-9e5f-2a6b8c0d1e34" for w in out["written"])


def test_codex_has_one_reader_for_the_hooks_and_the_importer(data):
    """The issue found two parsers of Codex's rollout with different rules: the hook's reading of
    a rollout and the importer's are the same events (one reader, asked of the Codex module)."""
    from vaultmem.agents import transcript
    from vaultmem.agents.adapters import ADAPTERS
    from vaultmem.agents.importers import get

    files = sorted((data / "codex").rglob("rollout-*.jsonl"))
    assert len(files) >= 2
    for path in files:
        imported = get("codex").read(path)
        assert imported.events and imported.agent == "codex"
        assert transcript.read_events(path, fmt="codex") == imported.events
        assert ADAPTERS["codex"].read_session(path).events == imported.events


# ---------------------------------------------------------------------- instruction files


def test_rules_become_active_linked_memories_and_edits_update_them(run, data, empty_vault):
    project = data / "rules" / "shop_api.v2"
    out = json.loads(ok(run("import", "--from", "rules", str(project), "--json")))
    files = {Path(f["file"]).name: f for f in out["files"]}
    assert set(files) >= {"CLAUDE.md", "AGENTS.md", "GEMINI.md", "money.mdc", "sql.mdc", "core.mdc",
                          "copilot-instructions.md", "python.instructions.md", "testing.md"}  # fmt: skip
    assert files["sql.mdc"]["scope"] == {
        "globs": "**/*.sql",
        "alwaysApply": "false",
    }  # not YAML, read line-wise
    agents = {a["title"]: a for a in files["AGENTS.md"]["added"]}
    thin = notes(empty_vault)[
        agents["Keep HTTP handlers thin; business logic lives in `app/services/`"]["path"]
    ]
    assert "status: active" in thin and "source: rules:shop_api.v2/AGENTS.md" in thin
    assert (
        "anchor: '[[Project - shop_api.v2|Project: shop_api.v2]]'" in thin
        and "From `AGENTS.md`, section “Style” of shop_api.v2." in thin
    )
    again = ok(run("import", "--from", "rules", str(project)))
    assert "nothing new" in again
    # edit AGENTS.md: one rule reworded, one removed, one added
    agents_md = project / "AGENTS.md"
    agents_md.write_text(agents_md.read_text()
                         .replace("- Money: integer cents only.", "- Money: integer cents only, in every API.")
                         .replace("- Keep HTTP handlers thin; business logic lives in `app/services/`.\n", "")
                         + "- Never log card numbers.\n")  # fmt: skip
    edit = json.loads(
        ok(run("import", "--from", "rules", str(agents_md), "--project", str(project), "--json"))
    )
    [row] = edit["files"]
    assert [u["old"]["title"] for u in row["updated"]] == ["Money: integer cents only"]
    assert [u["title"] for u in row["updated"]] == ["Money: integer cents only, in every API"]
    assert [r["title"] for r in row["retired"]] == [
        "Keep HTTP handlers thin; business logic lives in `app/services/`"
    ]
    assert [a["title"] for a in row["added"]] == ["Never log card numbers"]
    vault_now = notes(empty_vault)
    old = vault_now[agents["Money: integer cents only"]["path"]]
    assert "status: superseded" in old and "in every API" in old.split("superseded_by:")[1].splitlines()[0]
    assert (
        "status: archived"
        in vault_now[agents["Keep HTTP handlers thin; business logic lives in `app/services/`"]["path"]]
    )
    active = [
        t for t in vault_now.values() if "source: rules:shop_api.v2/AGENTS.md" in t and "status: active" in t
    ]
    assert len(active) == 4  # uv sync, pytest, the reworded money rule, the new one: no duplicates


# ---------------------------------------------------------------------- mcp memory


def test_mcp_memory_entities_become_notes_and_relations_typed_links(run, data, empty_vault):
    file = data / "mcp-memory" / "memory.jsonl"
    out = json.loads(ok(run("import", "--from", "mcp-memory", str(file), "--json")))
    titles = {w["title"]: w for w in out["written"]}
    assert set(titles) == {"dev_user", "shop-api", "Postgres"} and out["relations"] == 2
    user = notes(empty_vault)[titles["dev_user"]["path"]]
    assert "type: relationship" in user and "- Prefers integer cents for all money values" in user
    assert "## Relations\n- maintains [[shop-api]]" in user
    assert "- uses [[Postgres]]" in notes(empty_vault)[titles["shop-api"]["path"]]
    links = json.loads(ok(run("show", "shop-api", "--json")))
    assert "Postgres" in links["links"]
    before = notes(empty_vault)
    assert "nothing new" in ok(run("import", "--from", "mcp-memory", str(file)))
    assert notes(empty_vault) == before
    with file.open("a") as f:
        f.write(
            '{"type":"entity","name":"Postgres","entityType":"technology","observations":["Version 16"]}\n'
        )
    changed = json.loads(ok(run("import", "--from", "mcp-memory", str(file), "--json")))
    assert [u["title"] for u in changed["updated"]] == ["Postgres"] and changed["written"] == []
    assert "- Version 16" in notes(empty_vault)[titles["Postgres"]["path"]]


# ---------------------------------------------------------------------- export --to agents-md


def test_export_to_agents_md_writes_a_marked_section_idempotently(run, data, empty_vault, tmp_path):
    ok(run("import", "--from", "claude-code", str(data / "claude-code" / "projects")))
    cands = json.loads(ok(run("list", "--status", "candidate", "--json")))
    cents = next(c for c in cands if c["title"].startswith("Always use integer cents"))
    ok(run("confirm", cents["id"]))
    ok(run("remember", "lesson", "Stripe retries webhooks for three days", "Handlers must be idempotent.",
           "--anchor", "Project: shop_api.v2"))  # fmt: skip
    ok(run("remember", "decision", "Postgres over MySQL", "For JSONB.", "--anchor", "Project: shop_api.v2",
           "--importance", "8"))  # fmt: skip
    ok(
        run(
            "remember",
            "decision",
            "Minor naming choice",
            "x",
            "--anchor",
            "Project: shop_api.v2",
            "--importance",
            "3",
        )
    )
    target = tmp_path / "shop" / "AGENTS.md"
    target.parent.mkdir()
    head, tail = "# AGENTS.md\n\nHand-written intro.\n", "\n## Setup\n- `uv sync`\n"
    target.write_text(head + "<!-- vaultmem:begin -->\nold\n<!-- vaultmem:end -->" + tail)
    out = ok(run("export", "--to", "agents-md", str(target), "--anchor", "Project: shop_api.v2"))
    assert out.startswith(f"updated {target}")
    text = target.read_text()
    assert text.startswith(head) and text.endswith(tail)
    section = text[len(head) : -len(tail)]
    assert "### Preferences\n- Always use integer cents for money — never floats" in section
    assert "### Lessons\n- Stripe retries webhooks for three days" in section
    assert "### Key decisions\n- Postgres over MySQL" in section and "Minor naming choice" not in section
    assert "Don't write migrations" not in section  # still a candidate
    again = ok(run("export", "--to", "agents-md", str(target), "--anchor", "Project: shop_api.v2"))
    assert again.startswith("unchanged") and target.read_text() == text
    fresh = tmp_path / "CLAUDE.md"
    fresh.write_text("# Mine\n")
    ok(run("export", "--to", "agents-md", str(fresh), "--anchor", "Project: shop_api.v2"))
    assert fresh.read_text().startswith("# Mine\n\n<!-- vaultmem:begin -->") and fresh.read_text().endswith(
        "<!-- vaultmem:end -->\n"
    )
    broken = tmp_path / "B.md"
    broken.write_text("<!-- vaultmem:end -->\nx\n<!-- vaultmem:begin -->\n")
    res = run("export", "--to", "agents-md", str(broken))
    assert res.exit_code != 0 and "markers are broken" in res.stderr
    assert broken.read_text() == "<!-- vaultmem:end -->\nx\n<!-- vaultmem:begin -->\n"


def test_a_long_history_keeps_three_active_summaries_per_project(run, tmp_path, empty_vault):
    folder = tmp_path / "projects" / "-home-dev-app"
    folder.mkdir(parents=True)
    for i in range(5):
        line = {"type": "user", "timestamp": f"2026-0{i + 1}-02T10:00:00Z", "cwd": "/home/dev/app", "sessionId": f"s{i}",
                "message": {"role": "user", "content": f"Fix bug number {i} in the parser"}}  # fmt: skip
        (folder / f"s{i}.jsonl").write_text(json.dumps(line) + "\n")
    aged(tmp_path)
    out = json.loads(ok(run("import", "--from", "claude-code", str(tmp_path / "projects"), "--json")))
    assert len(out["written"]) == 5 and out["aged"] == 2
    sessions = [t for t in notes(empty_vault).values() if "type: session_summary" in t]
    assert sum("status: active" in t for t in sessions) == 3  # the newest three
    oldest = [t for t in sessions if re.search(r"^title: .*Fix bug number [01] ", t, re.M)]
    assert len(oldest) == 2 and all("status: archived" in t for t in oldest)


# ---------------------------------------------------------------------- chat exports


def test_chatgpt_export_follows_the_current_thread_and_reads_custom_instructions(run, data, empty_vault):
    file = data / "chatgpt" / "conversations.json"
    out = json.loads(ok(run("import", "--from", "chatgpt", str(file), "--json")))
    [conv] = out["written"]
    assert conv["title"] == "Conversation 2025-03-14 1000 How should I store prices in Postgres"
    text = notes(empty_vault)[conv["path"]]
    assert "Store `price_cents BIGINT NOT NULL`" in text  # the answer on current_node's branch
    assert "NUMERIC(12,2)" not in text  # the regenerated sibling is not the thread
    assert {c["title"] for c in out["candidates"]} == {
        "Integer cents, never floats",
        "Use integer cents for any money examples",
    }
    assert "1 already imported" in ok(run("import", "--from", "chatgpt", str(file)))


def test_claude_ai_export_becomes_conversation_summaries(run, data, empty_vault):
    file = data / "claude-ai" / "conversations.json"
    out = json.loads(ok(run("import", "--from", "claude-ai", str(file), "--json")))
    [conv] = out["written"]
    text = notes(empty_vault)[conv["path"]]
    assert conv["title"].startswith("Conversation 2026-02-20 1402 My refund totals are off by a cent")
    assert "**Assistant:** The bug is `round(total * pct, 2)` on floats." in text  # the transcript (issue 37)
    assert (
        "- Thanks. Please always show money examples in cents from now on." in text
    )  # content [] and only text
    assert [c["title"] for c in out["candidates"]] == ["Always show money examples in cents from now on"]


# ---------------------------------------------------------------------- redaction (issue 25's core/secrets.py)


def test_imports_redact_secrets_and_drop_private_spans(run, tmp_path, empty_vault):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    folder = tmp_path / "projects" / "-home-dev-app"
    folder.mkdir(parents=True)
    prompt = (f"Deploy with the token {token} please. <private>my home address is 1 Elm St</private> "
              f"Always use the token {token} for the release job.")  # fmt: skip
    line = {"type": "user", "timestamp": "2026-04-02T10:00:00Z", "cwd": "/home/dev/app", "sessionId": "s1",
            "message": {"role": "user", "content": prompt}}  # fmt: skip
    (folder / "s1.jsonl").write_text(json.dumps(line) + "\n")
    rules = tmp_path / "app" / "AGENTS.md"
    rules.parent.mkdir()
    rules.write_text(
        f"# Rules\n- Never paste {token} into chat.\n- <private>internal host db7</private>Use the staging host.\n"
    )
    memory = tmp_path / "memory.jsonl"
    memory.write_text(
        json.dumps(
            {"type": "entity", "name": "ci", "entityType": "service", "observations": [f"token {token}"]}
        )
        + "\n"
    )
    aged(tmp_path)
    dry = ok(run("import", "--from", "claude-code", str(tmp_path / "projects"), "--dry-run", "--json"))
    assert token not in dry
    ok(run("import", "--from", "claude-code", str(tmp_path / "projects")))
    ok(run("import", "--from", "rules", str(rules)))
    ok(run("import", "--from", "mcp-memory", str(memory)))
    written = notes(empty_vault)
    assert written and all(
        token not in text and "Elm St" not in text and "db7" not in text for text in written.values()
    )
    assert all(token not in path for path in written)
    assert any("[REDACTED:" in text for text in written.values())
    assert "nothing new" in ok(run("import", "--from", "rules", str(rules)))  # redacted titles compare equal


def test_a_codex_session_captured_by_hook_end_is_not_imported_again(run, data, empty_vault, open_vault):
    """hook end names a Codex session by 8 characters of its time-ordered id and dates it by its
    start: that pair, not the prefix alone, marks it as captured."""
    import datetime as dt

    vault = open_vault(empty_vault)
    start = dt.datetime(2026, 3, 14, 10, 5, 11, tzinfo=dt.UTC)
    vault.remember("session_summary", "Session 2026-03-14 1005 Fix the failing refund test", "Captured by the hook.",
                   source="codex-019ce8a4", now=start)  # fmt: skip
    vault.remember("session_summary", "Session 2026-03-14 1006 Another thread of that minute", "Another session.",
                   source="codex-019ce8a4", now=start + dt.timedelta(seconds=50))  # fmt: skip
    out = json.loads(ok(run("import", "--from", "codex", str(data / "codex"), "--json")))
    assert out["already_imported"] == ["codex-019ce8a4-7b21-7c3d-9e5f-2a6b8c0d1e34"]
    assert [w["session"] for w in out["written"]] == ["5973b6c0-94b8-487b-a530-2aeb6098ae0e"]
