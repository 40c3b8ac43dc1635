"""Cursor's agent transcripts (``~/.cursor/projects/<workspace>/agent-transcripts/<id>/<id>.jsonl``;
the hooks pass ``transcript_path``, which may be null). Undocumented: read from several
independent parsers (docs/agents.md).

One ``{"role": "user"|"assistant", "message": {"content": [blocks]}}`` a line (plus
``{"type": "turn_ended", ...}``). A user's text is wrapped as ``<user_query>...</user_query>``;
assistant thinking is ``[REDACTED]``. Tool calls are ``tool_use`` blocks (``Shell`` with
``command``, ``StrReplace``/``Write``/``Delete`` with ``path``, ``ApplyPatch`` with the patch,
MCP tools as ``CallDynamicTool``). **There are no tool results**: a session summary from Cursor
lists requests, files and commands, never which command failed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from ..events import MAX_BYTES, Event, tail
from .common import edit_event, memory_tool, objects, patch_events, shell_event

QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
EDITS = {"StrReplace": "Edit", "Edit": "Edit", "MultiEdit": "Edit", "Delete": "Edit", "Write": "Write"}


def read_transcript(path: str | os.PathLike | None, max_bytes: int = MAX_BYTES) -> list[Event]:
    """The events of a Cursor agent transcript."""
    return [e for obj in objects(tail(path, max_bytes)) for e in line_events(obj)]


def line_events(obj: dict[str, Any]) -> Iterator[Event]:
    """The events of one transcript line."""
    role, msg = obj.get("role"), obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if role not in ("user", "assistant") or not isinstance(content, (list, str)):
        return
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for b in blocks:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            yield from _text(role, b["text"])
        elif b.get("type") == "tool_use" and role == "assistant" and isinstance(b.get("name"), str):
            yield from _call(b["name"], b.get("input"), str(b.get("id") or ""))


def _text(role: str, text: str) -> Iterator[Event]:
    if role == "user":
        queries = QUERY.findall(text)
        for q in queries or ([] if text.lstrip().startswith("<") else [text.strip()]):
            if q:
                yield Event("prompt", q)
    elif text.strip() and text.strip() != "[REDACTED]":
        yield Event("text", text.strip())


def _call(name: str, inp: Any, call_id: str) -> Iterator[Event]:
    if name == "ApplyPatch":
        patch = inp if isinstance(inp, str) else inp.get("patch") if isinstance(inp, dict) else None
        yield from patch_events(patch, call_id)
        return
    args = inp if isinstance(inp, dict) else {}
    if name == "Shell":
        yield shell_event(args, call_id)
    elif name in EDITS:
        yield edit_event(EDITS[name], args, call_id)
    elif name == "CallDynamicTool":
        server = " ".join(
            str(args.get(k) or "") for k in ("namespace", "server", "serverName", "providerIdentifier")
        )
        tool = str(args.get("toolName") or args.get("name") or "")
        yield Event("tool", tool=memory_tool(f"{server}.{tool}" if "vaultmem" in server else tool) or name,
                    input=args.get("arguments") if isinstance(args.get("arguments"), dict) else args, id=call_id)  # fmt: skip
    else:
        yield Event("tool", tool=memory_tool(name) or name, input=args, id=call_id)
