"""Safe file I/O for a vault: discovery, reading, atomic and guarded writes, safe names.

Every write is atomic (unique temp file in the same folder, fsync, ``os.replace``) and
a rewrite refuses to clobber a file whose content changed since it was read.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import posixpath
import re
import secrets
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from . import environment
from .discovery import STATE_DIR, find_vault  # noqa: F401  (re-exported)
from .errors import BadInput, Conflict, NoteParseError, VaultError
from .ignore import IgnoreRules
from .lock import note_lock
from .note import Note, content_hash, parse, split_frontmatter
from .renameat import exchange as _exchange

ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
UNSAFE_CHARS_RE = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f-\x9f]')
WINDOWS_RESERVED = {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)}
MAX_NAME = 120
TRASH = ".trash"  # where deleted notes go (Obsidian's own trash folder)
TRASH_LOG = ".vaultmem-trash.jsonl"  # in .trash/: each trashed note's origin and date (for restore)
MAX_NAME_BYTES = 180  # file names are limited to 255 bytes; leave room for " 2.md" and temp names


CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab, newline, carriage return


def check_title(title: str, what: str = "a title") -> str:
    """A one-line title without control characters (they break file names, YAML and
    terminals); BadInput naming the first bad character otherwise."""
    bad = CONTROL_RE.search(title) or re.search(r"[\t\r\n\u2028\u2029]", title)
    if bad:
        raise BadInput(
            f"{what} cannot contain control characters or line breaks (found U+{ord(bad.group()):04X}); nothing was written"
        )
    return title


def check_text(rel: str, text: str, before: str = "") -> None:
    """Refuse note text with NUL or other control characters (a NUL makes it unreadable),
    except those already in ``before``, the text it replaces."""
    known = set(CONTROL_RE.findall(before))
    bad = next((m for m in CONTROL_RE.finditer(text) if m.group() not in known), None)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise BadInput(
            f"{rel}: text contains the control character U+{ord(bad.group()):04X} (line {line}); nothing was written"
        )


def new_id(taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A short random id (8 chars, lowercase, at least one letter) not in ``taken``."""
    while True:
        value = "".join(secrets.choice(ID_ALPHABET) for _ in range(8))
        if not value.isdigit() and value not in taken:
            return value


def safe_filename(title: str) -> str:
    """A file stem from a title: no separators, ``..``, reserved or control characters."""
    name = unicodedata.normalize("NFC", title)
    name = re.sub(r"\s*:\s*", " - ", name)
    name = UNSAFE_CHARS_RE.sub(" ", name)
    name = re.sub(r"\s+", " ", name).strip(" .")
    name = re.sub(r"\.{2,}", ".", name)
    name = name[:MAX_NAME].encode("utf-8")[:MAX_NAME_BYTES].decode("utf-8", "ignore")
    name = unicodedata.normalize("NFC", name).rstrip(" .")
    if not name or name.split(".")[0].strip().lower() in WINDOWS_RESERVED:  # also "con.txt"
        name = f"note {name}".strip()
    return name


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _read_umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_UMASK = _read_umask()  # read once: os.umask can only be read by setting it (racy in threads)


def _file_mode(path: Path) -> int:
    """The permission bits a rewrite keeps (the file's own), else what the umask gives a new file."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def _write_temp(folder: Path, name: str, data: bytes, mode: int, durable: bool = True) -> str:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".vaultmem.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)  # mkstemp makes 0600 files; notes keep normal modes
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


SETTLE = 0.3  # seconds a file must have been left alone before vaultmem replaces it
SETTLE_LIMIT = 3.0  # how long a rewrite waits for a file that keeps changing before it refuses


class BeingWritten(Conflict):
    """Someone (an editor saving in place) is writing the file right now."""


def _signature(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def wait_settled(path: Path, label: str, settle: float | None = None, limit: float = SETTLE_LIMIT):
    """The file's (inode, size, mtime, ctime) once nobody has written it for ``settle`` seconds
    (default: VAULTMEM_SETTLE, else ``SETTLE``).

    An editor that truncates and writes in place changes size and mtime as it goes; replacing
    the file meanwhile would send the rest of the person's save to the unlinked old file. A file
    last written long ago costs one stat; one still changing after ``limit`` seconds is refused
    (BeingWritten)."""
    settle = (environment.VAULTMEM_SETTLE.get() or SETTLE) if settle is None else settle
    deadline = time.monotonic() + limit
    sig = _signature(path)
    while sig is not None:
        age = time.time() - max(sig[2], sig[3]) / 1e9
        if age >= settle:
            return sig
        if time.monotonic() >= deadline:
            raise BeingWritten(f"{label}: the note is being written, try again; nothing was written")
        time.sleep(min(settle, settle - age) if age >= 0 else settle)
        now = _signature(path)
        if now == sig and age < 0:  # a time stamp from the future (clock skew): quiet for a window is enough
            return sig
        sig = now
    return None


def atomic_write(path: Path, text: str | bytes, *, create_only: bool = False, unchanged=None, label: str = "",
                 durable: bool = True) -> None:  # fmt: skip
    """Write a file atomically; with ``create_only`` fail (Conflict) if it already exists; with
    ``unchanged`` (a ``wait_settled`` signature) refuse (BeingWritten) when the file is no longer
    exactly that just before the rename. ``durable=False`` skips the fsyncs (a caller writing
    many files makes them durable at once, with ``os.sync``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    tmp = _write_temp(path.parent, path.name, data, _file_mode(path), durable)
    try:
        if unchanged is not None and _signature(path) != unchanged:
            raise BeingWritten(
                f"{label or path.name}: the note is being written, try again; nothing was written"
            )
        if unchanged is not None and not create_only:
            _replace_checked(tmp, path, unchanged, label or path.name)
        elif create_only:
            try:
                os.link(tmp, path)  # fails if the target exists: no clobbering race
            except FileExistsError:
                raise Conflict(f"{path.name} already exists") from None
            except OSError:  # no hard links here (FAT, some network drives): reserve, then replace
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                except FileExistsError:
                    raise Conflict(f"{path.name} already exists") from None
                os.replace(tmp, path)
            else:
                os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


# ------------------------------------------------------------------ replacing a file only if unchanged
#
# A check (``_signature(path) == unchanged``) followed by ``os.replace`` leaves a window: an
# editor's rename-save landing between the two is overwritten, and an editor that opened the old
# file in it keeps writing into the unlinked file. So the replace is an exchange
# (``renameat2(RENAME_EXCHANGE)``, Linux >= 3.15): the file it takes off the path is looked at
# afterwards, and one that is not exactly the file checked (someone saved meanwhile) is swapped
# back: the person's save stays and the write is refused (BeingWritten), as the check would have.
# Where the exchange is not available (another OS, a file system without it) the plain replace
# remains, with its window of a few microseconds.

EXCHANGES = 8  # swaps back and forth before a displaced file is kept beside the note instead


def _same_file(sig, other) -> bool:
    """Whether two signatures name one unchanged file (a rename changes only the ctime)."""
    return sig is not None and other is not None and sig[:3] == other[:3]


def _replace_checked(tmp: str, path: Path, unchanged, label: str) -> None:
    """Put ``tmp`` at ``path`` only if what it displaces is the file ``unchanged`` describes;
    otherwise put the displaced file (someone's save) back and refuse (BeingWritten)."""
    ours = _signature(Path(tmp))
    try:
        if not _exchange(tmp, path):
            os.replace(tmp, path)  # no exchange here: the checked window stays
            return
    except FileNotFoundError:
        raise BeingWritten(f"{label}: the note was moved or deleted meanwhile; nothing was written") from None
    try:
        _settle_exchange(tmp, path, unchanged, ours, label)
    except BaseException:
        if os.path.lexists(tmp) and not _same_file(_signature(Path(tmp)), ours):
            _keep_beside(tmp, path)  # never delete someone's file on an unexpected error
        raise


def _settle_exchange(tmp: str, path: Path, unchanged, ours, label: str) -> None:
    """After the first exchange: done when ``tmp`` holds the checked file, else swap back."""
    expect, placed = unchanged, ours
    for _ in range(EXCHANGES):
        out = _signature(Path(tmp))
        if _same_file(out, expect):
            os.unlink(tmp)
            if placed is ours:
                return
            raise BeingWritten(
                f"{label}: the note was saved meanwhile (kept); nothing was written, try again"
            )
        if not _put_back(tmp, path):  # the path is free again: the displaced file went back
            raise BeingWritten(
                f"{label}: the note was saved meanwhile (kept); nothing was written, try again"
            )
        expect, placed = placed, out
    kept = _keep_beside(tmp, path)
    raise BeingWritten(f"{label}: the note kept changing while it was replaced; the version taken off it "
                       f"is kept as {kept.name}")  # fmt: skip


def _put_back(tmp: str, path: Path) -> bool:
    """Swap ``tmp`` back onto ``path`` (True); when ``path`` is gone, move it there (False)."""
    try:
        if _exchange(tmp, path):
            return True
    except FileNotFoundError:
        pass
    try:
        os.link(tmp, path)
    except FileExistsError:
        return _exchange(tmp, path)
    os.unlink(tmp)
    return False


def _keep_beside(tmp: str, path: Path) -> Path:
    """Move a displaced file to a free ``<stem> (kept N)<suffix>`` beside ``path``."""
    n = 1
    while True:
        kept = path.with_name(f"{path.stem} (kept {n}){path.suffix}")
        try:
            os.link(tmp, kept)
        except FileExistsError:
            n += 1
            continue
        os.unlink(tmp)
        return kept


def remove_checked(path: Path, unchanged, label: str = "") -> None:
    """Delete ``path`` only if it is still the file ``unchanged`` describes (a ``wait_settled``
    signature): it is first renamed aside (atomic), so a save landing after the check is never
    deleted: the file is looked at there and put back (BeingWritten) when it is not the one checked."""
    label = label or path.name
    if _signature(path) != unchanged:
        raise BeingWritten(f"{label}: the note is being written, try again; nothing was removed")
    aside = path.with_name(f".{path.name}.{secrets.token_hex(4)}.vaultmem.tmp")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return  # gone already
    if _same_file(_signature(aside), unchanged):
        os.unlink(aside)
        return
    try:
        os.link(aside, path)
    except FileExistsError:  # saved again meanwhile: both saves stay
        kept = _keep_beside(str(aside), path)
        raise BeingWritten(
            f"{label}: the note was saved meanwhile; the earlier save is kept as {kept.name}"
        ) from None
    os.unlink(aside)
    raise BeingWritten(f"{label}: the note was saved meanwhile (kept); nothing was removed, try again")


class FileStat(NamedTuple):
    """What a cheap reconcile compares before hashing: modification time and size (a tuple,
    so 100k of them are cheap to make and compare)."""

    mtime_ns: int
    size: int


class Store:
    """The note files of one vault."""

    def __init__(self, root: Path, exclude: tuple[str, ...] = (), folder_types: dict[str, str] | None = None,
                 title_from: str = "filename"):  # fmt: skip
        self.root = root.resolve()
        self.title_from = title_from
        self.rules = IgnoreRules(self.root, exclude)
        self.folder_types = {k.strip("/").lower(): v for k, v in (folder_types or {}).items()}
        self.recorder: Recorder | None = None  # hears every write (``memory.undo``: a command's undo record)
        self.durable = True  # False in a bulk write: no fsync per file, ``flush`` makes them durable at once
        self._names: dict[Path, set[str]] | None = None  # in a bulk write: folder -> its entries (folded)
        self._unsynced = 0  # files written since the last ``flush``

    def bulk(self, on: bool) -> None:
        """Start or end a bulk write (an import of thousands of notes): each file is still written
        atomically, but made durable by ``flush`` (one ``os.sync`` for many files), and the names
        taken in a folder are listed once and kept by ``create``."""
        self.durable = not (on and hasattr(os, "sync"))  # where there is no os.sync: an fsync per file
        self._names = {} if on else None
        if not on:
            self.flush()

    def flush(self) -> int:
        """Make the files written since the last flush durable; how many there were."""
        done, self._unsynced = self._unsynced, 0
        if done:
            os.sync()  # one flush of every file and folder written, not two fsyncs a note
        return done

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def abspath(self, rel: str) -> Path:
        """The absolute path of a vault-relative path; refuses anything leading outside."""
        if not rel or "\x00" in rel:
            raise VaultError(f"invalid note path {rel!r}")
        candidate = Path(rel)
        if candidate.is_absolute():
            raise VaultError(f"path {rel!r} is absolute; give a path inside the vault")
        try:
            full = (self.root / candidate).resolve()
        except (RuntimeError, OSError):  # RuntimeError: Python < 3.13 on a symlink loop
            raise NoteParseError(rel, "symlink loop (the link never reaches a file)") from None
        if full != self.root and self.root not in full.parents:
            raise VaultError(f"path {rel!r} leads outside the vault")
        return full

    def relpath(self, path: Path) -> str:
        """Vault-relative posix path of an absolute path inside the vault."""
        return path.resolve().relative_to(self.root).as_posix()

    def list_paths(self) -> list[str]:
        """Every note path in the vault (ignore rules applied), sorted."""
        return [rel for rel, entry in self.rules.scan() if not entry.is_symlink() or self._inside(rel)]

    def list_stats(self) -> dict[str, tuple[int, int] | None]:
        """Every note path (as ``list_paths``) with what ``stat`` gives for it, as a plain
        (mtime_ns, size) tuple (None: gone since it was listed), sorted by path; one stat per
        file, through its directory entry."""
        out: dict[str, tuple[int, int] | None] = {}
        for rel, entry in self.rules.scan():
            if entry.is_symlink():  # rare: checked and stat'ed the careful way
                if self._inside(rel):
                    out[rel] = self.stat(rel)
                continue
            try:
                st = entry.stat()
            except OSError:
                out[rel] = None
                continue
            out[rel] = (st.st_mtime_ns, st.st_size)
        return out

    def is_note(self, rel: str) -> bool:
        """Whether ``list_paths`` would list this path (ignore rules; no symlink leading out)."""
        return not self.rules.ignored(rel) and self._inside(rel)

    def _inside(self, rel: str) -> bool:
        full = self.root / rel
        if not full.is_symlink():
            return True
        try:
            self.abspath(rel)
            return True
        except NoteParseError:  # a loop: listed, so that reading it reports why it is skipped
            return True
        except VaultError:
            return False

    def stat(self, rel: str) -> FileStat | None:
        """mtime and size of a note file, or None if it is gone."""
        try:
            st = os.stat(self.root / rel)
        except OSError as e:
            if e.errno != errno.ELOOP:
                return None
            st = os.lstat(self.root / rel)  # a symlink loop is there (and skipped when read)

        return FileStat(st.st_mtime_ns, st.st_size)

    def body(self, rel: str) -> str:
        """A note's markdown body (no frontmatter); empty when unreadable."""
        try:
            return split_frontmatter(self.read_text(rel))[1]
        except (OSError, NoteParseError):
            return ""

    def read_text(self, rel: str) -> str:
        """The text of a note file; NoteParseError if it is not UTF-8 text."""
        data = self.abspath(rel).read_bytes()
        if b"\x00" in data:
            raise NoteParseError(rel, "binary file (contains NUL bytes)")
        try:
            return data.decode("utf-8")  # a byte order mark stays, so rewrites keep it
        except UnicodeDecodeError as e:
            raise NoteParseError(rel, f"not UTF-8 text (byte {e.start})") from None

    def read(self, rel: str) -> Note:
        """Read and parse one note (file times fill missing created/updated; a note
        without a type takes the type whose folder it sits in)."""
        full = self.abspath(rel)
        text = self.read_text(rel)
        st = full.stat()
        note = parse(text, rel, st.st_mtime, _birth_time(st), self.title_from)
        if note.type is None and "/" in rel:
            folder_type = self.folder_types.get(rel.rsplit("/", 1)[0].lower())
            if folder_type:
                note = dataclasses.replace(note, type=folder_type)
        return note

    def create(self, rel: str, text: str) -> str:
        """Write a new note; never replaces an existing file. Returns the path used."""
        check_text(rel, text)
        full = self.abspath(rel)
        folders = _new_folders(self.root, rel) if self.recorder is not None else []
        if self.recorder is not None:  # first: a kill right after the write leaves a note undo knows
            self.recorder.created(rel, text)
            if folders:
                self.recorder.folders(folders)
        try:
            atomic_write(full, text, create_only=True, durable=self.durable)
        except Exception:
            if self.recorder is not None:  # not written (a name taken meanwhile, a full disk)
                self.recorder.retract(rel)
            raise
        self._unsynced += not self.durable
        if self._names is not None:
            self._names.setdefault(full.parent, set()).add(_fold(full.name))
        return rel

    def replace(self, rel: str, text: str, expected_hash: str) -> None:
        """Atomically rewrite a note, refusing if its content changed since it was read.

        The check and the rename happen under the note's lock, so two vaultmem writers
        can never both pass the check against the same old text."""
        self.update(rel, lambda _: text, expected_hash)

    def update(
        self, rel: str, change: Callable[[str], str], expected_hash: str | None = None
    ) -> tuple[str, str]:
        """Read-modify-write one note under its lock: ``change(text)`` gives the new text.

        With ``expected_hash`` (the hash of the text the caller read), refuses (Conflict)
        if the note changed since; without it, ``change`` sees the current text, so
        concurrent updates of the same note are applied one after the other and none is
        lost. Returns (old text, new text); nothing is written when they are equal."""
        full = self.abspath(rel)
        with note_lock(full):
            text = self.read_text(rel) if full.exists() else None
            if text is None or (expected_hash is not None and content_hash(text) != expected_hash):
                raise Conflict(
                    f"{rel} changed on disk since it was read; re-read it and apply the change again"
                )
            new = change(text)
            if new != text:
                check_text(rel, new, text)
                settled = wait_settled(full, rel)  # an editor saving in place: never cut its save
                if self.read_text(rel) != text:  # an editor that ignores the lock saved meanwhile
                    raise Conflict(
                        f"{rel} changed on disk while it was being updated; nothing was written, try again"
                    )
                atomic_write(full, new, unchanged=settled, label=rel, durable=self.durable)
                self._unsynced += not self.durable
                if self.recorder is not None:
                    self.recorder.changed(rel, text, new)
            return text, new

    def unique_path(self, folder: str, title: str) -> str:
        """A vault-relative path for a new note from its title, unique case-insensitively."""
        folder = folder.strip("/")
        base = safe_filename(title)
        self.abspath(folder or ".")  # the folder itself must be inside the vault
        taken = self._taken(self.root / folder)
        name, n = f"{base}.md", 2
        while _fold(name) in taken:
            name, n = f"{base} {n}.md", n + 1
        return f"{folder}/{name}" if folder else name

    def _taken(self, target_dir: Path) -> set[str]:
        """The (folded) names in a folder: listed each time, or once in a bulk write."""
        if self._names is not None and target_dir in self._names:
            return self._names[target_dir]
        taken = {_fold(p.name) for p in target_dir.iterdir()} if target_dir.is_dir() else set()
        if self._names is not None:
            self._names[target_dir] = taken
        return taken

    def folder(self, rel: str) -> Path:
        """A folder inside the vault to write into, created one level at a time; refuses
        (VaultError) when any level is, or leads through, a symlink out of the vault."""
        current = self.root
        for part in Path(rel).parts:
            if part in ("", "."):
                continue
            current = current / part
            if not os.path.lexists(current):
                current.mkdir()
            resolved = current.resolve()
            if resolved != self.root and self.root not in resolved.parents:
                raise VaultError(
                    f"{self.relpath_lexical(current)} leads outside the vault; not writing there"
                )
            if not resolved.is_dir():
                raise VaultError(f"{self.relpath_lexical(current)} is not a folder")
            current = resolved
        return current

    def relpath_lexical(self, path: Path) -> str:
        """Vault-relative path of ``path`` without following symlinks (for messages)."""
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def trash(self, rel: str) -> str:
        """Move a note into the vault's ``.trash/`` folder (as Obsidian does); returns its new path.
        Where it came from and when is kept in ``.trash/`` 's log (``TRASH_LOG``) for ``restore``."""
        self.abspath(rel)
        parent = self.abspath(posixpath.dirname(rel) or ".")
        src = parent / posixpath.basename(rel)  # a symlinked note: move the link, not its target
        dest_dir = self.folder(posixpath.join(TRASH, self.relpath(parent)))
        dest, n = dest_dir / src.name, 2
        while os.path.lexists(dest):
            dest, n = dest_dir / f"{src.stem} {n}{src.suffix}", n + 1
        os.replace(src, dest)
        fsync_dir(src.parent)
        fsync_dir(dest_dir)
        moved = dest.relative_to(self.root).as_posix()
        self._log_trash(moved, f"{self.relpath(parent)}/{src.name}".removeprefix("./"))
        if self.recorder is not None:
            self.recorder.trashed(rel, moved)
        return moved

    def _log_trash(self, moved: str, origin: str) -> None:
        """One line in the trash log: the trashed path, where it was, when (UTC)."""
        import json

        line = json.dumps(
            {"trashed": moved, "from": origin, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        )
        with open(self.root / TRASH / TRASH_LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")


class Recorder:
    """What hears a store's writes (``Store.recorder``): new notes, rewrites, notes trashed."""

    def created(self, rel: str, text: str) -> None:
        """A new note, heard before its file is written (``retract`` follows if the write fails)."""

    def retract(self, rel: str) -> None:
        """The new note ``created`` announced was not written."""

    def changed(self, rel: str, old: str, new: str) -> None: ...

    def trashed(self, rel: str, moved: str) -> None: ...

    def folders(self, rels: list[str]) -> None:
        """Folders a new note's write made (they did not exist before it)."""

    def checkpoint(self) -> None:
        """The writes so far are durable (a bulk write's ``flush``): a record may be saved."""


def _new_folders(root: Path, rel: str) -> list[str]:
    """The folders of ``rel`` (under ``root``) that do not exist yet, deepest first."""
    found: list[str] = []
    parent = posixpath.dirname(rel)
    while parent and not os.path.lexists(root / parent):
        found.append(parent)
        parent = posixpath.dirname(parent)
    return found


def _fold(name: str) -> str:
    """File names compared as case-insensitive, normalisation-insensitive file systems do."""
    return unicodedata.normalize("NFC", name).casefold()


def _birth_time(st: os.stat_result) -> float:
    return getattr(st, "st_birthtime", None) or min(st.st_mtime, st.st_ctime)
