"""The real-agents lane: the pinned CLIs are installed once (npm) into a cache folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents_e2e import install

# The lane (~6 minutes, ~1 GB of CLIs) runs only when asked for: tests/lanes.py skips it otherwise.


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The folder holding the pinned ``claude``, ``codex``, ``gemini`` and ``copilot``."""
    bindir, error = install.ensure()
    if error:
        if os.environ.get("CI") == "true" or os.environ.get("VAULTMEM_AGENTS_E2E_REQUIRED"):
            pytest.fail(f"the agent CLIs could not be installed: {error}")
        pytest.skip(f"the agent CLIs could not be installed from npm ({error})")
    return bindir
