"""How each real agent CLI is pointed at the fake model and run headless.

Each spec names the config files ``vaultmem setup AGENT --write`` wrote (whose hooks the test
wraps), the user-level steps a person would take once (trusting a folder, a provider entry),
and the headless command line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.agents_e2e.harness import Workspace
from tests.agents_e2e.install import PINS

FAKE_KEY = "e2e-fake-key"  # the fake model accepts anything; no real credential is ever used


@dataclass
class Claude:
    """Claude Code: Anthropic Messages API at ``ANTHROPIC_BASE_URL``, ``claude -p``."""

    name: str = "claude"
    version: str = PINS["claude"][1]

    def configs(self, ws: Workspace) -> list[Path]:
        return [ws.proj / ".claude" / "settings.json"]

    def command(self, ws: Workspace, bindir: Path, url: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        env = {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        argv = [str(bindir / "claude"), "-p", prompt, "--allowedTools", "Bash", "--output-format", "json"]
        return argv, env


@dataclass
class Gemini:
    """Gemini CLI: ``GOOGLE_GEMINI_BASE_URL`` (the gateway auth type), ``gemini -p``, the
    project folder trusted in ``~/.gemini/trustedFolders.json`` as its user would."""

    name: str = "gemini"
    version: str = PINS["gemini"][1]

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
        env = {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": FAKE_KEY}
        argv = [str(bindir / "gemini"), "-p", prompt, "--yolo", "--output-format", "json"]
        return argv, env


SPECS = {"claude": Claude(), "gemini": Gemini()}
