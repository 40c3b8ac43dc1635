"""Creating a vault: ``.vaultmem/`` with its config, a README for people and agents, .gitignore."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .config import CONFIG_TEXT
from .errors import VaultError
from .discovery import private_dir
from .store import STATE_DIR, atomic_write

GITIGNORE_LINE = f"{STATE_DIR}/"


def vault_readme() -> str:
    return resources.files("vaultmem").joinpath("resources/vault_readme.md").read_text(encoding="utf-8")


def init_vault(root: Path) -> list[str]:
    """Create what a vault needs; existing files are never overwritten. Returns created paths."""
    if root.exists() and not root.is_dir():
        raise VaultError(f"{root} exists and is not a folder")
    if not root.exists():  # a vault folder vaultmem makes is its owner's alone; an existing one keeps its mode
        root.mkdir(parents=True, mode=0o700)
        root.chmod(0o700)  # mkdir's mode is filtered by the umask
    created: list[str] = []
    state = root / STATE_DIR
    if state.exists() and not state.is_dir():
        raise VaultError(f"{state} exists and is not a folder")
    if not state.is_dir():
        created.append(f"{STATE_DIR}/")
    private_dir(state)  # owner-only, also when an older vaultmem made it 0755
    for rel, text in ((f"{STATE_DIR}/config.toml", CONFIG_TEXT), ("README.md", vault_readme())):
        if not (root / rel).exists():
            atomic_write(root / rel, text, create_only=True)
            created.append(rel)
    if _add_gitignore_line(root / ".gitignore"):
        created.append(".gitignore (.vaultmem/ added)")
    return created


def _add_gitignore_line(path: Path) -> bool:
    """Append ``.vaultmem/`` to .gitignore unless an equivalent line is there."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if any(line.strip().strip("/") == STATE_DIR for line in text.splitlines()):
        return False
    sep = "" if not text or text.endswith("\n") else "\n"
    atomic_write(path, f"{text}{sep}{GITIGNORE_LINE}\n")
    return True
