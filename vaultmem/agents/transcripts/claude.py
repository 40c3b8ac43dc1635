"""Claude Code's session transcripts (``~/.claude/projects/<encoded-cwd>/<sessionId>.jsonl``).

A session's subagents are folded into it, from every layout Claude Code has used: sidechain
lines inside the session file (<= 2.0.23), ``agent-<id>.jsonl`` next to the sessions (2.0.24 to
2.1.1, matched by their ``sessionId``) and ``<sessionId>/subagents/agent-<id>.jsonl`` (>= 2.1.2).
Compaction agents (``agent-acompact-*``) are skipped. The folder name is never decoded (it cannot
be): where a session ran comes from the ``cwd`` of its lines.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from ...core import environment
from ...core.private import strip_private
from ..events import MAX_BYTES, MAX_EVENT_TEXT, Event, clip_output, iter_lines, load_line, tail

TYPE_CHECKING = (
    False  # the hooks read a live transcript with this module: history's dataclasses only when importing
)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .history import Transcript

AGENT = "claude-code"
LINE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation", "progress",
              "attachment", "custom-title", "result"}  # fmt: skip


def default_root() -> Path:
    return (environment.CLAUDE_CONFIG_DIR.get() or environment.home() / ".claude") / "projects"


def encode_cwd(path: str) -> str:
    """The folder name Claude Code gives a project: every character outside [A-Za-z0-9] is "-"."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def session_files(root: Path) -> Iterator[Path]:
    """The main session files under ``root``: a session file itself, one project folder, or the
    folder of project folders (subagent files are not sessions)."""
    if root.is_file():
        yield root
        return
    folders = [root] + sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    for folder in folders:
        for f in sorted(folder.glob("*.jsonl")):
            if not f.name.startswith("agent-") and f.is_file():
                yield f


def read_file(path: Path, main: bool = True) -> Transcript:
    """One transcript file, streamed; NotATranscript when no line has Claude Code's shape."""
    from .history import NotATranscript, Transcript

    t = Transcript(AGENT, path.stem, str(path))
    for raw in iter_lines(path):
        t.lines += 1
        obj = load_line(raw) if raw else None
        if raw is None or (obj is None and raw.strip()):
            t.bad += 1
            continue
        if obj is None:
            continue
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in LINE_TYPES:
            t.skipped[str(kind)[:40]] += 1
            continue
        t.known += 1
        _identity(t, obj, first=t.known == 1 or not t.cwd)
        t.events.extend(line_events(obj, main=main))
    if not t.known:
        raise NotATranscript(f"{path}: not a Claude Code transcript (no line of its JSONL shape)")
    return t


def _identity(t: Transcript, obj: dict, first: bool) -> None:
    """The session id (the lines' own ``sessionId``, else the file name), where it ran (the first
    ``cwd``) and its title (a ``summary`` or ``custom-title`` line)."""
    sid, cwd = obj.get("sessionId"), obj.get("cwd")
    if isinstance(sid, str) and sid and first and t.id == Path(t.path).stem:
        t.id = sid[:200]
    if isinstance(cwd, str) and cwd and not t.cwd:
        t.cwd = cwd
    if obj.get("type") in ("summary", "custom-title") and not t.title:
        title = obj.get("summary") or obj.get("customTitle") or obj.get("title")
        t.title = title[:200] if isinstance(title, str) else ""


def subagent_files(session: Path, sid: str) -> list[Path]:
    """The subagent transcripts of a session, in both file layouts."""
    found = sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl"))
    for f in sorted(session.parent.glob("agent-*.jsonl")):  # legacy: siblings naming the session
        if _first_session_id(f) == sid:
            found.append(f)
    return [f for f in found if not f.name.startswith("agent-acompact-")]


def _first_session_id(path: Path) -> str | None:
    for raw in iter_lines(path):
        obj = load_line(raw) if raw else None
        if obj and isinstance(obj.get("sessionId"), str):
            return obj["sessionId"]
    return None


def read_session(path: Path) -> Transcript:
    """A session with its subagents folded in (their tool calls count as the session's work;
    their prompts, written by the parent model, are not the user's requests)."""
    t = read_file(path)
    for f in subagent_files(path, t.id):
        try:
            sub = read_file(f, main=False)
        except (OSError, ValueError):  # NotATranscript is a ValueError
            continue
        _fold(t, [e for e in sub.events if e.kind != "text"])  # its report is the parent's tool result
        t.lines, t.bad = t.lines + sub.lines, t.bad + sub.bad
        t.subagents.append(_subagent_label(f))
    return t


def _fold(t: Transcript, events: list) -> None:
    """Insert a subagent's events where they happened in the session (by time), else at the end."""
    first = next((e.ts for e in events if e.ts), "")
    at = next((i for i, e in enumerate(t.events) if first and e.ts and e.ts > first), len(t.events))
    t.events[at:at] = events


def _subagent_label(path: Path) -> str:
    """``Explore: Find float money handling`` from the sidecar ``.meta.json``, else the agent id."""
    name = path.name.removesuffix(".jsonl")
    try:
        meta = json.loads(path.with_name(name + ".meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return name
    if not isinstance(meta, dict):
        return name
    kind, desc = meta.get("agentType"), meta.get("description")
    return ": ".join(str(x)[:120] for x in (kind, desc) if isinstance(x, str) and x) or name


# ---------------------------------------------------------------------- lines (the hooks and the importer)


def read_tail(path: str | os.PathLike | None, max_bytes: int = MAX_BYTES) -> list[Event]:
    """The events of a live transcript's last ``max_bytes`` (the hooks)."""
    return [e for raw in tail(path, max_bytes).splitlines() for e in _parse(raw)]


REJECTED = "The user doesn't want to proceed with this tool use."

FEEDBACK_RE = re.compile(r"the user said:\s*\n(?P<said>.+)", re.S)


def _parse(raw: bytes) -> list[Event]:
    """The events of one transcript line; [] for a line that is not a known JSON shape."""
    obj = load_line(raw)
    return list(line_events(obj)) if obj is not None else []


def line_events(obj: dict[str, Any], main: bool = True) -> Iterator[Event]:
    """The events of one parsed Claude Code line (``main``: the line is in a main session
    file, where a sidechain user line is a subagent's prompt written by the model)."""
    ts, cwd = obj.get("timestamp"), obj.get("cwd")
    ts, cwd = (ts if isinstance(ts, str) else ""), (cwd if isinstance(cwd, str) else "")
    for ev in _events_of(obj, main):
        ev.ts, ev.cwd = ts, cwd
        yield ev


def _events_of(obj: dict[str, Any], main: bool) -> Iterator[Event]:
    kind = obj.get("type")
    if kind == "attachment":  # a message the user typed while the agent was busy
        att = obj.get("attachment")
        if isinstance(att, dict) and att.get("type") == "queued_command":
            text = _result_text(att.get("prompt")).strip()
            if text and not _is_wrapper(text):
                yield Event("prompt", text[:MAX_EVENT_TEXT])
        return
    msg = obj.get("message")
    if (
        kind not in ("user", "assistant")
        or not isinstance(msg, dict)
        or obj.get("isMeta")
        or obj.get("isCompactSummary")
    ):
        return
    if kind == "user" and obj.get("isSidechain") and (main or obj.get("parentUuid") is None):
        kind = "subagent-prompt"  # the parent model's words, not the user's
    content = msg.get("content")
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        return
    for b in blocks:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text" and isinstance(b.get("text"), str):
            text = strip_private(b["text"]).strip()
            if kind == "user" and text and not _is_wrapper(text):
                yield Event("prompt", text[:MAX_EVENT_TEXT])
            elif kind == "assistant" and text:
                yield Event("text", text[:MAX_EVENT_TEXT])
        elif t == "tool_use" and kind == "assistant" and isinstance(b.get("name"), str):
            inp = b.get("input") if isinstance(b.get("input"), dict) else {}
            yield Event("tool", tool=b["name"], input=inp, id=str(b.get("id") or ""))
        elif t == "tool_result" and kind in ("user", "subagent-prompt"):
            text = strip_private(_result_text(b.get("content")))
            error = b.get("is_error") is True
            yield Event("result", clip_output(text), id=str(b.get("tool_use_id") or ""), error=error)
            said = FEEDBACK_RE.search(text) if error and text.startswith(REJECTED) else None
            if said and said.group("said").strip():  # the user's correction of a rejected tool call
                yield Event("prompt", said.group("said").strip()[:MAX_EVENT_TEXT], tool="feedback")


def _is_wrapper(text: str) -> bool:
    """Text Claude Code adds on the user's side (slash-command echoes, reminders, hook output)."""
    return (
        text.startswith("<")
        and re.match(r"<[a-z][\w-]*>", text) is not None
        or text.startswith("[Request interrupted")
    )


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)
        )
    return ""
