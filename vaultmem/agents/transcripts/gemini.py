"""Gemini CLI's chat recording (``~/.gemini/tmp/<project>/chats/session-*.jsonl``; read in the
source of gemini-cli 0.56, ``chatRecordingService.ts``).

Since 0.39 it is JSONL: a metadata line (``sessionId``, ``projectHash``, ...), message records
(``id``, ``type``: ``user``|``gemini``|``info``|``error``|``warning``, ``content``: a string or a
list of ``{text}``/``{functionCall}``/``{functionResponse}`` parts; ``gemini`` records add
``toolCalls``), ``{"$set": {...}}`` updates (with ``messages``: a checkpoint, the list starts over
from it) and ``{"$rewindTo": id}`` (that message and the ones after it are gone). A record is
written again, whole, each time it changes: the last one of an id wins. Before 0.39 the file was
one JSON object ``{sessionId, ..., messages: [...]}``; both are read.

Tool calls: ``run_shell_command`` (``args.command``; a failed command keeps ``status: success``
and says ``Exit Code: N`` in its output), ``write_file`` and ``replace`` (``args.file_path``),
MCP tools as ``mcp_<server>_<tool>``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from ..transcript import MAX_BYTES, Event, _tail, strip_hook_context
from . import as_object, memory_tool, objects, texts

SKIP_USER = ("/", "?", "<session_context>", "<hook_context>")  # Gemini's own isIgnoredUserContent
EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)", re.M)
TOOLS = {"run_shell_command": ("Bash", "command"), "write_file": ("Write", "file_path"),
         "replace": ("Edit", "file_path"), "edit": ("Edit", "file_path")}  # fmt: skip


def read_chat(path: str | os.PathLike | None, max_bytes: int = MAX_BYTES) -> list[Event]:
    """The events of a Gemini CLI chat file (either format), records rewritten and rewound as the
    CLI does."""
    data = _tail(path, max_bytes)
    return [e for record in records(data) for e in line_events(record)]


def records(data: bytes) -> list[dict[str, Any]]:
    """The chat's message records, in order, as the CLI would load them."""
    whole = _whole(data)  # the old single-object format (a JSONL text fails at its second line)
    if whole is not None:
        return [m for m in whole["messages"] if isinstance(m, dict)]
    kept: dict[str, dict[str, Any]] = {}
    for obj in objects(data):
        if isinstance(obj.get("$rewindTo"), str):
            ids = list(kept)
            if obj["$rewindTo"] in kept:
                for gone in ids[ids.index(obj["$rewindTo"]) :]:
                    del kept[gone]
        elif isinstance(obj.get("$set"), dict):
            messages = obj["$set"].get("messages")
            if isinstance(messages, list):
                kept = {str(m.get("id", i)): m for i, m in enumerate(messages) if isinstance(m, dict)}
        elif isinstance(obj.get("id"), str) and isinstance(obj.get("type"), str):
            kept[obj["id"]] = obj  # a rewrite keeps the record's place
    return list(kept.values())


def _whole(data: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) and isinstance(obj.get("messages"), list) else None


def line_events(record: dict[str, Any]) -> Iterator[Event]:
    """The events of one message record."""
    kind = record.get("type")
    if kind == "user":
        for text in _parts_text(record.get("content")):
            text = strip_hook_context(text)  # a headless prompt starts with the SessionStart context
            if text and not text.startswith(SKIP_USER):
                yield Event("prompt", text)
    elif kind == "gemini":
        text = "\n".join(_parts_text(record.get("content"))).strip()
        if text:
            yield Event("text", text)
        calls = record.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                yield from _call_events(call)


def _parts_text(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content.strip()]
    if isinstance(content, list):
        return [p["text"].strip() for p in content
                if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")]  # fmt: skip
    return []


def _call_events(call: dict[str, Any]) -> Iterator[Event]:
    name, args, cid = call["name"], as_object(call.get("args")), str(call.get("id") or "")
    if name in TOOLS:
        tool, key = TOOLS[name]
        value = args.get(key)
        yield Event("tool", tool=tool, input={key: value} if isinstance(value, str) else {}, id=cid)
    else:
        yield Event("tool", tool=memory_tool(name) or name, input=args, id=cid)
    result = call.get("result")
    if result is None and call.get("status") not in ("success", "error", "cancelled"):
        return  # still running: no result yet
    text = texts([_response(r) for r in result]) if isinstance(result, list) else texts(result)
    codes = [int(c) for c in EXIT_CODE.findall(text)]
    failed = call.get("status") in ("error", "cancelled") or any(c != 0 for c in codes)
    yield Event("result", text, id=cid, error=failed)


def _response(part: Any) -> Any:
    """The ``response`` of a ``{functionResponse: {response: {...}}}`` part."""
    if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
        response = part["functionResponse"].get("response")
        if isinstance(response, dict):
            return response.get("output", response.get("error", response))
        return response
    return part
