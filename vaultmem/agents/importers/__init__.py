"""The importers of ``vaultmem import --from NAME``: one base (``base.Importer``: find the
sources, read them, write notes through the vault's memory operations, report, one undo batch)
and one module per source: each agent's session history as its module in ``kinds/`` describes
it (``histories.py``), the chat exports (``chats.py``: ``chatgpt.py``, ``claude_ai.py``),
instruction files (``rules.py``) and the MCP memory server's graph (``mcp_memory.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.errors import BadInput
from .base import Importer, Progress
from .chatgpt import ChatGPT
from .claude_ai import ClaudeAI
from .histories import agent_histories
from .mcp_memory import McpMemory
from .rules import Rules

if TYPE_CHECKING:  # pragma: no cover
    from ...vault import Vault

__all__ = ["Importer", "get", "import_from", "sources"]


def sources() -> dict[str, Importer]:
    """Every importer by its ``--from`` name: the registered agents' histories first."""
    return {i.name: i for i in (*agent_histories(), Rules(), McpMemory(), ChatGPT(), ClaudeAI())}


def get(name: str) -> Importer:
    """The importer ``--from NAME`` names (BadInput listing them otherwise)."""
    found = sources()
    if name not in found:
        raise BadInput(f"--from: {name!r} is not one of: {', '.join(found)}")
    return found[name]


def import_from(vault: Vault, name: str, paths: list[str], *, project: str | None = None, since: str | None = None,
                dry_run: bool = False, progress: Progress | None = None) -> dict[str, Any]:  # fmt: skip
    """``vaultmem import --from NAME PATH...`` into ``vault``: the import's report (``undo``: its batch)."""
    return get(name).run(vault, paths, project=project, since=since, dry_run=dry_run, progress=progress)
