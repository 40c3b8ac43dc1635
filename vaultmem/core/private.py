"""``<private>...</private>`` spans: what a person marks as never to be stored or injected
(the convention claude-mem users know). Stdlib only and cheap to import: the prompt hook uses it."""

from __future__ import annotations

import re

_PRIVATE_TAG = re.compile(r"<\s*(/?)\s*private\b[^<>]{0,200}>", re.I)


def strip_private(text: str) -> str:
    """``text`` without its ``<private>...</private>`` spans (tags included).

    Nested spans count depth; an unclosed ``<private>`` hides everything after it (a cut-off
    paste must not leak) and a stray ``</private>`` is dropped."""
    if "private" not in text.lower():
        return text
    parts, depth, pos = [], 0, 0
    for m in _PRIVATE_TAG.finditer(text):
        if depth == 0:
            parts.append(text[pos : m.start()])
        depth = max(0, depth - 1) if m.group(1) else depth + 1
        pos = m.end()
    if depth == 0:
        parts.append(text[pos:])
    return "".join(parts)
