"""Codex CLI's rollout files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``; the hooks pass
``transcript_path``). Not a documented contract: read from Codex's protocol dumps and third-party
parsers (docs/agents.md).

One ``{"timestamp", "type", "payload"}`` object a line. ``response_item`` payloads are what the
model saw: ``message`` (role ``user``|``assistant``|``developer``; hook context arrives as
``developer`` messages, Codex's own wrappers as ``<...>`` user texts), ``function_call``
(``name``, ``arguments`` as a JSON string, ``call_id``: the shell is ``exec_command`` with
``cmd``, older versions ``shell`` with an argv), ``function_call_output`` (``Process exited with
code N``, older versions a JSON ``metadata.exit_code``), ``custom_tool_call`` ``apply_patch``
(the patch names its files) and ``local_shell_call``. ``event_msg`` payloads log the UI: each
prompt is in a ``user_message`` as the user typed it, so those are the requests when present.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from typing import Any

from ..transcript import MAX_BYTES, Event, _tail
from . import as_object, memory_tool, objects, patch_events, texts

EXITED = re.compile(r"Process exited with code (-?\d+)|\bexit code:? (-?\d+)", re.I)
WRAPPER = ("<", "# AGENTS.md")  # environment context, user instructions, hook prompts


def read_rollout(path: str | os.PathLike | None, max_bytes: int = MAX_BYTES) -> list[Event]:
    """The events of a Codex rollout: requests from its ``user_message`` log lines (from the
    ``response_item`` user messages when there are none)."""
    logged: list[Event] = []
    seen: list[Event] = []
    for obj in objects(_tail(path, max_bytes)):
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else ""
        for ev in line_events(obj):
            ev.ts = ts  # the summary is dated by the session's own times
            logged.append(ev)
            if ev.kind != "prompt":
                seen.append(ev)
        for ev in _item_prompts(obj):
            ev.ts = ts
            seen.append(ev)
    return logged if any(e.kind == "prompt" for e in logged) else seen


def line_events(obj: dict[str, Any]) -> Iterator[Event]:
    """The events of one rollout line (prompts from ``event_msg`` ``user_message`` only)."""
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        return
    kind = payload.get("type")
    if obj.get("type") == "event_msg":
        message = payload.get("message")
        if (
            kind == "user_message"
            and isinstance(message, str)
            and message.strip()
            and not message.lstrip().startswith(WRAPPER)
        ):
            yield Event("prompt", message.strip())
        return
    if obj.get("type") != "response_item":
        return
    call_id = str(payload.get("call_id") or payload.get("id") or "")
    if kind == "message" and payload.get("role") == "assistant":
        text = "\n".join(_message_texts(payload)).strip()
        if text:
            yield Event("text", text)
    elif kind == "function_call" and isinstance(payload.get("name"), str):
        yield from _call(payload["name"], as_object(payload.get("arguments")), call_id)
    elif kind == "local_shell_call":
        action = payload.get("action") if isinstance(payload.get("action"), dict) else {}
        yield Event("tool", tool="Bash", input={"command": _command(action.get("command"))}, id=call_id)
    elif kind == "custom_tool_call" and payload.get("name") == "apply_patch":
        yield from patch_events(payload.get("input"), call_id)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        text = texts(payload.get("output"))
        yield Event("result", text, id=call_id, error=_failed(payload.get("output"), text))


def _item_prompts(obj: dict[str, Any]) -> Iterator[Event]:
    payload = obj.get("payload")
    if obj.get("type") == "response_item" and isinstance(payload, dict) and payload.get("type") == "message" \
            and payload.get("role") == "user":  # fmt: skip
        for text in _message_texts(payload):
            if text.strip() and not text.lstrip().startswith(WRAPPER):
                yield Event("prompt", text.strip())


def _message_texts(payload: dict[str, Any]) -> list[str]:
    content = payload.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]


def _call(name: str, args: dict[str, Any], call_id: str) -> Iterator[Event]:
    if name in ("exec_command", "shell", "container.exec", "local_shell"):
        yield Event(
            "tool", tool="Bash", input={"command": _command(args.get("cmd", args.get("command")))}, id=call_id
        )
    elif name == "apply_patch":
        yield from patch_events(args.get("input", args.get("patch")), call_id)
    else:
        yield Event("tool", tool=memory_tool(name) or name, input=args, id=call_id)


def _command(value: Any) -> str:
    """A shell command as one string: ``["bash", "-lc", "X"]`` is ``X``, another argv is joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if (
            len(value) == 3
            and value[1] in ("-lc", "-c")
            and os.path.basename(value[0]) in ("bash", "sh", "zsh")
        ):
            return value[2]
        return shlex.join(value)
    return ""


def _failed(output: Any, text: str) -> bool:
    """A non-zero exit code in the output's text, or in an older output's ``metadata``."""
    meta = as_object(output).get("metadata") if isinstance(output, str) else None
    if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
        return meta["exit_code"] != 0
    if isinstance(output, dict) and output.get("success") is False:
        return True
    m = EXITED.search(text[:2000])
    return bool(m and int(m.group(1) or m.group(2)) != 0)
