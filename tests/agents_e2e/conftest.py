"""The real-agents lane: the pinned CLIs are installed once (npm) into a cache folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents_e2e import install

LANE = "VAULTMEM_AGENTS_E2E"


def pytest_collection_modifyitems(config, items):
    """The lane takes ~6 minutes and ~1 GB of CLIs: it runs when asked for (``-m agents_e2e``
    or ``VAULTMEM_AGENTS_E2E=1``), not in a plain ``pytest``."""
    if os.environ.get(LANE) or "agents_e2e" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason=f"the real-agents lane: pytest -m agents_e2e (or {LANE}=1)")
    for item in items:
        if item.get_closest_marker("agents_e2e"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The folder holding the pinned ``claude``, ``codex``, ``gemini`` and ``copilot``."""
    bindir, error = install.ensure()
    if error:
        if os.environ.get("CI") == "true" or os.environ.get("VAULTMEM_AGENTS_E2E_REQUIRED"):
            pytest.fail(f"the agent CLIs could not be installed: {error}")
        pytest.skip(f"the agent CLIs could not be installed from npm ({error})")
    return bindir
