"""``vaultmem import --from claude-code|codex``: agents' session histories as session summaries
and candidate rules, with the summariser of ``hook end`` (``capture.py``).

Two phases: every transcript is read and summarised first (a file given by name that is not a
transcript stops the import before anything is written), then the summaries are written oldest
first, each dated by its session's own timestamps and linked to its project's anchor note (found
by the project folder's name, else created as ``Project: <folder>``). A session whose summary is
already in the vault (imported before, or captured by ``hook end``: the same ``source``) is not
imported again; a session still being written (its file changed in the last ``ACTIVE_SECONDS``)
is left for a later run.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput
from ..core.filters import parse_since, parse_time
from ..memory.batch import paced
from ..memory.projects import find_anchor
from .adapters import session_source
from .capture import (
    known_rule,
    propose_rule,
    redact_for_memory,
    redact_title_for_memory,
    session_title,
    write_summary,
)
from .summary import Summary, rule_title, summarise
from .transcripts.history import NotATranscript, Transcript

if TYPE_CHECKING:  # pragma: no cover
    from ..vault import Vault

ACTIVE_SECONDS = 300  # a transcript modified this recently is still being written
CHATS = (
    "chatgpt",
    "claude-ai",
)  # exports of whole chat histories: conversations, never "still being written"
Progress = Callable[[int, int], None]


@dataclass
class Planned:
    """A session read and summarised, waiting to be written."""

    transcript: Transcript
    summary: Summary
    source: str
    when: dt.datetime
    anchor: str | None = None


@dataclass
class Report:
    """What an import found and did (``--json`` prints it)."""

    source: str
    dry_run: bool
    files: int = 0
    written: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    known_rules: list[dict[str, Any]] = field(default_factory=list)
    anchors_created: list[str] = field(default_factory=list)
    already_imported: list[str] = field(default_factory=list)
    still_active: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    filtered: int = 0
    aged: int = 0  # older session summaries archived by the aging rules (3 active per project)
    skipped: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def source_of(t: Transcript) -> str:
    """The ``source`` of a session's notes: ``hook end``'s (``adapters.session_source``), so a
    session captured by the hook is not imported again."""
    return session_source(t.agent, t.id)


def hook_source(t: Transcript) -> str:
    """The source older versions of ``hook end`` gave a session (``codex-<8 characters>``)."""
    return f"{t.agent}-{t.id[:8]}"


def _under(cwd: str, project: Path | None) -> bool:
    if project is None:
        return True
    if not cwd:
        return False
    root = str(project).rstrip("/")
    return cwd == root or cwd.startswith(root + "/")


def plan_sessions(vault: Vault, files: Iterable[Path], read: Callable[[Path], Any], report: Report, *,
                  strict: bool = False, project: Path | None = None, since: str | None = None,
                  progress: Progress | None = None, total: int = 0, now: float | None = None) -> list[Planned]:  # fmt: skip
    """Read and summarise every session; ``strict``: a file that cannot be read or is not a
    transcript is an error (BadInput) instead of a skipped file."""
    now = time.time() if now is None else now
    after = parse_since(since) if since else None
    summaries = [r for r in vault.records().values() if r.type == "session_summary" and r.source]
    done = {r.source for r in summaries}
    hooked = {
        (r.source, (r.created or "")[:19]) for r in summaries
    }  # hook end dates a summary by its session's start
    planned: list[Planned] = []
    for path in files:
        report.files += 1
        if progress:
            progress(report.files, total)
        try:
            if report.source not in CHATS and now - path.stat().st_mtime < ACTIVE_SECONDS:
                report.still_active.append(str(path))
                continue
            read_items = read(path)
        except (NotATranscript, OSError, UnicodeDecodeError) as e:
            reason = (
                str(e)
                if isinstance(e, NotATranscript)
                else f"{path}: cannot be read ({getattr(e, 'strerror', None) or e})"
            )
            if strict:
                raise BadInput(f"{reason}; nothing was imported") from None
            report.skipped.append({"path": str(path), "reason": reason})
            continue
        for t in read_items if isinstance(read_items, list) else [read_items]:  # an export holds many
            hooked_here = (hook_source(t), t.start[:19]) in hooked  # captured by hook end
            item = _plan_one(t, report, done, project, after, hooked_here)
            if item is not None:
                planned.append(item)
                done.add(item.source)
    planned.sort(key=lambda p: p.when)
    return planned


def _plan_one(t: Transcript, report: Report, done: set[str], project: Path | None,
              after: dt.datetime | None, captured: bool = False) -> Planned | None:  # fmt: skip
    source = source_of(t)
    when = parse_time(t.start) or dt.datetime.fromtimestamp(Path(t.path).stat().st_mtime, dt.UTC)
    if not _under(t.cwd, project) or (after and (parse_time(t.end) or when) < after):
        report.filtered += 1
        return None
    if source in done or captured:
        report.already_imported.append(source)
        return None
    s = summarise(t.events, t.cwd or None)
    s.subagents = list(t.subagents)
    t.events = []  # the summary is what is kept: memory stays bounded by the number of sessions
    if s.empty:
        report.empty.append(t.path)
        return None
    return Planned(t, s, source, when)


def project_anchor(vault: Vault, cwd: str) -> str | None:
    """The project note of a folder: found by the folder's name, else ``Project: <folder>``."""
    if not cwd:
        return None
    found = find_anchor(vault, cwd)
    name = Path(cwd.rstrip("/")).name
    return found or (f"Project: {name}" if name else None)


def write_sessions(vault: Vault, planned: list[Planned], report: Report, dry_run: bool = False,
                   progress: Progress | None = None) -> None:  # fmt: skip
    """Write (or, dry, list) each planned session's new candidate rules and its summary (last:
    the summary marks the session imported, so a run stopped in between writes the rest);
    ``progress(done, total)`` at each checkpoint of the bulk write (``memory.batch.paced``)."""
    titles = {r.title for r in vault.records().values()}
    proposed: set[str] = set()
    for p in paced(vault, planned, progress) if not dry_run else planned:
        p.anchor = project_anchor(vault, p.transcript.cwd)
        if p.anchor and p.anchor not in titles and p.anchor not in report.anchors_created:
            report.anchors_created.append(p.anchor)
        entry = {"session": p.transcript.id, "source": p.source, "when": p.when.isoformat().replace("+00:00", "Z"),
                 "title": redact_title_for_memory(session_title(p.summary, p.when, _label(p))), "anchor": p.anchor,
                 "file": p.transcript.path}  # fmt: skip
        for type_, sentence in p.summary.memories:
            _rule(vault, report, proposed, type_, sentence, p, dry_run)
        if not dry_run:
            result = write_summary(vault, p.summary, p.source, p.anchor, now=p.when, supersede=False, age=False,
                                   label=_label(p))  # fmt: skip
            entry.update(id=result["id"], path=result["path"], duplicate_of=result.get("duplicate_of"))
        report.written.append(entry)
    if not dry_run:  # the aging rules once per project, not once per summary
        for anchor in dict.fromkeys(p.anchor for p in planned if p.anchor):
            report.aged += len(vault.age_anchor(anchor))


def _label(p: Planned) -> str:
    return "Conversation" if p.transcript.agent in CHATS else "Session"


def _rule(vault: Vault, report: Report, proposed: set[str], type_: str, sentence: str, p: Planned,
          dry_run: bool) -> None:  # fmt: skip
    if dry_run:  # what propose_rule would title it (it redacts and titles the sentence itself)
        title = redact_title_for_memory(rule_title(redact_for_memory(sentence)))
        known = known_rule(vault, title, sentence)
        if known is not None or title.casefold() in proposed:
            report.known_rules.append({"title": title, "duplicate_of": known.key if known else None})
        else:
            report.candidates.append({"type": type_, "title": title, "source": p.source})
        proposed.add(title.casefold())
        return
    result = propose_rule(vault, type_, sentence, p.source, now=p.when, where=f"imported {_label(p).lower()}",
                          anchor=p.anchor)  # fmt: skip
    row = {"id": result["id"], "type": result["type"], "title": result["title"], "path": result["path"]}
    if result.get("duplicate_of"):
        report.known_rules.append({**row, "duplicate_of": result["duplicate_of"]})
    else:
        report.candidates.append(row)


def import_history(vault: Vault, source: str, files: list[Path], read: Callable[[Path], Any], *,
                   strict: bool = False, project: str | None = None, since: str | None = None,
                   dry_run: bool = False, progress: Progress | None = None) -> dict[str, Any]:  # fmt: skip
    """Import agent sessions (``files``: their main transcript files); see the module's text."""
    report = Report(source, dry_run)
    if since:
        parse_since(since)  # a bad --since is an error before anything is read
    root = Path(os.path.abspath(os.path.expanduser(project))) if project else None
    planned = plan_sessions(vault, files, read, report, strict=strict, project=root, since=since,
                            progress=progress, total=len(files))  # fmt: skip
    with vault.batch(bulk=not dry_run):  # one catalogue, durable and indexed in checkpoints
        write_sessions(vault, planned, report, dry_run, getattr(progress, "writing", None))
    return report.as_dict()


def existing(paths: Iterable[str], default: Path, what: str) -> Iterator[Path]:
    """The paths given (else ``default``), each checked to exist (BadInput naming the first
    that does not)."""
    given = [Path(os.path.expanduser(p)) for p in paths] or [default]
    for p in given:
        if not p.exists():
            raise BadInput(f"{p}: no such file or folder ({what})")
        yield p


def claude_code_files(roots: list[Path], project: str | None) -> list[Path]:
    """Main session files under the roots; with ``project``, only project folders whose name
    can be that folder's (the name is lossy: the sessions' own ``cwd`` decides after)."""
    from .transcripts.claude import encode_cwd, session_files

    prefix = encode_cwd(os.path.abspath(os.path.expanduser(project))) if project else ""
    files = []
    for root in roots:
        for f in session_files(root):
            if not prefix or f == root or f.parent == root or f.parent.name.startswith(prefix):
                files.append(f)
    return files


def import_agent(vault: Vault, source: str, paths: list[str], *, project: str | None = None,
                 since: str | None = None, dry_run: bool = False, progress: Progress | None = None) -> dict[str, Any]:  # fmt: skip
    """``import --from claude-code|codex [PATH...]``: the agent's history (default: its own folder)."""
    notes: list[str] = []
    if source == "claude-code":
        from .transcripts import claude

        roots = list(existing(paths, claude.default_root(), "Claude Code transcripts"))
        files, read = claude_code_files(roots, project), claude.read_session
    elif source in CHATS:
        from .transcripts import exports

        if not paths:
            raise BadInput(f"--from {source} needs the export's conversations.json (or its folder)")
        roots = list(existing(paths, Path("."), "the export"))
        files = [f for r in roots for f in exports.export_files(r)]
        read = exports.read_chatgpt if source == "chatgpt" else exports.read_claude_ai
    else:
        from .transcripts import rollouts

        roots = list(existing(paths, rollouts.default_root(), "Codex rollouts"))
        found = [rollouts.rollout_files(r) for r in roots]
        files, zst = [f for fs, _ in found for f in fs], [f for _, zs in found for f in zs]
        read = rollouts.read_rollout
        notes += [f"{len(zst)} compressed rollout(s) (.jsonl.zst) skipped: install zstandard "
                 "(pip install 'vaultmem-md[codex]') to read them"] if zst else []  # fmt: skip
    strict = len(roots) == 1 and roots[0].is_file()
    result = import_history(vault, source, files, read, strict=strict, project=project, since=since,
                            dry_run=dry_run, progress=progress)  # fmt: skip
    result["notes"] = notes + (
        [] if files else [f"no {source} sessions found under {', '.join(map(str, roots))}"]
    )
    return result
