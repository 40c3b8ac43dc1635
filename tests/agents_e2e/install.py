"""The pinned agent CLIs, installed from npm into a cache folder outside the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

PINS = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
    "copilot": ("@github/copilot", "1.0.102"),
}


def cache_dir() -> Path:
    """``$VAULTMEM_AGENTS_CACHE``, else ``~/.cache/vaultmem-agents-e2e`` of the real user."""
    env = os.environ.get("VAULTMEM_AGENTS_CACHE")
    if env:
        return Path(env)
    import pwd

    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "vaultmem-agents-e2e"


def installed(prefix: Path) -> dict[str, str]:
    """Agent name -> installed version, for the pinned packages found under ``prefix``."""
    out = {}
    for agent, (pkg, _) in PINS.items():
        manifest = prefix / "node_modules" / pkg / "package.json"
        if manifest.is_file():
            out[agent] = json.loads(manifest.read_text())["version"]
    return out


def ensure(
    agents: list[str] | None = None, prefix: Path | None = None, timeout: float = 900
) -> tuple[Path, str | None]:
    """Install the pins of ``agents`` (default all) into ``prefix`` unless there already;
    returns (bin folder, error or None)."""
    prefix = prefix or cache_dir()
    wanted = {a: PINS[a] for a in agents or PINS}
    have = installed(prefix)
    if all(have.get(a) == v for a, (_, v) in wanted.items()):
        return prefix / "node_modules" / ".bin", None
    if not shutil.which("npm"):
        return prefix, "npm is not installed"
    prefix.mkdir(parents=True, exist_ok=True)
    specs = [f"{pkg}@{ver}" for pkg, ver in wanted.values()]
    try:
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *specs],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return prefix, f"npm install timed out after {timeout:.0f} s"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return prefix, "npm install failed: " + " | ".join(tail)
    return prefix / "node_modules" / ".bin", None
