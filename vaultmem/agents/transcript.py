"""Reading an agent's session transcript (Claude Code's JSONL) and summarising it, with no LLM.

Claude Code writes one JSON object per line: ``{"type": "user"|"assistant"|..., "message":
{"role", "content"}, "timestamp", ...}``. ``content`` is a string or a list of blocks: ``text``,
``tool_use`` (``id``, ``name``, ``input``) and, in user lines, ``tool_result`` (``tool_use_id``,
``content``, ``is_error``). The reader is defensive: a line that is not JSON, has an unknown
shape or is too long is skipped, never fatal; the file is read up to a size cap.

``summarise`` turns the events into what a session leaves behind: the user's requests, the files
changed, the commands that failed and what fixed them, the memories saved or recalled, and the
sentences in which the user states a lasting rule ("always ...", "never ...", "I prefer ...",
"remember that ...").
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..core.private import strip_private

MAX_BYTES = 32 << 20  # a transcript larger than this is read from its last 32 MB
MAX_LINE = 4 << 20
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
SHELL_TOOLS = {"Bash"}
SAVE_TOOLS = {"remember", "write_note", "sleep", "checkpoint"}
RECALL_TOOLS = {"recall", "wake", "read_note"}
VAULTMEM_CLI = re.compile(r"(?:^|[\s;&|(])vaultmem\s+(remember|sleep|checkpoint|recall|wake)\b")


@dataclass
class Event:
    """One thing that happened in the session, in order."""

    kind: str  # "prompt", "text", "tool", "result"
    text: str = ""
    tool: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    error: bool = False


def read_events(path: str | os.PathLike | None, max_bytes: int = MAX_BYTES, fmt: str = "claude") -> list[Event]:
    """The events of a transcript file (its last ``max_bytes``); [] when there is none. Bad
    lines are skipped. ``fmt``: the agent whose format it is (``transcripts.FORMATS``)."""
    if fmt != "claude":
        from .transcripts import read

        return read(path, fmt, max_bytes)
    return [e for raw in _tail(path, max_bytes).splitlines() for e in _parse(raw)]


def _tail(path: str | os.PathLike | None, max_bytes: int) -> bytes:
    """The last ``max_bytes`` of a regular file, from a line start; b"" when it cannot be read
    or is not a regular file (a FIFO or a device named as the transcript must not hang a hook)."""
    if not path or not isinstance(path, (str, os.PathLike)):  # a payload's number or list is no path
        return b""
    try:
        fd = os.open(Path(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        with os.fdopen(fd, "rb", closefd=False) as f:
            if info.st_size > max_bytes:
                f.seek(info.st_size - max_bytes)
                f.readline()  # drop the partial first line
            return f.read(max_bytes)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _parse(raw: bytes) -> list[Event]:
    """The events of one transcript line; [] for a line that is not a known JSON shape."""
    if len(raw) > MAX_LINE:
        return []
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    return list(_line_events(obj)) if isinstance(obj, dict) else []


def _line_events(obj: dict[str, Any]) -> Iterator[Event]:
    kind = obj.get("type")
    msg = obj.get("message")
    if kind not in ("user", "assistant") or not isinstance(msg, dict) or obj.get("isMeta"):
        return
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
                yield Event("prompt", text)
            elif kind == "assistant" and text:
                yield Event("text", text)
        elif t == "tool_use" and kind == "assistant" and isinstance(b.get("name"), str):
            inp = b.get("input") if isinstance(b.get("input"), dict) else {}
            yield Event("tool", tool=b["name"], input=inp, id=str(b.get("id") or ""))
        elif t == "tool_result" and kind == "user":
            yield Event("result", strip_private(_result_text(b.get("content"))), id=str(b.get("tool_use_id") or ""),
                        error=b.get("is_error") is True)  # fmt: skip


def _is_wrapper(text: str) -> bool:
    """Text Claude Code adds on the user's side (slash-command echoes, reminders, hook output)."""
    return text.startswith("<") and re.match(r"<[a-z][\w-]*>", text) is not None or text.startswith("[Request interrupted")


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


# ---------------------------------------------------------------------- what the session did


def short_tool(name: str) -> str:
    """``mcp__vaultmem__remember`` -> ``remember``; other names unchanged."""
    return name.split("__")[-1] if name.startswith("mcp__") else name


def is_vaultmem_tool(name: str) -> bool:
    return name.startswith("mcp__") and "vaultmem" in name.split("__")[1] if name.count("__") >= 2 else False


def memory_action(ev: Event) -> str | None:
    """"save" or "recall" when a tool call writes to or reads from the memory vault."""
    if ev.kind != "tool":
        return None
    if is_vaultmem_tool(ev.tool):
        name = short_tool(ev.tool)
        return "save" if name in SAVE_TOOLS else "recall" if name in RECALL_TOOLS else None
    if ev.tool in SHELL_TOOLS:
        m = VAULTMEM_CLI.search(str(ev.input.get("command", "")))
        if m:
            return "recall" if m.group(1) in ("recall", "wake") else "save"
    return None


SHOWN_ID_RE = re.compile(r'^- \[([^\]\s]+)\]|"id":\s*"([^"]+)"', re.M)


def shown_by_tools(events: list[Event]) -> set[str]:
    """Memory ids the agent was shown by its own vaultmem tool calls (``wake``, ``recall``):
    the ``- [id]`` lines of a [MEMORY] block and the ``"id"`` fields of recall results."""
    asked = {e.id for e in events if e.kind == "tool" and is_vaultmem_tool(e.tool) and memory_action(e) == "recall"}
    out: set[str] = set()
    for e in events:
        if e.kind == "result" and e.id in asked and not e.error:
            out.update(a or b for a, b in SHOWN_ID_RE.findall(e.text))
    return out


def shown_in_transcript(path: str | os.PathLike | None, max_bytes: int, fmt: str = "claude") -> set[str]:
    """``shown_by_tools`` over the last ``max_bytes`` of a transcript, parsing only the lines
    that call a vaultmem tool and the lines holding those calls' results (a hook at every
    prompt cannot afford to parse the whole tail)."""
    if fmt != "claude":
        from .transcripts import shown

        return shown(path, fmt, max_bytes)
    lines = _tail(path, max_bytes).splitlines()
    uses = [e for raw in lines if b"mcp__" in raw and b"vaultmem" in raw for e in _parse(raw)]
    asked = {e.id.encode() for e in uses if e.kind == "tool" and e.id and memory_action(e) == "recall"}
    if not asked:
        return set()
    results = [e for raw in lines if b"tool_result" in raw and any(a in raw for a in asked) for e in _parse(raw)]
    return shown_by_tools(uses + results)


def is_work(ev: Event) -> bool:
    """A file edit or a shell command that is not itself a memory call."""
    return ev.kind == "tool" and (ev.tool in EDIT_TOOLS or (ev.tool in SHELL_TOOLS and memory_action(ev) is None))


def unsaved_work(events: list[Event]) -> bool:
    """Whether the session did real work after its last memory save (or never saved)."""
    last_save = max((i for i, e in enumerate(events) if memory_action(e) == "save"), default=-1)
    return any(is_work(e) for e in events[last_save + 1 :])


# ---------------------------------------------------------------------- rule sentences

RULE_RE = re.compile(
    r"^(?:(?:please|and|also|so|ok|okay|oh|btw|but|note)[,:]?\s+)*"
    r"(?P<kind>always|never|don'?t ever|do not ever|from now on|in future|in the future|going forward"
    r"|i (?:always |really |strongly )?prefer|i'?d (?:rather|prefer)|i (?:like|want) (?:it|us|you) to"
    r"|remember that|keep in mind that|note that we|we always|we never)\b",
    re.I,
)
SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")


def rule_sentences(text: str) -> list[tuple[str, str]]:
    """(type, sentence) for each sentence stating a lasting rule or preference.

    "remember that ..." / "keep in mind that ..." -> lesson; always/never/prefer/... -> preference.
    Questions are not rules."""
    out = []
    for raw in SENTENCE_RE.split(text):
        s = " ".join(raw.strip().lstrip("-*> ").split())
        if not (12 <= len(s) <= 300) or s.endswith("?"):
            continue
        m = RULE_RE.match(s)
        if m:
            kind = m.group("kind").lower()
            out.append(("lesson" if kind.startswith(("remember", "keep in mind", "note that")) else "preference", s))
    return out


# ---------------------------------------------------------------------- the summary


@dataclass
class Summary:
    requests: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)  # command, error, fixed_by, fixed
    commands: int = 0
    saved: list[str] = field(default_factory=list)
    recalled: list[str] = field(default_factory=list)
    rules: list[tuple[str, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.requests or self.files or self.commands or self.saved)


def _rel(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _first_line(text: str, width: int = 160) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _error_line(text: str) -> str:
    """The most telling line of a failed command's output."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:  # pytest's summary line, a compiler's "error:", a traceback's last word
        if re.match(r"(FAILED|ERROR)\b|\w*(Error|Exception)\b:|error(\[\w+\])?:", ln):
            return _first_line(ln, 160)
    for ln in reversed(lines):
        if re.search(r"error|failed|exception|assert|not found|denied|exit code", ln, re.I):
            return _first_line(ln, 160)
    return _first_line(lines[-1], 160) if lines else ""


def _command_key(cmd: str) -> str:
    """Commands that count as "the same" for failed -> fixed: first three words."""
    return " ".join(cmd.split()[:3])


def _memory_label(ev: Event) -> str:
    inp = ev.input
    for key in ("title", "query", "ref", "id", "summary", "text", "command"):
        if isinstance(inp.get(key), str) and inp[key].strip():
            return _first_line(inp[key], 100)
    return short_tool(ev.tool)


def summarise(events: list[Event], cwd: str | None = None) -> Summary:
    """What the session did, from its events."""
    s = Summary()
    results = {e.id: e for e in events if e.kind == "result" and e.id}
    open_failures: dict[str, dict[str, Any]] = {}
    edits_since: dict[str, list[str]] = {}
    for ev in events:
        if ev.kind == "prompt":
            s.requests.append(_first_line(ev.text, 200))
            s.rules.extend(rule_sentences(ev.text))
        if ev.kind != "tool":
            continue
        action = memory_action(ev)
        if action:
            (s.saved if action == "save" else s.recalled).append(_memory_label(ev))
            continue
        if ev.tool in EDIT_TOOLS:
            path = ev.input.get("file_path") or ev.input.get("notebook_path")
            if isinstance(path, str) and path:
                rel = _rel(path, cwd)
                if rel not in s.files:
                    s.files.append(rel)
                for edits in edits_since.values():
                    if rel not in edits:
                        edits.append(rel)
        elif ev.tool in SHELL_TOOLS and isinstance(ev.input.get("command"), str):
            cmd = " ".join(ev.input["command"].split())
            s.commands += 1
            res = results.get(ev.id)
            key = _command_key(cmd)
            if res is not None and res.error:
                if key not in open_failures:
                    failure = {"command": cmd, "error": _error_line(res.text), "fixed_by": [], "fixed": False}
                    open_failures[key] = failure
                    s.failures.append(failure)
                    edits_since[key] = failure["fixed_by"]
            elif res is not None and key in open_failures:
                open_failures.pop(key)["fixed"] = True
                edits_since.pop(key, None)
    s.rules = list(dict.fromkeys(s.rules))
    return s


def render_summary(s: Summary, shown: list[str] | None = None, limit: int = 12) -> str:
    """The markdown body of the session summary note (``shown``: lines naming the memories the
    hooks showed the session)."""
    out: list[str] = []

    def section(title: str, items: list[str]) -> None:
        if items:
            extra = [f"- … and {len(items) - limit} more"] if len(items) > limit else []
            out.extend(["", f"## {title}", *(f"- {i}" for i in items[:limit]), *extra])

    section("Requests", s.requests)
    section("Files changed", [f"`{f}`" for f in s.files])
    fails = []
    for f in s.failures:
        line = f"`{f['command']}` failed" + (f": {f['error']}" if f["error"] else "")
        if f["fixed"]:
            line += "; passed after editing " + ", ".join(f"`{p}`" for p in f["fixed_by"]) if f["fixed_by"] else "; passed on a later run"
        else:
            line += "; not fixed in this session"
        fails.append(line)
    section("Commands that failed", fails)
    section("Memories saved", s.saved)
    section("Memories recalled", s.recalled + list(shown or []))
    section("Rules stated by the user", [f"({t}) {r}" for t, r in s.rules])
    head = f"Session of {len(s.requests)} request(s), {len(s.files)} file(s) changed, {s.commands} command(s) run."
    return head + "\n" + "\n".join(out) + "\n"
