"""Fixtures of the adversarial tests; the helpers they use are in ``adversarial_helpers.py``.

Each module here covers one class of attack or accident (see README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .adversarial_helpers import Watching


@pytest.fixture
def small_vault(tmp_path) -> Path:
    """A fresh vault with three short notes."""
    from vaultmem.core.scaffold import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    for i, title in enumerate(("Alpha", "Beta", "Gamma")):
        (root / f"{title}.md").write_text(
            f"---\nid: note{i}aa\ntitle: {title}\n---\n# {title}\n\nText {i}.\n"
        )
    return root


@pytest.fixture
def watching(fake_embedder):
    """Start watchers with ``watching(root)``; each is stopped when the test ends."""
    started: list[Watching] = []

    def _start(root: Path) -> Watching:
        started.append(Watching(root, fake_embedder))
        return started[-1]

    yield _start
    for w in started:
        w.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
