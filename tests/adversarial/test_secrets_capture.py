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

pytestmark = pytest.mark.integration  # the CLI in subprocesses

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
    # a rule made of a secret is no candidate at all (issue 36: "no candidate is made of a
    # redacted secret"); before that it was kept with the key redacted
    assert [c["title"] for c in out["candidates"]] == []


def test_pre_compact_checkpoint_holds_no_secret(vault, tmp_path):
    payload = json.dumps({"session_id": "5f0c2a9e-2222", "transcript_path": str(_transcript(tmp_path / "t.jsonl")),
                          "cwd": str(tmp_path), "trigger": "auto"})  # fmt: skip
    result = run("hook", "pre-compact", "--vault", str(vault), input=payload)
    assert result.returncode == 0, result.stderr
    assert list((vault / "handoffs").glob("*.md")) and _leaks(vault) == []


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
            data = r.structured_content
            data = data.get("result", data)  # a tool built from declared fields wraps its dict
            assert not r.is_error and data["title"] == "Key redacted-aws-key", r.content
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


@pytest.mark.parametrize(
    "text",
    ["Fixed in commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 after review.",
     "The password reset email expires after 1h; see [[Auth flow]].",
     "Booking 550e8400-e29b-41d4-a716-446655440000 was charged twice."],
)  # fmt: skip
def test_near_misses_are_stored_as_written(vault, text):
    out = json.loads(run("remember", "fact", "Plain note", text, "--json", "--vault", str(vault)).stdout)
    assert "redacted" not in out and text in (vault / out["path"]).read_text()


# ---------------------------------------------------------------- issue 39, medium 5

MYSQL_PW = "My5ql" + "".join(rng.choice(AN) for _ in range(9))
SSH_PW = "".join(rng.choice(string.ascii_lowercase) for _ in range(9)) + "42!"
DOCKER_PW = "Dk" + "".join(rng.choice(AN) for _ in range(12))
AWS_SECRET = "".join(rng.choice(AN + "/+") for _ in range(40))
REDIS_PW = "".join(rng.choice(AN) for _ in range(16))
SHPAT = "shpat_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
DOP = "dop_v1_" + "".join(rng.choice("0123456789abcdef") for _ in range(64))
COOKIE = "".join(rng.choice(AN) for _ in range(32))
WIDER = (MYSQL_PW, SSH_PW, DOCKER_PW, AWS_SECRET, REDIS_PW, SHPAT, DOP, COOKIE)
COMMANDS = [
    f"mysql -u root -p{MYSQL_PW} -h db.internal shop -e 'select 1'",
    f"sshpass -p '{SSH_PW}' ssh deploy@web1 uptime",
    f"docker login -u ci -p {DOCKER_PW} registry.example.com",
    f"redis-cli -u redis://:{REDIS_PW}@cache.internal:6379/0 ping",
    f"curl -H 'X-Shopify-Access-Token: {SHPAT}' https://shop.example.com/admin/api/orders.json",
    f"doctl auth init -t {DOP}",
    f"curl -H 'Cookie: session={COOKIE}; theme=dark' https://app.example.com/api/me",
]


def _wider_transcript(path: Path) -> Path:
    """A session whose commands pass passwords on the command line (each fails, so the summary
    lists it under what failed), and a prompt that pastes an AWS secret key in prose."""
    lines = [{"type": "user", "message": {"role": "user", "content":
              f"The AWS secret key is {AWS_SECRET} for the backup user; check the shop database."}}]  # fmt: skip
    for i, cmd in enumerate(COMMANDS):
        lines += [
            {"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"c{i}", "name": "Bash", "input": {"command": cmd}}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": f"c{i}", "type": "tool_result", "content": "error: access denied", "is_error": True}]}},
        ]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def test_hook_end_redacts_command_line_passwords_url_credentials_and_new_tokens(vault, tmp_path):
    """Before: the summary carried `mysql -pPASS` (three times), the sshpass, docker and redis
    passwords, the AWS secret key in prose, the Shopify and DigitalOcean tokens and the cookie."""
    payload = json.dumps({"session_id": "5f0c2a9e-3333", "transcript_path": str(_wider_transcript(tmp_path / "t.jsonl")),
                          "cwd": str(tmp_path)})  # fmt: skip
    result = run("hook", "end", "--json", "--vault", str(vault), input=payload)
    assert result.returncode == 0, result.stderr
    body = (vault / json.loads(result.stdout)["summary"]["path"]).read_text()
    assert "mysql -u root -p[REDACTED:password]" in body
    leaks = [s[:8] for s in WIDER for p in vault.rglob("*.md") if s in p.read_text()]
    assert leaks == []


def test_a_note_holding_a_secret_is_never_injected_verbatim(tmp_path, fake_embedder, monkeypatch):
    """A person's note that doctor flags is left as it is, and `wake` and `hook prompt` show it
    redacted. Before: both injected the password and the token."""
    from typer.testing import CliRunner

    from vaultmem.cli.app import app
    from vaultmem.core.scaffold import init_vault

    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    root = tmp_path / "v"
    init_vault(root)
    text = (f"---\ntitle: Shop database access\ntype: gotcha\nimportance: 9\n---\nShop database access: "
            f"`mysql -u root -p{MYSQL_PW} shop`; the admin token is {SHPAT}.\n")  # fmt: skip
    (root / "Shop.md").write_text(text)

    def cli(*args: str, stdin: str | None = None) -> str:
        out = CliRunner().invoke(app, [*args, "--vault", str(root)], input=stdin)
        assert out.exit_code in (0, 1), (out.stdout, out.stderr)
        return out.stdout

    assert [f["path"] for f in json.loads(cli("doctor", "--json"))["findings"] if f["check"] == "secret"] == [
        "Shop.md"
    ]
    wake = cli("wake")
    prompt = cli(
        "hook", "prompt", stdin=json.dumps({"session_id": "s", "prompt": "shop database access mysql"})
    )
    for shown in (wake, prompt):
        assert "Shop database access" in shown and "[REDACTED:password]" in shown
        assert MYSQL_PW not in shown and SHPAT not in shown
    assert (root / "Shop.md").read_text() == text
