"""Undo records: what one command wrote (an import, ``maintain --apply``, an edit), kept as a
dated batch in ``.vaultmem/undo/<id>.json``, and ``undo`` that takes exactly that back.

A batch lists the notes it created (with their hash), rewrote (the text before and the hash
after), trashed, and files outside the vault it rewrote (AGENTS.md). Undo changes a file only
while it is still as the batch left it: a note edited since is kept and named, never lost.
Notes the batch created go to ``.trash/`` (``vaultmem restore`` brings them back).

A record, and each line of a stopped command's journal, is signed with this install's key
(``core.ownkey``): one that a copied, pulled or unpacked vault brings, or that anything but this
install's vaultmem wrote, is never read (said once, in one line). A file outside the vault is
put back only when this machine's person named it for this vault (``agents_md.written_here``:
a kept agent file, or one an export wrote here); undo lists each before it acts. A batch dated
after now (a wrong clock) never counts as the newest.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..core import ownkey
from ..core.errors import BadInput, Conflict, NoteNotFound, VaultError
from ..core.note import content_hash
from ..core.store import Recorder, atomic_write

if TYPE_CHECKING:  # pragma: no cover
    from .state import VaultState

UNDO_DIR = "undo"  # under the vault's .vaultmem/
KIND = "vaultmem undo batch"  # what this install's signature of a record says it is
LINE_KIND = "vaultmem undo journal"  # ... of one line of a stopped command's journal
SKEW = dt.timedelta(days=1)  # a batch dated later than now + this is from a wrong clock
log = logging.getLogger("vaultmem.undo")
_said: set[Path] = set()  # undo folders whose foreign records this process has mentioned


OLDEST = dt.datetime.min.replace(tzinfo=dt.UTC)


def _now() -> str:
    """Now, to the microsecond: two batches of one second (an import, then the export of its
    rules) still sort in the order they were made."""
    return dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")


def _when(record: dict[str, Any], late: dt.datetime) -> dt.datetime:
    """When a batch was made; one dated after ``late`` (or not a date) counts as the oldest."""
    try:
        at = dt.datetime.fromisoformat(str(record.get("at")))
    except ValueError:
        return OLDEST
    at = at if at.tzinfo else at.replace(tzinfo=dt.UTC)
    return OLDEST if at > late else at


class Batch(Recorder):
    """One command's writes, as they happen (``Store.recorder``)."""

    def __init__(self, kind: str, source: str = ""):
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
        self.id = f"{kind}-{stamp}-{secrets.token_hex(2)}"
        self.kind, self.source, self.at = kind, source, _now()
        self.made: dict[str, str] = {}  # path -> hash of the text written
        self.rewrote: dict[str, dict[str, Any]] = {}  # path -> {"before": text, "after": hash}
        self.binned: dict[str, str] = {}  # path -> where it went in .trash/
        self.dirs: list[str] = []  # folders its new notes' writes made
        self.files: dict[str, dict[str, Any]] = {}  # a file outside the vault -> {"before", "after"}
        self._watched: dict[Path, str | None] = {}
        self.finished = True  # False while a resumable command runs (and when it was stopped)
        self.save: Callable[[], None] | None = None  # set by ``recording``: keeps the record on disk
        self.journal: IO[str] | None = None  # a resumable command's writes since its last checkpoint

    @classmethod
    def resumed(cls, record: dict[str, Any]) -> Batch:
        """The batch of ``record`` (a stopped import), continued under the same id."""
        batch = cls(str(record.get("kind")), str(record.get("source") or ""))
        batch.id, batch.at = record["id"], str(record.get("at") or batch.at)
        batch.made = dict(record.get("created") or {})
        batch.rewrote = dict(record.get("changed") or {})
        batch.binned = dict(record.get("trashed") or {})
        batch.files = dict(record.get("files") or {})
        batch.dirs = [str(d) for d in record.get("folders") or []]
        return batch

    def checkpoint(self) -> None:
        """The writes so far are durable: save the record as it is now (a stopped command's
        writes can still be undone, and its re-run continues this batch)."""
        if self.save is not None and not self.empty():
            self.save()
            if self.journal is not None:  # the record now holds what the journal said
                self.journal.truncate(0)

    def created(self, rel: str, text: str) -> None:
        self.made[rel] = content_hash(text)
        self._journal({"created": rel, "hash": self.made[rel]})

    def retract(self, rel: str) -> None:
        """Not written after all: out of the record (a journal line already written stays; undo
        removes a note only where its text is the one recorded)."""
        self.made.pop(rel, None)

    def changed(self, rel: str, old: str, new: str) -> None:
        if rel in self.made:  # written and rewritten by the same command: undo removes it
            self.made[rel] = content_hash(new)
            self._journal({"created": rel, "hash": self.made[rel]})
        else:
            self.rewrote.setdefault(rel, {"before": old})["after"] = content_hash(new)
            self._journal({"changed": rel, "before": self.rewrote[rel]["before"], "after": content_hash(new)})

    def trashed(self, rel: str, moved: str) -> None:
        self.binned[rel] = moved
        self._journal({"trashed": rel, "to": moved})

    def folders(self, rels: list[str]) -> None:
        self.dirs += [r for r in rels if r not in self.dirs]
        self._journal({"folders": rels})

    def _journal(self, entry: dict[str, Any]) -> None:
        """One write, appended to the batch's journal (a resumable command: a kill between two
        checkpoints loses no entry of what it wrote)."""
        if self.journal is not None:
            self.journal.write(
                json.dumps({"e": entry, "mac": _line_mac(self.id, entry)}, ensure_ascii=False) + "\n"
            )
            self.journal.flush()

    def replay(self, path: Path) -> None:
        """Add the entries of a journal left by a stopped command."""
        try:
            lines = path.read_text(encoding="utf-8").splitlines() if not path.is_symlink() else []
        except OSError:
            return
        for line in lines:
            try:
                signed = json.loads(line)
            except (ValueError, RecursionError):  # the last line, cut by the kill
                continue
            e = signed.get("e") if isinstance(signed, dict) else None
            if not isinstance(e, dict) or not ownkey.signed(_line_body(self.id, e), signed.get("mac")):
                continue  # not a line this install wrote for this batch
            if isinstance(e.get("created"), str):
                self.made[e["created"]] = str(e.get("hash"))
            elif isinstance(e.get("changed"), str):
                self.rewrote.setdefault(e["changed"], {"before": e.get("before")})["after"] = e.get("after")
            elif isinstance(e.get("trashed"), str):
                self.binned[e["trashed"]] = str(e.get("to"))
            elif isinstance(e.get("folders"), list):
                self.dirs += [str(r) for r in e["folders"] if str(r) not in self.dirs]

    def watch(self, paths: Sequence[Path]) -> None:
        """Files outside the vault this command may rewrite (AGENTS.md): their text now."""
        for path in paths:
            self._watched[Path(path)] = _read(Path(path))

    def settle(self) -> None:
        """Note the watched files that changed."""
        for path, before in self._watched.items():
            after = _read(path)
            if after != before:
                self.files[str(path)] = {
                    "before": before,
                    "after": None if after is None else content_hash(after),
                }

    def empty(self) -> bool:
        return not (self.made or self.rewrote or self.binned or self.files)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "source": self.source, "at": self.at, "undone": None,
                "created": self.made, "changed": self.rewrote, "trashed": self.binned,
                "files": self.files, "folders": self.dirs, "finished": self.finished}  # fmt: skip


def _line_body(batch_id: str, entry: dict[str, Any]) -> bytes:
    return (
        LINE_KIND + "\0" + batch_id + "\0" + json.dumps(entry, sort_keys=True, ensure_ascii=False)
    ).encode()


def _line_mac(batch_id: str, entry: dict[str, Any]) -> str:
    return ownkey.sign(_line_body(batch_id, entry))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None


def folder(vault: VaultState) -> Path:
    return vault.store.state_dir / UNDO_DIR


@contextmanager
def recording(vault: VaultState, kind: str, source: str = "", resume: bool = False) -> Iterator[Batch]:
    """Record what ``vault``'s store writes meanwhile as one batch (saved when anything was
    written, also when the command fails half way: what it wrote can still be undone).
    ``resume`` (an import): a batch of the same kind and source that was stopped (killed,
    interrupted: ``finished`` false) is continued under its id, so one undo covers the whole
    import; until the command ends, the batch is saved at each checkpoint as unfinished."""
    batch = (_stopped(vault, kind, source) if resume else None) or Batch(kind, source)
    batch.finished = not resume
    batch.save = lambda: save(vault, batch.as_dict())
    journal = folder(vault) / f"{batch.id}.log"
    if resume:  # on disk at once: a kill before the first checkpoint still leaves a batch to resume
        save(vault, batch.as_dict())
        batch.journal = open(journal, "a", encoding="utf-8")
        batch.journal.write("\n")  # a line cut by a kill stays apart from the next
    before, vault.store.recorder = vault.store.recorder, batch
    try:
        yield batch
        batch.finished = True
    finally:
        vault.store.recorder = before
        batch.settle()
        if not batch.empty():
            save(vault, batch.as_dict())
        elif resume:
            (folder(vault) / f"{batch.id}.json").unlink(missing_ok=True)
        if batch.journal is not None:
            batch.journal.close()
            journal.unlink(missing_ok=True)


def _stopped(vault: VaultState, kind: str, source: str) -> Batch | None:
    """The newest batch of ``kind`` from ``source`` when it was stopped before it finished."""
    for r in batches(vault, kind):
        if str(r.get("source") or "") == source:
            return Batch.resumed(r) if r.get("finished") is False and not r.get("undone") else None
    return None


def save(vault: VaultState, record: dict[str, Any]) -> None:
    where = folder(vault)
    where.mkdir(parents=True, exist_ok=True)
    atomic_write(
        where / f"{record['id']}.json", ownkey.seal(KIND, record, indent=1, ensure_ascii=False) + "\n"
    )


def load(path: Path) -> dict[str, Any] | None:
    """A record this install's vaultmem wrote and signed (a regular file of this user's), else None."""
    data = ownkey.sealed_file(KIND, path)
    if not isinstance(data, dict) or not isinstance(data.get("id"), str) or f"{data['id']}.json" != path.name:
        return None
    journal = path.with_suffix(".log")
    if data.get("finished") is False and journal.exists() and os.lstat(journal).st_uid == os.getuid():
        batch = Batch.resumed(data)
        batch.replay(journal)
        data = {**data, "created": batch.made, "changed": batch.rewrote, "trashed": batch.binned,
                "folders": batch.dirs}  # fmt: skip
    return data


def batches(vault: VaultState, kind: str | None = None) -> list[dict[str, Any]]:
    """Every batch this install recorded (of ``kind``), newest first; one dated after now counts
    as the oldest. Records it did not sign are left out, and said so once per folder."""
    where = folder(vault)
    paths = sorted(where.glob("*.json")) if where.is_dir() else []
    found = [(p, load(p)) for p in paths]
    foreign = [p.name for p, r in found if r is None]
    if foreign and where not in _said:
        _said.add(where)
        log.warning("vaultmem: %d undo record(s) in %s not written by this user's vaultmem on this machine "
                    "(copied, pulled or planted; e.g. %s): ignored", len(foreign), where, foreign[0])  # fmt: skip
    rows = [r for _, r in found if r and (kind is None or r.get("kind") == kind)]
    late = dt.datetime.now(dt.UTC) + SKEW
    return sorted(rows, key=lambda r: (_when(r, late), r["id"]), reverse=True)


def outside(vault: VaultState, record: dict[str, Any]) -> list[dict[str, Any]]:
    """The files outside the vault the batch names, each with whether undo may change it (this
    machine's person named it for this vault: ``agents_md.written_here``)."""
    from .agents_md import written_here

    root = vault.root.resolve()
    allowed = written_here(root)
    out = []
    for name in record.get("files") or {}:
        path = Path(name)
        inside = path.is_absolute() and path.parent.resolve().is_relative_to(root)
        out.append({"path": name, "allowed": inside or name in allowed})
    return out


def find(vault: VaultState, ref: str, kind: str | None = None) -> dict[str, Any]:
    """The batch ``ref`` names: its id, or a source (the newest batch from it not undone yet)."""
    rows = batches(vault, kind)
    for r in rows:
        if r["id"] == ref:
            return r
    wanted = {ref, str(Path(ref).expanduser().resolve())}
    for r in rows:
        if not r.get("undone") and str(r.get("source")) in wanted:
            return r
    what = f"{kind} batch" if kind else "batch"
    known = ", ".join(f"{r['id']} ({r.get('source') or r['kind']})" for r in rows[:5]) or "none recorded"
    raise NoteNotFound(f"no {what} {ref!r} to undo (recent: {known}; `vaultmem undo` lists them)")


def undo(vault: VaultState, record: dict[str, Any]) -> dict[str, Any]:
    """Take one batch back, file by file, where each is still as the batch left it."""
    if record.get("undone"):
        raise BadInput(f"batch {record['id']} was already undone on {record['undone']}")
    done: dict[str, list] = {"removed": [], "restored": [], "skipped": [], "folders": []}
    touched: list[str] = []
    for rel, before in reversed(list(record.get("changed", {}).items())):
        _put_back(vault, rel, before, done, touched)
    for rel, digest in record.get("created", {}).items():
        _remove(vault, rel, digest, done, touched)
    for rel in sorted(record.get("folders") or [], key=lambda r: str(r).count("/"), reverse=True):
        _drop_folder(vault, str(rel), done)
    for rel, moved in record.get("trashed", {}).items():
        _untrash(vault, rel, moved, done, touched)
    allowed = {f["path"] for f in outside(vault, record) if f["allowed"]}
    for name, before in (record.get("files") or {}).items():
        if name not in allowed:
            done["skipped"].append({"path": name, "reason": "outside the vault and not a file this machine's person "
                                    "named for it; left as it is"})  # fmt: skip
            continue
        _put_back_file(Path(name), before, done)
    vault.sync_paths(touched)
    save(vault, {**record, "undone": _now()})
    return {"id": record["id"], "kind": record.get("kind"), "source": record.get("source"), **done}


def _current(vault: VaultState, rel: str) -> str | None:
    try:
        return vault.store.read_text(rel) if os.path.lexists(vault.store.abspath(rel)) else None
    except OSError:
        return None


def _put_back(vault: VaultState, rel: str, before: dict, done: dict, touched: list[str]) -> None:
    text = _current(vault, rel)
    if text is None:
        done["skipped"].append({"path": rel, "reason": "gone since"})
    elif content_hash(text) != before.get("after"):
        done["skipped"].append({"path": rel, "reason": "changed since; kept as it is"})
    else:
        try:
            vault.store.update(rel, lambda _: str(before["before"]), before["after"])
        except Conflict:
            done["skipped"].append({"path": rel, "reason": "changed since; kept as it is"})
            return
        done["restored"].append(rel)
        touched.append(rel)


def _remove(vault: VaultState, rel: str, digest: str, done: dict, touched: list[str]) -> None:
    text = _current(vault, rel)
    if text is None:
        done["skipped"].append({"path": rel, "reason": "gone since"})
    elif content_hash(text) != digest:
        done["skipped"].append({"path": rel, "reason": "changed since; kept as it is"})
    else:
        done["removed"].append({"path": rel, "trashed_to": vault.store.trash(rel)})
        touched.append(rel)


def _drop_folder(vault: VaultState, rel: str, done: dict) -> None:
    """A folder the batch's writes made, removed when nothing is left in it (never one that holds anything)."""
    try:
        vault.store.abspath(rel).rmdir()
    except (OSError, VaultError):  # not empty (a note kept, a file added since), gone, or outside
        return
    done["folders"].append(rel)


def _untrash(vault: VaultState, rel: str, moved: str, done: dict, touched: list[str]) -> None:
    from .trash import restore_path

    try:
        restore_path(vault, moved, rel)
    except (BadInput, Conflict, NoteNotFound) as e:
        done["skipped"].append({"path": rel, "reason": str(e)})
        return
    done["restored"].append(rel)
    touched.append(rel)


def _put_back_file(path: Path, before: dict, done: dict) -> None:
    text = _read(path)
    now = None if text is None else content_hash(text)
    if now != before.get("after"):
        done["skipped"].append({"path": str(path), "reason": "changed since; kept as it is"})
    elif before.get("before") is None:
        path.unlink()
        done["removed"].append({"path": str(path), "trashed_to": None})
    else:
        atomic_write(path, before["before"])
        done["restored"].append(str(path))
