"""``vaultmem import --from <agent label>``: an agent's past sessions, found and read as its
module in ``kinds/`` says (``history_root``, ``history_files``, ``read_session``): Claude Code's
``~/.claude/projects``, Codex's rollouts under ``$CODEX_HOME``. An agent whose module names no
``history_root`` has no importer. The sessions are named by the agent's ``source`` rule, the
one ``hook end`` writes, so a session the hook captured is not imported again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import adapters
from .base import Found, Importer, existing

if TYPE_CHECKING:  # pragma: no cover
    from ..kinds.base import Adapter
    from ..transcripts.history import Transcript


class AgentHistory(Importer):
    """One agent's session history (its adapter's facts)."""

    def __init__(self, adapter: Adapter, root: Path):
        self.adapter, self.root, self.name = adapter, root, adapter.label
        self.default = root

    def find(self, paths: list[str], project: str | None) -> Found:
        roots = list(existing(paths, self.root, f"{self.adapter.title} sessions"))
        found = Found([], roots)
        for root in roots:
            files, notes = self.adapter.history_files(root, project)
            found.files += files
            found.notes += notes
        return found

    def read(self, path: Path) -> Transcript:
        t = self.adapter.read_session(path)
        t.agent = self.adapter.label  # its source rule (an agent may read another's format)
        return t


def agent_histories() -> list[AgentHistory]:
    """An importer for each registered agent whose module says where its sessions are."""
    return [
        AgentHistory(a, root) for a in adapters.ADAPTERS.values() if (root := a.history_root()) is not None
    ]
