"""Wiki-link extraction and resolution (pure functions, no I/O).

Extraction understands ``[[Target]]``, ``[[Target|label]]``, ``[[Target#Heading]]``,
``[[Target#^block]]``, embeds ``![[Target]]`` and links inside frontmatter values.
Links inside inline code spans and fenced code blocks are not links.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

LINK_RE = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# a run of N backticks up to the next run of exactly N, never across a blank line (paragraph)
INLINE_CODE_RE = re.compile(r"(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)


@dataclass(frozen=True)
class Link:
    """One wiki-link as written: target plus optional heading/block, label and kind."""

    target: str
    heading: str | None = None
    block: str | None = None
    label: str | None = None
    embed: bool = False
    kind: str = "body"  # body | frontmatter | superseded_by | supersedes | may_update


def parse_link(inner: str, embed: bool = False, kind: str = "body") -> Link | None:
    """Parse the text between ``[[`` and ``]]``; None for an empty target."""
    target, _, label = inner.partition("|")
    target = target.removesuffix("\\")  # [[Target\|label]] inside a markdown table
    target, _, anchor = target.partition("#")
    heading = block = None
    if anchor.startswith("^"):
        block = anchor[1:].strip() or None
    elif anchor:
        heading = anchor.strip() or None
    target = target.strip()
    if not target:
        return None  # [[#Heading]] is a link to the note itself; not an edge
    return Link(target, heading, block, label.strip() or None, embed, kind)


def strip_code(body: str) -> str:
    """Blank out fenced code blocks and inline code spans, keeping line structure."""
    out: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        m = FENCE_RE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append("")
        elif fence is not None:
            closing = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closing and not line[m.end() :].strip():  # "```python" inside does not close
                fence = None
            out.append("")
        else:
            out.append(line)
    return INLINE_CODE_RE.sub(lambda m: " " * len(m.group(0)), "\n".join(out))


def body_links(body: str) -> list[Link]:
    """Links in a markdown body, code excluded."""
    links = []
    for m in LINK_RE.finditer(strip_code(body)):
        link = parse_link(m.group(2), embed=bool(m.group(1)))
        if link:
            links.append(link)
    return links


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


LIFECYCLE_KEYS = ("superseded_by", "supersedes", "may_update")  # may_update: a possible update, not applied


def frontmatter_links(meta: dict) -> list[Link]:
    """Links found in any frontmatter value; ``superseded_by``/``supersedes``/``may_update`` keep
    their kind."""
    links = []
    for key, value in meta.items():
        kind = key if key in LIFECYCLE_KEYS else "frontmatter"
        for text in _strings(value):
            for m in LINK_RE.finditer(text):
                link = parse_link(m.group(2), embed=bool(m.group(1)), kind=kind)
                if link:
                    links.append(link)
    return links


def link_target(text: str | None) -> str | None:
    """The target of a value like ``"[[Note]]"`` or a bare ``"Note"``; None if empty."""
    if not text or not isinstance(text, str):
        return None
    m = LINK_RE.search(text)
    if m:
        link = parse_link(m.group(2))
        return link.target if link else None
    return text.strip() or None


@dataclass(frozen=True)
class NoteKeys:
    """What a note can be linked by: its path plus title, aliases and id."""

    path: str
    title: str | None = None
    aliases: tuple[str, ...] = ()
    id: str | None = None


def _norm(name: str) -> str:
    name = name.strip().lower()
    return name[:-3] if name.endswith(".md") else name


def _distance(a: str, b: str) -> int:
    """Folder hops between the folders of two vault-relative paths."""
    da = [p for p in posixpath.dirname(a).split("/") if p]
    db = [p for p in posixpath.dirname(b).split("/") if p]
    common = 0
    for x, y in zip(da, db):
        if x != y:
            break
        common += 1
    return len(da) + len(db) - 2 * common


class Resolver:
    """Resolves link targets to note paths: stem, then title, aliases, id.

    A target with a folder (``[[folder/Note]]``) is matched against path suffixes first.
    Ties within one rule go to the candidate nearest to the linking note's folder, then
    to the alphabetically first path, so resolution is deterministic.
    """

    RULES = ("stem", "title", "alias", "id")

    def __init__(self, notes: Iterable[NoteKeys]):
        self._by: dict[str, dict[str, list[str]]] = {r: defaultdict(list) for r in self.RULES}
        self._paths: dict[str, list[str]] = defaultdict(list)
        for n in notes:
            stem = posixpath.basename(n.path)
            self._by["stem"][_norm(stem)].append(n.path)
            self._paths[_norm(n.path)].append(n.path)
            if n.title:
                self._by["title"][_norm(n.title)].append(n.path)
            for alias in n.aliases:
                self._by["alias"][_norm(alias)].append(n.path)
            if n.id:
                self._by["id"][n.id.strip().lower()].append(n.path)

    def resolve(self, target: str, source_path: str = "") -> str | None:
        """The path a link from ``source_path`` to ``target`` points at, or None (dangling)."""
        key = _norm(target)
        if "/" in key:
            hits = self._paths.get(key) or [
                p for k, ps in self._paths.items() if k.endswith("/" + key) for p in ps
            ]
            if hits:
                return self._nearest(hits, source_path)
        for rule in self.RULES:
            hits = self._by[rule].get(key)
            if hits:
                return self._nearest(hits, source_path)
        return None

    @staticmethod
    def _nearest(paths: list[str], source: str) -> str:
        if len(paths) == 1:  # the common case: no tie to break
            return paths[0]
        return min(paths, key=lambda p: (_distance(p, source), p))
