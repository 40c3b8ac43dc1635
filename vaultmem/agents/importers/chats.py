"""Chat exports: ChatGPT's ``conversations.json`` (or its ``conversations-NNN.json`` shards)
and Claude.ai's ``conversations.json``, each conversation as a ``Transcript`` of prompts and
answers (no tools, no project folder).

ChatGPT: a conversation's ``mapping`` is a tree; the thread shown is the path from
``current_node`` back to the root (sibling answers are regenerations and are skipped). Hidden,
zero-weight, system and tool messages are skipped. The user's Custom Instructions
(``user_editable_context``) are read as the user's own rules. Claude.ai: ``chat_messages`` is
already the thread, ``content`` blocks when present, else ``text``. The arrays are streamed with
``ijson`` when it is installed, else loaded whole (``MAX_FILE`` bounds that).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.errors import BadInput
from ..events import MAX_EVENT_TEXT, Event
from ..transcripts.history import NotATranscript, Transcript

MAX_FILE = 1 << 30  # loaded whole without ijson: refuse beyond 1 GB
MAX_NODES = 100_000  # a conversation tree walked at most this deep
FENCE_RE = re.compile(r"```(.*?)```", re.S)


def export_files(root: Path, name: str = "conversations") -> list[Path]:
    """The export's conversation files: the file itself, or ``conversations*.json`` in a folder."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.glob(f"{name}*.json") if p.is_file())


def _items(path: Path) -> Iterator[Any]:
    """The elements of a JSON array file, streamed when ``ijson`` is there."""
    try:
        import ijson
    except ImportError:
        ijson = None
    with open(path, "rb") as f:
        if ijson is not None:
            try:
                yield from ijson.items(f, "item")
            except ijson.JSONError as e:
                raise NotATranscript(f"{path}: not a JSON array of conversations ({e})") from None
            return
        if path.stat().st_size > MAX_FILE:
            raise BadInput(f"{path}: larger than 1 GB; install ijson to stream it; nothing was imported")
        try:
            data = json.load(f)
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            raise NotATranscript(f"{path}: not JSON ({str(e)[:80]})") from None
    if not isinstance(data, list):
        raise NotATranscript(f"{path}: not a JSON array of conversations")
    yield from data


def _iso(epoch: Any) -> str:
    if not isinstance(epoch, (int, float)) or isinstance(epoch, bool):
        return ""
    try:
        return dt.datetime.fromtimestamp(float(epoch), dt.UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return ""


# ---------------------------------------------------------------------- ChatGPT


def read_chatgpt(path: Path) -> list[Transcript]:
    """Every conversation of a ChatGPT export file; NotATranscript when it holds none."""
    out = [t for item in _items(path) if isinstance(item, dict) for t in [_chatgpt_one(path, item)] if t]
    if not out:
        raise NotATranscript(f"{path}: not a ChatGPT export (no conversation with a mapping)")
    return out


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
        parts = content.get("parts") if isinstance(content.get("parts"), list) else []
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
        role = (msg.get("author") or {}).get("role") if isinstance(msg.get("author"), dict) else None
        content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
        ts = _iso(msg.get("create_time")) or _iso(conv.get("create_time"))
        if content.get("content_type") == "user_editable_context":
            rules = content.get("user_instructions")
            if isinstance(rules, str) and rules.strip():
                fenced = FENCE_RE.findall(rules)
                text = "\n".join(fenced) if fenced else rules.split("\n", 1)[-1]
                t.events.append(Event("prompt", text.strip()[:MAX_EVENT_TEXT], tool="feedback", ts=ts))
            continue
        meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
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


# ---------------------------------------------------------------------- Claude.ai


def read_claude_ai(path: Path) -> list[Transcript]:
    """Every conversation of a Claude.ai export's ``conversations.json``."""
    out = [t for item in _items(path) if isinstance(item, dict) for t in [_claude_one(path, item)] if t]
    if not out:
        raise NotATranscript(f"{path}: not a Claude.ai export (no conversation with chat_messages)")
    return out


def _claude_text(msg: dict[str, Any]) -> str:
    blocks = msg.get("content") if isinstance(msg.get("content"), list) else []
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
        ts = msg.get("created_at") if isinstance(msg.get("created_at"), str) else ""
        if text and sender in ("human", "user", "assistant"):
            t.events.append(
                Event("text" if sender == "assistant" else "prompt", text[:MAX_EVENT_TEXT], ts=ts)
            )
    return t
