"""Adding a sixth agent is one module and one registry line (issue 34, "A module per agent"):
the example of docs/architecture.md ("Agents"), read from the doc itself, registered as its one
line in ``adapters.REGISTRY``, then run through detection, ``setup``, the hooks (``hook end``
reading its log with the module's reader) and ``import --from acme-cli`` (its history, found
and read as the module says)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from vaultmem.agents import adapters
from vaultmem.cli.app import app

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
FIRST, SECOND = "a1b2c3d4-0001", "e5f6a7b8-0002"
CWD = "/home/dev/src/anvil"


def example() -> ModuleType:
    """``vaultmem/agents/kinds/acme.py`` as the doc shows it, made a module of that package."""
    code = re.search(r"```python\n(# vaultmem/agents/kinds/acme\.py\n.*?)```", DOC.read_text(), re.S)
    assert code, "docs/architecture.md lost its sixth-agent example"
    spec = importlib.util.spec_from_loader("vaultmem.agents.kinds.acme", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "vaultmem.agents.kinds"
    exec(compile(code.group(1), "acme.py", "exec"), module.__dict__)
    return module


@pytest.fixture
def home(tmp_path, monkeypatch, fake_model) -> Path:
    """Acme registered (its one registry line), a fake home and a project folder to run in."""
    module = example()
    monkeypatch.setitem(sys.modules, "vaultmem.agents.kinds.acme", module)
    registry = (module.Acme(), *adapters.REGISTRY)  # the one line
    monkeypatch.setattr(adapters, "REGISTRY", registry)
    monkeypatch.setitem(adapters.ADAPTERS, "acme", registry[0])
    fake = tmp_path / "home"
    (tmp_path / "project").mkdir()
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.chdir(tmp_path / "project")
    return fake


def acme_log(path: Path, prompt: str, answer: str, day: str) -> Path:
    """A finished Acme CLI session log (one JSON object a line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"role": "user", "text": prompt, "ts": f"{day}T09:00:00Z", "cwd": CWD},
             {"role": "assistant", "text": answer, "ts": f"{day}T09:05:00Z", "cwd": CWD}]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def cli(*args: str, input: str | None = None):
    result = CliRunner().invoke(app, list(args), input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def sources(vault: Path) -> list[str]:
    return sorted(m.group(1) for p in vault.rglob("*.md") if ".vaultmem" not in p.parts
                  for m in [re.search(r"^source: (.+)$", p.read_text(), re.M)] if m)  # fmt: skip


def test_a_sixth_agent_is_one_module_and_one_registry_line(home, empty_vault):
    vault = str(empty_vault)
    # detection asks each module
    assert adapters.detect({"acme_session": "1"}, {}) == "acme"
    assert adapters.adapter_for(None, {"acme_session": "1"}).title == "Acme CLI"
    # setup writes its files, with its event names
    cli("setup", "acme", "--vault", vault, "--write", "--user")
    hooks = json.loads((home / ".acme" / "hooks.json").read_text())["hooks"]
    assert list(hooks) == ["sessionStart", "promptSubmit", "stop", "preCompact", "sessionEnd"]
    assert "hook start --agent acme" in hooks["sessionStart"][0]["hooks"][0]["command"]
    # the hooks answer in its shape; hook end reads its log with its own reader
    first = acme_log(home / ".acme" / "sessions" / f"{FIRST}.jsonl",
                     "Add a refund endpoint to the orders API. Always use integer cents for money, never floats.",
                     "Added POST /orders/{id}/refund with a test.", "2026-03-14")  # fmt: skip
    payload = {"acme_session": "1", "session_id": FIRST, "transcript_path": str(first), "cwd": CWD}
    start = json.loads(cli("hook", "start", "--vault", vault, input=json.dumps(payload)))
    assert start["hookSpecificOutput"]["hookEventName"] == "sessionStart"
    cli("hook", "end", "--agent", "acme", "--wait", "--vault", vault, input=json.dumps(payload))
    assert sources(empty_vault).count("acme-cli-a1b2c3d4") >= 1  # its summary, named by its source rule
    # import --from acme-cli: its history where the module says, read as the module says
    acme_log(home / ".acme" / "sessions" / f"{SECOND}.jsonl", "Rename the ledger table to payments.",
             "Renamed it, with a migration.", "2026-03-15")  # fmt: skip
    out = json.loads(cli("import", "--from", "acme-cli", "--vault", vault, "--json"))
    assert [w["session"] for w in out["written"]] == [SECOND]
    assert (
        out["written"][0]["source"] == "acme-cli-e5f6a7b8" and out["written"][0]["anchor"] == "Project: anvil"
    )
    assert out["already_imported"] == ["acme-cli-a1b2c3d4"]  # captured by hook end: not imported twice
    assert out["undo"] and out["files"] == 2
    assert adapters.session_source("acme", "0123456789") == "acme-cli-01234567"
    # a file that is no Acme log stops an import of that file with one line
    bad = home / "not-a-log.jsonl"
    bad.write_text('{"other": 1}\n')
    os.utime(bad, (time.time() - 3600,) * 2)
    failed = CliRunner().invoke(app, ["import", "--from", "acme-cli", str(bad), "--vault", vault])
    assert failed.exit_code == 2 and "not an Acme CLI log; nothing was imported" in failed.stderr


def test_the_importers_are_asked_of_the_registry(empty_vault):
    """`--from` names every registered agent with a history, then the other sources."""
    from vaultmem.agents import importers

    assert list(importers.sources()) == [
        "claude-code",
        "codex",
        "rules",
        "mcp-memory",
        "chatgpt",
        "claude-ai",
    ]
    bad = CliRunner().invoke(app, ["import", "--from", "acme-cli", "--vault", str(empty_vault)])
    assert bad.exit_code == 2 and "'acme-cli' is not one of: claude-code, codex, rules" in bad.stderr


def test_no_module_outside_the_agent_modules_names_an_agent():
    """An agent's facts live in its module: no other module of vaultmem decides by an agent's
    name (Claude Code, the baseline, aside). Before, setups.py named Cursor, Codex and Gemini,
    hook_runs.py Gemini and adapters.py Gemini and Copilot CLI."""
    import ast

    names = {a.name for a in adapters.REGISTRY} | {a.label for a in adapters.REGISTRY}
    names -= {"claude", "claude-code"}
    pkg = Path(adapters.__file__).resolve().parent.parent
    found = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if rel.startswith(("agents/kinds/", "agents/transcripts/")) or rel == "core/holdback.py":
            continue  # the agent modules, the readers of their logs, and a list of words people use
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{rel}:{node.lineno} {node.value!r}")
    assert found == []
