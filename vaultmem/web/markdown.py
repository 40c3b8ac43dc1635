"""Markdown to HTML for the note page (markdown-it-py, raw HTML off) with working wiki-links.

``[[Target|label]]`` becomes a link to the note it resolves to (the link graph's resolver, so
the page agrees with recall and ``graph links``); a link to a missing note gets the class
``broken`` and points at a search for its text. Links inside code stay text: markdown-it never
runs inline rules inside code spans or blocks.
"""

from __future__ import annotations

from typing import Callable
from urllib.parse import quote

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

from ..core.links import parse_link

Resolve = Callable[[str], "str | None"]  # link target -> note path, or None


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    start = pos + (3 if embed else 2)
    if not (embed or src.startswith("[[", pos)):
        return False
    end = src.find("]]", start)
    if end < 0 or "\n" in src[start:end] or "[" in src[start:end]:
        return False
    link = parse_link(src[start:end], embed)
    if link is None:
        return False
    if not silent:
        resolve: Resolve = state.env["resolve"]
        path = resolve(link.target)
        label = link.label or (f"{link.target}#{link.heading}" if link.heading else link.target)
        tok = state.push("link_open", "a", 1)
        if path is None:
            tok.attrs = {"href": "/?q=" + quote(link.target), "class": "wikilink broken", "title": "no such note"}
        else:
            tok.attrs = {"href": "/note?path=" + quote(path), "class": "wikilink"}
        text = state.push("text", "", 0)
        text.content = label
        state.push("link_close", "a", -1)
    state.pos = end + 2
    return True


def renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    return md


_MD = renderer()


def render(body: str, resolve: Resolve) -> str:
    """The HTML of a note body; ``resolve`` maps a wiki-link target to a note path."""
    return _MD.render(body, {"resolve": resolve})
