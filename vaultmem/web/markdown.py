"""Markdown to HTML for the note page (markdown-it-py, raw HTML off) with working wiki-links.

``[[Target|label]]`` becomes a link to the note it resolves to (the link graph's resolver, so
the page agrees with recall and ``graph links``); a link to a missing note gets the class
``broken`` and points at a search for its text. Links inside code stay text: markdown-it never
runs inline rules inside code spans or blocks.

A remote image (``![x](https://...)``) becomes a link to it, so viewing a note fetches nothing
from elsewhere (the page's Content-Security-Policy blocks remote loads too); with
``remote_images=True`` (the note page's "load remote images") it is an ``<img>`` again. A first
``# heading`` that repeats the note's title is left out: the page shows the title already.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from html import escape
from typing import Any, NamedTuple
from urllib.parse import quote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from ..core.links import LINK_RE, parse_link

Resolve = Callable[[str], "str | None"]  # link target -> note path, ATTACHMENT + file path, or None
ATTACHMENT = "attachment:"


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """A wiki-link read by the index's own grammar (``core.links.LINK_RE``), so the page links
    what the graph links."""
    m = LINK_RE.match(state.src, state.pos)
    link = parse_link(m.group(2), bool(m.group(1))) if m else None
    if m is None or link is None:
        return False
    if not silent:
        resolve: Resolve = state.env["resolve"]
        path = resolve(link.target)
        label = link.label or (f"{link.target}#{link.heading}" if link.heading else link.target)
        attachment = path is not None and path.startswith(ATTACHMENT)
        tok = state.push("span" if attachment else "link_open", "span" if attachment else "a", 1)
        if attachment and path is not None:  # an image, pdf, canvas...: a vault file, not a page of this view
            tok.attrs = {"class": "wikilink attachment", "title": "attachment: " + path[len(ATTACHMENT) :]}
        elif path is None:
            tok.attrs = {
                "href": "/?q=" + quote(link.target),
                "class": "wikilink broken",
                "title": "no such note",
            }
        else:
            tok.attrs = {"href": "/note?path=" + quote(path), "class": "wikilink"}
        text = state.push("text", "", 0)
        text.content = label
        state.push("span_close" if attachment else "link_close", "span" if attachment else "a", -1)
    state.pos = m.end()
    return True


REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)  # a scheme, or protocol-relative


def is_remote(src: str) -> bool:
    """Whether loading ``src`` would reach outside this page's server (``data:`` stays local)."""
    return bool(REMOTE.match(src.strip())) and not src.strip().lower().startswith("data:")


def _image_rule(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
    tok = tokens[idx]
    src = str(tok.attrs.get("src", ""))
    if not is_remote(src):
        return self.image(tokens, idx, options, env)
    env["remote"].append(src)
    if env.get("remote_images"):
        tok.attrs["referrerpolicy"] = "no-referrer"
        return self.image(tokens, idx, options, env)
    alt = self.renderInlineAsText(tok.children or [], options, env) or "image"
    host = urlsplit(src if not src.startswith("//") else "http:" + src).hostname or src
    return (f'<a class="remote-image" href="{escape(src)}" target="_blank" rel="noopener noreferrer" '
            f'title="a remote image, not loaded: click to open it">{escape(alt)} '
            f'<span class="meta">(image from {escape(host)}, not loaded)</span></a>')  # fmt: skip


def renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.add_render_rule("image", _image_rule)
    return md


_MD = renderer()


class Rendered(NamedTuple):
    html: str
    remote: list[str]  # the remote image addresses in the body, loaded or not


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def render(body: str, resolve: Resolve, *, title: str | None = None, remote_images: bool = False) -> Rendered:
    """The HTML of a note body; ``resolve`` maps a wiki-link target to a note path."""
    env: dict[str, Any] = {"resolve": resolve, "remote": [], "remote_images": remote_images}
    tokens = _MD.parse(body, env)
    if (title and len(tokens) >= 3 and tokens[0].type == "heading_open" and tokens[0].tag == "h1"
            and _norm(tokens[1].content) == _norm(title)):  # fmt: skip
        tokens = tokens[3:]
    return Rendered(_MD.renderer.render(tokens, _MD.options, env), env["remote"])
