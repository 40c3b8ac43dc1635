"""What every importer of ``vaultmem import --from NAME`` does (``Importer``, the one base): find
its sources (``find``), read them into conversations (``read``: ``transcripts.history.Transcript``),
write notes through the vault's memory operations, report what it found and did (``Report``,
``lines``), all inside one undo batch (``run``; ``vaultmem import --undo BATCH`` takes it back).
Each source is one module of this folder (``__init__.py`` lists them); an agent's own history is
asked of its module in ``kinds/`` (``histories.py``).

The default import is of conversations, with the summariser of ``hook end`` (``capture.py``):
session summaries and candidate rules. Two phases: every conversation is read and summarised
first (a file given by name that is not a transcript stops the import before anything is
written), then the summaries are written oldest first, each dated by its session's own
timestamps and linked to its project's anchor note (found by the project folder's name, else
created as ``Project: <folder>``). A session whose summary is already in the vault (imported
before, or captured by ``hook end``: the same ``source``) is not imported again; a session still
being written (its file changed in the last ``ACTIVE_SECONDS``) is left for a later run.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import BadInput
from ...core.filters import parse_since, parse_time
from ...memory import undo
from ...memory.batch import paced
from ...memory.projects import find_anchor
from ..adapters import session_source
from ..capture import (
    known_rule,
    propose_rule,
    redact_for_memory,
    redact_title_for_memory,
    session_title,
    write_summary,
)
from ..summary import Summary, rule_title, summarise
from ..transcripts.history import NotATranscript, Transcript

if TYPE_CHECKING:  # pragma: no cover
    from ...vault import Vault

ACTIVE_SECONDS = 300  # a transcript modified this recently is still being written
Progress = Callable[[int, int], None]


@dataclass
class Planned:
    """A session read and summarised, waiting to be written."""

    transcript: Transcript
    summary: Summary
    source: str
    when: dt.datetime
    anchor: str | None = None
    label: str = "Session"  # what its summary's title calls it (a chat export's: "Conversation")


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
                  progress: Progress | None = None, total: int = 0, now: float | None = None,
                  settle: float = ACTIVE_SECONDS, label: str = "Session") -> list[Planned]:  # fmt: skip
    """Read and summarise every session; ``strict``: a file that cannot be read or is not a
    transcript is an error (BadInput) instead of a skipped file; ``settle``: a file changed
    this recently is still being written (0: a chat export, never); ``label``: ``Planned.label``."""
    now = time.time() if now is None else now
    after = parse_since(since) if since else None
    summaries = [r for r in vault.records().values() if r.type == "session_summary" and r.source]
    done = {r.source for r in summaries if r.source}  # (the filter above, said again for the checker)
    hooked = {
        (r.source, (r.created or "")[:19]) for r in summaries
    }  # hook end dates a summary by its session's start
    planned: list[Planned] = []
    for path in files:
        report.files += 1
        if progress:
            progress(report.files, total)
        try:
            if settle and now - path.stat().st_mtime < settle:
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
            item = _plan_one(t, report, done, project, after, hooked_here, chat=label == "Conversation")
            if item is not None:
                item.label = label
                planned.append(item)
                done.add(item.source)
    planned.sort(key=lambda p: p.when)
    return planned


def _plan_one(t: Transcript, report: Report, done: set[str], project: Path | None,
              after: dt.datetime | None, captured: bool = False, chat: bool = False) -> Planned | None:  # fmt: skip
    source = source_of(t)
    when = parse_time(t.start) or dt.datetime.fromtimestamp(Path(t.path).stat().st_mtime, dt.UTC)
    if not _under(t.cwd, project) or (after and (parse_time(t.end) or when) < after):
        report.filtered += 1
        return None
    if source in done or captured:
        report.already_imported.append(source)
        return None
    if chat:  # its note keeps every message, cut to a size: redacted first, so no cut halves a secret
        for ev in t.events:
            if ev.kind in ("prompt", "text"):
                ev.text = redact_for_memory(ev.text)
    s = summarise(t.events, t.cwd or None, chat=chat)
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
        for type_, sentence, who in p.summary.memories:
            _rule(vault, report, proposed, type_, sentence, p, dry_run, who)
        if not dry_run:
            result = write_summary(vault, p.summary, p.source, p.anchor, now=p.when, supersede=False, age=False,
                                   label=_label(p))  # fmt: skip
            entry.update(
                id=result["id"],
                path=result["path"],
                duplicate_of=result.get("duplicate_of"),
                **({"like": result["like"]} if result.get("like") else {}),
            )
        report.written.append(entry)
    if not dry_run:  # the aging rules once per project, not once per summary
        for anchor in dict.fromkeys(p.anchor for p in planned if p.anchor):
            report.aged += len(vault.age_anchor(anchor))


def _label(p: Planned) -> str:
    return p.label


def _rule(vault: Vault, report: Report, proposed: set[str], type_: str, sentence: str, p: Planned,
          dry_run: bool, who: str = "user") -> None:  # fmt: skip
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
                          anchor=p.anchor, who=who)  # fmt: skip
    row = {"id": result["id"], "type": result["type"], "title": result["title"], "path": result["path"]}
    if result.get("duplicate_of"):
        report.known_rules.append({**row, "duplicate_of": result["duplicate_of"]})
    else:
        report.candidates.append(row)


def import_history(vault: Vault, source: str, files: list[Path], read: Callable[[Path], Any], *,
                   strict: bool = False, project: str | None = None, since: str | None = None,
                   dry_run: bool = False, progress: Progress | None = None, settle: float = ACTIVE_SECONDS,
                   label: str = "Session") -> dict[str, Any]:  # fmt: skip
    """Import conversations (``files``: the files holding them); see the module's text."""
    report = Report(source, dry_run)
    if since:
        parse_since(since)  # a bad --since is an error before anything is read
    root = Path(os.path.abspath(os.path.expanduser(project))) if project else None
    planned = plan_sessions(vault, files, read, report, strict=strict, project=root, since=since,
                            progress=progress, total=len(files), settle=settle, label=label)  # fmt: skip
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


@dataclass
class Found:
    """What an importer will read: the files, the roots they were found under, notes to report."""

    files: list[Path]
    roots: list[Path]
    notes: list[str] = field(default_factory=list)

    @property
    def strict(self) -> bool:
        """One file given by name: a file that is not a transcript stops the import."""
        return len(self.roots) == 1 and self.roots[0].is_file()


class Importer:
    """One source of ``vaultmem import --from NAME``. The defaults import conversations
    (``find`` and ``read`` are the source's own); an importer of something else (instruction
    files, a memory graph) overrides ``into`` and ``lines``."""

    name = ""  # what --from names
    label = "Session"  # what a summary's title calls one conversation
    settle: float = ACTIVE_SECONDS  # a file changed this recently is still being written (0: never)
    takes_since = True  # --since applies
    default: Path | None = None  # what it reads when no path is named (an agent's own folder)

    def where(self, paths: list[str]) -> list[str]:
        """What this import reads, as the user names it: ``paths``, else the source's own place
        (``default``), found here, in the user's environment (``$CODEX_HOME``...), not where
        the import runs (the memory service was started by another command, maybe elsewhere)."""
        return list(paths) or ([str(self.default)] if self.default else [])

    @property
    def what(self) -> str:
        """What the progress line counts (``<what> file(s) done``)."""
        return f"{self.name} session"

    def find(self, paths: list[str], project: str | None) -> Found:
        """The files to read: ``paths`` (files or folders) or the source's own place."""
        raise NotImplementedError

    def read(self, path: Path) -> Transcript | list[Transcript]:
        """The conversation(s) of one file (``NotATranscript`` when it holds none)."""
        raise NotImplementedError

    def run(self, vault: Vault, paths: list[str], *, project: str | None = None, since: str | None = None,
            dry_run: bool = False, progress: Progress | None = None) -> dict[str, Any]:  # fmt: skip
        """Import (see the module's text) as one undo batch; the report, with the batch's id as
        ``undo`` (None when nothing was written)."""
        if since and not self.takes_since:
            raise BadInput(f"--since applies to session histories, not to --from {self.name}")
        with undo.recording(vault, "import", self.name, resume=not dry_run) as batch:  # a stopped one resumes
            result = self.into(vault, paths, project=project, since=since, dry_run=dry_run, progress=progress)
        result["undo"] = None if batch.empty() else batch.id
        return result

    def into(self, vault: Vault, paths: list[str], *, project: str | None, since: str | None, dry_run: bool,
             progress: Progress | None) -> dict[str, Any]:  # fmt: skip
        """Write what the sources hold into ``vault``; the report."""
        found = self.find(paths, project)
        result = import_history(vault, self.name, found.files, self.read, strict=found.strict, project=project,
                                since=since, dry_run=dry_run, progress=progress, settle=self.settle,
                                label=self.label)  # fmt: skip
        result["notes"] = found.notes + (
            [] if found.files else [f"no {self.name} sessions found under {', '.join(map(str, found.roots))}"]
        )
        return result

    def lines(self, r: dict[str, Any]) -> list[str]:
        """The human lines of an import's report."""
        would = "would write" if r["dry_run"] else "wrote"
        lines = [f"{would} {len(r['written'])} session summary(ies) and {len(r['candidates'])} candidate rule(s) "
                 f"from {r['files']} {r['source']} session file(s)"]  # fmt: skip
        lines += [
            f"  + {w['title']}" + (f"  -> [[{w['anchor']}]]" if w["anchor"] else "") for w in r["written"]
        ]
        lines += [f"  ? ({c['type']}) {c['title']}" for c in r["candidates"]]
        extra = [(len(r["already_imported"]), "already imported"), (len(r["known_rules"]), "rule(s) already known"),
                 (len(r["still_active"]), "still being written (left for later)"),
                 (len(r["empty"]), "without a request"), (r["filtered"], "outside --project/--since"),
                 (len(r["skipped"]), "not readable as transcripts")]  # fmt: skip
        said = [f"{n} {what}" for n, what in extra if n]
        if said:
            lines.append("; ".join(said))
        lines += [f"  skipped {s['reason']}" for s in r["skipped"][:10]]
        if r["anchors_created"]:
            lines.append(f"{'would create' if r['dry_run'] else 'created'} project note(s): "
                         + ", ".join(r["anchors_created"]))  # fmt: skip
        if not r["written"] and r["already_imported"]:
            lines.append("nothing new: every session here is already in the vault")
        lines += r.get("notes", [])
        return lines
