"""The shipped demo vault (a fictional marina-booking app's memory): where it is, in a clone
(``vaults/demo/``) or in the installed package (``vaultmem/demo/``, put there by setup.py), and a
copy of it for ``vaultmem demo``, so README's first question works without a clone."""

from __future__ import annotations

import shutil
from pathlib import Path

from .errors import BadInput, VaultError

PACKAGE = Path(__file__).resolve().parent.parent
SHIPPED = ("*.md", ".gitignore", ".obsidian/*.json")  # setup.py's package data for it


def source() -> Path:
    """The demo vault this install ships: the wheel's copy, else the clone's."""
    for folder in (PACKAGE / "demo", PACKAGE.parent / "vaults" / "demo"):
        if (folder / "README.md").is_file():
            return folder
    raise VaultError("this install has no demo vault (reinstall vaultmem-md)")


def files(src: Path) -> list[Path]:
    """The demo's own files, relative to it: its notes and settings, never an index or usage
    store a recall in the clone left beside them."""
    found = {p.relative_to(src) for pattern in SHIPPED for p in src.rglob(pattern) if p.is_file()}
    return sorted(p for p in found if not any(part in (".vaultmem", ".vaultmem-usage", ".trash")
                                              for part in p.parts))  # fmt: skip


def copy(dest: Path) -> list[Path]:
    """Copy the demo vault's files into ``dest`` (a new or empty folder); returns them."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BadInput(f"{dest} exists and is not an empty folder; name a new one (vaultmem demo DEST)")
    src = source()
    copied = files(src)
    for rel in copied:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dest / rel)
    return copied
