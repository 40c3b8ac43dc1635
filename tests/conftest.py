"""Shared fixtures. The model hub is never contacted (HF_HUB_OFFLINE=1)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "vaults" / "demo"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """No test sees the caller's vault or writes the user's cache (the model folder is shared)."""
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    monkeypatch.setenv("VAULTMEM_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def demo_copy(tmp_path) -> Path:
    """A private copy of the shipped demo vault."""
    dest = tmp_path / "demo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns(".vaultmem"))
    return dest


@pytest.fixture
def fake_embedder():
    from vaultmem.embed import HashEmbedder

    return HashEmbedder()


@pytest.fixture
def demo(demo_copy, fake_embedder):
    """The demo vault copy opened with the small test embedder."""
    from vaultmem.vault import Vault

    v = Vault(demo_copy, embedder=fake_embedder)
    yield v
    v.close()


@pytest.fixture
def empty_vault(tmp_path) -> Path:
    from vaultmem.setup import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    return root
