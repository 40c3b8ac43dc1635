"""Secrets and private spans never reach the vault from a transcript or an agent, through the
installed `vaultmem` (hooks, remember, checkpoint, sleep) and the MCP tools; a person's own file
is reported by `doctor`, never rewritten. Tokens are generated (the right shape, never real)."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from .adversarial_helpers import run

rng = random.Random(25)
AN = string.ascii_letters + string.digits
GHP = "ghp_" + "".join(rng.choice(AN) for _ in range(36))
AWS = "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))
LIVE = "sk-live-" + "".join(rng.choice(AN) for _ in range(28))
STRIPE = "sk_live_" + "".join(rng.choice(AN) for _ in range(24))
PRIVATE = "my home address is 12 Elm Row"
SECRETS = (GHP, AWS, LIVE, STRIPE, PRIVATE, "Elm Row")


def _transcript(path: Path) -> Path:
    """A Claude Code transcript: a prompt holding a GitHub token, an AWS key id and a private
    span; a failed `curl` with a bearer key; a stated rule holding a Stripe key."""
    lines = [
        {"type": "user", "message": {"role": "user", "content": f"Deploy with {GHP} and {AWS} please "
                                     f"<private>{PRIVATE}</private> then tell me."}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Calling the API."},
            {"type": "tool_use", "id": "t1", "name": "Bash",
             "input": {"command": f"curl -fsS -H 'Authorization: Bearer {LIVE}' https://api.example.com/deploy"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": "t1", "type": "tool_result", "content": "curl: (22) 401 Unauthorized", "is_error": True}]}},
        {"type": "user", "message": {"role": "user", "content": f"Always use the key {STRIPE} for the staging shop."}},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "v"
    assert run("init", str(root)).returncode == 0
    return root


def _leaks(root: Path) -> list[str]:
    """Every secret or private text found in a file's name or content under ``root``."""
    found = []
    for p in root.rglob("*"):
        if p.is_file() and ".vaultmem" not in p.parts:
            text = p.relative_to(root).as_posix() + "\n" + p.read_text(errors="replace")
            found += [f"{p.name}: {s[:12]}" for s in SECRETS if s in text]
    return found


@pytest.mark.model  # the vaultmem subprocess embeds what it writes with the real model
def test_hook_end_writes_no_secret_into_the_summary_its_title_or_its_file_name(vault, tmp_path):
    """Before: the summary, its title and its file name carried the GitHub token and AWS key id
    and the body the curl bearer key."""
    payload = json.dumps({"session_id": "5f0c2a9e-1111", "transcript_path": str(_transcript(tmp_path / "t.jsonl")),
                          "cwd": str(tmp_path)})  # fmt: skip
    result = run("hook", "end", "--json", "--vault", str(vault), input=payload)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    summary = out["summary"]
    assert "redacted-github-token" in summary["title"] and "redacted-aws-key" in summary["title"]
    assert {"github-token", "aws-key", "api-key"} <= set(summary["redacted"])
    body = (vault / summary["path"]).read_text()
    assert "[REDACTED:api-key]" in body and "401" in body
    assert _leaks(vault) == []
    assert [c["title"] for c in out["candidates"]] == [
        "Always use the key redacted-stripe-key for the staging shop"
    ]


@pytest.mark.model  # the vaultmem subprocess embeds what it writes with the real model
def test_pre_compact_checkpoint_holds_no_secret(vault, tmp_path):
    payload = json.dumps({"session_id": "5f0c2a9e-2222", "transcript_path": str(_transcript(tmp_path / "t.jsonl")),
                          "cwd": str(tmp_path), "trigger": "auto"})  # fmt: skip
    result = run("hook", "pre-compact", "--vault", str(vault), input=payload)
    assert result.returncode == 0, result.stderr
    assert list((vault / "handoffs").glob("*.md")) and _leaks(vault) == []


@pytest.mark.model  # the vaultmem subprocess embeds what it writes with the real model
def test_remember_checkpoint_and_sleep_redact_and_drop_private_spans(vault):
    remembered = run("remember", "fact", f"Deploy token {GHP}",
                     f"Use {AWS} for the bucket. <private>{PRIVATE}</private> Rest stays.", "--tag", STRIPE,
                     "--json", "--vault", str(vault))  # fmt: skip
    assert remembered.returncode == 0, remembered.stderr
    out = json.loads(remembered.stdout)
    assert out["title"] == "Deploy token redacted-github-token" and set(out["redacted"]) >= {
        "github-token",
        "aws-key",
    }
    text = (vault / out["path"]).read_text()
    assert "[REDACTED:aws-key]" in text and "Rest stays." in text
    assert run("checkpoint", f"tried {LIVE} <private>{PRIVATE}</private>", "--source", "s1",
               "--vault", str(vault)).returncode == 0  # fmt: skip
    assert run("sleep", "--summary", f"Rotated {STRIPE}; done", "--next", f"revoke {GHP}", "--source", "s1",
               "--vault", str(vault)).returncode == 0  # fmt: skip
    assert _leaks(vault) == []


@pytest.mark.anyio
async def test_mcp_writes_redact_and_drop_private_spans(small_vault, fake_embedder):
    from mcp import Client

    from vaultmem.agents.mcp_server import build_server

    srv = build_server(small_vault, fake_embedder)
    try:
        async with Client(srv) as client:
            r = await client.call_tool("remember", {"type": "fact", "title": f"Key {AWS}",
                                                    "content": f"x {GHP} <private>{PRIVATE}</private>"})  # fmt: skip
            assert not r.is_error and r.structured_content["title"] == "Key redacted-aws-key"
            note = f"---\ntitle: Staging\npassword: 'Xk9#mQ2pLq7z'\n---\n# Staging\n\nBearer {LIVE}\n<private>{PRIVATE}</private>\n"
            r = await client.call_tool("write_note", {"path": f"notes/{STRIPE}.md", "content": note})
            assert not r.is_error, r.content
            assert r.structured_content["path"] == "notes/redacted-stripe-key.md"
            text = (small_vault / "notes" / "redacted-stripe-key.md").read_text()
            assert "password: 'redacted-password'" in text and "Xk9#" not in text
            r = await client.call_tool("checkpoint", {"text": f"using {GHP}", "source": "agent-1"})
            assert not r.is_error
            r = await client.call_tool("sleep", {"summary": f"done with {AWS}", "next_steps": f"drop {LIVE}",
                                                 "source": "agent-1"})  # fmt: skip
            assert not r.is_error
    finally:
        srv.memory.vault.close()
    assert _leaks(small_vault) == []


@pytest.mark.model  # the vaultmem subprocess embeds what it writes with the real model
def test_a_persons_note_with_a_secret_is_reported_by_doctor_never_rewritten(vault):
    note = vault / "Ops.md"
    original = f"---\ntitle: Ops\n---\n# Ops\n\nThe deploy token is {GHP}.\n"
    note.write_text(original)
    assert run("index", "--vault", str(vault)).returncode == 0
    doctor = run("doctor", "--json", "--vault", str(vault))
    [finding] = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "secret"]
    assert finding["path"] == "Ops.md" and "github-token (line 6)" in finding["message"]
    assert GHP not in doctor.stdout
    assert note.read_text() == original
    text = run("doctor", "--vault", str(vault)).stdout
    assert "holds a secret" in text and GHP not in text


@pytest.mark.model  # the vaultmem subprocess embeds what it writes with the real model
@pytest.mark.parametrize(
    "text",
    ["Fixed in commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 after review.",
     "The password reset email expires after 1h; see [[Auth flow]].",
     "Booking 550e8400-e29b-41d4-a716-446655440000 was charged twice."],
)  # fmt: skip
def test_near_misses_are_stored_as_written(vault, text):
    out = json.loads(run("remember", "fact", "Plain note", text, "--json", "--vault", str(vault)).stdout)
    assert "redacted" not in out and text in (vault / out["path"]).read_text()
