"""GitHub Copilot CLI's session log (``~/.copilot/session-state/<sessionId>/events.jsonl``). Its
schema is not a published contract (copilot-cli issue #3551): read from parsers of CLI 1.0.78
logs (docs/agents.md).

One ``{"type", "data", "id", "timestamp", "parentId", "ephemeral"?}`` object a line; ephemeral
lines (streaming deltas) are skipped. ``user.message`` holds the prompt (``content``, as typed),
``assistant.message`` the answer and its ``toolRequests`` (``toolCallId``, ``name``,
``arguments``: an object or a JSON string), ``tool.execution_complete`` each call's outcome
(``success``, ``result``; a shell's text ends ``<shellId: N completed with exit code K>``), and
``session.shutdown`` the files modified.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from ..events import MAX_BYTES, Event, tail
from .common import as_object, edit_event, memory_tool, objects, patch_events, shell_event, texts

EXIT_CODE = re.compile(r"exit code (-?\d+)>?\s*$", re.I)
SHELLS = {"bash", "shell", "powershell", "zsh"}
EDITS = {
    "edit": "Edit",
    "str_replace_editor": "Edit",
    "str_replace": "Edit",
    "create": "Write",
    "write": "Write",
}


def read_events_log(path: str | os.PathLike | None, max_bytes: int = MAX_BYTES) -> list[Event]:
    """The events of a Copilot CLI ``events.jsonl``."""
    return [e for obj in objects(tail(path, max_bytes)) for e in line_events(obj)]


def line_events(obj: dict[str, Any]) -> Iterator[Event]:
    """The events of one log line."""
    data = obj.get("data")
    if obj.get("ephemeral") or not isinstance(data, dict):
        return
    kind = obj.get("type")
    if kind == "user.message" and isinstance(data.get("content"), str) and data["content"].strip():
        yield Event("prompt", data["content"].strip())
    elif kind == "assistant.message":
        if isinstance(data.get("content"), str) and data["content"].strip():
            yield Event("text", data["content"].strip())
        requests = data.get("toolRequests")
        for req in requests if isinstance(requests, list) else []:
            if isinstance(req, dict) and isinstance(req.get("name"), str):
                yield from _call(
                    req["name"], as_object(req.get("arguments")), str(req.get("toolCallId") or "")
                )
    elif kind == "tool.execution_complete":
        text = texts(data.get("result"))
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = (text + "\n" + error["message"]).strip()
        yield Event("result", text, id=str(data.get("toolCallId") or ""), error=_failed(data, text))
    elif kind == "session.shutdown":
        changes = data.get("codeChanges")
        files = changes.get("filesModified") if isinstance(changes, dict) else None
        for path in files if isinstance(files, list) else []:
            if isinstance(path, str) and path:
                yield Event("tool", tool="Edit", input={"file_path": path})


def _call(name: str, args: dict[str, Any], call_id: str) -> Iterator[Event]:
    if name in SHELLS:
        yield shell_event(args, call_id)
    elif name in EDITS:
        yield edit_event(EDITS[name], args, call_id)
    elif name == "apply_patch":
        yield from patch_events(args.get("input", args.get("patch")), call_id)
    else:
        yield Event("tool", tool=memory_tool(name) or name, input=args, id=call_id)


def _failed(data: dict[str, Any], text: str) -> bool:
    if data.get("success") is False:
        return True
    result = data.get("result")
    if isinstance(result, dict) and isinstance(result.get("exitCode"), int):
        return result["exitCode"] != 0
    m = EXIT_CODE.search(text[-300:])
    return bool(m and int(m.group(1)) != 0)
