"""Agent hooks: recall at each prompt, the wake block at start, and what a session leaves behind
at stop, before compaction and at its end, with no LLM of vaultmem's own; once for every agent.

The payload arrives normalised by the agent's adapter (``adapters.py``) in Claude Code's field
names (``session_id``, ``transcript_path``, ``cwd``, the event's own fields) plus ``agent``,
``agent_label``; each ``*_hook`` function returns the JSON object to
print in Claude Code's shape (or None: print nothing), which the adapter reshapes for its
agent: context goes in ``hookSpecificOutput.additionalContext``; a Stop hook blocks with
``decision: "block"`` and a ``reason``, and must not block again when ``stop_hook_active`` is set.

Per-session state (which memories this session was shown, whether Stop already asked), keyed
by agent and session id, lives in ``.vaultmem/hooks.db``: small, session-scoped, not
rebuildable from the notes, and sessions not seen for ``KEEP_DAYS`` are dropped.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections import namedtuple
from pathlib import Path

from ..core.discovery import STATE_DIR, private_dir
from ..core.errors import BadInput
from ..core.fence import fence, held, one_line, provenance
from ..core.private import strip_private
from ..core.provenance import Trust, refresh_if_moved
from ..memory.projects import find_anchor
from .events import REMINDER_MARK

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every hook call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Iterable
    from typing import Any

    from ..vault import Vault
    from .events import Event

STATE_FILE = "hooks.db"
KEEP_DAYS = 14
CHARS_PER_TOKEN = 4
DEFAULT_BUDGET = 400
RECALL_K = 8
TRANSCRIPT_TAIL = 1 << 20  # the prompt hook looks for tool-shown memories in the transcript's last 1 MB
MAX_PROMPT_CHARS = 4000  # a pasted log is cut to this before it becomes a query

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, first_seen REAL NOT NULL, last_seen REAL NOT NULL,
                                     stop_asked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS shown (session TEXT NOT NULL, key TEXT NOT NULL, via TEXT, at REAL NOT NULL,
                                  PRIMARY KEY (session, key));
CREATE TABLE IF NOT EXISTS runs (session TEXT NOT NULL, hook TEXT NOT NULL, event TEXT NOT NULL, at REAL NOT NULL,
                                 PRIMARY KEY (session, hook, event));
"""
SAME_EVENT = 10.0  # seconds: a second run of a hook for an event told with no time of its own
TOLD_EVENT = 3600.0  # seconds a run for an event the agent timed is remembered


# ---------------------------------------------------------------------- per-session state


class SessionState:
    """What each agent session has been shown and asked (``.vaultmem/hooks.db``). Where it cannot
    be written (a read-only vault, a full disk) the hooks still answer: what it holds is read,
    and what a session is shown now is not kept (it may be shown again)."""

    def __init__(self, root: Path, now: float | None = None):
        folder = root / STATE_DIR
        self.now = time.time() if now is None else now
        self.writable = True
        try:
            self.db = self._open(folder)
        except (OSError, sqlite3.Error):
            self.writable = False
            self.db = self._read_only(folder / STATE_FILE)
        self._write(self._expire)

    @staticmethod
    def _open(folder: Path) -> sqlite3.Connection:
        private_dir(folder)
        db = sqlite3.connect(str(folder / STATE_FILE), isolation_level=None, timeout=10)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # no fsync at each commit (WAL keeps the file consistent; a power cut may lose the last
            # session marks, which only shows a memory again): 10-30 ms of every prompt on a slow disk
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
        except sqlite3.Error:
            db.close()
            raise
        return db

    @staticmethod
    def _read_only(path: Path) -> sqlite3.Connection:
        from ..index.manifest import read_only

        db = None
        try:
            db = read_only(path)
            db.execute("SELECT 1 FROM shown, sessions LIMIT 1").fetchall()
            return db
        except sqlite3.Error:  # none yet (or begun and cut short): an empty state, for this call only
            if db is not None:
                db.close()
            db = sqlite3.connect(":memory:", isolation_level=None)
            db.executescript(SCHEMA)
            return db

    def _write(self, change: Callable[..., Any], *args: Any, failed: Any = None) -> Any:
        """A change of the state, when it can be written: what it returns, else ``failed``. A
        failed one (the disk filled up) leaves the state as it was and the hook answering."""
        if not self.writable:
            return failed
        try:
            return change(*args)
        except sqlite3.OperationalError:
            self.writable = False
            return failed

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SessionState:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _expire(self) -> None:
        cutoff = self.now - KEEP_DAYS * 86400
        old = [r[0] for r in self.db.execute("SELECT id FROM sessions WHERE last_seen < ?", (cutoff,))]
        if old:
            self.db.executemany("DELETE FROM shown WHERE session = ?", [(s,) for s in old])
            self.db.executemany("DELETE FROM sessions WHERE id = ?", [(s,) for s in old])
        self.db.execute("DELETE FROM runs WHERE at < ?", (self.now - TOLD_EVENT,))

    def touch(self, session: str) -> None:
        self._write(self._touch, session)

    def _touch(self, session: str) -> None:
        self.db.execute("INSERT INTO sessions (id, first_seen, last_seen) VALUES (?, ?, ?) "
                        "ON CONFLICT(id) DO UPDATE SET last_seen = excluded.last_seen", (session, self.now, self.now))  # fmt: skip

    def shown(self, session: str) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM shown WHERE session = ?", (session,))}

    def mark_shown(self, session: str, keys: Iterable[str], via: str) -> None:
        self._write(self._mark_shown, session, list(keys), via)

    def _mark_shown(self, session: str, keys: list[str], via: str) -> None:
        rows = [(session, k, via, self.now) for k in keys]
        self.db.execute("BEGIN IMMEDIATE")  # one transaction: one write of the log, not one per statement
        try:
            self.touch(session)
            self.db.executemany("INSERT OR IGNORE INTO shown VALUES (?, ?, ?, ?)", rows)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def shown_list(self, session: str) -> list[tuple[str, str]]:
        """(key, via) of what the session was shown, in order."""
        return list(
            self.db.execute("SELECT key, via FROM shown WHERE session = ? ORDER BY at, rowid", (session,))
        )

    def stop_asked(self, session: str) -> bool:
        row = self.db.execute("SELECT stop_asked FROM sessions WHERE id = ?", (session,)).fetchone()
        return bool(row and row[0])

    def set_stop_asked(self, session: str) -> None:
        self.touch(session)
        self._write(self.db.execute, "UPDATE sessions SET stop_asked = 1 WHERE id = ?", (session,))

    def first_run(self, payload: dict[str, Any], hook: str, what: str = "", timed_only: bool = False) -> bool:
        """Whether this is the first run of ``hook`` for this event of this session. One event
        may run a hook twice: Copilot CLI also runs the hooks of ``.claude/settings.local.json``
        (``setup`` says so), with the same session id and event time in another spelling; the
        second run does nothing. The event: the time the agent gave it (and ``what``: the
        prompt), else the same ``what`` within ``SAME_EVENT`` seconds (``timed_only``: a hook that
        runs again for each turn, as Stop, counts only timed events)."""
        sid = session_id(payload)
        told = payload.get("event_at")
        if sid == "unknown-session" or (timed_only and not told):
            return True
        event = f"{told or ''}|{what}"
        window = TOLD_EVENT if told else SAME_EVENT
        # nothing kept (a read-only vault, a full disk): every run answers
        return bool(self._write(self._first, sid, hook, event, window, failed=True))

    def _first(self, sid: str, hook: str, event: str, window: float) -> bool:
        self.db.execute("BEGIN IMMEDIATE")  # two runs at once: one of them is first
        try:
            row = self.db.execute("SELECT at FROM runs WHERE session = ? AND hook = ? AND event = ?",
                                  (sid, hook, event)).fetchone()  # fmt: skip
            first = row is None or self.now - row[0] >= window
            if first:
                self.db.execute(
                    "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)", (sid, hook, event, self.now)
                )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return first

    def forget(self, session: str) -> None:
        self._write(self.db.execute, "DELETE FROM shown WHERE session = ?", (session,))
        self._write(self.db.execute, "DELETE FROM sessions WHERE id = ?", (session,))


# ---------------------------------------------------------------------- payloads and responses


def parse_payload(text: str, limit: int | None = None) -> dict[str, Any]:
    """The hook's JSON from stdin; BadInput (one line) when it is longer than ``limit``
    characters, nested too deeply for the parser, or not a JSON object."""
    if limit is not None and len(text) > limit:
        raise BadInput(f"the hook input is larger than {limit >> 20} MB")
    try:
        data = json.loads(text) if text.strip() else {}
    except RecursionError:
        raise BadInput("the hook input is JSON nested too deeply") from None
    except ValueError as e:
        raise BadInput(f"the hook input is not JSON ({e})") from None
    if not isinstance(data, dict):
        raise BadInput("the hook input is not a JSON object")
    return data


def session_id(payload: dict[str, Any]) -> str:
    sid = payload.get("session_id")
    return str(sid) if sid else "unknown-session"


def session_of(payload: dict[str, Any]) -> str:
    """The session's key in the state: the agent and its session id, so that two agents working
    on one project (or both sending no id) never share what they were shown or asked."""
    return f"{payload.get('agent') or 'claude'}:{session_id(payload)}"


def source_name(payload: dict[str, Any]) -> str:
    """The ``source`` written on a session's notes: the agent's rule (``Adapter.source``)."""
    from .adapters import session_source

    return session_source(str(payload.get("agent") or "claude"), session_id(payload))


def events_of(payload: dict[str, Any]) -> list[Event]:
    """The events of the payload's transcript, read in its agent's format."""
    from .transcript import read_events

    return read_events(payload.get("transcript_path"), fmt=payload.get("agent") or "claude")


def context_output(event: str, text: str) -> dict[str, Any]:
    """Claude Code's JSON for adding context (SessionStart, UserPromptSubmit)."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


# ---------------------------------------------------------------------- relevance floor


class Floor(
    namedtuple(
        "Floor",
        "rule z_bm25 z_vec cos_agree cos_alone cos_min",
        defaults=("agree", 1.0, 2.5, 0.325, 0.55, 0.40),
    )
):
    """Which recall hits are worth injecting into a prompt.

    ``rule="agree"`` (the default): BM25 and the vectors agree: the note matches a query term and
    its cosine with the prompt is at least ``cos_agree`` (or ``cos_alone`` without a term).
    ``rule="cosine"``: one constant floor on the cosine. ``rule="zagree"``: both standardised
    scores (standard deviations above the vault's average note for this query, the ``z`` recall
    fuses) reach ``z_bm25`` and ``z_vec`` (measured and dropped: see benchmarks/README.md).
    A named tuple, not a dataclass: ``dataclasses`` imports ``inspect`` (~5 ms of every prompt)."""

    __slots__ = ()
    rule: str
    z_bm25: float
    z_vec: float
    cos_agree: float
    cos_alone: float
    cos_min: float

    def keep(self, hit: dict[str, Any]) -> bool:
        e = hit.get("explain") or {}
        cos, bm25 = float(e.get("vector_raw", 0.0)), float(e.get("bm25_raw", 0.0))
        if self.rule == "zagree":
            zb, zv = zscores(e)
            return zb >= self.z_bm25 and zv >= self.z_vec
        if self.rule == "cosine":
            return cos >= self.cos_min
        return (bm25 > 0 and cos >= self.cos_agree) or cos >= self.cos_alone


def zscores(explain: dict[str, Any]) -> tuple[float, float]:
    """(BM25 z, vector z) of a hit from its recall parts (``weight * z / 6``, see fusion.py)."""
    from ..core.config import DEFAULTS  # only the zagree floor rule needs it: kept off the prompt path

    w = float(explain.get("bm25_weight", DEFAULTS["recall"]["bm25_weight"]))
    zb = float(explain.get("bm25", 0.0)) * 6 / w if w > 0 else 0.0
    zv = float(explain.get("vector", 0.0)) * 6 / (1 - w) if w < 1 else 0.0
    return zb, zv


DEFAULT_FLOOR = Floor()


def trivial(prompt: str) -> bool:
    """Small talk and acknowledgements ("thanks!", "ok, go ahead"): no recall at all (the list is
    ``summary.SMALL_TALK``: a session summary does not count them as requests either)."""
    from .summary import trivial as small_talk

    return small_talk(prompt)


def estimate_tokens(text: str) -> int:
    """Tokens ~= characters / 4, the rule of ``context.estimate_tokens`` (not imported from there:
    context pulls in networkx, too heavy for a hook that runs at every prompt)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def render_line(hit: dict[str, Any], trust: Trust | None = None) -> str:
    """One hit as one safe line: id, title, type and where it came from, snippet."""
    synced = trust.label(hit.get("path")) if trust else None
    origin = provenance(hit.get("type"), hit.get("status"), hit.get("source"), synced)
    from ..core.secrets import redact  # here: detect-secrets loads only for a text that may hold a secret

    title, snippet = (
        redact(str(hit.get(k) or ""))[0] for k in ("title", "snippet")
    )  # never a secret verbatim
    return (f"- [{one_line(str(hit['id']))}] **{one_line(title)}** ({one_line(hit.get('type') or 'note')}; "
            f"{origin}): {one_line(snippet)}")  # fmt: skip


PROMPT_HEADER = "Memories for this prompt (vaultmem; ids: recall, read_note, rate_memories)"
KEYWORD_HEADER = ("Memories matching this prompt's keywords (vaultmem, keyword search only while its service starts; "
                  "ids: recall, read_note, rate_memories)")  # fmt: skip
KEYWORD_K = (
    3  # hits shown when only BM25 answered: without the vectors' agreement, fewer and only term matches
)


def fit_lines(
    hits: list[dict[str, Any]], budget: int, header: str = PROMPT_HEADER, trust: Trust | None = None
) -> tuple[str | None, list[str]]:
    """The fenced block of hits (best first) that fits ``budget`` tokens, and the ids it holds.
    A line that does not fit is cut to the room left when at least 20 tokens remain; a memory
    from an agent or a capture that gives the agent orders is left out (``fence.held``)."""
    lines: list[str] = []
    ids: list[str] = []
    used = len(fence([], header)) + 1
    for hit in hits:
        if held(
            hit.get("type"),
            hit.get("status"),
            hit.get("source"),
            f"{hit['title']}\n{hit.get('snippet') or ''}",
            trust.label(hit.get("path")) if trust else None,
        ):
            continue
        line = render_line(hit, trust)
        room = budget * CHARS_PER_TOKEN - used - 1
        if len(line) > room:
            if room < 20 * CHARS_PER_TOKEN:
                break
            line = line[: room - 1] + "…"
        lines.append(line)
        ids.append(hit["id"])
        used += len(line) + 1
    if not ids:
        return None, []
    return fence(lines, header), ids


# ---------------------------------------------------------------------- the hooks

if TYPE_CHECKING:  # pragma: no cover
    Recall = Callable[[str, int], list[dict[str, Any]]]


def prompt_hook(root: Path, payload: dict[str, Any], recall: Recall, budget: int = DEFAULT_BUDGET,
                floor: Floor = DEFAULT_FLOOR, log: Callable[[list[str]], None] | None = None,
                degraded: Callable[[], str | None] = lambda: None) -> dict[str, Any] | None:  # fmt: skip
    """UserPromptSubmit: the few memories relevant to the prompt, not yet shown in this session
    (by the hooks, or by the agent's own ``wake``/``recall`` tool calls in the transcript).
    When ``degraded()`` says recall answered without the model (the service is starting), the
    floor cannot ask the vectors: the block holds at most KEYWORD_K term matches and says so."""
    if budget < 50:
        raise BadInput("--budget must be at least 50 tokens")
    from .events import is_reminder, strip_hook_context

    prompt = strip_hook_context(strip_private(str(payload.get("prompt") or "")))
    if trivial(prompt) or is_reminder(prompt):  # vaultmem's own Stop reminder, sent back: no query
        return None
    prompt = prompt[:MAX_PROMPT_CHARS]  # a private span and the agent's context block are no query
    with SessionState(root) as state:
        if not state.first_run(payload, "prompt", prompt_key(prompt)):
            return None  # the same prompt's other hook run answers it
        found = recall(prompt, RECALL_K)
        keywords_only = degraded() is not None
        if keywords_only:
            hits = [h for h in found if float((h.get("explain") or {}).get("bm25_raw", 0.0)) > 0][:KEYWORD_K]
        else:
            hits = [h for h in found if floor.keep(h)]
        if not hits:
            return None
        from .transcript import shown_in_transcript

        session = session_of(payload)
        seen = state.shown(session) | shown_in_transcript(payload.get("transcript_path"), TRANSCRIPT_TAIL,
                                                          payload.get("agent") or "claude")  # fmt: skip
        fresh = [h for h in hits if h["id"] not in seen]
        refresh_if_moved(root)  # a note pulled by hand since the last look is marked before it is shown
        text, ids = fit_lines(fresh, budget, KEYWORD_HEADER if keywords_only else PROMPT_HEADER, Trust(root))
        if text is None:
            state.touch(session)
            return None
        state.mark_shown(session, ids, "prompt")
    if log:
        log(ids)
    return context_output("UserPromptSubmit", text)


def prompt_key(prompt: str) -> str:
    import hashlib

    return hashlib.sha1(prompt.encode("utf-8", "replace")).hexdigest()[:16]


def start_hook(vault: Vault, payload: dict[str, Any], anchor: str | None = None, budget: int = 2000,
               shown: Callable[[Path, str], bool] | None = None) -> dict[str, Any] | None:  # fmt: skip
    """SessionStart: the wake block (anchor: given, else found from the project folder; ``shown``:
    the branch scope, see ``api.Session.shown``); the memories it shows are not injected again
    at a prompt of this session. A second run for the same start prints nothing."""
    with SessionState(vault.root) as state:
        if not state.first_run(payload, "start", str(payload.get("source") or "")):
            return None
    anchor = anchor or find_anchor(vault, payload.get("cwd"))
    result = vault.wake(anchor, None, "default", budget, shown=shown)
    session = session_of(payload)
    with SessionState(vault.root) as state:
        if payload.get("source") in ("clear", "compact"):
            state.forget(session)  # the context was emptied: what it held may be shown again
        state.mark_shown(session, result["ids"], "start")
    return context_output("SessionStart", result["text"])


STOP_REASON = (
    "Before you finish: this session did real work ({work}) and saved no memory since. Save what is "
    "worth keeping for the next session with the vaultmem `remember` tool, one memory per note: a "
    "decision (a choice and why), a gotcha (a trap), a bug_fix (symptom, cause, fix), a preference or a "
    "lesson; then `sleep` with a one-paragraph summary and next steps. If nothing is worth keeping, say so and stop. "
    + REMINDER_MARK
)


def stop_hook(root: Path, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Stop: once per session, when the transcript shows work not followed by a memory save, ask
    the agent to save (``decision: block``). Never when ``stop_hook_active`` (no loop)."""
    from .events import EDIT_TOOLS, unsaved_work

    if payload.get("stop_hook_active"):
        return None
    session = session_of(payload)
    with SessionState(root) as state:
        if state.stop_asked(session) or not state.first_run(payload, "stop", timed_only=True):
            return None
        events = events_of(payload)
        if not unsaved_work(events):
            state.touch(session)
            return None
        state.set_stop_asked(session)
    edits = sum(1 for e in events if e.kind == "tool" and e.tool in EDIT_TOOLS)
    runs = sum(1 for e in events if e.kind == "tool" and e.tool == "Bash")
    work = ", ".join(
        p for p in (f"{edits} file edit(s)" if edits else "", f"{runs} command(s)" if runs else "") if p
    )
    return {"decision": "block", "reason": STOP_REASON.format(work=work)}


def project_anchor(vault: Vault, anchor: str | None, cwd: str | None, source: str) -> str | None:
    """The anchor a session's notes link to: given, else the project note named like the project
    folder, else the one the session woke with (or the vault's only project), as checkpoints do."""
    from ..memory.sessions import session_anchor

    return anchor or find_anchor(vault, cwd) or session_anchor(vault, None, source)


def precompact_hook(vault: Vault, payload: dict[str, Any], anchor: str | None = None,
                    scope: dict[str, str] | None = None) -> dict[str, Any] | None:  # fmt: skip
    """PreCompact: a checkpoint line of the session so far in its handoff note (``scope``: the
    branch scope of a new handoff, see ``api.Session.write_scope``)."""
    from .summary import clip, summarise

    s = summarise(events_of(payload), payload.get("cwd"))
    if s.empty:
        return None
    parts = [f"before compaction ({payload.get('trigger') or 'auto'}): {len(s.requests)} request(s)"]
    if s.requests:
        parts.append(f"latest: {clip(s.requests[-1], 120)}")
    if s.files:
        parts.append("files: " + ", ".join(s.files[:8]) + (" …" if len(s.files) > 8 else ""))
    open_fail = [clip(f["command"], 80) for f in s.failures if not f["fixed"]]
    if open_fail:
        parts.append("still failing: " + "; ".join(open_fail[:3]))
    anchor = project_anchor(vault, anchor, payload.get("cwd"), source_name(payload))
    result = vault.checkpoint("; ".join(parts), source_name(payload), anchor, extra=scope)
    return {"checkpoint": result}


def end_hook(vault: Vault, payload: dict[str, Any], anchor: str | None = None,
             scope: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """SessionEnd: the session summary from the transcript, and each rule the user stated as a
    ``candidate`` preference or lesson (wake lists them for confirmation), unless the vault
    already states it. ``scope``: the branch scope of what it writes
    (``api.Session.write_scope``; a preference is the user's, never scoped)."""
    from .capture import propose_rule, write_summary
    from .summary import summarise

    out: dict[str, Any] = {"summary": None, "candidates": [], "known": []}
    session = session_of(payload)
    with SessionState(vault.root) as state:
        if not state.first_run(payload, "end"):
            return out  # the same end's other hook run writes it
        shown_keys = state.shown_list(session)
    s = summarise(events_of(payload), payload.get("cwd"))
    if s.empty:
        return out
    titles = {r.key: r.title for r in vault.records().values()}
    shown = [f"[{k}] {titles.get(k, '(no longer in the vault)')} (shown at {'start' if via == 'start' else 'a prompt'})"
             for k, via in shown_keys]  # fmt: skip
    source = source_name(payload)
    anchor = project_anchor(vault, anchor, payload.get("cwd") or s.cwd, source)
    out["summary"] = write_summary(vault, s, source, anchor, shown=shown, scope=scope)
    for type_, sentence, who in s.memories:
        result = propose_rule(vault, type_, sentence, source, scope, anchor=anchor, who=who)
        out["known" if result.get("duplicate_of") else "candidates"].append(result)
    return out


TASKS: dict[str, Callable[..., Any]] = {"hook_start": start_hook, "hook_end": end_hook,
                                        "hook_precompact": precompact_hook}  # fmt: skip
"""What the hooks' operations (``service.protocol``) run on an open vault, handed to the host that
runs them: the memory service (``cli.service.tasks``) or a hook's own process (``hook_io``)."""
