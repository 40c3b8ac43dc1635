"""The answers of the fake model, one function per provider API shape.

The rule is the same for every API, played from a ``Script``: a request that offers a shell
tool gets the script's next shell command as a tool call (the conversation's tool calls so far
say which: by default one, ``ls``); once they are all made, every request gets the script's
text. ``/fix.sh`` is a tiny shell script the fake serves (a download a command may run)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

TEXT = "The webhook handler is idempotent on the Stripe event id. Done."
FIX_SCRIPT = "touch .fixed\n"  # what GET /fix.sh returns


@dataclass(frozen=True)
class Script:
    """What the fake model does in every conversation: these shell commands, one tool call a
    turn, then this text."""

    commands: tuple[str, ...] = ("ls",)
    text: str = TEXT


DEFAULT = Script()
SHELL_TOOLS = ("Bash", "run_shell_command", "shell", "exec_command", "local_shell", "bash", "powershell")
Answer = tuple[int, str, Iterable[str]]


def answer(method: str, path: str, body: Any, script: Script = DEFAULT) -> Answer:
    """Route one request to its provider by path."""
    route = path.split("?")[0]
    if route.endswith("/fix.sh"):
        return 200, "text/plain", [FIX_SCRIPT]
    if route.endswith("/messages/count_tokens"):
        return _json({"input_tokens": 100})
    if route.endswith("/messages"):
        return anthropic(body or {}, script)
    if route.endswith("/responses"):
        return openai_responses(body or {}, script)
    if route.endswith("/chat/completions"):
        return openai_chat(body or {}, script)
    if ":countTokens" in route:
        return _json({"totalTokens": 100})
    if ":streamGenerateContent" in route or ":generateContent" in route:
        return gemini(body or {}, stream=":stream" in route, script=script)
    if route.endswith("/models"):
        return _json({"object": "list", "data": [], "models": []})
    return _json({})


def _json(obj: Any, status: int = 200) -> Answer:
    return status, "application/json", [json.dumps(obj)]


def _sse(events: Iterable[tuple[str | None, Any]], done: bool = False) -> Answer:
    chunks = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        chunks.append(f"{head}data: {json.dumps(data)}\n\n")
    if done:
        chunks.append("data: [DONE]\n\n")
    return 200, "text/event-stream", chunks


def _next(script: Script, used: int, tool: str | None) -> str | None:
    """The command of the next tool call (None: the text now)."""
    return script.commands[used] if tool and used < len(script.commands) else None


def _pick_tool(names: list[str]) -> str | None:
    for wanted in SHELL_TOOLS:
        if wanted in names:
            return wanted
    return None


# --- Anthropic Messages (Claude Code) ---------------------------------------------------------


def anthropic(body: dict, script: Script = DEFAULT) -> Answer:
    tools = [t.get("name", "") for t in body.get("tools") or []]
    used = sum(
        isinstance(c, dict) and c.get("type") == "tool_use"
        for m in body.get("messages") or []
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for c in m["content"]
    )
    command = _next(script, used, _pick_tool(tools))
    tool = _pick_tool(tools) if command else None
    text = script.text
    if tool:
        block = {"type": "tool_use", "id": f"toolu_e2e_{used + 1}", "name": tool, "input": {}}
        args = {"command": command, "description": "Run a command"}
        stop = "tool_use"
    else:
        block, args, stop = {"type": "text", "text": ""}, None, "end_turn"
    message = {
        "id": "msg_e2e",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1},
    }
    if not body.get("stream"):
        done = (
            {"type": "tool_use", "id": f"toolu_e2e_{used + 1}", "name": tool, "input": args}
            if tool
            else {"type": "text", "text": text}
        )
        return _json({**message, "content": [done], "stop_reason": stop})
    delta = (
        {"type": "input_json_delta", "partial_json": json.dumps(args)}
        if tool
        else {"type": "text_delta", "text": text}
    )
    return _sse(
        [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


# --- OpenAI Responses (Codex CLI) ---------------------------------------------------------------


def openai_responses(body: dict, script: Script = DEFAULT) -> Answer:
    names = [t.get("name", "") for t in body.get("tools") or [] if t.get("type") == "function"]
    used = sum(i.get("type") == "function_call" for i in body.get("input") or [] if isinstance(i, dict))
    command = _next(script, used, _pick_tool(names))
    tool = _pick_tool(names) if command else None
    text = script.text
    if tool:
        args = {"cmd": command} if tool == "exec_command" else {"command": ["bash", "-lc", command]}
        item = {
            "type": "function_call",
            "id": f"fc_e2e_{used + 1}",
            "call_id": f"call_e2e_{used + 1}",
            "name": tool,
            "arguments": json.dumps(args),
        }
    else:
        item = {
            "type": "message",
            "id": "msg_e2e",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    response = {
        "id": "resp_e2e",
        "object": "response",
        "status": "in_progress",
        "model": body.get("model"),
        "output": [],
    }
    done = {**response, "status": "completed", "output": [item], "usage": usage}
    return _sse(
        [
            ("response.created", {"type": "response.created", "sequence_number": 0, "response": response}),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": item},
            ),
            ("response.completed", {"type": "response.completed", "sequence_number": 3, "response": done}),
        ]
    )


# --- OpenAI Chat Completions (Copilot CLI's BYOK provider) --------------------------------------


def openai_chat(body: dict, script: Script = DEFAULT) -> Answer:
    names = [(t.get("function") or {}).get("name", "") for t in body.get("tools") or []]
    used = sum(
        len(m.get("tool_calls") or []) for m in body.get("messages") or [] if m.get("role") == "assistant"
    )
    command = _next(script, used, _pick_tool(names))
    tool = _pick_tool(names) if command else None
    text = script.text
    if tool:
        call = {
            "index": 0,
            "id": f"call_e2e_{used + 1}",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(_shell_args(body, tool, command))},
        }
        delta: dict = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": text}, "stop"
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    head = {
        "id": "chatcmpl-e2e",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", "fake"),
    }
    if not body.get("stream"):
        message = {k: v for k, v in delta.items()}
        if tool:
            message["tool_calls"] = [{k: v for k, v in call.items() if k != "index"}]
        return _json(
            {
                **head,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
        )
    return _sse(
        [
            (None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            (None, {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}),
        ],
        done=True,
    )


def _shell_args(body: dict, tool: str, command: str = "ls") -> dict:
    """``command`` in the argument names the tool's schema asks for."""
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        if fn.get("name") == tool:
            props = (fn.get("parameters") or {}).get("properties") or {}
            args: dict = {"command": command}
            if "description" in props:
                args["description"] = "Run a command"
            return args
    return {"command": command}


# --- Gemini generateContent / streamGenerateContent (Gemini CLI) ---------------------------------


def gemini(body: dict, stream: bool, script: Script = DEFAULT) -> Answer:
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    names = [f.get("name", "") for t in body.get("tools") or [] for f in t.get("functionDeclarations") or []]
    used = sum("functionCall" in p for c in body.get("contents") or [] for p in c.get("parts") or [])
    command = None if schema else _next(script, used, _pick_tool(names))
    tool = _pick_tool(names) if command else None
    text = script.text
    if tool:
        part: dict = {
            "functionCall": {"name": tool, "args": {"command": command, "description": "Run a command"}}
        }
    elif schema:
        part = {"text": json.dumps(_fill(schema))}
    else:
        part = {"text": text}
    reply = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
        "modelVersion": "gemini-fake",
    }
    return _sse([(None, reply)]) if stream else _json(reply)


def _fill(schema: dict) -> Any:
    """A value of a JSON schema's shape (the CLI's side calls: routing, next speaker)."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if kind == "object":
        return {k: _fill(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 10
    if kind == "boolean":
        return False
    return "fake"
