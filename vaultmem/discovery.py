"""Finding a vault like git finds a repository (light: no heavy imports, used by thin clients)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import VaultNotFound

STATE_DIR = ".vaultmem"


def find_vault(path: str | os.PathLike | None = None, cwd: Path | None = None) -> Path:
    """Vault discovery like git: explicit path, else $VAULTMEM_VAULT, else walk up to ``.vaultmem/``."""
    explicit = path or os.environ.get("VAULTMEM_VAULT")
    if explicit:
        root = Path(explicit).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f"no vault folder at {root}")
        return root.resolve()
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / STATE_DIR).is_dir():
            return folder
    raise VaultNotFound(
        "no vault found: pass --vault PATH, set VAULTMEM_VAULT, or run `vaultmem init` in a folder"
    )
