"""The project of a folder: the active project note named like it (the anchor that hooks, importers
and the AGENTS.md export link a folder's memories to)."""

from __future__ import annotations

import re
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from .state import VaultState


def find_anchor(vault: VaultState, cwd: str | None) -> str | None:
    """The project note that names the project folder (``Project: <folder>`` or a project note
    whose title or alias is the folder's name, ignoring case, dashes and underscores)."""
    if not cwd:
        return None
    name = _fold(Path(cwd).name)
    if not name:
        return None
    for rec in vault.records().values():
        if rec.type != "project" or rec.status != "active":
            continue
        if any(_fold(re.sub(r"^project:\s*", "", n, flags=re.I)) == name for n in (rec.title, *rec.aliases)):
            return rec.title
    return None


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[-_.]+", " ", text).lower().split())
