"""``vaultmem import --from chatgpt``: ChatGPT's ``conversations.json`` (or its
``conversations-NNN.json`` shards).

A conversation's ``mapping`` is a tree; the thread shown is the path from ``current_node`` back
to the root (sibling answers are regenerations and are skipped). Hidden, zero-weight, system and
tool messages are skipped. The user's Custom Instructions (``user_editable_context``) are read
as the user's own rules.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..events import MAX_EVENT_TEXT, Event
from ..transcripts.history import Transcript
from .chats import ChatExport, iso

MAX_NODES = 100_000  # a conversation tree walked at most this deep
FENCE_RE = re.compile(r"```(.*?)```", re.S)


class ChatGPT(ChatExport):
    name, product, missing = "chatgpt", "ChatGPT", "conversation with a mapping"

    def one(self, path: Path, conv: dict[str, Any]) -> Transcript | None:
        return _chatgpt_one(path, conv)


def _thread(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages from the root to ``current_node`` (the thread the user last saw)."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        return []
    node = conv.get("current_node")
    if node not in mapping:  # no current node: the last leaf
        node = next(
            (k for k, v in reversed(mapping.items()) if isinstance(v, dict) and not v.get("children")), None
        )
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(node, str) and node in mapping and node not in seen and len(seen) < MAX_NODES:
        seen.add(node)
        entry = mapping[node] if isinstance(mapping[node], dict) else {}
        if isinstance(entry.get("message"), dict):
            chain.append(entry["message"])
        node = entry.get("parent")
    return chain[::-1]


def _parts(content: dict[str, Any]) -> str:
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        parts = content.get("parts")
        parts = parts if isinstance(parts, list) else []
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    return ""


def _chatgpt_one(path: Path, conv: dict[str, Any]) -> Transcript | None:
    cid = conv.get("conversation_id") or conv.get("id")
    if "mapping" not in conv:
        return None
    t = Transcript("chatgpt", str(cid or f"{path.stem}-{conv.get('create_time')}")[:200], str(path))
    t.title = conv["title"][:200] if isinstance(conv.get("title"), str) else ""
    t.known = 1
    for msg in _thread(conv):
        author, content = msg.get("author"), msg.get("content")
        role = author.get("role") if isinstance(author, dict) else None
        content = content if isinstance(content, dict) else {}
        ts = iso(msg.get("create_time")) or iso(conv.get("create_time"))
        if content.get("content_type") == "user_editable_context":
            rules = content.get("user_instructions")
            if isinstance(rules, str) and rules.strip():
                fenced = FENCE_RE.findall(rules)
                text = "\n".join(fenced) if fenced else rules.split("\n", 1)[-1]
                t.events.append(Event("prompt", text.strip()[:MAX_EVENT_TEXT], tool="feedback", ts=ts))
            continue
        meta = msg.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        if (
            msg.get("weight") == 0
            or meta.get("is_visually_hidden_from_conversation")
            or role not in ("user", "assistant")
        ):
            continue
        if role == "assistant" and msg.get("recipient") not in (None, "all"):
            continue  # a call to a tool
        text = _parts(content)
        if text:
            t.events.append(Event("prompt" if role == "user" else "text", text[:MAX_EVENT_TEXT], ts=ts))
    return t
