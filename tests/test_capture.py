"""What a session leaves in the vault (issue 36, "capture keeps the wrong things"): sessions of the
labelled capture set (``benchmarks/data/capture_set``) written in their agent's own log format,
run through ``vaultmem hook end`` and ``vaultmem import``, then the notes written are read."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import frontmatter
import pytest
from typer.testing import CliRunner

sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent)
)  # plain pytest: the repo root for benchmarks.*

from benchmarks.capture_set import WRITERS, sessions, start_of
from vaultmem.cli.app import app

SET = {s["id"]: (n, s) for n, s in enumerate(sessions())}


@pytest.fixture
def vault(empty_vault, fake_model):
    for project in ("infra", "shop", "tidewater", "ledger"):
        cli("remember", "project", f"Project: {project}", f"The {project} project.", vault=empty_vault)
    return empty_vault


def cli(*args: str, vault: Path, stdin: str | None = None) -> str:
    result = CliRunner().invoke(app, [*args, "--vault", str(vault)], input=stdin)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def transcript(tmp_path: Path, name: str) -> tuple[Path, dict]:
    n, s = SET[name]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in WRITERS[s["agent"]](s, n, start_of(n))))
    os.utime(path, (1_700_000_000, 1_700_000_000))  # not a session still being written
    return path, s


def hook_end(vault: Path, tmp_path: Path, name: str) -> dict:
    path, s = transcript(tmp_path, name)
    payload = {"session_id": f"sess-{name}", "transcript_path": str(path), "cwd": s["cwd"],
               "hook_event_name": "SessionEnd", "reason": "exit"}  # fmt: skip
    return json.loads(
        cli("hook", "end", "--agent", s["agent"], "--json", vault=vault, stdin=json.dumps(payload))
    )


def notes(vault: Path, type_: str | None = None) -> list[frontmatter.Post]:
    out = []
    for p in sorted(vault.rglob("*.md")):
        if ".vaultmem" in p.parts or p.name in ("AGENTS.md", "README.md"):
            continue
        post = frontmatter.load(p)
        post["file"] = p.name
        if type_ is None or post.get("type") == type_:
            out.append(post)
    return out


def outcome(post: frontmatter.Post) -> str:
    m = re.search(r"^## Outcome\n(.*?)(?=^## |\Z)", post.content, re.M | re.S)
    return m.group(1) if m else ""


def test_an_explicit_decision_becomes_a_decision_of_the_project(vault, tmp_path):
    hook_end(vault, tmp_path, "infra-oidc")
    [decision] = notes(vault, "decision")
    assert decision["title"].startswith("Deploy from GitHub Actions with OIDC")
    assert "Project - infra" in str(decision.get("anchor")) or "Project: infra" in str(decision.get("anchor"))
    [summary] = notes(vault, "session_summary")
    assert "deploy.yml" in outcome(summary) and "Noted." not in outcome(summary)
    assert summary["title"].endswith("Update the deploy workflow")  # the request, not the decision cut short


def test_a_failure_and_the_command_that_fixed_it_become_a_bug_fix(vault, tmp_path):
    path, _ = transcript(tmp_path, "infra-tf-lock")
    cli("import", "--from", "claude-code", str(path), vault=vault)
    [fix] = notes(vault, "bug_fix")
    assert "state lock" in fix["title"] and "force-unlock" in fix.content
    assert "Project" in str(fix.get("anchor"))
    [summary] = notes(vault, "session_summary")
    assert "force-unlock" in outcome(summary) and "OK." not in outcome(summary)


def test_titles_are_whole_clauses_and_a_request_is_kept_whole(vault, tmp_path):
    hook_end(vault, tmp_path, "shop-checkout-total")
    hook_end(vault, tmp_path, "shop-multiline")
    titles = [p["title"] for p in notes(vault, "session_summary")]
    assert any(t.endswith("The checkout total test is failing") for t in titles), titles
    multi = next(p for p in notes(vault, "session_summary") if "coupon" in p["title"])
    assert "reject expired coupons" in multi.content


def test_a_chat_only_session_is_not_the_projects_last_session(vault, tmp_path):
    hook_end(vault, tmp_path, "shop-checkout-total")
    hook_end(vault, tmp_path, "shop-409")
    block = cli("wake", "--anchor", "Project: shop", vault=vault)
    last = block.split("## Last Session", 1)[1].split("\n## ", 1)[0]
    assert "checkout total" in last and "409" not in last


def test_no_candidate_is_made_of_a_secret_and_compound_rules_are_split(vault, tmp_path):
    hook_end(vault, tmp_path, "tide-secret")
    out = hook_end(vault, tmp_path, "tide-compound")
    kept = [p for p in notes(vault) if p.get("status") == "candidate"]
    assert not [p["title"] for p in kept if re.search(r"redacted|token|use it", p["title"] + p.content, re.I)]
    titles = sorted(c["title"] for c in out["candidates"])
    assert len(titles) == 2 and any("ruff and mypy" in t for t in titles), titles
    assert any(t.lower().startswith("never push directly to main") for t in titles), titles
    assert not [p["file"] for p in kept if "…" in p["file"] or "..." in p["file"]]


@pytest.mark.parametrize("text, expected", [
    ("We decided to deploy from GitHub Actions with OIDC. Update the workflow.",
     [("decision", "We decided to deploy from GitHub Actions with OIDC.")]),
    ("After the outage we decided that backups are tested monthly.",
     [("decision", "After the outage we decided that backups are tested monthly.")]),
    ("We'll use UUIDv7 for order ids from now on.", [("decision", "We'll use UUIDv7 for order ids from now on.")]),
    ("We'll use a temp dir for the output instead of the repo folder.", []),  # this task's choice
    ("Have we decided whether to keep /v1?", []),
    ("Explain why we decided to use Redis for the queue.", []),
    ("Decision tree code needs a refactor.", []),
    ("The decision is to ship on Tuesdays.", [("decision", "The decision is to ship on Tuesdays.")]),
    ("If we decided to drop /v1, the clients break.", []),
    ("Never mind, it was my typo. Always the same mistake, sorry.", []),
    ("Don't ever do that again without asking.", []),
    ("Always run ruff and mypy before committing, and never push to main; open a pull request instead.",
     [("preference", "Always run ruff and mypy before committing"),
      ("preference", "never push to main; open a pull request instead.")]),
    ("Remember that my token is ghp_R8x2kLmN4pQ7sT1vW9yZ3aB5cD6eF0gH2jK4. Always use it for tags.", []),
])  # fmt: skip
def test_statements(text, expected):
    from vaultmem.agents.statements import statements

    assert statements(text) == expected


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot"])
def test_a_question_answered_by_reading_files_is_chat_only(agent):
    """The real agents' recorded sessions (tests/agents_e2e): a question, answered after an `ls`."""
    from vaultmem.agents import summary, transcript

    real = Path(__file__).parent / "fixtures" / "agents" / "real" / agent / "transcript.jsonl"
    s = summary.summarise(transcript.read_events(real, fmt=agent))
    assert s.commands and s.chat_only and s.memories == []
    assert not any("`ls`" in line for line in summary.outcome_lines(s))


@pytest.mark.parametrize(
    "name", ["tide-prefer", "gem-port", "cop-decision-uuid", "cur-style", "h-copilot-prefer"]
)
def test_each_agents_log_leaves_its_labelled_memories(vault, tmp_path, name):
    """`hook end --agent codex|gemini|copilot|cursor` on a session of the set: each memory its
    labels name is a candidate of that type, and nothing else is."""
    for project in ("orders", "ledger"):
        cli("remember", "project", f"Project: {project}", f"The {project} project.", vault=vault)
    hook_end(vault, tmp_path, name)
    kept = [p for p in notes(vault) if p.get("status") == "candidate"]
    labels = SET[name][1]["labels"]
    for label in labels:
        assert any(
            p["type"] in label["type"].split("|")
            and all(w.lower() in (p["title"] + p.content).lower() for w in label["words"])
            for p in kept
        ), (label, [(p["type"], p["title"]) for p in kept])
    assert len(kept) == len(labels), [(p["type"], p["title"]) for p in kept]
