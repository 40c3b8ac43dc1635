"""The vault's ``.trash/`` (where ``delete`` moves a note): what is in it, with dates, and
``restore`` that brings a note back where it was, never over an existing file."""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, Conflict, NoteNotFound, NoteParseError
from ..core.note import parse
from ..core.store import TRASH, TRASH_LOG, fsync_dir

if TYPE_CHECKING:  # pragma: no cover
    from .state import VaultState


def _log(vault: VaultState) -> dict[str, dict[str, str]]:
    """The trash log: trashed path -> {"from", "at"} (the last line for a path wins)."""
    out: dict[str, dict[str, str]] = {}
    try:
        lines = (vault.root / TRASH / TRASH_LOG).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return out
    for line in lines:
        try:
            row = json.loads(line)
            out[str(row["trashed"])] = {"from": str(row["from"]), "at": str(row["at"])}
        except (ValueError, KeyError, TypeError):
            continue
    return out


def entries(vault: VaultState) -> list[dict[str, Any]]:
    """The notes in ``.trash/``, newest first: path, where it goes back to, when it was trashed
    (the log's date; else the file's change time), id and title."""
    base = vault.root / TRASH
    if not base.is_dir():
        return []
    log = _log(vault)
    rows = []
    for path in base.rglob("*"):
        if path.suffix.lower() not in (".md", ".markdown") or not (path.is_file() or path.is_symlink()):
            continue
        rel = path.relative_to(vault.root).as_posix()
        known = log.get(rel)
        when = known["at"] if known else _ctime(path)
        origin = known["from"] if known else rel.removeprefix(TRASH + "/")
        rows.append({"path": rel, "restores_to": origin, "trashed": when, **_identity(path, rel)})
    return sorted(rows, key=lambda r: (r["trashed"], r["path"]), reverse=True)


def _ctime(path) -> str:
    stamp = os.lstat(path).st_ctime
    return dt.datetime.fromtimestamp(stamp, dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _identity(path, rel: str) -> dict[str, Any]:
    try:
        note = parse(path.read_text(encoding="utf-8"), rel)
        return {"id": note.id, "title": note.title}
    except (OSError, UnicodeDecodeError, NoteParseError):
        return {"id": None, "title": posixpath.splitext(posixpath.basename(rel))[0]}


def pick(vault: VaultState, ref: str) -> dict[str, Any]:
    """The trashed note ``ref`` names: its trash path, its old path, id, title or file name."""
    rows = entries(vault)
    key = ref.strip().removeprefix("./").casefold()
    for test in (
        lambda r: r["path"].casefold() == key,
        lambda r: r["restores_to"].casefold() == key,
        lambda r: (r["id"] or "").casefold() == key,
        lambda r: (r["title"] or "").casefold() == key,
        lambda r: posixpath.splitext(posixpath.basename(r["path"]))[0].casefold() == key,
    ):
        found = [r for r in rows if test(r)]
        if len(found) == 1:
            return found[0]
        if found:
            raise BadInput(f"{ref!r} names {len(found)} notes in the trash: "
                           + "; ".join(f"{r['path']} ({r['trashed']})" for r in found) + " (give the path)")  # fmt: skip
    raise NoteNotFound(f"no note {ref!r} in {TRASH}/ (`vaultmem restore` lists it)")


def restore(vault: VaultState, ref: str, to: str | None = None) -> dict[str, Any]:
    """Bring a trashed note back (to its old place, or ``to``); refuses to overwrite a file or
    to bring back a second note with the id of one in the vault; indexes it."""
    row = pick(vault, ref)
    dest = (to or row["restores_to"]).strip().removeprefix("./")
    if not vault.store.is_note(dest):
        raise BadInput(f"{dest}: not a note path (a .md file outside dot-folders and ignored paths)")
    if row["id"]:
        twin = next((r for r in vault.catalog().values() if r.id == row["id"]), None)
        if twin is not None:
            raise Conflict(f"{twin.path} already has id {row['id']}; not restoring a second copy "
                           f"(move or delete {twin.path} first)")  # fmt: skip
    restore_path(vault, row["path"], dest)
    vault.sync_paths([dest])
    return {**row, "restored_to": dest}


def restore_path(vault: VaultState, moved: str, dest: str) -> None:
    """Move ``moved`` (in .trash/) to ``dest``, never over an existing file."""
    src = vault.store.abspath(posixpath.dirname(moved) or ".") / posixpath.basename(moved)  # a link: itself
    vault.store.abspath(dest)  # inside the vault
    if not os.path.lexists(src):
        raise NoteNotFound(f"{moved} is no longer in the trash")
    folder = vault.store.folder(posixpath.dirname(dest) or ".")
    target = folder / posixpath.basename(dest)
    if os.path.lexists(target):
        raise Conflict(f"{dest} exists; not overwriting it (restore --to OTHER.md puts the note elsewhere)")
    try:
        os.link(src, target, follow_symlinks=False)  # fails if the name was taken meanwhile
    except FileExistsError:
        raise Conflict(f"{dest} exists; not overwriting it") from None
    except OSError:  # a file system without hard links
        os.rename(src, target)
    else:
        os.unlink(src)
    fsync_dir(folder)
    fsync_dir(src.parent)
