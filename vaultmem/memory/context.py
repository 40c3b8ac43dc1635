"""``vaultmem wake``: the session-start ``[MEMORY]`` block for an agent.

Sections, in order, each only when non-empty: Project Brief, Architecture, Key Decisions,
Progress & Status, Last Session, User Preferences, Gotchas, Relevant to Current Task.
Within a section lines go by importance, then recency; every line carries the memory's id.
The block fits a token budget, estimated as one token per 4 characters (the usual rule of
thumb for English with BPE tokenizers); the least important lines are dropped first.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import provenance as who
from ..core.fence import PERSON, fence, held, one_line, provenance
from ..core.filters import EPOCH, is_expired, now_utc, parse_time
from ..core.secrets import redact
from ..index.chunking import plain_text
from ..index.graph import neighbourhood, outdated_by
from . import projects

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState

SECTIONS = (
    "Project Brief", "Architecture", "Key Decisions", "Progress & Status", "Last Session",
    "User Preferences", "Gotchas", "Relevant to Current Task", "Candidates to Confirm",
)  # fmt: skip
MAX_CANDIDATES = 5
CHARS_PER_TOKEN = 4
SUMMARY_WORDS = 40


def estimate_tokens(text: str) -> int:
    """Tokens ~= characters / 4, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class Line:
    """One memory in the block."""

    section: str
    id: str
    title: str
    type: str | None
    importance: int
    updated: str
    text: str
    origin: str = PERSON  # where the memory came from (fence.provenance)
    outdated_by: tuple[str, ...] = ()  # titles of active notes that may update this one

    def render(self) -> str:
        """One line of the block: id, title, type and origin, text; every part one safe line."""
        flag = (
            f" (may be outdated by {', '.join(f'[[{one_line(t)}]]' for t in self.outdated_by)})"
            if self.outdated_by
            else ""
        )
        return (f"- [{one_line(self.id)}] **{one_line(self.title)}** ({one_line(self.type or 'note')}; "
                f"{self.origin}){flag}: {one_line(self.text)}")  # fmt: skip


def _when(rec: Record) -> dt.datetime:
    return parse_time(rec.updated) or parse_time(rec.created) or EPOCH


def _made(rec: Record) -> dt.datetime:
    """When a memory was written (for "the latest progress / session / handoff")."""
    return parse_time(rec.created) or parse_time(rec.updated) or EPOCH


def _summary(body: str, words: int = SUMMARY_WORDS) -> str:
    """The first ``words`` words of a note's body, without its heading and markup."""
    lines = [ln.strip() for ln in plain_text(body).splitlines()]
    kept = [
        ln.lstrip("#>-* ").strip()
        for ln in lines
        if ln and not ln.startswith("# ") and not ln.startswith("```")
    ]
    parts = " ".join(kept).split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _next_steps(body: str) -> str | None:
    """The "Next steps" section of a handoff, as one line."""
    m = re.search(r"^#+\s*next steps?\s*$(.*?)(?=^#+\s|\Z)", body, re.I | re.M | re.S)
    if not m:
        return None
    items = [ln.strip().lstrip("-*0123456789.) ").strip() for ln in m.group(1).splitlines() if ln.strip()]
    return "; ".join(i for i in items if i) or None


def _pick(
    vault: VaultState, anchor: str | None
) -> tuple[list[Record], Record | None, Callable[[Record], bool]]:
    """Active, unexpired memories (of the anchor's project when there is one), the anchor itself,
    and the project rule (``ours``: a memory of this project or the user's, ``projects``)."""
    records = vault.records()
    live = [r for r in records.values() if r.status == "active" and not is_expired(r)]
    if not anchor:
        return live, None, lambda rec: True
    from ..recall.pipeline import resolve_anchor

    path = resolve_anchor(vault.graph(), records, anchor)
    near = neighbourhood(vault.graph(), path, int(vault.config["recall"]["anchor_depth"]))
    scope = projects.Scope(vault)
    mine = scope.of(path)
    whole = records[path].type == "project"  # a project's anchor: all of it; another note: around it

    def ours(rec: Record) -> bool:
        return rec.scope == "user" or (mine is not None and scope.of(rec.path) == mine)

    def shown(rec: Record) -> bool:  # a note of no project shows when linked from the anchor
        if ours(rec) and (whole or rec.path in near or rec.scope == "user"):
            return True
        return rec.path in near and scope.of(rec.path) is None and rec.type not in LATEST_TYPES

    return [r for r in live if shown(r)], records[path], ours


def _other_project(vault: VaultState, rec: Record | None, ours: Callable[[Record], bool]) -> bool:
    """Whether a memory belongs to another project than the one wake is for."""
    return rec is not None and not ours(rec) and projects.Scope(vault).of(rec.path) is not None


def _section_of(rec: Record) -> str | None:
    if rec.scope == "user" or rec.type == "preference":
        return "User Preferences"
    return {
        "project": "Project Brief", "tech_context": "Project Brief", "architecture": "Architecture",
        "decision": "Key Decisions", "gotcha": "Gotchas",
    }.get(rec.type or "")  # fmt: skip


def _candidates(
    vault: VaultState, keep: Callable[[str], bool], ours: Callable[[Record], bool]
) -> list[Record]:
    """Unconfirmed memories (rules captured from sessions) of this project or the user, newest first."""
    found = [
        r
        for r in vault.records().values()
        if r.status == "candidate" and not is_expired(r) and keep(r.path) and ours(r)
    ]
    return sorted(found, key=lambda r: -_made(r).timestamp())[:MAX_CANDIDATES]


Shown = Callable[[Path, str], bool]
LATEST_TYPES = ("progress", "session_summary", "handoff")


def collect(vault: VaultState, anchor: str | None = None, task: str | None = None, profile: str = "default",
            shown: Shown | None = None) -> list[Line]:  # fmt: skip
    """Every candidate line, in block order (before budget fitting); ``shown(root, path)``
    leaves out what the block may not show (other code branches' memories), before the latest
    progress, session and handoff are picked."""
    keep = (lambda path: shown(vault.root, path)) if shown else (lambda path: True)
    notes, anchor_rec, ours = _pick(vault, anchor)
    notes = [r for r in notes if (_section_of(r) or r.type in LATEST_TYPES) and keep(r.path)]
    body = vault.body
    lines: list[Line] = []

    graph, records = vault.graph(), vault.records()
    who.refresh(vault.root)  # notes a teammate committed since the last look are marked
    trust = who.Trust(vault.root)

    def add(section: str, rec: Record, text: str | None = None) -> None:
        text = text if text is not None else _summary(body(rec.path))
        synced = trust.label(rec.path)
        if held(rec.type, rec.status, rec.source, f"{rec.title}\n{text}\n{body(rec.path)}", synced):
            return  # orders to the agent not from this machine's person: doctor lists it for a person
        lines.append(Line(section, rec.key, redact(rec.title)[0], rec.type, rec.importance, rec.updated, redact(text)[0],
                          provenance(rec.type, rec.status, rec.source, synced), tuple(outdated_by(graph, records, rec.path))))  # fmt: skip

    by_section: dict[str, list[Record]] = {}
    for rec in notes:
        section = _section_of(rec)
        if section:
            by_section.setdefault(section, []).append(rec)
    if anchor_rec is not None:
        brief = by_section.setdefault("Project Brief", [])
        if anchor_rec in brief:
            brief.remove(anchor_rec)
        add("Project Brief", anchor_rec)  # the anchor opens the block
    latest = {  # a session where nothing was done (tagged chat-only by capture) is no Last Session
        t: max((r for r in notes if r.type == t and "chat-only" not in r.tags), key=_made, default=None)
        for t in LATEST_TYPES
    }
    for section in SECTIONS[:3]:
        for rec in sorted(by_section.get(section, []), key=lambda r: (-r.importance, -_when(r).timestamp())):
            add(section, rec)
    if latest["progress"]:
        add("Progress & Status", latest["progress"])
    if latest["session_summary"]:
        add("Last Session", latest["session_summary"])
    if latest["handoff"]:
        steps = _next_steps(body(latest["handoff"].path))
        add("Last Session", latest["handoff"], f"Next steps: {steps}" if steps else None)
    for section in ("User Preferences", "Gotchas"):
        for rec in sorted(by_section.get(section, []), key=lambda r: (-r.importance, -_when(r).timestamp())):
            add(section, rec)
    for rec in _candidates(vault, keep, ours):
        add(
            "Candidates to Confirm",
            rec,
            f"{_summary(body(rec.path), 25)} (confirm: `vaultmem confirm {rec.key}`)",
        )
    if task and task.strip():
        seen = {ln.id for ln in lines}
        for hit in vault.recall(task, k=8, anchor=anchor, profile=profile, log=False):
            found = records.get(hit.path)  # `other`: this note when it is another project's
            other = found if anchor_rec is not None and _other_project(vault, found, ours) else None
            if (
                hit.id not in seen
                and keep(hit.path)
                and not (other and not _clears_bar(hit, other))
                and not held(
                    hit.type, hit.status, hit.source, f"{hit.title}\n{hit.snippet}", trust.label(hit.path)
                )
            ):
                title = f"{hit.title} (from {_project_name(vault, other)})" if other else hit.title
                lines.append(Line("Relevant to Current Task", hit.id, redact(title)[0], hit.type, hit.importance,
                                  hit.updated, redact(hit.snippet)[0], provenance(hit.type, hit.status, hit.source, trust.label(hit.path)),
                                  tuple(hit.outdated_by)))  # fmt: skip
    return lines


def _clears_bar(hit: Any, rec: Record) -> bool:
    """Another project's memory is shown for a task only when close to it (a term match and
    ``projects.OTHER_PROJECT_COS``), and never its sessions or candidates."""
    e = hit.explain or {}
    return (
        rec.type not in LATEST_TYPES
        and rec.status != "candidate"
        and float(e.get("vector_raw", 0.0)) >= projects.OTHER_PROJECT_COS
        and float(e.get("bm25_raw", 0.0)) > 0
    )


def _project_name(vault: VaultState, rec: Record) -> str:
    return projects.Scope(vault).name(rec.path) or "another project"


def fit(lines: list[Line], budget: int, header: str) -> list[Line]:
    """Drop the least important lines (lowest importance, then oldest) until the block fits."""
    kept = list(lines)
    order = sorted(range(len(lines)), key=lambda i: (lines[i].importance, lines[i].updated, -i))
    dropped: set[int] = set()
    for i in order:
        if estimate_tokens(render(kept, header)) <= budget:
            break
        dropped.add(i)
        kept = [ln for j, ln in enumerate(lines) if j not in dropped]
    return kept


def render(lines: list[Line], header: str) -> str:
    """The block, fenced as data (``fence.fence``: a fresh nonce in its markers)."""
    out: list[str] = []
    for section in SECTIONS:
        items = [ln for ln in lines if ln.section == section]
        if items:
            out += ["", f"## {section}", *(ln.render() for ln in items)]
    return fence(out, header) + "\n"


def wake(vault: VaultState, anchor: str | None = None, task: str | None = None, profile: str = "default",
         budget: int = 2000, log: bool = True, shown: Shown | None = None) -> dict[str, Any]:  # fmt: skip
    """The [MEMORY] block and its parts; memories shown are logged as retrieved (``shown``: see
    ``collect``)."""
    if budget < 50:
        from ..core.errors import BadInput

        raise BadInput("--budget must be at least 50 tokens")
    today = now_utc().date().isoformat()
    header = f"# Memory{' for ' + anchor if anchor else ''} (vaultmem, {today}; ids in [brackets] are for recall, rate and resolve)"
    lines = fit(collect(vault, anchor, task, profile, shown), budget, header)
    text = render(lines, header)
    ids = list(dict.fromkeys(ln.id for ln in lines))
    if log and ids:
        vault.usage.log_retrievals(ids, "wake")
    sections = [{"name": s, "items": [asdict(ln) for ln in lines if ln.section == s]} for s in SECTIONS]
    return {"text": text, "tokens": estimate_tokens(text), "budget": budget, "ids": ids,
            "sections": [s for s in sections if s["items"]]}  # fmt: skip
