"""Helpers for the adversarial tests: run the real ``vaultmem`` CLI as a subprocess.

Each module here covers one class of attack or accident (concurrency, escapes, hostile
input, lost state). To add a case: reproduce it with the CLI (or MCP client) in a test,
watch it fail on the code before your fix, then fix the code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [str(Path(sys.executable).with_name("vaultmem"))]  # the installed console script


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: offline, the test cache, no caller's vault."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_") or k == "VAULTMEM_CACHE"}
    env["HF_HUB_OFFLINE"] = "1"
    env.update(extra)
    return env


def run(*args: str, timeout: float = 120, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """Run ``vaultmem ARGS`` to completion; text output captured."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                          env=env or cli_env(), **kw)  # fmt: skip


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    """Start ``vaultmem ARGS`` in the background (stdout/stderr captured)."""
    return subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or cli_env())  # fmt: skip


@pytest.fixture
def small_vault(tmp_path) -> Path:
    """A fresh vault with three short notes."""
    from vaultmem.setup import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    for i, title in enumerate(("Alpha", "Beta", "Gamma")):
        (root / f"{title}.md").write_text(f"---\nid: note{i}aa\ntitle: {title}\n---\n# {title}\n\nText {i}.\n")
    return root
