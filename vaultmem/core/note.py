"""Pure parsing and rendering of note files: no I/O here.

A note is a markdown file with optional YAML frontmatter. ``parse`` reads the text into a
``Note`` with normalised metadata; ``set_fields`` edits frontmatter keys in place, leaving
every other byte (unknown keys, comments, key order, the body) exactly as it was.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from .errors import NoteParseError
from .links import WHOLE_LINK_RE, Link, body_links, frontmatter_links, link_target, parse_link, strip_code
from .memtypes import normalize_type

FM_OPEN_RE = re.compile(r"\A(\ufeff?---[ \t]*\r?\n)")
FM_CLOSE_RE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.M)
HEADING_RE = re.compile(r"^#[ \t]+(\S.*?)(?:[ \t]+#+)?[ \t\r]*$", re.M)  # "# C#" keeps its "#"
URL_RE = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://\S+")
INLINE_TAG_RE = re.compile(r"(?<![\w/&#\[])#([A-Za-z_\u00c0-\uffff][\w/\-\u00c0-\uffff]*)")

STATUSES = (
    "active",
    "resolved",
    "superseded",
    "archived",
    "candidate",
    "conflict",
)  # conflict: a git merge kept both sides
SCOPES = ("project", "user")
ORIGINS = ("planning", "investigation", "implementation", "mixed")
IMPORTANCE_WORDS = {"high": 8, "medium": 5, "low": 2}
CAPPED_ORIGINS = ("planning", "investigation")
DEFAULT_IMPORTANCE = 5


def content_hash(text: str) -> str:
    """The content hash indexes are keyed by (sha256 of the UTF-8 text, 32 hex chars)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def split_frontmatter(text: str) -> tuple[str | None, str, str, str]:
    """Split text into (frontmatter YAML or None, body, opening fence, closing fence).

    ``opener + fm + closer + body == text`` whenever there is frontmatter.
    """
    m = FM_OPEN_RE.match(text)
    if not m:
        return None, text, "", ""
    close = FM_CLOSE_RE.search(text, m.end())
    if not close:
        return None, text, "", ""
    return text[m.end() : close.start()], text[close.end() :], m.group(1), close.group(0)


# Hostile frontmatter costs bounded time (docs/format.md, "Limits"): longer than
# MAX_FRONTMATTER_CHARS is refused before YAML sees it, nested deeper than MAX_YAML_DEPTH
# before it is composed, and a document whose aliases expand past MAX_YAML_NODES values (a
# "billion laughs" bomb) or whose alias contains itself after composing (linear in the
# text) and before any value is built.
MAX_FRONTMATTER_CHARS = 256 * 1024
MAX_YAML_NODES = 10_000
MAX_YAML_DEPTH = 100

_SafeLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it


def _timestamp(loader: yaml.BaseLoader, node: yaml.ScalarNode) -> Any:
    """A YAML timestamp as a date or datetime; one shaped like a date that names no day
    (``created: 2026-13-45``) stays the text written, as Obsidian shows it (not an error that
    costs the whole note)."""
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)  # type: ignore[arg-type]
    except (ValueError, OverflowError):
        return loader.construct_scalar(node)


class _Loader(_SafeLoader):
    """The safe loader, keeping an impossible date as its text (``_timestamp``)."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


class YAMLLimitError(yaml.YAMLError):
    """Frontmatter over one of the limits above."""


def _children(node: yaml.Node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def check_expansion(root: yaml.Node) -> None:
    """Raise YAMLLimitError when the composed document, every alias expanded, has more than
    MAX_YAML_NODES nodes, is deeper than MAX_YAML_DEPTH or contains itself. Each distinct node
    is sized once (aliases share nodes), so this is linear in the document, not its expansion."""
    size: dict[int, int] = {}
    ancestors: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            ancestors.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in _children(node))
            if size[key] > MAX_YAML_NODES:
                raise YAMLLimitError(f"aliases expand to more than {MAX_YAML_NODES} values")
        elif key not in size:
            if key in ancestors:
                raise YAMLLimitError("an alias refers to a value that contains it")
            if depth > MAX_YAML_DEPTH:
                raise YAMLLimitError(f"nested deeper than {MAX_YAML_DEPTH} levels")
            ancestors.add(key)
            stack.append((node, depth, True))
            stack.extend((child, depth + 1, False) for child in _children(node))


_INDENT_RE = re.compile(r"^[ \t]+", re.M)


def _check_nesting(fm: str) -> None:
    """Refuse deep nesting before composing it: libyaml composes recursively (deep enough, it
    crashes the process) and its time grows with the square of the depth. A level opens with
    ``[``, ``{``, ``-``, ``?`` or more indentation, so only text with more of those than the
    limit is scanned (as events, stopping at the limit)."""
    indent = max(map(len, _INDENT_RE.findall(fm)), default=0)
    if indent + sum(fm.count(c) for c in "[{-?") < MAX_YAML_DEPTH:
        return
    depth = 0
    try:
        for event in yaml.parse(fm, Loader=_SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise YAMLLimitError(f"nested deeper than {MAX_YAML_DEPTH} levels")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as err:  # PyYAML >= 6.0.3 stops deep flow nesting in its scanner
        if "flow level" in str(err.context or ""):
            raise YAMLLimitError(f"nested deeper than {MAX_YAML_DEPTH} levels") from None
        raise


class BoundedSafeLoader(_Loader):
    """The safe loader (libyaml's when available) with the limits above checked between
    composing the document and constructing its values."""

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        check_expansion(node)
        return self.construct_document(node)


_YAML = YAMLHandler()  # python-frontmatter's YAML handler; vaultmem's fences (split_frontmatter)


def load_yaml(fm: str, path: str) -> dict:
    """YAML frontmatter to a dict (python-frontmatter's YAML handler with the bounded safe
    loader); errors, and frontmatter over the limits, name the path."""
    data = load_yaml_value(fm, path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise NoteParseError(path, "frontmatter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}


def load_yaml_value(fm: str, path: str) -> Any:
    """Any YAML text (frontmatter, a template's header, an ``edit --set`` value) under the
    same limits; errors name ``path``."""
    if len(fm) > MAX_FRONTMATTER_CHARS:
        raise NoteParseError(path, f"frontmatter longer than {MAX_FRONTMATTER_CHARS} characters")
    try:
        _check_nesting(fm)
        loader = BoundedSafeLoader if "*" in fm else _Loader  # no "*", no alias to expand
        data = _YAML.load(fm, Loader=loader) if fm.strip() else {}
    except yaml.YAMLError as e:
        reason = str(e).splitlines()[0] if str(e) else "invalid YAML"
        raise NoteParseError(path, f"bad YAML frontmatter ({reason})") from None
    except (
        RecursionError,
        UnicodeEncodeError,
    ) as e:  # deep block nesting (pure-Python loader), lone surrogates
        raise NoteParseError(path, f"bad YAML frontmatter ({type(e).__name__})") from None
    return data


@dataclass(frozen=True)
class Note:
    """A parsed note: raw parts plus normalised metadata."""

    path: str
    text: str
    meta: dict
    body: str
    title: str
    type: str | None
    status: str
    importance: int
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    created: str
    updated: str
    scope: str
    source: str | None
    origin: str | None
    context: tuple[str, ...]
    expires: str | None
    superseded_by: str | None
    links: tuple[Link, ...] = field(default=())
    hash: str = ""

    @property
    def id(self) -> str | None:
        """The frontmatter id, if the note has one."""
        value = self.meta.get("id")
        return str(value) if value not in (None, "") else None

    @property
    def key(self) -> str:
        """How vaultmem names the note: its id, else its vault-relative path."""
        return self.id or self.path


def iso(value: Any) -> str | None:
    """A date/datetime/str frontmatter value as an ISO 8601 string (UTC for naive times)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value).strip()


def note_time(when: dt.datetime) -> dt.datetime:
    """A time as vaultmem writes it into a note's ``created``/``updated``: UTC to the second,
    without an offset, so YAML writes it unquoted (``2026-12-07T16:40:28``), the format Obsidian
    types as Date & time. ``iso`` reads it back as the same time (``2026-12-07T16:40:28Z``), as it
    reads the quoted ``"...Z"`` strings of older notes."""
    return when.astimezone(dt.UTC).replace(microsecond=0, tzinfo=None)


def from_timestamp(ts: float) -> str:
    """A POSIX timestamp as an ISO 8601 UTC string (seconds precision)."""
    return dt.datetime.fromtimestamp(int(ts), dt.UTC).isoformat().replace("+00:00", "Z")


def as_list(value: Any) -> list[str]:
    """A frontmatter value that may be a list, a comma separated string or a scalar."""
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [p.strip() for p in str(value).split(",") if p.strip()]


def normalize_importance(value: Any, origin: str | None) -> int:
    """1-10 (words high/medium/low map to 8/5/2); planning/investigation capped at 5."""
    if isinstance(value, str) and value.strip().lower() in IMPORTANCE_WORDS:
        n = IMPORTANCE_WORDS[value.strip().lower()]
    else:
        try:
            n = int(float(value)) if value not in (None, "") else DEFAULT_IMPORTANCE
        except (TypeError, ValueError, OverflowError):  # "abc", nan, inf
            n = DEFAULT_IMPORTANCE
    n = max(1, min(10, n))
    return min(n, 5) if origin in CAPPED_ORIGINS else n


def body_tags(body: str) -> list[str]:
    """Inline ``#tags`` in a body, outside code and headings."""
    text = strip_code(body)
    text = re.sub(r"\]\([^)]*\)", "", text)  # markdown link targets (URLs with #fragments)
    text = URL_RE.sub("", text)  # bare URLs: https://host/page-#fragment
    return INLINE_TAG_RE.findall(text)


def _tags(meta: dict, body: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    listed = [t for value in as_list(meta.get("tags")) for t in value.split()]  # "a b" is two tags
    for tag in listed + body_tags(body):
        tag = tag.lstrip("#").strip()
        if tag and not tag.isdigit():
            seen.setdefault(tag.lower(), None)
    return tuple(seen)


def scalar(value: Any) -> str | None:
    """A property read where one value is expected: a list gives its first value, a whole
    wiki-link ``"[[Target|Label]]"`` its label (else its target), anything else its text;
    None when empty. (Never a Python list's repr, never ``[[...]]``.)"""
    if isinstance(value, (list, tuple)):
        return next((s for s in map(scalar, value) if s), None)
    if value is None or isinstance(value, dict):
        return None
    text = iso(value) or "" if isinstance(value, (dt.date, dt.datetime)) else str(value).strip()
    m = WHOLE_LINK_RE.match(text)
    if m:
        link = parse_link(m.group(1))
        text = (link.label or link.target) if link else ""
    return text or None


# Properties vaultmem reads itself (indexed in their own way, or bookkeeping): the others are
# searchable as ``property_text``.
OWN_PROPERTIES = frozenset((
    "id", "title", "aliases", "alias", "tags", "tag", "type", "status", "created", "updated", "importance",
    "scope", "origin", "expires", "valid_from", "valid_until", "superseded_by", "supersedes", "cssclasses",
    "cssclass", "publish", "permalink", "mobile", "excalidraw-plugin",
    "source", "context", "anchor", "key", "branch", "repo", "date",
))  # fmt: skip  # the second line: what vaultmem writes on its memories (their vectors stay as they were)
MAX_PROPERTY_WORDS = 64  # a long property block never outweighs a short note's text
_ATTACHMENT_RE = re.compile(r"\.(?!md$)[A-Za-z0-9]{1,5}$")


def _property_values(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _property_values(item)]
    if isinstance(value, dict) or value is None or isinstance(value, bool):
        return []
    text = iso(value) or "" if isinstance(value, (dt.date, dt.datetime)) else str(value).strip()
    m = WHOLE_LINK_RE.match(text)
    if m:  # a link counts by its target's name (a file such as cover.jpg: not at all)
        link = parse_link(m.group(1))
        name = posixpath.basename(link.target) if link else ""
        return [] if not name or _ATTACHMENT_RE.search(name) else [name.removesuffix(".md")]
    return [text] if text else []


def property_text(meta: dict) -> str:
    """The values of a note's other properties as text for search (``author: "[[Kevin
    Kelly]]"`` gives ``Kevin Kelly``), at most MAX_PROPERTY_WORDS words."""
    values = [
        v
        for k, value in meta.items()
        if str(k).lower() not in OWN_PROPERTIES
        for v in _property_values(value)
    ]
    words = " ".join(values).split()
    return " ".join(words[:MAX_PROPERTY_WORDS])


def _title(meta: dict, body: str, path: str, title_from: str = "filename") -> str:
    """The ``title`` property, else the file name (Obsidian's name of a note); with
    ``title_from="heading"`` the first ``# heading`` comes before the file name."""
    title = scalar(meta.get("title"))
    if title:
        return title
    if title_from == "heading":
        m = HEADING_RE.search(strip_code(body))
        if m:
            return m.group(1).strip()
    return file_stem(path)


def _first(value: Any) -> Any:
    """A list's first item (a scalar stays as it is)."""
    return value[0] if isinstance(value, (list, tuple)) and value else value


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value not in (None, "") else None


def _choice(value: Any, allowed: tuple[str, ...], default: str | None) -> str | None:
    text = str(value).strip().lower() if value not in (None, "") else ""
    return text if text in allowed else default


def parse(text: str, path: str, mtime: float = 0.0, ctime: float | None = None,
          title_from: str = "filename") -> Note:  # fmt: skip
    """Parse note text; file times fill ``created``/``updated`` when the note has none.
    ``title_from``: where a note without a ``title`` property takes its title (``config.TITLE_FROM``).

    Raises NoteParseError for text that is not a note (binary, bad YAML).
    """
    if "\x00" in text:
        raise NoteParseError(path, "binary file (contains NUL bytes)")
    fm, body, _, _ = split_frontmatter(text)
    meta = load_yaml(fm, path) if fm is not None else {}
    if fm is None:
        body = body.removeprefix("\ufeff")
    origin = _choice(scalar(meta.get("origin")), ORIGINS, None)
    updated = iso(meta.get("updated")) or from_timestamp(mtime)
    created = iso(meta.get("created")) or from_timestamp(ctime if ctime is not None else mtime)
    links = frontmatter_links(meta) + body_links(body)
    return Note(
        path=path,
        text=text,
        meta=meta,
        body=body,
        title=_title(meta, body, path, title_from),
        type=normalize_type(scalar(meta.get("type"))),
        status=_choice(scalar(meta.get("status")), STATUSES, "active") or "active",
        importance=normalize_importance(meta.get("importance"), origin),
        tags=_tags(meta, body),
        aliases=tuple(as_list(meta.get("aliases"))),
        created=created,
        updated=updated,
        scope=_choice(scalar(meta.get("scope")), SCOPES, "project") or "project",
        source=_text(_first(meta.get("source"))),
        origin=origin,
        context=tuple(as_list(meta.get("context"))),
        expires=iso(meta.get("expires")),
        superseded_by=link_target(_first(meta.get("superseded_by"))),
        links=tuple(links),
        hash=content_hash(text),
    )


# ---------------------------------------------------------------- rendering / editing


class _Dumper(yaml.SafeDumper):
    """Flow style for flat lists (``tags: [a, b]``), block style for everything else."""


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flat = all(isinstance(v, (str, int, float, bool)) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_YAML_BREAKS = ("\x85", "\u2028", "\u2029")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # PyYAML writes NEL / line and paragraph separators raw inside plain or single-quoted
    # scalars, where a reader folds them into spaces; double quotes escape them (\N, \L, \P).
    style = '"' if any(c in data for c in _YAML_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _represent_datetime(dumper: yaml.SafeDumper, data: dt.datetime) -> yaml.Node:
    # "2026-12-07T16:40:28" as Obsidian writes a Date & time (PyYAML's own puts a space for the T)
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", data.isoformat())


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(dt.datetime, _represent_datetime)


def dump_field(key: str, value: Any) -> str:
    """One top-level YAML entry, ending in a newline."""
    return yaml.dump({key: value}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)


def _lines(fm: str) -> list[str]:
    """Lines split on ``\n`` only (``str.splitlines`` also splits on NEL, U+2028, ...)."""
    return re.findall(r"[^\n]*\n|[^\n]+", fm)


def _key_spans(fm: str, lines: list[str], starts: list[int]) -> dict[int, tuple[str, int]] | None:
    """Top-level keys as the YAML parser sees them: first line -> (key, last line of its value).

    None when the frontmatter is not valid YAML or its keys do not each start a line at
    column 0 (a flow mapping, indented keys), where lines cannot be edited one key at a time.
    """
    if len(fm) > MAX_FRONTMATTER_CHARS:
        return None
    loader = yaml.SafeLoader(fm)  # pure Python: its marks index characters of ``fm``
    try:
        _check_nesting(fm)
        node = loader.get_single_node()
        if node is None:
            return {}
        if not isinstance(node, yaml.MappingNode):
            return None
        check_expansion(node)
        spans: dict[int, tuple[str, int]] = {}
        for key_node, value_node in node.value:
            first = bisect.bisect_right(starts, key_node.start_mark.index) - 1
            if starts[first] != key_node.start_mark.index or first in spans:
                return None
            end = value_node.end_mark.index
            last = bisect.bisect_right(starts, end - 1) - 1 if end > starts[first] else first
            if not isinstance(value_node, yaml.ScalarNode):  # a block collection ends at the
                while last > first and (not lines[last].strip() or lines[last].startswith("#")):
                    last -= 1  # next token: leave blank lines and comments before it alone
            spans[first] = (str(loader.construct_object(key_node, deep=True)), max(first, last))
        return spans
    except (yaml.YAMLError, TypeError, ValueError, RecursionError):
        return None
    finally:
        loader.dispose()


def _blocks(fm: str) -> list[tuple[str | None, str]] | None:
    """Split frontmatter YAML into (top-level key or None, raw text) blocks, losslessly.

    A key's block runs from its line to the last line of its value; top-level comments and
    blank lines around keys are blocks of their own (None) so that replacing a key keeps them.
    None when the frontmatter cannot be split like that (see ``_key_spans``).
    """
    lines = _lines(fm)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = _key_spans(fm, lines, starts)
    if spans is None:
        return None
    blocks: list[tuple[str | None, str]] = []
    i = 0
    while i < len(lines):
        if i in spans:
            key, last = spans[i]
            blocks.append((key, "".join(lines[i : last + 1])))
            i = last + 1
        else:
            blocks.append((None, lines[i]))
            i += 1
    return blocks


def set_fields(text: str, updates: dict[str, Any], remove: tuple[str, ...] = ()) -> str:
    """Set or remove top-level frontmatter keys, preserving every other byte.

    Existing keys are rewritten in place, new keys are appended, and a note without
    frontmatter gets one. With no updates and no removals the text is returned unchanged.
    Frontmatter whose keys are not one per line (a flow mapping, indented keys) is
    rewritten as a whole; invalid YAML is refused with NoteParseError.
    """
    if not updates and not remove:
        return text
    fm, body, opener, closer = split_frontmatter(text)
    if fm is None:
        newline = "\r\n" if text.split("\n", 1)[0].endswith("\r") else "\n"
        new = "".join(dump_field(k, v) for k, v in updates.items() if k not in remove)
        if not new:
            return text
        bom, rest = ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)
        return f"{bom}---{newline}{new.replace(chr(10), newline)}---{newline}{rest}"
    newline = "\r\n" if opener.endswith("\r\n") else "\n"
    blocks = _blocks(fm)
    if blocks is None:
        meta = load_yaml(fm, "frontmatter")
        blocks = [(k, dump_field(k, v).replace("\n", newline)) for k, v in meta.items()]
    pending = dict(updates)
    out: list[str] = []
    for key, raw in blocks:
        if key is not None and key in remove:
            continue
        if key is not None and key in updates:
            if key in pending:  # a duplicated key is written once, where it first was
                out.append(dump_field(key, pending.pop(key)).replace("\n", newline))
        else:
            out.append(raw)
    if out and not out[-1].endswith("\n"):
        out[-1] += newline
    out += [dump_field(k, v).replace("\n", newline) for k, v in pending.items() if k not in remove]
    return opener + "".join(out) + closer + body


def render(meta: dict[str, Any], body: str) -> str:
    """A new note's text from metadata (in the given key order) and a body."""
    fm = "".join(dump_field(k, v) for k, v in meta.items() if v not in (None, "", [], ()))
    if not fm and (split_frontmatter(body)[0] is not None or body.startswith("\ufeff")):
        return f"---\n---\n{body}"  # a body that looks like frontmatter (or a BOM) stays body
    return f"---\n{fm}---\n{body}" if fm else body


def file_stem(path: str) -> str:
    """A note's name as Obsidian shows it: the file name without ``.md``."""
    name = posixpath.basename(path)
    return name[:-3] if name.lower().endswith(".md") else name
