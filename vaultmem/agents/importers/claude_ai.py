"""``vaultmem import --from claude-ai``: a Claude.ai export's ``conversations.json``;
``chat_messages`` is already the thread, ``content`` blocks when present, else ``text``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..events import MAX_EVENT_TEXT, Event
from ..transcripts.history import Transcript
from .chats import ChatExport


class ClaudeAI(ChatExport):
    name, product, missing = "claude-ai", "Claude.ai", "conversation with chat_messages"

    def one(self, path: Path, conv: dict[str, Any]) -> Transcript | None:
        return _claude_one(path, conv)


def _claude_text(msg: dict[str, Any]) -> str:
    blocks = msg.get("content")
    blocks = blocks if isinstance(blocks, list) else []
    texts = [
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if texts:
        return "\n".join(texts).strip()
    return msg["text"].strip() if isinstance(msg.get("text"), str) else ""


def _claude_one(path: Path, conv: dict[str, Any]) -> Transcript | None:
    messages = conv.get("chat_messages")
    if not isinstance(messages, list):
        return None
    t = Transcript(
        "claude-ai", str(conv.get("uuid") or f"{path.stem}-{conv.get('created_at')}")[:200], str(path)
    )
    t.title = conv["name"][:200] if isinstance(conv.get("name"), str) else ""
    t.known = 1
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        sender, text = msg.get("sender"), _claude_text(msg)
        ts = msg.get("created_at")
        ts = ts if isinstance(ts, str) else ""
        if text and sender in ("human", "user", "assistant"):
            t.events.append(
                Event("text" if sender == "assistant" else "prompt", text[:MAX_EVENT_TEXT], ts=ts)
            )
    return t
