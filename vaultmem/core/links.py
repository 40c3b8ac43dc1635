"""Link extraction and resolution as Obsidian has them (pure functions, no I/O).

Extraction understands ``[[Target]]``, ``[[Target|label]]``, ``[[Target#Heading]]``,
``[[Target#^block]]``, embeds ``![[Target]]``, markdown links ``[text](Other%20note.md)`` and
``![alt](image.png)`` between files of the vault, and property values that are one whole
``"[[Target]]"``. Links inside code (fenced blocks, inline spans) and math are not links.
Resolution follows Obsidian's ``getFirstLinkpathDest`` (docs/obsidian.md): a note is named by
its path and file name (case-insensitively); other files (images, pdf, .canvas, .base ...) are
attachments linked by their name with its extension.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

# [[target]]: no line break, a single "]" does not end it, an inner "[[" starts over, "\[[" is no link
LINK_RE = re.compile(r"(?<!\\)(!?)\[\[((?:(?!\[\[|\]\])[^\n])*?)\]\]")
WHOLE_LINK_RE = re.compile(r"^\[\[([^\n]*?)\]\]$")
# [text](dest "title") / ![alt](dest): dest is <...> or a run without spaces (one level of parentheses)
MDLINK_RE = re.compile(
    r"(?<![\\\]])(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|(?:[^\s()<>]|\([^\s()]*\))+)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
FENCE_RE = re.compile(r"^[ \t>]*(?:(?:[-*+]|\d+[.)])[ \t]+)?(`{3,}|~{3,})(.*)$")
# a run of N backticks up to the next run of exactly N, never across a blank line (paragraph)
INLINE_CODE_RE = re.compile(r"(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)
MATH_BLOCK_RE = re.compile(r"(?<!\\)\$\$.*?(?<!\\)\$\$", re.S)
# $inline$: no space after the opening or before the closing "$", no digit after it ("$5 and $6")
MATH_INLINE_RE = re.compile(r"(?<![\\$])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$(?!\d)")
NOT_NEWLINE_RE = re.compile(r"[^\n]")
MAX_MATH_SCAN = 1_000_000  # math masking only scans this many characters of a body (bounded time)


@dataclass(frozen=True)
class Link:
    """One link as written: target path plus optional heading/block, label and kind."""

    target: str
    heading: str | None = None
    block: str | None = None
    label: str | None = None
    embed: bool = False
    kind: str = "body"  # body | frontmatter | superseded_by | supersedes | may_update


def parse_link(inner: str, embed: bool = False, kind: str = "body") -> Link | None:
    """Parse the text between ``[[`` and ``]]``; None for an empty target (``[[#Heading]]``
    names the note itself and is no edge). The label starts at the first ``|``, the heading or
    ``^block`` at the first ``#`` (``[[Name^x]]`` names a file ``Name^x``)."""
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
        return None
    return Link(target, heading, block, label.strip() or None, embed, kind)


def _blank(text: str) -> str:
    return NOT_NEWLINE_RE.sub(" ", text)


def strip_code(body: str) -> str:
    """Blank out fenced code blocks (also inside lists and quotes; an unclosed fence runs to
    the end) and inline code spans, keeping line structure."""
    out: list[str] = []
    fence: re.Pattern | None = None
    for line in body.split("\n"):
        if fence is not None:
            if fence.match(line):
                fence = None
            out.append("")
            continue
        m = FENCE_RE.match(line) if ("```" in line or "~~~" in line) else None
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):  # "``` a ` b" is inline code
            char, n = m.group(1)[0], len(m.group(1))
            fence = re.compile(r"^[ \t>]*" + re.escape(char) + "{" + str(n) + r",}[ \t\r]*$")
            out.append("")
        else:
            out.append(line)
    return INLINE_CODE_RE.sub(lambda m: _blank(m.group(0)), "\n".join(out))


def strip_math(text: str) -> str:
    """Blank out ``$$display$$`` and ``$inline$`` math (LaTeX is no link syntax)."""
    if "$" not in text or len(text) > MAX_MATH_SCAN:
        return text
    text = MATH_BLOCK_RE.sub(lambda m: _blank(m.group(0)), text)
    return MATH_INLINE_RE.sub(lambda m: _blank(m.group(0)), text)


def markdown_target(dest: str, embed: bool = False) -> Link | None:
    """A markdown link destination as a link to a vault file (percent-decoded, split at the
    first ``#``); None for URLs (``https:``, ``mailto:``, ``obsidian:`` ...) and same-note
    ``#heading`` links."""
    if dest.startswith("<"):
        dest = dest[1:-1]
    dest = dest.strip()
    if not dest or SCHEME_RE.match(dest) or dest.startswith("//"):
        return None
    path, _, anchor = unquote(dest).partition("#")
    if not path.strip():
        return None
    heading = anchor.strip() or None
    return Link(path.strip(), heading, None, None, embed)


def body_links(body: str) -> list[Link]:
    """Wiki-links, embeds and markdown links in a markdown body; code and math excluded."""
    text = strip_math(strip_code(body))
    links: list[Link] = []

    def wiki(m: re.Match) -> str:
        link = parse_link(m.group(2), embed=bool(m.group(1)))
        if link:
            links.append(link)
        return _blank(m.group(0))

    if "[[" in text:
        text = LINK_RE.sub(wiki, text)
    if "](" in text:
        for m in MDLINK_RE.finditer(text):
            link = markdown_target(m.group(3), embed=bool(m.group(1)))
            if link:
                links.append(link)
    return links


def _strings(value: Any) -> Iterator[str]:
    """A property's string values: the value itself or the items of a list (nested lists too);
    mappings are not properties Obsidian reads links from."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


LIFECYCLE_KEYS = ("superseded_by", "supersedes", "may_update")  # may_update: a possible update, not applied


def frontmatter_links(meta: dict) -> list[Link]:
    """Property links: a value, or a list item, that is one whole ``[[...]]`` (as Obsidian
    reads them); ``superseded_by``/``supersedes``/``may_update`` keep their kind."""
    links = []
    for key, value in meta.items():
        kind = key if key in LIFECYCLE_KEYS else "frontmatter"
        for text in _strings(value):
            m = WHOLE_LINK_RE.match(text.strip())
            link = parse_link(m.group(1), kind=kind) if m else None
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


def fold(name: str) -> str:
    """The key names are compared by: NFC and case-insensitive."""
    return name.lower() if name.isascii() else unicodedata.normalize("NFC", name).lower()


def _norm(name: str) -> str:
    name = fold(name.strip())
    return name[:-3] if name.endswith(".md") else name


LINK_EXTRAS = ("title", "id")  # what links resolve by when no file name matches (aliases: alias_links)


def link_extras(alias_links: bool) -> tuple[str, ...]:
    """What a vault's links resolve by when no file name matches, under its ``alias_links``."""
    return ("title", "alias", "id") if alias_links else LINK_EXTRAS


class Resolver:
    """Resolves link targets to file paths the way Obsidian does, then by vaultmem's extras.

    Obsidian's rules (docs/obsidian.md): ``./`` and ``../`` paths are relative to the linking
    note, with no fallback; an exact vault path (with or without ``.md``) wins; otherwise a
    file whose path ends with the target (notes also without ``.md``): the one in the linking
    note's folder, else the shortest path (then the alphabetically first). Names compare
    case-insensitively. ``attachments`` are the vault's other files: they resolve by their
    name with its extension. Only when none of that finds a file do the ``extras`` apply, in
    order: ``title`` (a note's title), ``alias`` (its aliases: Obsidian does not resolve
    ``[[Alias]]``, it writes ``[[Note|Alias]]``) and ``id``.
    """

    EXTRAS = ("title", "alias", "id")

    def __init__(self, notes: Iterable[NoteKeys], attachments: Iterable[str] = (),
                 extras: Iterable[str] = LINK_EXTRAS):  # fmt: skip
        self.extras = tuple(e for e in self.EXTRAS if e in tuple(extras))
        self._by: dict[str, dict[str, list[str]]] = {r: defaultdict(list) for r in self.EXTRAS}
        self._exact: dict[str, str] = {}  # folded path -> path
        self._by_name: dict[str, list[str]] = defaultdict(list)  # folded file name (notes also without .md)
        self.attachments: set[str] = set()
        self.add_notes(notes)
        for path in attachments:
            if fold(path) not in self._exact:
                self.attachments.add(path)
                self._add_file(path)

    def add_notes(self, notes: Iterable[NoteKeys]) -> None:
        """Add notes (a resolver built a part at a time holds only the notes some targets may
        name: ``index.linklists``; never after attachments, which a note's path outranks)."""
        for n in notes:
            self._add_file(n.path)
            if n.title:
                self._by["title"][_norm(n.title)].append(n.path)
            for alias in n.aliases:
                self._by["alias"][_norm(alias)].append(n.path)
            if n.id:
                self._by["id"][n.id.strip().lower()].append(n.path)

    def _add_file(self, path: str) -> None:
        key = fold(path)
        self._exact.setdefault(key, path)
        name = key.rsplit("/", 1)[-1]
        self._by_name[name].append(path)
        if name.endswith(".md"):  # a note, or a markdown file left out of the index
            self._by_name[name[:-3]].append(path)
            self._exact.setdefault(key[:-3], path)

    def is_attachment(self, path: str | None) -> bool:
        return path in self.attachments

    def resolve(self, target: str, source_path: str = "") -> str | None:
        """The path a link from ``source_path`` to ``target`` points at, or None (unresolved)."""
        found = self._obsidian(target.strip().replace("\\", "/"), source_path)
        if found is not False:
            return found if isinstance(found, str) else None
        key = _norm(target)
        for rule in self.extras:
            hits = self._by[rule].get(key)
            if hits:
                return self._pick(hits, source_path)
        return None

    def resolve_obsidian(self, target: str, source_path: str = "") -> str | None:
        """The path Obsidian itself resolves ``target`` to (no title, alias or id fallback)."""
        found = self._obsidian(target.strip().replace("\\", "/"), source_path)
        return found if isinstance(found, str) else None

    def _obsidian(self, target: str, source: str) -> str | None | bool:
        """Obsidian's lookup: the path, None (relative and missing: no fallback), or False."""
        src_dir = posixpath.dirname(source)
        if target.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(src_dir, target))
            if joined == ".." or joined.startswith("../"):
                return None
            return self._exact.get(fold(joined))
        target = target.lstrip("/")
        if not target:
            return False
        key = fold(target)
        if key in self._exact:
            return self._exact[key]
        name = key.rsplit("/", 1)[-1]
        hits = [p for p in self._by_name.get(name, ()) if _suffix_match(p, key)]
        return self._pick(hits, source) if hits else False

    @staticmethod
    def _pick(paths: list[str], source: str) -> str:
        if len(paths) == 1:  # the common case: no tie to break
            return paths[0]
        src_dir = posixpath.dirname(source)
        same = sorted(p for p in paths if posixpath.dirname(p) == src_dir)
        return same[0] if same else min(paths, key=lambda p: (len(p), p))


def _suffix_match(path: str, key: str) -> bool:
    folded = fold(path)
    return folded.endswith("/" + key) or (folded.endswith(".md") and folded[:-3].endswith("/" + key))
