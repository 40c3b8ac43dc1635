"""What the readers of every agent's session log share: the agents' spellings of vaultmem's
tools, ``apply_patch`` patches, tool arguments and results nested as JSON, shell and edit calls
as the summariser's ``Bash``/``Edit`` events."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..events import MAX_LINE, Event, load_line

MEMORY_TOOLS = (
    "list_memories",
    "rate_memories",
    "report_gap",
    "write_note",
    "read_note",
    "checkpoint",
    "supersede",
    "remember",
    "history",
    "resolve",
    "recall",
    "sleep",
    "stats",
    "wake",
)  # fmt: skip; longest first
PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)


def memory_tool(name: str) -> str | None:
    """``mcp__vaultmem__<tool>`` for an agent's own spelling of a vaultmem MCP tool
    (``mcp_vaultmem_recall``, ``vaultmem-recall``, ``vaultmem.recall``, ``mcp__vaultmem__recall``);
    None for any other name."""
    if "vaultmem" not in name.lower():
        return None
    for tool in MEMORY_TOOLS:
        if name.endswith(tool) and (len(name) == len(tool) or name[-len(tool) - 1] in "_-.:/ "):
            return f"mcp__vaultmem__{tool}"
    return None


def patch_events(patch: Any, call_id: str = "") -> list[Event]:
    """One ``Write`` (added file) or ``Edit`` (updated, moved or deleted) per file of an
    ``apply_patch`` patch (``*** Add File: path`` ... lines)."""
    if not isinstance(patch, str):
        return []
    out = []
    for kind, path, moved in PATCH_FILE.findall(patch):
        tool = "Write" if kind == "Add" else "Edit"
        out.append(Event("tool", tool=tool, input={"file_path": path or moved}, id=call_id))
    return out


def as_object(value: Any) -> dict[str, Any]:
    """Tool arguments as a dict: a dict, or a JSON object in a string; {} otherwise."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and len(value) <= MAX_LINE:
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def texts(value: Any, depth: int = 0) -> str:
    """The text inside a tool result: a string, or the ``text``/``output``/``content`` strings
    of nested lists and objects (MCP results arrive as JSON in some logs)."""
    if depth > 8:
        return ""
    if isinstance(value, str):
        parsed = as_object(value) if value.lstrip().startswith("{") else None
        return (texts(parsed, depth + 1) if parsed else "") or value
    if isinstance(value, list):
        return "\n".join(t for t in (texts(v, depth + 1) for v in value) if t)
    if isinstance(value, dict):
        keys = ("text", "output", "content", "stdout", "stderr", "detailedContent", "result")
        return "\n".join(t for t in (texts(value.get(k), depth + 1) for k in keys) if t)
    return ""


def objects(data: bytes) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL text, one a line; other lines skipped."""
    for raw in data.splitlines():
        obj = load_line(raw)
        if obj is not None:
            yield obj


def shell_event(args: dict[str, Any], call_id: str) -> Event:
    """A shell tool call as the ``Bash`` event the summariser reads."""
    command = args.get("command")
    return Event(
        "tool", tool="Bash", input={"command": command if isinstance(command, str) else ""}, id=call_id
    )


def edit_event(tool: str, args: dict[str, Any], call_id: str) -> Event:
    """A file-editing tool call as an ``Edit``/``Write`` event with its path (when it has one)."""
    path = args.get("path", args.get("file_path"))
    return Event("tool", tool=tool, input={"file_path": path} if isinstance(path, str) else {}, id=call_id)
