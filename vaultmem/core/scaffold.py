"""Creating a vault: ``.vaultmem/``, its config ``.vaultmem.toml``, a README for people and agents, .gitignore
(the disposable ``.vaultmem/`` and the per-machine usage store ``.vaultmem-usage/`` stay out of git)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .config import CONFIG_FILE, CONFIG_TEXT, LEGACY_CONFIG
from .discovery import USAGE_DIR, private_dir
from .errors import VaultError
from .store import STATE_DIR, atomic_write

GITIGNORED = (STATE_DIR, USAGE_DIR)


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
    for rel, text in ((CONFIG_FILE, CONFIG_TEXT), ("README.md", vault_readme())):
        if rel == CONFIG_FILE and (root / LEGACY_CONFIG).exists():
            continue  # a vault made before keeps its config where it is
        if not (root / rel).exists():
            atomic_write(root / rel, text, create_only=True)
            created.append(rel)
    added = _add_gitignore_lines(root / ".gitignore")
    if added:
        created.append(f".gitignore ({', '.join(added)} added)")
    return created


def ignore_state(root: Path) -> list[str]:
    """``.vaultmem/`` and ``.vaultmem-usage/`` in the folder's .gitignore (the first open of a
    folder never init-ed makes them there); the lines added."""
    return _add_gitignore_lines(root / ".gitignore")


def _add_gitignore_lines(path: Path) -> list[str]:
    """Append ``.vaultmem/`` and ``.vaultmem-usage/`` to .gitignore unless equivalent lines
    are there; returns the lines added."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip().strip("/") for line in text.splitlines()}
    missing = [f"{name}/" for name in GITIGNORED if name not in present]
    if missing:
        sep = "" if not text or text.endswith("\n") else "\n"
        atomic_write(path, f"{text}{sep}" + "".join(f"{line}\n" for line in missing))
    return missing
