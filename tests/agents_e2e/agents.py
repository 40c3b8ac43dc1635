"""How each real agent CLI is pointed at the fake model and run headless.

Each spec names the config files ``vaultmem setup AGENT --write`` wrote (whose hooks the test
wraps), the user-level steps a person would take once (trusting a folder, a provider entry),
and the headless command line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agents_e2e.harness import Workspace
from agents_e2e.install import PINS

FAKE_KEY = "e2e-fake-key"  # the fake model accepts anything; no real credential is ever used


@dataclass
class Claude:
    """Claude Code: Anthropic Messages API at ``ANTHROPIC_BASE_URL``, ``claude -p``."""

    name: str = "claude"
    version: str = PINS["claude"][1]

    def configs(self, ws: Workspace) -> list[Path]:
        return [ws.proj / ".claude" / "settings.local.json"]

    def command(self, ws: Workspace, bindir: Path, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        env = {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        argv = [str(bindir / "claude"), "-p", prompt, "--allowedTools", "Bash", "--output-format", "json"]
        return argv, env

    def fork(self, ws: Workspace, bindir: Path, url: str, prompt: str, session_id: str) -> list[str]:
        argv, _ = self.command(ws, bindir, url, prompt)
        return [*argv, "--resume", session_id, "--fork-session"]


@dataclass
class Gemini:
    """Gemini CLI: ``GOOGLE_GEMINI_BASE_URL`` (the gateway auth type), ``gemini -p``, the
    project folder trusted in ``~/.gemini/trustedFolders.json`` as its user would."""

    name: str = "gemini"
    version: str = PINS["gemini"][1]
    trust_folder: bool = True

    def configs(self, ws: Workspace) -> list[Path]:
        return [ws.proj / ".gemini" / "settings.json"]

    def command(self, ws: Workspace, bindir: Path, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        gem = ws.home / ".gemini"
        gem.mkdir(parents=True, exist_ok=True)
        (gem / "trustedFolders.json").write_text(json.dumps({str(ws.proj): "TRUST_FOLDER"}))
        user = {  # an API-key user (the gateway auth that GOOGLE_GEMINI_BASE_URL picks is refused headless)
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True},
        }
        (gem / "settings.json").write_text(json.dumps(user))
        if not self.trust_folder:
            (gem / "trustedFolders.json").write_text(json.dumps({str(ws.proj): "DO_NOT_TRUST"}))
        env = {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": FAKE_KEY}
        argv = [str(bindir / "gemini"), "-p", prompt, "--yolo", "--output-format", "json"]
        return argv, env


@dataclass
class Codex:
    """Codex CLI: a ``[model_providers]`` entry (Responses API) in ``$CODEX_HOME/config.toml``,
    the project trusted there, ``codex exec``. ``trust_hooks``: pass
    ``--dangerously-bypass-hook-trust`` (hooks are otherwise skipped until trusted in ``/hooks``)."""

    name: str = "codex"
    version: str = PINS["codex"][1]
    trust_hooks: bool = True

    def configs(self, ws: Workspace) -> list[Path]:
        return [ws.proj / ".codex" / "hooks.json"]

    def command(self, ws: Workspace, bindir: Path, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        home = ws.home / ".codex"
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            'model = "gpt-fake"\nmodel_provider = "fake"\ncheck_for_update_on_startup = false\n\n'
            f'[model_providers.fake]\nname = "fake"\nbase_url = "{url}/v1"\nenv_key = "FAKE_OPENAI_KEY"\n'
            'wire_api = "responses"\n\n'
            f'[projects."{ws.proj}"]\ntrust_level = "trusted"\n'
        )
        env = {"CODEX_HOME": str(home), "FAKE_OPENAI_KEY": FAKE_KEY}
        argv = [str(bindir / "codex"), "exec", "--json", "--dangerously-bypass-approvals-and-sandbox"]
        if self.trust_hooks:
            argv.append("--dangerously-bypass-hook-trust")
        return [*argv, prompt], env


@dataclass
class Copilot:
    """Copilot CLI: its BYOK provider (``COPILOT_PROVIDER_BASE_URL``, OpenAI Chat Completions)
    with ``COPILOT_OFFLINE=true`` (no GitHub login, no telemetry), ``copilot -p`` with
    ``--trust-folder`` (the project's hooks load only in a trusted folder)."""

    name: str = "copilot"
    version: str = PINS["copilot"][1]

    def configs(self, ws: Workspace) -> list[Path]:
        return [ws.proj / ".github" / "hooks" / "vaultmem.json"]

    def command(self, ws: Workspace, bindir: Path, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        env = {
            "COPILOT_HOME": str(ws.home / ".copilot"),
            "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": FAKE_KEY,
            "COPILOT_MODEL": "gpt-4.1",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
        }
        argv = [
            str(bindir / "copilot"),
            "-p",
            prompt,
            "--allow-all-tools",
            "--trust-folder",
            "--disable-client-telemetry",
        ]
        return argv, env


SPECS = {
    "copilot": Copilot(),
    "claude": Claude(),
    "gemini": Gemini(),
    "codex": Codex(),
    "codex-untrusted": Codex(trust_hooks=False),
    "gemini-untrusted": Gemini(trust_folder=False),
}
