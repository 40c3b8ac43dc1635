"""Three-way merge of notes for git: frontmatter key by key, bodies line by line.

``merge_notes`` is pure apart from running ``git merge-file`` on the bodies. Rules, for a key
both sides changed differently (a key changed on one side only takes that side's value):
tags, aliases and other lists are united; ``updated`` takes the latest, ``created`` the
earliest, ``importance`` the higher; ``status`` and ``superseded_by`` follow the later change,
and a note resolved or superseded on one side stays so; any other value both sides changed
is a conflict. Conflicting body lines and values stay in the note as marked markdown blocks
(both versions, nothing dropped) and the note gets ``status: conflict``.

``main`` is the entry point git calls (``vaultmem merge-driver %O %A %B %P``): it writes the
result into %A and exits 0 (merged, conflicts marked inside the note) or 1 (not a note it can
merge; git then reports the file as conflicted).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import NoteParseError
from .note import (
    as_list,
    iso,
    load_yaml,
    normalize_importance,
    set_fields,
    split_frontmatter,
)

MISSING = object()
MARKER = 40  # conflict marker length: long enough never to clash with a note's own lines
LIST_KEYS = ("tags", "aliases", "context", "links", "related", "supersedes")
TERMINAL = ("resolved", "superseded")
CONFLICT = "conflict"
LABEL_A, LABEL_B = "version A", "version B"


@dataclass
class Merged:
    """A merge result: the note text and what could not be merged automatically."""

    text: str
    conflicts: list[str] = field(default_factory=list)  # "body" and/or frontmatter keys
    clean: bool = True  # False: not a note the driver could merge (git should report it)


# ---------------------------------------------------------------- line merge


def merge_lines(base: str, ours: str, theirs: str, path: str = "note") -> tuple[str, int]:
    """Three-way line merge by ``git merge-file``; conflict hunks become markdown blocks.

    Returns (text, number of conflicting hunks).
    """
    if ours == theirs:
        return ours, 0
    with tempfile.TemporaryDirectory(prefix="vaultmem-merge-") as tmp:
        files = []
        for name, text in (("a", ours), ("o", base), ("b", theirs)):
            p = Path(tmp) / name
            p.write_bytes(text.encode("utf-8", "surrogateescape"))
            files.append(str(p))
        proc = subprocess.run(
            ["git", "merge-file", "-p", f"--marker-size={MARKER}", "-L", "A", "-L", "O", "-L", "B", *files],
            capture_output=True,
        )
    if proc.returncode < 0 or proc.returncode > 127:
        raise OSError(f"git merge-file failed on {path}: {proc.stderr.decode(errors='replace').strip()}")
    merged = proc.stdout.decode("utf-8", "surrogateescape")
    return (_render_hunks(merged, path), proc.returncode) if proc.returncode else (merged, 0)


def _render_hunks(text: str, path: str) -> str:
    """Turn git's conflict markers into a clearly marked, valid markdown block per hunk."""
    start, mid, end = "<" * MARKER + " A", "=" * MARKER, ">" * MARKER + " B"
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        nl = line[len(bare) :] or "\n"
        if bare == start:
            out.append(
                f"{_sep(out)}> [!warning] vaultmem merge conflict: both sides changed these lines of "
                f"{path}. Keep what is right, delete the rest and these notices, then set the status.{nl}"
                f">{nl}> **{LABEL_A}:**{nl}{nl}"
            )
        elif bare == mid:
            out.append(f"{_sep(out)}> **{LABEL_B}:**{nl}{nl}")
        elif bare == end:
            out.append(f"{_sep(out)}> end of merge conflict{nl}{nl}")
        else:
            out.append(line)
    return "".join(out)


def _sep(out: list[str]) -> str:
    """A blank line before a notice unless there is one (so no line joins the quote)."""
    if not out:
        return ""
    last = out[-1]
    if not last.endswith("\n"):
        return "\n\n"
    return "" if last.strip() == "" else "\n"


# ---------------------------------------------------------------- frontmatter merge


def _when(meta: dict) -> dt.datetime:
    text = iso(meta.get("updated")) or ""
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.UTC)
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _union(*values: Any) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        if value is not MISSING:
            for item in as_list(value):
                seen.setdefault(item, None)
    return list(seen)


def _status_winner(ours: dict, theirs: dict) -> dict:
    """The side whose status (and superseded_by) the merge keeps."""
    o, t = str(ours.get("status", "active")).lower(), str(theirs.get("status", "active")).lower()
    if (o in TERMINAL) != (t in TERMINAL):
        return ours if o in TERMINAL else theirs
    return theirs if _when(theirs) > _when(ours) else ours


def merge_meta(base: dict, ours: dict, theirs: dict) -> tuple[dict, list[str]]:
    """Merge frontmatter key by key. Returns (merged mapping, keys left in conflict)."""
    merged: dict[str, Any] = {}
    conflicts: list[str] = []
    winner = _status_winner(ours, theirs)
    for key in list(dict.fromkeys([*ours, *theirs, *base])):
        b, o, t = base.get(key, MISSING), ours.get(key, MISSING), theirs.get(key, MISSING)
        if key in ("status", "superseded_by") and (o != b and t != b and o != t):
            value = winner.get(key, MISSING)
        elif o == t or t == b:
            value = o
        elif o == b:
            value = t
        elif key in LIST_KEYS or isinstance(o, list) or isinstance(t, list):
            value = _union(o, t)
        elif key == "updated":
            value = t if _when(theirs) > _when(ours) else o
        elif key == "created":
            value = t if _when({"updated": t}) < _when({"updated": o}) else o
        elif key == "importance":
            value = t if normalize_importance(t, None) > normalize_importance(o, None) else o
        else:
            value = o
            conflicts.append(key)
        if value is not MISSING:
            merged[key] = value
    return merged, conflicts


def _value_text(value: Any) -> str:
    if value is MISSING:
        return "(no value)"
    return str(iso(value) if isinstance(value, (dt.date, dt.datetime)) else value)


def _plain(value: Any) -> Any:
    """Dates as the ISO text vaultmem writes (YAML would print a datetime differently)."""
    return iso(value) if isinstance(value, (dt.date, dt.datetime)) else value


def _meta_conflict_block(keys: list[str], ours: dict, theirs: dict, nl: str) -> str:
    lines = [
        f"> [!warning] vaultmem merge conflict: both sides set these frontmatter values; "
        f"the note keeps {LABEL_A}'s.{nl}"
    ]
    for key in keys:
        lines.append(
            f"> - `{key}`: {LABEL_A} `{_value_text(ours.get(key, MISSING))}`, "
            f"{LABEL_B} `{_value_text(theirs.get(key, MISSING))}`{nl}"
        )
    return "".join(lines)


# ---------------------------------------------------------------- whole notes


def _parts(text: str) -> tuple[dict, str]:
    fm, body, _, _ = split_frontmatter(text)
    return (load_yaml(fm, "note") if fm is not None else {}), (body if fm is not None else text)


def merge_notes(base: str, ours: str, theirs: str, path: str = "note") -> Merged:
    """Merge three versions of a note (base may be empty: both sides added the file)."""
    try:
        (bm, bb), (om, ob), (tm, tb) = _parts(base), _parts(ours), _parts(theirs)
    except NoteParseError:
        text, n = merge_lines(base, ours, theirs, path)
        return Merged(text, ["body"] if n else [], clean=not n)
    if not base and om.get("id") and tm.get("id") and om["id"] != tm["id"]:
        return Merged(ours, ["id"], clean=False)  # two notes added at one path: keep both (sync splits)
    meta, conflicts = merge_meta(bm, om, tm)
    body, n = merge_lines(bb, ob, tb, path)
    if n:
        conflicts.insert(0, "body")
    nl = "\r\n" if "\r\n" in ours[:200] else "\n"
    keys = [k for k in conflicts if k != "body"]
    if keys:
        sep = "" if not body or body.endswith("\n\n") else (nl if body.endswith("\n") else nl * 2)
        body = f"{body}{sep}{_meta_conflict_block(keys, om, tm, nl)}"
    if conflicts:
        if str(meta.get("status", "active")).lower() != CONFLICT:
            meta["status_before_conflict"] = meta.get("status", "active")
        meta["status"] = CONFLICT
    fm, _, opener, closer = split_frontmatter(ours)
    start = opener + fm + closer if fm is not None else ""
    updates = {k: _plain(v) for k, v in meta.items() if om.get(k, MISSING) != v}
    removed = tuple(k for k in om if k not in meta)
    text = set_fields(start + body, updates, removed)
    return Merged(text, conflicts)


def main(argv: list[str] | None = None) -> int:
    """``merge-driver %O %A %B [%P]``: merge into %A; 0 when the result is a merged note."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (3, 4):
        print("vaultmem: merge-driver needs %O %A %B [%P]", file=sys.stderr)
        return 2
    base_p, ours_p, theirs_p = (Path(a) for a in args[:3])
    path = args[3] if len(args) == 4 else ours_p.name
    try:
        base, ours, theirs = (p.read_bytes().decode("utf-8") for p in (base_p, ours_p, theirs_p))
        result = merge_notes(base, ours, theirs, path)
    except (UnicodeDecodeError, OSError) as e:
        print(f"vaultmem: merge-driver cannot merge {path}: {e}", file=sys.stderr)
        return 1
    tmp = ours_p.with_name(ours_p.name + ".vaultmem-merge")
    tmp.write_bytes(result.text.encode("utf-8", "surrogateescape"))
    os.replace(tmp, ours_p)
    if result.conflicts:
        print(
            f"vaultmem: {path}: merged with conflicts marked in the note ({', '.join(result.conflicts)})",
            file=sys.stderr,
        )
    return 0 if result.clean else 1
