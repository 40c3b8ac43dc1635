"""Edit a JSON file's text into a new document while leaving every byte of what did not change
as it was: an agent's config (``~/.claude.json``, a settings file) is another program's file,
written in its own format and changed by it at any time, so ``setup`` adds and takes out only
its own members and elements, never re-serialising the rest.

``retext(text, new)``: the text whose document is ``new``; members and elements that did not
change keep their bytes, a new member is written in the indentation the file already uses.
``diff(old, new)``: what a change added and replaced, by key path (``setup`` records
it; ``take_out`` undoes it on the document as it is later).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

WS = re.compile(r"[ \t\n\r]*")


@dataclass
class Node:
    """A JSON value's span in the text; an object's members (key, key start, value) or an
    array's items, in order."""

    start: int
    end: int = 0
    kind: str = "value"  # object, array, value
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)


def parse(text: str) -> Node:
    """The spans of ``text``'s JSON document (ValueError when it is not JSON)."""
    decoder = json.JSONDecoder()

    def skip(i: int) -> int:
        m = WS.match(text, i)
        return m.end() if m else i

    def expect(i: int, char: str) -> None:
        if text[i : i + 1] != char:
            raise ValueError(f"expected {char!r} at {i}")

    def member(node: Node, i: int) -> int:
        """One ``"key": value`` of an object at ``i``; where it ends."""
        i = skip(i)
        expect(i, '"')
        key, after = scanstring(text, i + 1)
        after = skip(after)
        expect(after, ":")
        child = value(after + 1)
        node.members.append((key, i, child))
        return child.end

    def item(node: Node, i: int) -> int:
        """One value of an array at ``i``; where it ends."""
        child = value(i)
        node.items.append(child)
        return child.end

    def container(node: Node, i: int, close: str, entry: Callable[[Node, int], int]) -> Node:
        """An object's or array's entries from ``i``, comma-separated, up to ``close``."""
        i = skip(i)
        if text[i : i + 1] != close:
            while True:
                i = skip(entry(node, i))
                if text[i : i + 1] != ",":
                    break
                i += 1
        expect(i, close)
        node.end = i + 1
        return node

    def value(i: int) -> Node:
        i = skip(i)
        char = text[i : i + 1]
        if char == "{":
            return container(Node(i, kind="object"), i + 1, "}", member)
        if char == "[":
            return container(Node(i, kind="array"), i + 1, "]", item)
        _, end = decoder.raw_decode(text, i)
        return Node(i, end)

    root = value(0)
    if text[skip(root.end) :]:
        raise ValueError("extra data after the document")
    return root


class _Writer:
    """Renders a node of ``text`` as a new value, reusing the old text wherever it can."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.compact = "\n" not in text.strip()
        found = re.search(r"\n([ \t]+)\S", text)
        self.unit = found.group(1) if found else "  "
        tight = self.compact and '":' in text and '": ' not in text
        self.separators = (",", ":") if tight else (", ", ": ")

    def line_indent(self, pos: int) -> str:
        start = self.text.rfind("\n", 0, pos) + 1
        return WS.match(self.text, start).group(0).lstrip("\r\n")  # type: ignore[union-attr]

    def dumps(self, value: Any, indent: str) -> str:
        if self.compact:
            return json.dumps(value, ensure_ascii=False, separators=self.separators)
        return json.dumps(value, indent=self.unit, ensure_ascii=False).replace("\n", "\n" + indent)

    def render(self, node: Node, old: Any, new: Any) -> str:
        if old == new and type(old) is type(new):
            return self.text[node.start : node.end]
        if node.kind == "object" and isinstance(old, dict) and isinstance(new, dict):
            return self._object(node, new)
        if node.kind == "array" and isinstance(old, list) and isinstance(new, list):
            return self._array(node, old, new)
        return self.dumps(new, self.line_indent(node.start))

    def _object(self, node: Node, new: dict[str, Any]) -> str:
        last = {key: i for i, (key, _, _) in enumerate(node.members)}  # a repeated key: the last counts
        kept: list[tuple[int | None, str]] = []
        for i, (key, key_start, child) in enumerate(node.members):
            if last[key] != i or key not in new:
                continue
            old_value = json.loads(self.text[child.start : child.end])
            head = self.text[key_start : child.start]
            kept.append((i, head + self.render(child, old_value, new[key])))
        indent = self._member_indent(node, [m[2].start for m in node.members])
        for key in new:
            if key not in last:
                name = json.dumps(key, ensure_ascii=False) + (self.separators[1] if self.compact else ": ")
                kept.append((None, name + self.dumps(new[key], indent)))
        spans = [(m[1], m[2].end) for m in node.members]
        return self._join(node, "{", "}", spans, kept, indent)

    def _array(self, node: Node, old: list[Any], new: list[Any]) -> str:
        key = lambda v: json.dumps(v, sort_keys=True)
        ops = difflib.SequenceMatcher(None, [key(v) for v in old], [key(v) for v in new], autojunk=False)
        indent = self._member_indent(node, [n.start for n in node.items])
        out: list[tuple[int | None, str]] = []
        for tag, i1, i2, j1, j2 in ops.get_opcodes():
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    item = node.items[i]
                    out.append((i, self.render(item, old[i], new[j])))
            else:
                out += [(None, self.dumps(new[j], indent)) for j in range(j1, j2)]
        spans = [(n.start, n.end) for n in node.items]
        return self._join(node, "[", "]", spans, out, indent)

    def _member_indent(self, node: Node, starts: list[int]) -> str:
        if starts:
            return self.line_indent(starts[-1])
        return self.line_indent(node.start) + self.unit

    def _join(self, node: Node, open_: str, close: str, spans: list[tuple[int, int]],
              parts: list[tuple[int | None, str]], indent: str) -> str:  # fmt: skip
        """The container's text: ``parts`` (an old member's index, or None for a new one, and
        its text) with the old separators between old neighbours, the file's own for the rest."""
        if not parts:
            return open_ + close
        if not spans:  # was empty: laid out as the file lays out its others
            if self.compact:
                return open_ + self.separators[0].join(p for _, p in parts) + close
            inner = ",\n".join(indent + p for _, p in parts)
            return f"{open_}\n{inner}\n{self.line_indent(node.start)}{close}"
        lead = self.text[node.start + 1 : spans[0][0]]
        trail = self.text[spans[-1][1] : node.end - 1]
        seps = [self.text[spans[i][1] : spans[i + 1][0]] for i in range(len(spans) - 1)]
        generic = seps[-1] if seps else ("," + lead if "\n" in lead else self.separators[0])
        out = open_ + lead
        for n, (_, part) in enumerate(parts):
            if n:
                before = parts[n - 1][0]
                out += seps[before] if before is not None and before < len(seps) else generic
            out += part
        return out + trail + close


def retext(text: str, new: Any) -> str:
    """``text`` edited so that its document is ``new``; what did not change keeps its bytes."""
    if not text.strip():
        return json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    root = parse(text)
    old = json.loads(text)
    return text[: root.start] + _Writer(text).render(root, old, new) + text[root.end :]


# ---------------------------------------------------------------------- what a change did

Path_ = list[Any]  # keys of objects and indexes of arrays, from the document's root


def diff(old: Any, new: Any, atomic: Callable[[Path_], bool] = lambda p: False,
         path: Path_ | None = None) -> dict[str, list[Any]]:  # fmt: skip
    """What turned ``old`` into ``new``, by key path: ``added`` [path, value] (a member that was
    not there), ``changed`` [path, old, new] (a value, or an ``atomic`` member, replaced) and
    ``items`` [array path, value] (an element added to an array that was there). What was taken
    out (an older entry of vaultmem's own) is not listed: undoing the change never puts it back."""
    path = path or []
    out: dict[str, list[Any]] = {"added": [], "changed": [], "items": []}
    if isinstance(old, dict) and isinstance(new, dict) and not atomic(path):
        for key, value in new.items():
            if key not in old:
                out["added"].append([[*path, key], value])
            elif old[key] != value:
                for name, found in diff(old[key], value, atomic, [*path, key]).items():
                    out[name] += found
    elif isinstance(old, list) and isinstance(new, list) and not atomic(path):
        key = lambda v: json.dumps(v, sort_keys=True)
        ops = difflib.SequenceMatcher(None, [key(v) for v in old], [key(v) for v in new], autojunk=False)
        for tag, i1, i2, j1, j2 in ops.get_opcodes():
            if tag in ("insert", "replace"):  # an element edited in place is no element added
                out["items"] += [[path, new[j]] for j in range(j1 + (i2 - i1 if tag == "replace" else 0), j2)]
    elif old != new:
        out["changed"].append([path, old, new])
    return out


def get(doc: Any, path: Path_) -> Any:
    """The value at ``path``, or KeyError."""
    for key in path:
        if isinstance(doc, dict) and isinstance(key, str) and key in doc:
            doc = doc[key]
        else:
            raise KeyError(str(key))
    return doc


def take_out(doc: Any, path: Path_, ours: Any, atomic: Callable[[Path_], bool] = lambda p: False,
             same: Callable[[Any, Any], bool] | None = None) -> None:  # fmt: skip
    """Take out of ``doc`` the member at ``path`` that ``ours`` was added as: whole when it is
    still what was added or ``atomic``; else only what of ``ours`` is still in it (an array's
    elements equal to ours, or that ``same`` says are), dropping a container left empty: what
    others added into it since stays."""
    try:
        parent = get(doc, path[:-1])
    except KeyError:
        return
    key = path[-1]
    if not isinstance(parent, dict) or key not in parent:
        return
    current = parent[key]
    if current == ours or atomic(path) or not isinstance(ours, (dict, list)):
        del parent[key]
        return
    if isinstance(current, dict) and isinstance(ours, dict):
        for k, v in ours.items():
            take_out(doc, [*path, k], v, atomic, same)
    elif isinstance(current, list) and isinstance(ours, list):
        for v in ours:
            drop_item(current, v, same)
    else:
        return
    if not parent[key]:
        del parent[key]


def drop_item(items: list[Any], value: Any, same: Callable[[Any, Any], bool] | None = None) -> bool:
    """Remove the first element equal to ``value`` (else the first ``same`` says is it)."""
    if value in items:
        items.remove(value)
        return True
    for i, item in enumerate(items):
        if same is not None and same(item, value):
            del items[i]
            return True
    return False
