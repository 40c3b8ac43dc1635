"""What ``setup --write`` put into files other programs write too, key by key, and taking out
exactly that (``setup --remove``).

Claude Code rewrites ``~/.claude.json`` all the time, two projects' set-ups share it, a
repository's ``.git/info/exclude`` is the user's: a set-up owns the members, array elements,
TOML table and lines it added to a file, never the file. Each write is recorded per file and
per set-up (``owner``: the agent and the project, or ``user``) in the user's state folder
(``setups.json``): ``added`` members with what was written, ``changed`` ones with the value
they had, ``items`` appended to an array that was there, the text ``appended`` to a TOML or
plain file, and whether the file was ``created``. ``remove`` takes exactly those out of the
file as it is at that moment, so what anyone else wrote since stays, byte for byte
(``jsonedit.retext``); a file is deleted only when the set-up created it and nothing else is
left in it. A write that finds the file changed under it (another program saving) starts
again from the new text. A symlinked file is written through its link.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.errors import VaultError
from . import jsonedit

SERVER_NAME = "vaultmem"
RECORDS_FILE = "setups.json"
SCAFFOLD = [["version"]]  # what a hooks file needs for any hook in it (Cursor's, Copilot's ``version: 1``)
ATTEMPTS = 5  # writes that found the file changed under them before giving up


def atomic(path: list[Any]) -> bool:
    """A member owned whole: the MCP server entry (a key the user added to it goes with it)."""
    return len(path) >= 2 and path[-2] in ("mcpServers", "mcp_servers", "servers") and path[-1] == SERVER_NAME


def hook_commands(entry: Any) -> list[str]:
    """The commands of a hook entry or group (``command``, or Copilot's ``bash``)."""
    if not isinstance(entry, dict):
        return []
    entries = entry["hooks"] if isinstance(entry.get("hooks"), list) else [entry]
    out = [e.get("command", e.get("bash")) for e in entries if isinstance(e, dict)]
    return [c for c in out if isinstance(c, str)]


def same_hook(item: Any, ours: Any) -> bool:
    """``item`` is the hook ``ours`` was written as, with its command since wrapped by another
    (``wrapper ... -- vaultmem hook ...``) or its timeout changed."""
    mine, theirs = hook_commands(ours), hook_commands(item)
    return bool(mine) and len(mine) == len(theirs) and all(m in t for m, t in zip(mine, theirs, strict=True))


# ---------------------------------------------------------------------- the record


def records_path() -> Path:
    from ..service.control import state_dir

    return state_dir() / RECORDS_FILE


def records() -> list[dict[str, Any]]:
    try:
        data = json.loads(records_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def _save(recs: list[dict[str, Any]]) -> None:
    from ..core.store import atomic_write  # here: the doctor's read of the hooks loads no YAML

    path = records_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(recs, indent=1, ensure_ascii=False) + "\n")
    os.chmod(path, 0o600)


def find(path: str, owner: str) -> dict[str, Any] | None:
    """The record of ``owner``'s writes to ``path`` (an older vaultmem's record of the file,
    which named no owner, counts for every owner)."""
    for rec in records():
        if rec.get("path") == path and rec.get("owner", owner) == owner:
            return rec
    return None


def forget(path: str, owner: str) -> None:
    _save([r for r in records() if not (r.get("path") == path and r.get("owner", owner) == owner)])


def _what_changed(fmt: str, before: str, after: str) -> dict[str, Any]:
    """What a write added to a file: by key path (JSON), or the text appended (TOML, lines)."""
    if fmt == "json":
        old = json.loads(before) if before.strip() else {}
        return jsonedit.diff(old, json.loads(after), atomic)
    appended = after[len(before) :] if after.startswith(before) else ""
    out: dict[str, Any] = {"appended": appended}
    if fmt == "toml" and not appended:
        out["tables"] = [["mcp_servers", SERVER_NAME]]
    return out


def _record(path: Path, owner: str, agent: str, fmt: str, before: str | None, after: str,
            made: list[str], hooks: bool) -> None:  # fmt: skip
    """Add this write to ``owner``'s record of ``path`` (a first write says whether it created
    the file; a later one adds what it added)."""
    recs = records()
    old = next((r for r in recs if r.get("path") == str(path) and r.get("owner") == owner), None)
    found = _what_changed(fmt, before or "", after)
    if old is None:
        old = {"path": str(path), "owner": owner, "agent": agent, "format": fmt, "created": before is None,
               "made": made, "hooks": hooks}  # fmt: skip
        recs.append(old)
    old["hooks"] = bool(old.get("hooks")) or hooks
    mine = {json.dumps(p) for p, *_ in old.get("added", []) + old.get("changed", [])}
    for name, found_items in found.items():
        if name == "appended":
            old["appended"] = (old.get("appended") or "") + found_items
        elif name == "changed":  # a member written again keeps the value it had before the first write
            old.setdefault(name, []).extend(c for c in found_items if json.dumps(c[0]) not in mine)
        else:
            old.setdefault(name, []).extend(found_items)
    _save(recs)


# ---------------------------------------------------------------------- writing


def _target(path: Path) -> Path:
    """Where a write of ``path`` goes: through a symlink to its file (the link stays a link)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _read(path: Path) -> tuple[str | None, Any]:
    from ..core.store import wait_settled

    target = _target(path)
    try:
        sig = wait_settled(target, path.name, settle=0.0)
        return target.read_text(encoding="utf-8"), sig
    except FileNotFoundError:
        return None, None


def _put(path: Path, text: str | None, sig: Any) -> bool:
    """Write (None: delete) ``path`` if it is still what was read (``sig``); False when another
    program changed it meanwhile."""
    from ..core.errors import Conflict
    from ..core.store import atomic_write

    target = _target(path)
    if text is None:
        os.unlink(path)
        return True
    try:
        if sig is None:
            atomic_write(target, text, create_only=True)
        else:
            atomic_write(target, text, unchanged=sig, label=path.name)
    except Conflict:  # BeingWritten too
        return False
    return True


def write(path: Path, transform: Callable[[str], str], fmt: str, owner: str, agent: str = "",
          now: dt.datetime | None = None, hooks: bool = False) -> dict[str, Any]:  # fmt: skip
    """Write ``transform(current text)`` to ``path`` (a JSON file edited in place, its other
    bytes kept), with a backup of the old file, and record what it added for ``owner``."""
    for _ in range(ATTEMPTS):
        current, sig = _read(path)
        new = transform(current or "")
        if current is not None and new == current:
            return {"path": str(path), "changed": False, "backup": None}
        if fmt == "json" and current is not None and current.strip():
            new = jsonedit.retext(current, json.loads(new))
        backup = _backup(path, now) if current is not None else None
        made = [str(d) for d in reversed(path.parents) if not d.exists()]
        if not _put(path, new, sig):
            continue
        _record(path, owner, agent, fmt, current, new, made, hooks)
        return {"path": str(path), "changed": True, "backup": str(backup) if backup else None}
    raise VaultError(f"{path} kept changing while setup wrote it; run setup again")


# ---------------------------------------------------------------------- taking out


def _undo(text: str, rec: dict[str, Any]) -> tuple[str, bool]:
    """``text`` without what ``rec`` says was added, and whether nothing else is left in it."""
    if rec.get("format", "json") != "json":
        appended = rec.get("appended") or ""
        if appended and appended in text:
            at = text.rindex(appended)
            text = text[:at] + text[at + len(appended) :]
        elif rec.get("format") == "toml":
            for table in rec.get("tables") or [["mcp_servers", SERVER_NAME]]:
                text = drop_toml_table(text, tuple(table))
        else:
            lines = [ln for ln in appended.splitlines() if ln]
            text = "".join(ln for ln in text.splitlines(keepends=True) if ln.rstrip("\r\n") not in lines)
        return text, not text.strip()
    doc = json.loads(text) if text.strip() else {}
    for path, old, new in rec.get("changed", []):
        with contextlib.suppress(KeyError):
            parent = jsonedit.get(doc, path[:-1])
            if path and isinstance(parent, dict) and parent.get(path[-1]) == new:
                parent[path[-1]] = old
    added = rec.get("added", [])
    for path, value in [a for a in added if a[0] not in SCAFFOLD] + [a for a in added if a[0] in SCAFFOLD]:
        if path in SCAFFOLD and set(doc) - {p[0] for p in SCAFFOLD}:
            continue  # another's hooks in the file still need it
        jsonedit.take_out(doc, path, value, atomic, same_hook)
    for path, value in rec.get("items", []):
        with contextlib.suppress(KeyError):
            items = jsonedit.get(doc, path)
            if isinstance(items, list):
                jsonedit.drop_item(items, value, same_hook)
    return jsonedit.retext(text, doc), doc == {}


def _in_place(current: str, new: str) -> str:
    """``new`` as an edit of ``current`` when both are JSON (its other bytes kept)."""
    try:
        return jsonedit.retext(current, json.loads(new)) if new != current and current.strip() else new
    except ValueError:
        return new


def remove(path: Path, rec: dict[str, Any] | None, fallback: Callable[[str], str],
           now: dt.datetime | None = None) -> dict[str, Any]:  # fmt: skip
    """Take out of ``path``, as it is now, what ``rec`` says a set-up added (``fallback``: what
    to take out of a file written before set-ups were recorded key by key). ``how``: deleted,
    edited, nothing of vaultmem or missing."""
    for _ in range(ATTEMPTS):
        current, sig = _read(path)
        if current is None:
            return {"path": str(path), "changed": False, "how": "missing"}
        if rec is not None and "before" in rec and "owner" not in rec:  # an older vaultmem's record
            unchanged = current == rec.get("after")
            new, empty = (
                (rec["before"], rec["before"] is None)
                if unchanged
                else (_in_place(current, fallback(current)), False)
            )
        elif rec is not None:
            new, empty = _undo(current, rec)
        else:
            new, empty = _in_place(current, fallback(current)), False
        gone = empty and bool(rec and rec.get("created", rec.get("before", "") is None))
        if not gone and new == current:
            return {"path": str(path), "changed": False, "how": "nothing of vaultmem"}
        if not gone:
            _backup(path, now)
        if not _put(path, None if gone else new, sig):
            continue
        if gone:
            for folder in reversed((rec or {}).get("made", [])):
                with contextlib.suppress(OSError):
                    Path(folder).rmdir()  # only when empty
        return {"path": str(path), "changed": True, "how": "deleted" if gone else "edited"}
    raise VaultError(f"{path} kept changing while setup --remove edited it; run it again")


# ---------------------------------------------------------------------- TOML tables

HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")


def header_key(line: str) -> tuple[str, ...] | None:
    """The dotted key of a table header line (quotes removed), or None."""
    m = HEADER.match(line)
    if not m:
        return None
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', m.group(1))
    return tuple(a or b or c for a, b, c in parts)


def drop_toml_table(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the table ``[a.b]`` (its header and its lines up to the next header)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if header_key(ln) == path), None)
    if start is None:
        return text
    end = next((i for i in range(start + 1, len(lines)) if header_key(lines[i]) is not None), len(lines))
    return "".join(lines[:start] + lines[end:])


# ---------------------------------------------------------------------- backups


def backup_dir() -> Path:
    """Where ``--write`` keeps the files it replaced: vaultmem's state folder, never the repository."""
    from ..service.control import state_dir

    return state_dir() / "setup-backups"


def _backup(path: Path, now: dt.datetime | None) -> Path:
    flat = str(path.absolute()).strip(os.sep).replace(os.sep, "%")
    base = backup_dir() / (now or dt.datetime.now()).strftime("%Y%m%d-%H%M%S") / flat
    candidate, n = base, 2
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    candidate.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, candidate)
    return candidate
