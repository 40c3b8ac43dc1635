"""Who wrote a note, as far as vaultmem can know on this machine (stdlib only: the prompt hook
reads it).

A note is this machine's person's unless something says otherwise: its ``source:`` names an
agent, it is a session capture or a candidate (``fence.provenance``), or this install's record
marks it as written elsewhere, unconfirmed. The record,
``<vault>/.vaultmem-usage/provenance.<key id>.json``, is this install's (never synced, signed
with its key: ``core.ownkey``; one a copied or pulled vault brings is not read, and two installs
on one vault keep one each). It marks:

* every note ``vaultmem sync`` brings in (``mark_range`` over the fetched commits), whoever
  committed it (a teammate, or you on another machine: a synced file is data until confirmed);
* every note whose last commit was not made on this machine, found by ``refresh`` whenever
  the repository's HEAD moved since the record was written (a ``git pull`` by hand, Obsidian
  Git, a clone): ``wake`` and ``hook start`` call it, ``hook prompt`` when HEAD, read from the
  files, moved. A commit counts as made here when this repository's own reflog shows git
  making it (``commit``, or a rebase replaying one) since the record last looked, or when it is
  signed by a key this machine's person listed (``[trust] commit_keys`` in the user's
  ``config.toml``: the fingerprints ``git log %GF`` shows). Never by its author line: any
  commit can claim any author.

A mark stays until the person confirms the note (``vaultmem confirm``: ``confirm`` here), or
until the note is gone; new commits made elsewhere mark it again. Marked notes are injected as
data, labelled with their author (as the commit claims it), and held back when they read as
orders (``fence.held``).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

from . import environment, ownkey
from .discovery import STATE_DIR, USAGE_DIR

RECORD = "provenance"  # provenance.<key id>.json
KIND = "vaultmem provenance record"
NOTE_SUFFIXES = (".md", ".markdown")
# reflog messages of git making a commit on this machine (not moving to one made elsewhere)
MADE_HERE = re.compile(
    r"^(?:commit(?: \((?:initial|amend|merge)\))?|(?:pull --rebase|rebase(?: -i)?) \((?:pick|reword|edit|squash|fixup)\)):"
)
MAX_REFLOG = 64 << 20  # bytes of a reflog read at most


def _path(root: Path) -> Path:
    return root / USAGE_DIR / f"{RECORD}.{ownkey.key_id()}.json"


def _empty() -> dict[str, Any]:
    return {"head": None, "reflog": 0, "notes": {}}


def read(root: Path) -> dict[str, Any]:
    """This install's record (``{"head": sha, "reflog": bytes of the HEAD reflog looked at,
    "notes": {path: {"author", "teammate", "via"}}}``); empty when missing, unreadable or not
    signed by this install (a broken record trusts nothing less than an absent one)."""
    data = ownkey.sealed_file(KIND, _path(root))
    if not isinstance(data, dict) or not isinstance(data.get("notes"), dict):
        return _empty()
    return data


def _write(root: Path, data: dict[str, Any]) -> None:
    """Replace the record atomically; a vault this user cannot write keeps the old one (a
    read-only vault is read as it is: nothing new is marked, nothing is lost)."""
    from .discovery import private_dir

    path = _path(root)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        private_dir(path.parent)
        tmp.write_text(ownkey.seal(KIND, data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):  # on a read-only mount even this unlink is refused
            tmp.unlink(missing_ok=True)


def label(entry: dict[str, Any] | None) -> str | None:
    """The origin a marked note is shown with, or None (not marked)."""
    if not entry:
        return None
    author = (
        re.sub(r"[^\w.@+-]", "", str(entry.get("author") or ""))[:60] or "unknown"
    )  # an address, never prose
    if entry.get("via") == "copy":
        return "note of a vault made elsewhere, unconfirmed"
    who = "teammate's note" if entry.get("teammate", True) else "synced note"
    return f"{who} ({author}), unconfirmed"


class Trust:
    """One vault's record, read once: ``label(path)`` for each memory shown."""

    def __init__(self, root: Path | None):
        self.notes: dict[str, Any] = read(root)["notes"] if root is not None else {}

    def label(self, path: str | None) -> str | None:
        return label(self.notes.get(path)) if path else None


# ---------------------------------------------------------------- git


def _git(root: Path, *args: str) -> str | None:
    """``git ARGS`` in ``root``: its output, or None (no git, not a repository, an error)."""
    import shutil
    import subprocess  # not at the top: the prompt hook only reads the record

    if shutil.which("git") is None:
        return None
    proc = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, env=environment.for_child({"LC_ALL": "C"})
    )
    return proc.stdout.decode("utf-8", "surrogateescape") if proc.returncode == 0 else None


def _in_repo(root: Path) -> bool:
    """A ``.git`` in the vault or a folder above it (checked before running any git)."""
    return any((p / ".git").exists() for p in (root, *root.parents))


def last_commits(root: Path, revs: list[str], signers: bool = False) -> dict[str, tuple[str, str, str]]:
    """Vault-relative note path -> (commit, author email as the commit claims it, the
    fingerprints of the key that signed it when git verifies the signature: ``signers`` only,
    it runs gpg or ssh-keygen per signed commit) of the newest commit in ``revs`` that added or
    changed it (merges, which change nothing themselves, are skipped by ``git log``;
    deletions are not authorship)."""
    fmt = "%x01%H%x02%ae" + ("%x02%G?%x02%GF%x02%GP" if signers else "")
    out = _git(root, "-c", "core.quotePath=false", "log", f"--format={fmt}", "--name-only", "-z",
               "--relative", "--no-renames", "--diff-filter=d", *revs, "--", ".")  # fmt: skip
    found: dict[str, tuple[str, str, str]] = {}
    commit: tuple[str, str, str] = ("", "", "")
    for token in (out or "").split("\0"):
        if token.startswith("\x01"):
            sha, author, *sig = token[1:].split("\x02")
            good = len(sig) == 3 and sig[0] in (
                "G",
                "U",
            )  # a good signature (U: of a key git's trust db does not rate)
            commit = (sha, author, " ".join(sig[1:]).strip() if good else "")
            continue
        path = token.lstrip("\n")
        if path.lower().endswith(NOTE_SUFFIXES) and path not in found:
            found[path] = commit
    return found


def last_authors(root: Path, revs: list[str]) -> dict[str, str]:
    """Vault-relative note path -> the author email of its newest commit in ``revs``."""
    return {path: author for path, (_, author, _) in last_commits(root, revs).items()}


def _me(root: Path) -> str:
    """This machine's git identity's email (``GIT_AUTHOR_EMAIL``, else ``user.email``): a label only."""
    ident = _git(root, "var", "GIT_AUTHOR_IDENT") or ""
    return ident[ident.find("<") + 1 : ident.rfind(">")].strip().lower() if "<" in ident else ""


def _mark(root: Path, data: dict[str, Any], authors: dict[str, str], via: str, me: str) -> None:
    for path, author in authors.items():
        if (root / path).is_file():
            data["notes"][path] = {"author": author, "teammate": author.strip().lower() != me, "via": via}


def commit_keys() -> set[str]:
    """The signing keys whose commits are this machine's person's own (``[trust] commit_keys``
    in the user's ``config.toml``: fingerprints as ``git log --format=%GF`` shows them)."""
    from .config import read_toml
    from .registry import home

    try:
        keys = read_toml(home() / "config.toml").get("trust", {}).get("commit_keys", [])
    except Exception:  # a broken user config: no key is trusted (``vaultmem doctor`` reads it too)
        return set()
    return {k.strip().upper().removeprefix("SHA256:") for k in keys if isinstance(k, str) and k.strip()}


def _signed_by(keys: set[str], fingerprints: str) -> bool:
    return bool(keys) and any(f.upper().removeprefix("SHA256:") in keys for f in fingerprints.split())


def made_here(root: Path, start: int) -> tuple[set[str], int]:
    """The commits git made in this repository (its HEAD reflog: ``commit``, a rebase replaying
    one), in the reflog's entries from byte ``start`` on; and the reflog's length. A reflog
    shorter than ``start`` (expired, rewritten) gives none: only what was appended since the
    record looked counts, so an entry a copied repository brings never vouches for a later commit."""
    gitdir = _git_dir(root)
    try:
        path = gitdir / "logs" / "HEAD" if gitdir else None
        data = path.read_bytes()[:MAX_REFLOG] if path is not None and path.is_file() else b""
    except OSError:
        data = b""
    if start > len(data):
        return set(), len(data)
    made = set()
    for line in data[start:].decode("utf-8", "replace").splitlines():
        head, _, message = line.partition("\t")
        shas = head.split(" ", 2)
        if len(shas) == 3 and MADE_HERE.match(message):
            made.add(shas[1])
    return made, len(data)


def _git_dir(root: Path) -> Path | None:
    """The repository's git folder (a worktree's ``.git`` file followed), or None."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            return (folder / text[8:]).resolve() if text.startswith("gitdir: ") else None
    return None


def _head_sha(root: Path) -> str | None:
    """HEAD's commit read from the files (no git process): a loose or packed ref, or None."""
    try:
        gitdir = _git_dir(root)
        if gitdir is None:
            return None
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        common = gitdir / "commondir"
        dirs = [gitdir, (gitdir / common.read_text().strip()).resolve()] if common.is_file() else [gitdir]
        for d in dirs:
            if (d / ref).is_file():
                return (d / ref).read_text(encoding="utf-8").strip()
            if (d / "packed-refs").is_file():
                for line in (d / "packed-refs").read_text(encoding="utf-8").splitlines():
                    if line.endswith(" " + ref):
                        return line.split(" ", 1)[0]
    except OSError:
        return None
    return None


def refresh_if_moved(root: Path) -> None:
    """``refresh`` only when this install has not looked at the vault yet, or HEAD (read from the
    files: no git process) is not the record's: the prompt hook's check, so a note pulled by hand
    or a vault handed over is marked before it is injected."""
    data = read(root)
    head = _head_sha(root)
    if not data.get("seen") or (head and data.get("head") != head):
        refresh(root)


def refresh(root: Path) -> None:
    """Mark the notes whose newest commit since the record's HEAD (the whole history the first
    time) was not made on this machine (``made_here``) nor signed by a key its person listed;
    drop marks of notes that are gone. The first time this install looks at a vault that another
    install's vaultmem wrote state into (a copied, unpacked or synced vault: ``made_elsewhere``),
    every note in it is marked too. Cheap when HEAD has not moved."""
    data = read(root)
    if not data.get("seen"):
        data["seen"] = True
        if made_elsewhere(root):
            _mark_copied(root, data)
        if not _in_repo(root):
            _write(root, data)
            return
    elif not _in_repo(root):
        return
    head = (_git(root, "rev-parse", "-q", "--verify", "HEAD") or "").strip()
    if not head or data.get("head") == head:
        _write(root, data)
        return
    old = data.get("head")
    if old and _git(root, "cat-file", "-e", f"{old}^{{commit}}") is None:
        old = None  # the recorded HEAD is gone (a rewritten history): look at all of it
    seen = data.get("reflog")
    start = seen if old and isinstance(seen, int) else 0
    here, end = made_here(root, start)
    keys = commit_keys()
    found = last_commits(root, [head, f"^{old}"] if old else [head], signers=bool(keys))
    elsewhere = {path: author for path, (sha, author, signer) in found.items()
                 if sha not in here and not _signed_by(keys, signer)}  # fmt: skip
    _mark(root, data, elsewhere, "git", _me(root))
    data["notes"] = {p: e for p, e in data["notes"].items() if (root / p).is_file()}
    data["head"], data["reflog"] = head, end
    _write(root, data)


def made_elsewhere(root: Path) -> bool:
    """Whether another install's vaultmem kept state in this vault (an index folder or a
    provenance record under another key's name): it was made, or last used, elsewhere."""
    mine = ownkey.key_id()
    try:
        others = [p.name for p in (root / STATE_DIR / "index").iterdir() if p.is_dir() and p.name != mine
                  and re.fullmatch(r"[0-9a-f]{12}", p.name)]  # fmt: skip
    except OSError:
        others = []
    try:
        records = [p.name for p in (root / USAGE_DIR).glob(f"{RECORD}.*.json") if p.name != _path(root).name]
    except OSError:
        records = []
    return bool(others or records)


def _mark_copied(root: Path, data: dict[str, Any]) -> None:
    """Mark every note of the vault as one of a vault made elsewhere (the first look at it)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.lower().endswith(NOTE_SUFFIXES) and not name.startswith("."):
                rel = Path(folder, name).relative_to(root).as_posix()
                data["notes"].setdefault(rel, {"author": "", "teammate": True, "via": "copy"})


def mark_range(root: Path, old: str | None, new: str) -> list[str]:
    """Mark every note the commits ``old..new`` (all of ``new`` when ``old`` is None) changed
    and that exists now: what a sync brought in. Returns the paths marked."""
    revs = [new, f"^{old}"] if old else [new]
    authors = last_authors(root, revs)
    data = read(root)
    before = set(data["notes"])
    _mark(root, data, authors, "sync", _me(root))
    _write(root, data)
    return sorted(set(data["notes"]) - before | (set(authors) & set(data["notes"])))


def confirm(root: Path, path: str) -> bool:
    """The person vouches for a marked note: its mark is dropped. Whether it was marked."""
    data = read(root)
    if data["notes"].pop(path, None) is None:
        return False
    _write(root, data)
    return True
