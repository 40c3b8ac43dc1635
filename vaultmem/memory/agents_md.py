"""``vaultmem export --to agents-md [FILE]``: a project's confirmed rules for agents without hooks.

The active (confirmed) preferences and lessons linked to the project's anchor, the user's own
preferences (``scope: user``), and the project's key decisions (importance 7 or more, or
"high") go into a marked section of ``AGENTS.md``/``CLAUDE.md``, between
``<!-- vaultmem:begin -->`` and ``<!-- vaultmem:end -->``. The rest of the file is left byte for
byte; the section is replaced in place, or appended when the file has none. The section holds
no time stamp, so a second export with the same notes changes nothing. Rules imported from the
same file (``import --from rules``) are not written back into it.

The vault config's ``[agents_md]`` section names files inside the vault whose section
``maintain --apply`` and ``sync`` refresh (``targets``, ``refresh``); nothing is refreshed unless
a file is named. The config is committed and synced, so it never names where vaultmem writes
outside the vault: such a file is a setting of this machine, kept in the user's config folder
(``agents_md.json``, by vault) when the person runs ``export --to agents-md FILE --keep``; a
committed entry outside the vault is skipped with a warning saying so.

The section is rules an agent will obey, so what goes into it passes the injection hold-back
(``fence.instruction_shaped``) whoever wrote the note, and a download piped into a shell is held
back too; a held memory is left out and listed (``held``). Titles are made one line and cannot
close the section (``<!--`` and ``-->`` are defused).
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.discovery import STATE_DIR, USAGE_DIR
from ..core.errors import BadInput, NoteParseError
from ..core.fence import instruction_shaped, one_line
from ..core.registry import home
from ..core.store import atomic_write
from .projects import find_anchor, project_key

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState

BEGIN, END = "<!-- vaultmem:begin -->", "<!-- vaultmem:end -->"
EVENTS = ("maintain", "sync")  # when a configured file is refreshed ([agents_md] refresh_on)
SECTIONS = (("preference", "Preferences"), ("lesson", "Lessons"), ("decision", "Key decisions"))
KEY_IMPORTANCE = 7
LOCAL_FILE = "agents_md.json"  # in the user's config folder: {"vaults": {vault: [files outside it]}}
# a download piped into a shell (curl ... | sh, wget -O- ... | bash): never a rule for an agent file
PIPE_TO_SHELL = re.compile(
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b", re.I
)
HELD_SCAN = 1 << 16  # characters of a note's text the hold-back reads (its title, then its start)
log = logging.getLogger("vaultmem.agents_md")


def _links_to(rec: Record, anchor: str) -> bool:
    """Whether a memory links to the anchor: by its title (``[[Project: X]]``) or its file name
    (``[[Project - X|Project: X]]``), as ``projects.project_key`` compares them."""
    key = project_key(anchor)
    return any(t.casefold() == anchor.casefold() or (key and project_key(t) == key) for t, _ in rec.links)


def _key_decision(rec: Record) -> bool:
    imp = rec.importance
    return (isinstance(imp, int) and imp >= KEY_IMPORTANCE) or str(imp).lower() == "high"


def select(vault: VaultState, anchor: str | None, skip_source_suffix: str = "",
           held: dict[str, str] | None = None) -> dict[str, list[Record]]:  # fmt: skip
    """The memories of each section, sorted by title; one that gives orders (``holds``) is left
    out and put in ``held`` (path -> the passage)."""
    out: dict[str, list[Record]] = {t: [] for t, _ in SECTIONS}
    for rec in vault.records().values():
        if rec.status != "active" or rec.type not in out:
            continue
        if skip_source_suffix and (rec.source or "").endswith(skip_source_suffix):
            continue
        project = bool(anchor) and _links_to(rec, anchor or "")
        if rec.type == "decision" and not (project and _key_decision(rec)):
            continue
        if project or (rec.type == "preference" and rec.scope == "user"):
            why = holds(vault, rec)
            if why is None:
                out[rec.type].append(rec)
            elif held is not None:
                held[rec.path] = why
    return {t: sorted(rs, key=lambda r: (r.title.casefold(), r.key)) for t, rs in out.items()}


def holds(vault: VaultState, rec: Record) -> str | None:
    """Why a memory stays out of an agent file, or None: its title or text gives the agent
    orders (the injection hold-back, whoever wrote it: the file is read as rules) or pipes a
    download into a shell."""
    try:
        text = vault.store.read_text(rec.path)
    except (OSError, NoteParseError, UnicodeDecodeError):
        text = ""
    text = f"{rec.title}\n{text[:HELD_SCAN]}"
    found = instruction_shaped(text)
    if found is None and (m := PIPE_TO_SHELL.search(text)):
        found = one_line(m.group(0))[:80]
    return found


def _line(title: str) -> str:
    """A title as one list item that cannot close or open the section (or any HTML comment)."""
    return one_line(title).replace("<!--", "<! --").replace("-->", "-- >")


def render(chosen: dict[str, list[Record]], anchor: str | None) -> str:
    lines = [BEGIN, f"## Memory from vaultmem{f' ({_line(anchor)})' if anchor else ''}", "",
             "Generated by `vaultmem export --to agents-md`; change the notes in the vault, not this section."]  # fmt: skip
    for type_, heading in SECTIONS:
        if chosen[type_]:
            lines += ["", f"### {heading}", *(f"- {_line(r.title)}" for r in chosen[type_])]
    return "\n".join(lines + [END])


def splice(text: str, section: str) -> str:
    """``text`` with its marked section replaced by ``section`` (appended when there is none)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 and end < 0:
        if not text:
            return section + "\n"
        sep = "" if text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return f"{text}{sep}{section}\n"
    if start < 0 or end < start or text.count(BEGIN) > 1 or text.count(END) > 1:
        raise BadInput(f"the file's {BEGIN} ... {END} markers are broken (missing, repeated or out of order); "
                       "fix them by hand, nothing was written")  # fmt: skip
    return text[:start] + section + text[end + len(END) :]


def export(vault: VaultState, file: str, anchor: str | None = None, dry_run: bool = False) -> dict[str, Any]:
    """Write the section into ``file`` (created when missing); ``anchor``: the project note
    (default: the project note named like the file's folder)."""
    path = Path(os.path.expanduser(file))
    if path.is_dir():
        path = path / "AGENTS.md"
    if protected(path):
        raise BadInput(f"{file}: is inside a .git, {STATE_DIR} or {USAGE_DIR} folder; nothing was written")
    anchor = anchor or find_anchor(vault, str(path.resolve().parent))
    held: dict[str, str] = {}
    chosen = select(vault, anchor, f"/{path.name}", held)
    try:
        old = path.read_bytes().decode("utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot be read as UTF-8 text ({e}); nothing was written") from None
    new = splice(old, render(chosen, anchor))
    changed = new != old
    if changed and not dry_run:
        try:
            atomic_write(path, new)
        except OSError as e:
            raise BadInput(f"{path}: cannot be written ({e.strerror or e}); nothing was written") from None
        exported(vault.root, path)
    for rel, why in sorted(held.items()):
        log.warning("vaultmem: %s held back from %s: it gives the agent orders (%r)", rel, path, why)
    return {"file": str(path), "anchor": anchor, "changed": changed, "dry_run": dry_run,
            "counts": {t: len(rs) for t, rs in chosen.items()}, "held": held,
            "section": render(chosen, anchor)}  # fmt: skip


def targets(root: Path, settings: dict[str, Any], event: str, label: str) -> list[Path]:
    """The files to refresh on ``event`` (one of ``EVENTS``, as ``[agents_md]`` (``settings``)
    says): the config's files inside the vault (relative to its folder ``root``) and the files
    this machine keeps for it (``kept``), checked before anything is written; a bad one is a
    one-line error naming the key (``label``: the config file). A config entry outside the
    vault is skipped with a warning saying how to keep it on this machine."""
    if not wanted(settings, event, root):
        return []
    found: list[Path] = []
    for name in settings["files"]:
        if _outside(root, name):
            log.warning("vaultmem: %s: agents_md.files: %r is outside the vault; a synced config never names where "
                        "vaultmem writes on this machine, so it is not written. To keep it refreshed here, remove it "
                        "from the config and run: vaultmem export --to agents-md %s --keep --vault %s",
                        label, name, name, root)  # fmt: skip
            continue
        found.append(_target(root, name, label))
    found += [_target(root, name, f"{local_path()}: {root}") for name in kept(root)]
    return list(dict.fromkeys(found))


def wanted(settings: dict[str, Any], event: str, root: Path | None = None) -> bool:
    """Whether ``[agents_md]`` (``settings``) or this machine (``kept``, for the vault ``root``)
    names files to refresh on ``event``."""
    return bool(settings["files"] or (root is not None and kept(root))) and event in settings["refresh_on"]


def _outside(root: Path, name: str) -> bool:
    """Whether a config entry leads out of the vault (absolute, ``~``, ``..``, or a folder link)."""
    if not name.strip() or "\0" in name:
        return False  # _target says what is wrong with it
    path = root / os.path.expanduser(name)
    if path.is_dir():
        path = path / "AGENTS.md"
    return not (path.parent.resolve() / path.name).is_relative_to(root.resolve())


# ---------------------------------------------------------------------- this machine's files


def local_path() -> Path:
    """The user's own list of agent files outside their vaults (never synced)."""
    return home() / LOCAL_FILE


def _document() -> dict[str, dict[str, list[str]]]:
    """This machine's file: ``vaults`` (the files kept refreshed, by vault) and ``exported``
    (every file outside a vault an export wrote here, by vault: what its undo may put back)."""
    try:
        data = json.loads(local_path().read_text(encoding="utf-8"))
        return {part: {k: [f for f in v if isinstance(f, str)] for k, v in data.get(part, {}).items()
                       if isinstance(v, list)} for part in ("vaults", "exported")}  # fmt: skip
    except FileNotFoundError:
        return {"vaults": {}, "exported": {}}
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError) as e:
        raise BadInput(f"{local_path()}: not a list of agent files ({e}); fix or remove it") from None


def _local() -> dict[str, list[str]]:
    return _document()["vaults"]


def _save(doc: dict[str, dict[str, list[str]]]) -> None:
    local_path().parent.mkdir(parents=True, exist_ok=True)
    out = {part: {k: v for k, v in doc[part].items() if v} for part in ("vaults", "exported")}
    atomic_write(local_path(), json.dumps(out, indent=2) + "\n")


def kept(root: Path) -> list[str]:
    """The agent files this machine refreshes for the vault ``root`` (absolute paths)."""
    return _local().get(str(root.resolve()), [])


def written_here(root: Path) -> set[str]:
    """The files outside the vault ``root`` this machine's person named for it: kept ones, and
    those an export wrote (the only files outside a vault its undo may change)."""
    doc = _document()
    return set(doc["vaults"].get(str(root.resolve()), [])) | set(doc["exported"].get(str(root.resolve()), []))


def exported(root: Path, path: Path) -> None:
    """Note that an export of the vault ``root`` wrote ``path`` (outside the vault) on this machine."""
    path = path.absolute()
    if path.resolve().is_relative_to(root.resolve()):
        return
    doc = _document()
    files = doc["exported"].setdefault(str(root.resolve()), [])
    if str(path) not in files:
        files.append(str(path))
        _save(doc)


def keep(root: Path, file: str, keep_it: bool = True) -> Path:
    """Add the agent file ``file`` to this machine's list for the vault ``root`` (or, without
    ``keep_it``, take it off); the person's own command is the confirmation."""
    path = _target(Path.cwd(), file, "--keep") if keep_it else Path(os.path.expanduser(file)).absolute()
    doc = _document()
    files = [f for f in doc["vaults"].get(str(root.resolve()), []) if f != str(path)]
    doc["vaults"][str(root.resolve())] = files + [str(path)] if keep_it else files
    _save(doc)
    return path


def _target(root: Path, name: str, label: str) -> Path:
    """The file to write for one ``files`` entry: a folder means its AGENTS.md; a symlink is
    followed only to a file in its own folder (CLAUDE.md -> AGENTS.md)."""

    def bad(why: str) -> BadInput:
        return BadInput(f"{label}: agents_md.files: {name!r} {why}; nothing was written")

    if not name.strip() or "\0" in name:
        raise bad("is not a file name")
    path = root / os.path.expanduser(name)  # an absolute path stays as it is
    if path.is_dir():
        path = path / "AGENTS.md"
    path = path.parent.resolve() / path.name  # the folder's real path; the file itself is looked at next
    if protected(path):
        raise bad(f"is inside a .git, {STATE_DIR} or {USAGE_DIR} folder")
    if path.is_symlink():
        real = path.resolve()
        if real.parent != path.parent or real.is_dir():
            raise bad(f"is a symlink leading out of its folder (to {real})")
        path = real
    if not path.parent.is_dir():
        raise bad(f"is in a folder that does not exist ({path.parent})")
    if path.exists() and not path.is_file():
        raise bad("is not a regular file")
    if protected(path):  # a symlink followed above
        raise bad(f"is inside a .git, {STATE_DIR} or {USAGE_DIR} folder")
    return path


def protected(path: Path) -> bool:
    """Whether ``path`` (its real place) is inside a ``.git`` folder or one of vaultmem's state
    folders, in any case (a case-insensitive disk): never a file an export writes."""
    return bool(
        {".git", STATE_DIR.casefold(), USAGE_DIR.casefold()} & {p.casefold() for p in path.resolve().parts}
    )


def refresh(vault: VaultState, files: list[Path], anchor: str, apply: bool) -> list[dict[str, Any]]:
    """Refresh the section of each of ``files`` (``targets``); without ``apply`` only say which
    would change. An unchanged file is not written."""
    done = []
    for path in files:
        result = export(vault, str(path), anchor or None, dry_run=not apply)
        done.append({k: v for k, v in result.items() if k != "section"})
    return done
