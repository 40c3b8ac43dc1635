"""Split a note into embedding chunks along headings, then paragraphs, then sentences."""

from __future__ import annotations

import re

HEADING_LINE_RE = re.compile(r"^#{1,6}[ \t]")
SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
WORDS_PER_TOKEN = 0.75  # English prose averages ~1.3 word-piece tokens per word


def word_budget(max_tokens: int) -> int:
    """Words that fit a model window of ``max_tokens`` (with room for the title prefix)."""
    return max(16, int(max_tokens * WORDS_PER_TOKEN) - 16)


def _sections(body: str) -> list[str]:
    sections: list[list[str]] = [[]]
    for line in body.split("\n"):
        if HEADING_LINE_RE.match(line) and any(s.strip() for s in sections[-1]):
            sections.append([])
        sections[-1].append(line)
    return ["\n".join(s).strip() for s in sections if "\n".join(s).strip()]


def _pieces(section: str, budget: int) -> list[tuple[str, int]]:
    """A section split into paragraphs, and over-long paragraphs into sentence runs, each with
    its word count (linear in the section's length: every word is split and joined once)."""
    out: list[tuple[str, int]] = []
    for para in re.split(r"\n\s*\n", section):
        para = para.strip()
        if not para:
            continue
        words = para.split()
        if len(words) <= budget:
            out.append((para, len(words)))
            continue
        run: list[str] = []
        for sentence in SENTENCE_RE.split(para):
            words = sentence.split()
            start = 0
            while len(words) - start > budget:  # one enormous sentence: hard split by words
                out.append((" ".join(words[start : start + budget]), budget))
                start += budget
            rest = words[start:] if start else words
            if run and len(run) + len(rest) > budget:
                out.append((" ".join(run), len(run)))
                run = []
            run.extend(rest)
        if run:
            out.append((" ".join(run), len(run)))
    return out


def chunk(title: str, body: str, max_tokens: int = 256) -> list[str]:
    """Chunks of a note for embedding, each prefixed with the title; at least one chunk.

    Whole sections are kept together when they fit; smaller neighbours are packed together.
    """
    budget = word_budget(max_tokens)
    text = body.strip()
    if len(text.split()) <= budget:
        return [f"{title}\n{text}".strip()]
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for section in _sections(text):
        for piece, words in _pieces(section, budget):
            if current and size + words > budget:
                chunks.append("\n\n".join(current))
                current, size = [], 0
            current.append(piece)
            size += words
    if current:
        chunks.append("\n\n".join(current))
    return [f"{title}\n{c}" for c in chunks] or [title]


def plain_text(body: str) -> str:
    """Body text for indexing: code kept (it is searchable), link brackets removed."""
    return re.sub(
        r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]", lambda m: m.group(2) or m.group(1), body
    )
