"""`vaultmem setup`: what each agent needs, printed; --write merges into JSON and TOML configs.

The real home is never touched: HOME and the working folder are temporary, and every
--write passes --config.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultmem.agents import setups as agents
from vaultmem.cli.app import app
from vaultmem.core.errors import BadInput


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fake home and project folder; the test runs inside the project."""
    fake = tmp_path / "home"
    project = tmp_path / "project"
    fake.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.setenv(
        "PATH", "/usr/bin:/bin"
    )  # no `vaultmem` on it: project files name this one by its path
    monkeypatch.chdir(project)
    return fake


def backups(name: str) -> list[Path]:
    """The copies `setup --write` kept of files named ``name`` (in vaultmem's state folder)."""
    return list((Path(os.environ["XDG_STATE_HOME"]) / "vaultmem" / "setup-backups").rglob(f"*%{name}"))


def setup(*args: str):
    return CliRunner().invoke(app, ["setup", *args])


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


EXE = str(
    Path(sys.executable).with_name("vaultmem")
)  # the vaultmem of this environment, by its absolute path


def entry(vault: Path) -> dict:
    return {"command": EXE, "args": ["mcp", "--vault", str(vault.resolve())]}


@pytest.mark.parametrize("agent", agents.AGENTS)
def test_prints_everything_and_writes_nothing(agent, empty_vault, home):
    out = ok(setup(agent, "--vault", str(empty_vault)))
    vault = str(empty_vault.resolve())
    assert vault in out and '"mcp"' in out and '"--vault"' in out
    assert "## Memory (vaultmem)" in out  # the instruction text
    for word in ("recall", "remember", "rate_memories", "supersede", "vaultmem sleep", "bug_fix"):
        assert word in out
    assert "nothing written" in out
    assert list(home.iterdir()) == [] and list(Path.cwd().iterdir()) == []


def test_claude_has_mcp_json_and_session_hooks(empty_vault, home):
    data = json.loads(ok(setup("claude", "--vault", str(empty_vault), "--json")))
    vault = empty_vault.resolve()
    assert data["config_path"] == str(home / ".claude.json")  # Claude Code's local scope: nothing committed
    assert data["config_under"] == ["projects", str(Path.cwd())]
    assert json.loads(data["config_snippet"]) == {"mcpServers": {"vaultmem": entry(vault)}}
    assert data["hooks_path"] == str(Path.cwd() / ".claude" / "settings.local.json")
    hooks = data["hooks"]["hooks"]
    for event, name in (("SessionStart", "start"), ("UserPromptSubmit", "prompt"), ("Stop", "stop"),
                        ("PreCompact", "pre-compact"), ("SessionEnd", "end")):  # fmt: skip
        assert hooks[event][0]["hooks"][0]["command"] == f"{EXE} hook {name} --agent claude --vault {vault}"
    assert data["rules_path"].endswith("CLAUDE.md")
    assert data["written"] is None


@pytest.mark.parametrize("agent, config, hooks_file, rules, events", [
    ("gemini", ".gemini/settings.json", ".gemini/settings.json", "GEMINI.md",
     ["SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd"]),
    ("cursor", ".cursor/mcp.json", ".cursor/hooks.json", ".cursor/rules/vaultmem.mdc",
     ["sessionStart", "beforeSubmitPrompt", "stop", "preCompact", "sessionEnd"]),
    ("codex", ".codex/config.toml", ".codex/hooks.json", "AGENTS.md",
     ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"]),
    ("copilot", ".github/mcp.json", ".github/hooks/vaultmem.json", ".github/copilot-instructions.md",
     ["sessionStart", "userPromptSubmitted", "agentStop", "preCompact", "sessionEnd"]),
])  # fmt: skip
def test_every_agent_gets_the_whole_loop(agent, config, hooks_file, rules, events, empty_vault, home):
    """Before: Gemini and Cursor got no hooks, Codex two (printed only), Copilot nothing at all."""
    data = json.loads(ok(setup(agent, "--vault", str(empty_vault), "--json")))
    project = Path.cwd()
    assert data["config_path"] == str(project / config) and data["rules_path"] == str(project / rules)
    assert data["hooks_path"] == str(project / hooks_file)
    hooks = data["hooks"]["hooks"]
    assert list(hooks) == events
    vault = empty_vault.resolve()
    for event, name in zip(events, ("start", "prompt", "stop", "pre-compact", "end")):
        [entry_] = hooks[event]
        hook = entry_["hooks"][0] if "hooks" in entry_ else entry_
        assert hook.get("command", hook.get("bash")) == f"{EXE} hook {name} --agent {agent} --vault {vault}"
    if agent in ("cursor", "copilot"):
        assert data["hooks"]["version"] == 1
    if agent == "cursor":
        assert data["instructions"].startswith("---\n") and "alwaysApply: true" in data["instructions"]
        assert hooks["stop"][0]["loop_limit"] == 1
    if agent == "codex":
        assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3  # Codex's cap for SessionEnd
    if agent == "gemini":
        assert hooks["BeforeAgent"][0]["hooks"][0]["timeout"] == 30000  # milliseconds
    if agent == "copilot":
        assert data["server"] == {"type": "local", **entry(empty_vault), "tools": ["*"]}
    assert "call `wake`" in data["instructions"]


@pytest.mark.parametrize("agent, config, hooks_file", [
    ("gemini", ".gemini/settings.json", ".gemini/settings.json"), ("cursor", ".cursor/mcp.json", ".cursor/hooks.json"),
    ("codex", ".codex/config.toml", ".codex/hooks.json"), ("copilot", ".copilot/mcp-config.json", ".copilot/hooks/vaultmem.json"),
    ("claude", ".claude.json", ".claude/settings.json"),
])  # fmt: skip
def test_user_level_files(agent, config, hooks_file, empty_vault, home):
    data = json.loads(ok(setup(agent, "--vault", str(empty_vault), "--user", "--json")))
    assert data["config_path"] == str(home / config) and data["hooks_path"] == str(home / hooks_file)


def test_codex_and_copilot_homes_are_honoured(empty_vault, home, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cp"))
    codex = json.loads(ok(setup("codex", "--vault", str(empty_vault), "--user", "--json")))
    copilot = json.loads(ok(setup("copilot", "--vault", str(empty_vault), "--user", "--json")))
    assert codex["hooks_path"] == str(tmp_path / "ch" / "hooks.json")
    assert copilot["config_path"] == str(tmp_path / "cp" / "mcp-config.json")


def test_unknown_agent_is_one_line(empty_vault, home):
    result = setup("vim", "--vault", str(empty_vault))
    assert result.exit_code == 2
    assert (
        result.stderr.strip()
        == "vaultmem: unknown agent 'vim'; choose one of claude, cursor, copilot, gemini, codex"
    )


def test_write_merges_json_keeping_other_servers_and_keys(empty_vault, home, tmp_path):
    config = tmp_path / "settings.json"
    original = {
        "theme": "GitHub",
        "mcpServers": {"github": {"command": "gh-mcp", "args": ["serve"]},
                       "vaultmem": {"command": "old", "env": {"VAULTMEM_SESSION": "me"}}},
        "hooks": {"enabled": True},
    }  # fmt: skip
    config.write_text(json.dumps(original, indent=4), encoding="utf-8")
    before = config.read_text(encoding="utf-8")
    out = ok(setup("gemini", "--vault", str(empty_vault), "--write", "--config", str(config)))
    assert f"merged the vaultmem server into {config}" in out
    data = json.loads(config.read_text(encoding="utf-8"))
    assert data["theme"] == "GitHub" and data["hooks"]["enabled"] is True  # Gemini's older switch stays
    assert set(data["hooks"]) == {
        "enabled",
        "SessionStart",
        "BeforeAgent",
        "AfterAgent",
        "PreCompress",
        "SessionEnd",
    }
    assert data["mcpServers"]["github"] == original["mcpServers"]["github"]
    assert data["mcpServers"]["vaultmem"] == {**entry(empty_vault), "env": {"VAULTMEM_SESSION": "me"}}
    kept = backups("settings.json")
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == before
    assert not list(tmp_path.glob("*.bak-*"))  # never beside the file
    # again: idempotent, nothing written, no second backup
    after = config.read_text(encoding="utf-8")
    out = ok(setup("gemini", "--vault", str(empty_vault), "--write", "--config", str(config)))
    assert "already has this vaultmem server" in out
    assert config.read_text(encoding="utf-8") == after
    assert len(backups("settings.json")) == 1


def test_write_creates_a_missing_config(empty_vault, home, tmp_path):
    config = tmp_path / "proj" / ".cursor" / "mcp.json"
    ok(setup("cursor", "--vault", str(empty_vault), "--write", "--config", str(config)))
    assert json.loads(config.read_text(encoding="utf-8")) == {"mcpServers": {"vaultmem": entry(empty_vault)}}
    assert not backups("mcp.json")


def test_write_refuses_broken_json_and_leaves_it(empty_vault, home, tmp_path):
    config = tmp_path / ".mcp.json"
    config.write_text('{"mcpServers": {"a": 1,}', encoding="utf-8")
    result = setup("claude", "--vault", str(empty_vault), "--write", "--config", str(config))
    assert result.exit_code == 2 and "not valid JSON" in result.stderr
    assert config.read_text(encoding="utf-8") == '{"mcpServers": {"a": 1,}'
    assert not backups(".mcp.json")


CODEX = """\
# Codex settings
model = "o4-mini"
approval_policy = "on-request"

[mcp_servers.github]
command = "gh-mcp"
args = ["serve", "--stdio"]

[mcp_servers.vaultmem]
# pinned by hand
command = "/opt/old/vaultmem"
args = [
    "mcp",
    "--vault",
    "/old/vault",
]
startup_timeout_sec = 30

[mcp_servers.vaultmem.env]
VAULTMEM_SESSION = "codex"

[profiles.fast]
model = "gpt-5-mini"
"""


def test_write_merges_toml_keeping_other_tables(empty_vault, home, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(CODEX, encoding="utf-8")
    ok(setup("codex", "--vault", str(empty_vault), "--write", "--config", str(config)))
    text = config.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    old = tomllib.loads(CODEX)
    assert data["mcp_servers"]["vaultmem"] == {**old["mcp_servers"]["vaultmem"], **entry(empty_vault)}
    assert data["mcp_servers"]["vaultmem"]["env"] == {"VAULTMEM_SESSION": "codex"}
    assert data["mcp_servers"]["github"] == old["mcp_servers"]["github"]
    assert data["profiles"] == old["profiles"] and data["model"] == "o4-mini"
    assert "# Codex settings" in text and "# pinned by hand" in text and "/old/vault" not in text
    kept = backups("config.toml")
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == CODEX
    ok(setup("codex", "--vault", str(empty_vault), "--write", "--config", str(config)))
    assert config.read_text(encoding="utf-8") == text
    assert len(backups("config.toml")) == 1


def test_toml_table_is_appended_when_missing(empty_vault, home, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n', encoding="utf-8")
    ok(setup("codex", "--vault", str(empty_vault), "--write", "--config", str(config)))
    text = config.read_text(encoding="utf-8")
    assert text.startswith('model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n\n[mcp_servers.vaultmem]\n')
    assert tomllib.loads(text)["mcp_servers"]["vaultmem"] == entry(empty_vault)


def test_toml_in_another_form_is_refused_untouched(empty_vault, home, tmp_path):
    config = tmp_path / "config.toml"
    inline = 'mcp_servers = { vaultmem = { command = "x" } }\n'
    config.write_text(inline, encoding="utf-8")
    result = setup("codex", "--vault", str(empty_vault), "--write", "--config", str(config))
    assert result.exit_code == 2 and "add the table by hand" in result.stderr
    assert config.read_text(encoding="utf-8") == inline


def test_toml_values_are_escaped():
    value = 'C:\\Users\\me\\"vault"\n\x7f'
    text = agents.toml_table(("mcp_servers", "vaultmem"), {"args": [value], "on": True, "n": 3})
    assert tomllib.loads(text) == {"mcp_servers": {"vaultmem": {"args": [value], "on": True, "n": 3}}}
    assert agents.toml_table(("a b", "c"), {"k.x": "v"}).startswith('["a b".c]\n"k.x" = "v"')


def test_merge_json_rejects_non_objects():
    with pytest.raises(BadInput):
        agents.merge_json("[1, 2]", {"command": "x"})
    with pytest.raises(BadInput):
        agents.merge_json('{"mcpServers": []}', {"command": "x"})


def test_switching_codex_to_http_drops_the_stdio_keys(empty_vault, home, tmp_path):
    """Before: `command` and `args` stayed beside the new `url`, an entry Codex cannot use."""
    config = tmp_path / "config.toml"
    config.write_text(CODEX, encoding="utf-8")
    ok(setup("codex", "--vault", str(empty_vault), "--http", "--write", "--config", str(config)))
    table = tomllib.loads(config.read_text(encoding="utf-8"))["mcp_servers"]["vaultmem"]
    assert "command" not in table and "args" not in table
    assert table["url"].startswith("http://127.0.0.1:") and table["http_headers"]["Authorization"].startswith(
        "Bearer "
    )
    assert table["startup_timeout_sec"] == 30 and table["env"] == {
        "VAULTMEM_SESSION": "codex"
    }  # the user's keys stay
    ok(setup("codex", "--vault", str(empty_vault), "--write", "--config", str(config)))  # and back to stdio
    table = tomllib.loads(config.read_text(encoding="utf-8"))["mcp_servers"]["vaultmem"]
    assert (
        table["command"]
        and "url" not in table
        and "http_headers" not in table
        and table["startup_timeout_sec"] == 30
    )


OTHER_HOOKS = {  # a hook of the user's own in each agent's config, next to an older vaultmem one
    "gemini": ({"hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": "./lint.sh"}]}],
                          "AfterAgent": [{"hooks": [{"type": "command", "command": "vaultmem hook stop"}]}]},
                "mcpServers": {"github": {"command": "gh-mcp"}}, "theme": "Dracula"}, ".gemini/settings.json"),
    "cursor": ({"version": 1, "hooks": {"beforeSubmitPrompt": [{"command": "./lint.sh"}],
                                        "stop": [{"command": "/old/bin/vaultmem hook stop --agent cursor"}]}},
               ".cursor/hooks.json"),
    "codex": ({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}]}},
              ".codex/hooks.json"),
    "copilot": ({"version": 1, "hooks": {"userPromptSubmitted": [{"type": "command", "bash": "./lint.sh"}],
                                         "agentStop": [{"type": "command", "bash": "vaultmem hook stop"}]}},
                ".github/hooks/vaultmem.json"),
}  # fmt: skip


@pytest.mark.parametrize("agent", list(OTHER_HOOKS))
def test_write_merges_hooks_keeping_the_users_own(agent, empty_vault, home):
    original, rel = OTHER_HOOKS[agent]
    path = Path.cwd() / rel
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(original), encoding="utf-8")
    out = ok(setup(agent, "--vault", str(empty_vault), "--write"))
    assert f"merged the vaultmem hooks into {path}" in out
    data = json.loads(path.read_text(encoding="utf-8"))
    mine = [(event, h) for event, groups in data["hooks"].items() for g in groups
            for h in (g["hooks"] if "hooks" in g else [g])]  # fmt: skip
    commands = [h.get("command", h.get("bash")) for _, h in mine]
    assert "./lint.sh" in commands  # the user's hook stays
    ours = [c for c in commands if c != "./lint.sh"]
    assert len(ours) == 5 and all(
        c.startswith(f"{EXE} hook ") and f"--agent {agent}" in c for c in ours
    )  # the old one replaced
    user_event = next(e for e, h in mine if h.get("command", h.get("bash")) == "./lint.sh")
    assert [h.get("command", h.get("bash")) for e, h in mine if e == user_event][
        0
    ] == "./lint.sh"  # and stays first
    for key, value in original.items():
        if key != "hooks":
            assert data[key] == value or key == "mcpServers"
    if agent == "gemini":  # the MCP entry lives in the same file: one write, one backup
        assert data["mcpServers"]["github"] == {"command": "gh-mcp"} and data["mcpServers"][
            "vaultmem"
        ] == entry(empty_vault)
    assert len(backups(path.name)) == 1
    after = path.read_text(encoding="utf-8")
    again = ok(setup(agent, "--vault", str(empty_vault), "--write"))
    assert "already has these vaultmem hooks" in again and path.read_text(encoding="utf-8") == after
    assert len(backups(path.name)) == 1


def test_write_user_level_gemini(empty_vault, home):
    ok(setup("gemini", "--vault", str(empty_vault), "--write", "--user"))
    data = json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert set(data) == {"mcpServers", "hooks"} and len(data["hooks"]) == 5
    assert not (Path.cwd() / ".gemini").exists()


def test_warns_when_vaultmem_lives_in_a_temporary_environment(empty_vault, home, tmp_path, monkeypatch):
    fake = tmp_path / "venv" / "bin" / "vaultmem"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(fake), "setup"])
    data = json.loads(ok(setup("cursor", "--vault", str(empty_vault), "--json")))
    assert data["command"] == str(fake) and data["server"]["command"] == str(fake)
    assert any("temporary" in n and "install vaultmem for good" in n for n in data["notes"])
    assert agents.temporary_place("/home/me/.cache/uv/archive-v0/abc/bin/vaultmem") == "uv's cache (uvx)"
    assert (
        agents.temporary_place("/usr/local/bin/vaultmem") is None
        and agents.temporary_place("vaultmem") is None
    )


# ---------------------------------------------------------------------- issue 35, "Required 2"


def test_claude_hooks_declare_timeouts_so_session_end_is_not_killed(empty_vault, home):
    """Before: no `timeout` on any Claude Code hook, and Claude Code kills a SessionEnd hook
    after 1.5 s unless it declares one ("Hook cancelled"): no summary was ever written."""
    hooks = json.loads(ok(setup("claude", "--vault", str(empty_vault), "--json")))["hooks"]["hooks"]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] >= 30
    assert all(
        isinstance(group["hooks"][0].get("timeout"), int) for groups in hooks.values() for group in groups
    )


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_forked_sessions_get_memory(agent, empty_vault, home):
    """Before: the SessionStart matcher was `startup|resume|clear|compact`; Claude Code 2.1.214+
    and Codex start a forked session with `source: "fork"`."""
    import re

    data = json.loads(ok(setup(agent, "--vault", str(empty_vault), "--json")))
    [group] = data["hooks"]["hooks"]["SessionStart"]
    assert "matcher" not in group or re.fullmatch(group["matcher"], "fork")


def test_gemini_precompress_runs_only_on_a_manual_compress(empty_vault, home):
    """Gemini fires PreCompress (trigger auto) before every model call and waits for it: the
    hook is matched to `manual` (`/compress`), so an auto one does not even start vaultmem."""
    data = json.loads(ok(setup("gemini", "--vault", str(empty_vault), "--json")))
    assert data["hooks"]["hooks"]["PreCompress"][0]["matcher"] == "manual"


# ---------------------------------------------------------------------- issue 35, "Required 4"


def tree(*roots: Path) -> dict[str, bytes]:
    """Every file under the roots, by path, with its bytes."""
    return {str(p): p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file()}


def user_files(home: Path, project: Path) -> None:
    """A project and home with the user's own settings in every file setup writes to."""
    own = {"mcpServers": {"github": {"command": "gh-mcp"}}, "theme": "dark"}
    for rel in (".mcp.json", ".gemini/settings.json", ".cursor/mcp.json", ".github/mcp.json",
                ".claude/settings.json"):  # fmt: skip
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(json.dumps(own, indent=4) + "\n", encoding="utf-8")
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(
        CODEX.split("[mcp_servers.vaultmem]")[0], encoding="utf-8"
    )
    (project / ".git" / "info").mkdir(parents=True)
    (project / ".git" / "info" / "exclude").write_text(
        "# git ls-files --others --exclude-from=.git/info/exclude\n"
    )
    (home / ".claude.json").write_text(
        json.dumps({"numStartups": 3, "projects": {"/elsewhere": {}}}), encoding="utf-8"
    )


@pytest.mark.parametrize("prepared", [True, False], ids=["files-there", "no-files"])
@pytest.mark.parametrize("agent", agents.AGENTS)
def test_remove_undoes_exactly_what_write_added(agent, prepared, empty_vault, home):
    """Before: `setup --write` had no undo."""
    project = Path.cwd()
    if prepared:
        user_files(home, project)
    before = tree(home, project)
    ok(setup(agent, "--vault", str(empty_vault), "--write"))
    assert tree(home, project) != before
    out = ok(setup(agent, "--vault", str(empty_vault), "--remove"))
    assert "what --write added taken out" in out or "deleted (--write had created it" in out
    assert tree(home, project) == before  # byte for byte; files --write created are gone, with their folders
    assert ok(setup(agent, "--vault", str(empty_vault), "--remove")).count("nothing") >= 1


def test_remove_of_a_file_changed_since_takes_out_only_vaultmem(empty_vault, home):
    ok(setup("cursor", "--vault", str(empty_vault), "--write"))
    hooks = Path.cwd() / ".cursor" / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["afterFileEdit"] = [{"command": "./format.sh"}]
    hooks.write_text(json.dumps(data))
    ok(setup("cursor", "--vault", str(empty_vault), "--remove"))
    assert json.loads(hooks.read_text()) == {
        "version": 1,
        "hooks": {"afterFileEdit": [{"command": "./format.sh"}]},
    }
    assert not (Path.cwd() / ".cursor" / "mcp.json").exists()  # unchanged since --write created it


def committed(project: Path) -> dict[str, str]:
    """The project's files a `git add .` would take (not .git/, not what .git/info/exclude lists)."""
    exclude = (
        (project / ".git" / "info" / "exclude").read_text().splitlines()
        if (project / ".git").is_dir()
        else []
    )
    return {str(p.relative_to(project)): p.read_text() for p in project.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(project).parts[:1] and str(p.relative_to(project)) not in exclude}  # fmt: skip


def test_claude_writes_personal_paths_only_into_local_settings(empty_vault, home):
    """Before: `.mcp.json` and `.claude/settings.json` (both committed) got the venv's and the
    vault's absolute paths, and `.bak-*` copies were left in the repository."""
    project = Path.cwd()
    user_files(home, project)
    shared_before = committed(project)
    ok(setup("claude", "--vault", str(empty_vault), "--write"))
    assert committed(project) == shared_before  # nothing a teammate would commit changed
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert len(local["hooks"]) == 5
    assert ".claude/settings.local.json" in (project / ".git" / "info" / "exclude").read_text()
    claude = json.loads((home / ".claude.json").read_text())
    assert claude["projects"][str(project)]["mcpServers"]["vaultmem"] == entry(empty_vault)
    assert claude["numStartups"] == 3 and claude["projects"]["/elsewhere"] == {}
    assert not [p for p in project.rglob("*") if ".bak-" in p.name]


@pytest.mark.parametrize("agent", ["codex", "gemini", "cursor", "copilot"])
def test_project_files_hold_what_a_teammate_can_run(agent, empty_vault, home, monkeypatch):
    """With `vaultmem` on the PATH and the vault registered by name, the project's files hold
    neither the venv's path nor the vault's; otherwise setup says they hold personal paths."""
    personal = json.loads(ok(setup(agent, "--vault", str(empty_vault), "--json")))
    assert any("personal paths" in n for n in personal["notes"])
    monkeypatch.setenv("PATH", f"{Path(EXE).parent}:/usr/bin:/bin")
    ok(CliRunner().invoke(app, ["vault", "add", "memory", str(empty_vault)]))
    ok(setup(agent, "--vault", str(empty_vault), "--write"))
    text = "\n".join(committed(Path.cwd()).values())
    assert f"vaultmem hook start --agent {agent} --vault memory" in text
    assert str(empty_vault.resolve()) not in text and EXE not in text
    assert not [p for p in Path.cwd().rglob("*") if ".bak-" in p.name]
    from vaultmem.agents import hook_runs

    assert agent in hook_runs.set_up(empty_vault)  # status finds it by the vault's name


@pytest.mark.parametrize("agent, words", [("codex", "trust the vaultmem hooks in /hooks"),
                                          ("gemini", "untrusted folder: trust the project folder")])  # fmt: skip
def test_setup_says_the_trust_step_is_required(agent, words, empty_vault, home):
    out = ok(setup(agent, "--vault", str(empty_vault)))
    assert any(line.startswith("REQUIRED: ") and words in line for line in out.splitlines())


# ---------------------------------------------------------------------- issue 46: set-up owns keys


def claude_saves(path: Path, change) -> None:
    """Claude Code saving ``~/.claude.json`` as it does (``JSON.stringify(data, null, 2)``, no
    final newline), after ``change`` of its own."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False))


def in_project(folder: Path, monkeypatch) -> Path:
    folder.mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("existed", [True, False], ids=["claude-json-there", "no-claude-json"])
def test_remove_of_one_project_keeps_the_others_and_claudes_own_keys(existed, empty_vault, home, monkeypatch):
    """Before: `setup claude --remove` in B restored the whole-file snapshot of the first set-up
    (A's entry lost) or deleted ~/.claude.json ("deleted (--write had created it)")."""
    state = home / ".claude.json"
    if existed:
        state.write_text(
            json.dumps({"numStartups": 3, "projects": {"/elsewhere": {"history": []}}}, indent=2)
        )
    a = in_project(home.parent / "alpha", monkeypatch)
    ok(setup("claude", "--vault", str(empty_vault), "--write"))
    claude_saves(state, lambda d: d.update(numStartups=4, tipsHistory={"new-user": 1}))
    b = in_project(home.parent / "beta", monkeypatch)
    ok(setup("claude", "--vault", str(empty_vault), "--write"))
    claude_saves(state, lambda d: d["projects"][str(b)].update(allowedTools=[], hasTrustDialogAccepted=True))
    saved = json.loads(state.read_text())
    out = ok(setup("claude", "--vault", str(empty_vault), "--remove"))
    assert "deleted" not in out.split(str(state))[1].splitlines()[0]
    del saved["projects"][str(b)]["mcpServers"]  # the one thing B's set-up added that is left to take out
    assert state.read_text() == json.dumps(saved, indent=2, ensure_ascii=False)  # byte for byte
    assert saved["projects"][str(a)]["mcpServers"]["vaultmem"] == entry(empty_vault)
    monkeypatch.chdir(a)
    ok(setup("claude", "--vault", str(empty_vault), "--remove"))
    left = json.loads(state.read_text())
    assert (
        str(a) not in left["projects"] and left["numStartups"] == 4 and left["tipsHistory"] == {"new-user": 1}
    )
    assert left["projects"][str(b)] == {"allowedTools": [], "hasTrustDialogAccepted": True}
    assert "vaultmem" not in state.read_text()


def test_remove_deletes_a_created_file_only_when_nothing_else_is_in_it(empty_vault, home):
    state = home / ".claude.json"
    ok(setup("claude", "--vault", str(empty_vault), "--write"))
    ok(setup("claude", "--vault", str(empty_vault), "--remove"))
    assert not state.exists()  # created by --write alone, untouched since
    ok(setup("claude", "--vault", str(empty_vault), "--write"))
    claude_saves(state, lambda d: d.update(numStartups=1))
    out = ok(setup("claude", "--vault", str(empty_vault), "--remove"))
    assert json.loads(state.read_text()) == {"numStartups": 1}, out


@pytest.mark.parametrize("agent, rel", [("claude", ".claude.json"), ("gemini", ".gemini/settings.json")])
def test_a_symlinked_config_stays_a_symlink(agent, rel, empty_vault, home):
    """Before: --write and --remove replaced a symlinked settings file (a dotfiles repository's)
    with a copy of its target."""
    dotfiles = home / "dotfiles" / "config.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{\n  "theme": "dark"\n}\n')
    link = (home if agent == "claude" else Path.cwd()) / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(dotfiles)
    ok(setup(agent, "--vault", str(empty_vault), "--write"))
    assert link.is_symlink() and "vaultmem" in dotfiles.read_text()
    ok(setup(agent, "--vault", str(empty_vault), "--remove"))
    assert link.is_symlink() and dotfiles.read_text() == '{\n  "theme": "dark"\n}\n'


def test_write_edits_a_shared_file_in_place(empty_vault, home):
    """--write adds its member in the file's own layout; every other byte stays."""
    state = home / ".claude.json"
    text = '{\n    "numStartups": 3,\n    "projects": {\n        "/elsewhere": {"history": [1, 2]}\n    }\n}'
    state.write_text(text)
    ok(setup("claude", "--vault", str(empty_vault), "--write"))
    new = state.read_text()
    assert new.startswith(
        '{\n    "numStartups": 3,\n    "projects": {\n        "/elsewhere": {"history": [1, 2]},\n'
    )
    assert new.endswith("\n    }\n}")
    ok(setup("claude", "--vault", str(empty_vault), "--remove"))
    assert state.read_text() == text


@pytest.mark.parametrize("first, then", [("claude", "copilot"), ("copilot", "claude"), ("claude", "cursor")])
def test_setup_says_when_an_agent_also_runs_anothers_vaultmem_hooks(first, then, empty_vault, home):
    """Before: neither set-up said that Copilot CLI runs Claude Code's hooks too (every hook ran
    twice and the start block reached the model twice)."""
    assert not [n for n in json.loads(ok(setup(then, "--vault", str(empty_vault), "--json")))["notes"]
                if "also runs the hooks" in n]  # fmt: skip
    ok(setup(first, "--vault", str(empty_vault), "--write"))
    notes = json.loads(ok(setup(then, "--vault", str(empty_vault), "--json")))["notes"]
    who = {"copilot": "Copilot CLI", "cursor": "Cursor"}[then if then != "claude" else first]
    local = str(Path.cwd() / ".claude" / "settings.local.json")
    assert [
        n
        for n in notes
        if n.startswith(f"{who} also runs the hooks in {local}") and "answer the first run" in n
    ]
