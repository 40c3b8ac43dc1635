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
    # not inside this project's git checkout: remember would scope memories to its branch
    monkeypatch.chdir(tmp_path_factory.getbasetemp())


@pytest.fixture(autouse=True)
def _model_only_when_marked(request, monkeypatch):
    """A test that loads the real model in this process must be marked ``model``, so that
    ``pytest -m "not model"`` (the fast lane) never does. Subprocesses are marked by hand."""
    if request.node.get_closest_marker("model") is None:
        from vaultmem.index.embed import FastEmbedder

        def refuse(self):
            pytest.fail(f"{request.node.nodeid} loads the real model: mark it @pytest.mark.model")

        monkeypatch.setattr(FastEmbedder, "_load", refuse)


@pytest.fixture
def demo_copy(tmp_path) -> Path:
    """A private copy of the shipped demo vault."""
    dest = tmp_path / "demo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns(".vaultmem"))
    return dest


@pytest.fixture
def fake_embedder():
    from helpers import HashEmbedder

    return HashEmbedder()


@pytest.fixture
def fake_model(fake_embedder, monkeypatch):
    """Every vault opened during the test (by the CLI, the MCP tools, ...) gets the small test
    embedder instead of loading the model its config names; returns that embedder."""
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    return fake_embedder


@pytest.fixture
def open_vault(fake_embedder):
    """Opens vaults with the small test embedder; each is closed when the test ends."""
    from vaultmem.vault import Vault

    opened = []

    def _open(root: Path) -> Vault:
        opened.append(Vault(root, embedder=fake_embedder))
        return opened[-1]

    yield _open
    for v in opened:
        v.close()


@pytest.fixture
def demo(demo_copy, open_vault):
    """The demo vault copy opened with the small test embedder."""
    return open_vault(demo_copy)


@pytest.fixture
def empty_vault(tmp_path) -> Path:
    from vaultmem.core.scaffold import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    return root
