"""Creating a vault: ``.vaultmem/`` and its config ``.vaultmem.toml``, a short README pointing to
the docs (none in an Obsidian vault, which would show it as a note). The disposable
``.vaultmem/`` and the per-machine usage store ``.vaultmem-usage/`` each hold a .gitignore that
ignores everything in them (``discovery.private_dir``), so the vault's own .gitignore, a file of
the user's, is never changed to keep them out of git."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .config import CONFIG_FILE, CONFIG_TEXT, LEGACY_CONFIG
from .discovery import private_dir
from .errors import VaultError
from .store import STATE_DIR, atomic_write


def vault_readme() -> str:
    return resources.files("vaultmem").joinpath("resources/vault_readme.md").read_text(encoding="utf-8")


def init_vault(root: Path) -> list[str]:
    """Create what a vault needs; existing files are never overwritten. Returns created paths."""
    if root.exists() and not root.is_dir():
        raise VaultError(f"{root} exists and is not a folder")
    if (
        not root.exists()
    ):  # a vault folder vaultmem makes is its owner's alone; an existing one keeps its mode
        root.mkdir(parents=True, mode=0o700)
        root.chmod(0o700)  # mkdir's mode is filtered by the umask
    created: list[str] = []
    state = root / STATE_DIR
    if state.exists() and not state.is_dir():
        raise VaultError(f"{state} exists and is not a folder")
    if not state.is_dir():
        created.append(f"{STATE_DIR}/")
    private_dir(state)  # owner-only, also when an older vaultmem made it 0755
    # an Obsidian vault shows a README.md as one of its notes: none there
    readme = () if (root / ".obsidian").is_dir() else (("README.md", vault_readme()),)
    for rel, text in ((CONFIG_FILE, CONFIG_TEXT), *readme):
        if rel == CONFIG_FILE and (root / LEGACY_CONFIG).exists():
            continue  # a vault made before keeps its config where it is
        if not (root / rel).exists():
            atomic_write(root / rel, text, create_only=True)
            created.append(rel)
    return created
