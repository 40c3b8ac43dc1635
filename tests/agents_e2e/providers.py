"""The answers of the fake model, one function per provider API shape.

The rule is the same for every API: a request that offers a shell tool and whose conversation
has no tool call yet gets one tool call (``ls``); every other request gets plain text."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

TEXT = "The webhook handler is idempotent on the Stripe event id. Done."
SHELL_TOOLS = ("Bash", "run_shell_command", "shell", "exec_command", "local_shell", "bash", "powershell")
Answer = tuple[int, str, Iterable[str]]


def answer(method: str, path: str, body: Any) -> Answer:
    """Route one request to its provider by path."""
    route = path.split("?")[0]
    if route.endswith("/messages/count_tokens"):
        return _json({"input_tokens": 100})
    if route.endswith("/messages"):
        return anthropic(body or {})
    if route.endswith("/responses"):
        return openai_responses(body or {})
    if route.endswith("/chat/completions"):
        return openai_chat(body or {})
    if ":countTokens" in route:
        return _json({"totalTokens": 100})
    if ":streamGenerateContent" in route or ":generateContent" in route:
        return gemini(body or {}, stream=":stream" in route)
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


def _pick_tool(names: list[str]) -> str | None:
    for wanted in SHELL_TOOLS:
        if wanted in names:
            return wanted
    return None


# --- Anthropic Messages (Claude Code) ---------------------------------------------------------


def anthropic(body: dict) -> Answer:
    tools = [t.get("name", "") for t in body.get("tools") or []]
    used = any(
        isinstance(c, dict) and c.get("type") == "tool_use"
        for m in body.get("messages") or []
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for c in m["content"]
    )
    tool = None if used else _pick_tool(tools)
    if tool:
        block = {"type": "tool_use", "id": "toolu_e2e_1", "name": tool, "input": {}}
        args = {"command": "ls", "description": "List the project files"}
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
            {"type": "tool_use", "id": "toolu_e2e_1", "name": tool, "input": args}
            if tool
            else {"type": "text", "text": TEXT}
        )
        return _json({**message, "content": [done], "stop_reason": stop})
    delta = (
        {"type": "input_json_delta", "partial_json": json.dumps(args)}
        if tool
        else {"type": "text_delta", "text": TEXT}
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


def openai_responses(body: dict) -> Answer:
    names = [t.get("name", "") for t in body.get("tools") or [] if t.get("type") == "function"]
    used = any(i.get("type") == "function_call" for i in body.get("input") or [] if isinstance(i, dict))
    tool = None if used else _pick_tool(names)
    if tool:
        args = {"cmd": "ls"} if tool == "exec_command" else {"command": ["ls"]}
        item = {
            "type": "function_call",
            "id": "fc_e2e_1",
            "call_id": "call_e2e_1",
            "name": tool,
            "arguments": json.dumps(args),
        }
    else:
        item = {
            "type": "message",
            "id": "msg_e2e",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": TEXT, "annotations": []}],
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


def openai_chat(body: dict) -> Answer:
    names = [(t.get("function") or {}).get("name", "") for t in body.get("tools") or []]
    used = any(m.get("tool_calls") for m in body.get("messages") or [] if m.get("role") == "assistant")
    tool = None if used else _pick_tool(names)
    if tool:
        call = {
            "index": 0,
            "id": "call_e2e_1",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(_shell_args(body, tool))},
        }
        delta: dict = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": TEXT}, "stop"
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


def _shell_args(body: dict, tool: str) -> dict:
    """``ls`` in the argument names the tool's schema asks for."""
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        if fn.get("name") == tool:
            props = (fn.get("parameters") or {}).get("properties") or {}
            args: dict = {"command": "ls"}
            if "description" in props:
                args["description"] = "List the project files"
            return args
    return {"command": "ls"}


# --- Gemini generateContent / streamGenerateContent (Gemini CLI) ---------------------------------


def gemini(body: dict, stream: bool) -> Answer:
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    names = [f.get("name", "") for t in body.get("tools") or [] for f in t.get("functionDeclarations") or []]
    used = any("functionCall" in p for c in body.get("contents") or [] for p in c.get("parts") or [])
    tool = None if used or schema else _pick_tool(names)
    if tool:
        part: dict = {
            "functionCall": {"name": tool, "args": {"command": "ls", "description": "List the project files"}}
        }
    elif schema:
        part = {"text": json.dumps(_fill(schema))}
    else:
        part = {"text": TEXT}
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
