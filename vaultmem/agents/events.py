"""What every agent's session log is read into: ``Event`` (Claude Code's tool names: a shell call
is ``Bash`` with ``input.command``, a file change ``Edit``/``Write`` with ``input.file_path``, a
vaultmem MCP tool ``mcp__vaultmem__<tool>``), the reading rules every reader shares (a regular
file only, its last 32 MB at most, a line too long or not a JSON object skipped), the text agents
add around the user's words (a leading ``<hook_context>`` block, vaultmem's own Stop reminder),
and what events mean for memory (a save, a recall, the ids a recall showed, unsaved work).
Light: the prompt hook imports it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from types import SimpleNamespace

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from typing import Any

MAX_BYTES = 32 << 20  # a transcript larger than this is read from its last 32 MB

MAX_LINE = 4 << 20

MAX_EVENT_TEXT = 8000  # a tool's output is kept to its first and last 4,000 characters

EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}

SHELL_TOOLS = {"Bash"}

SAVE_TOOLS = {"remember", "write_note", "sleep", "checkpoint"}

RECALL_TOOLS = {"recall", "wake", "read_note"}

VAULTMEM_CLI = re.compile(r"(?:^|[\s;&|(])vaultmem\s+(remember|sleep|checkpoint|recall|wake)\b")

HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.S)  # Gemini escapes < > inside

REMINDER_MARK = (
    "[vaultmem stop reminder]"  # ends vaultmem's Stop reason: the agent may send it back as a prompt
)

OLD_REMINDER = re.compile(
    r"Before you finish: this session did real work \(.{0,80}?\) and saved no memory since\."
)


def strip_hook_context(text: str) -> str:
    """``text`` without the leading ``<hook_context>...</hook_context>`` blocks an agent put
    before the user's words (Gemini prepends the SessionStart context to a headless prompt)."""
    while m := HOOK_CONTEXT.match(text):
        text = text[m.end() :]
    return text


def is_reminder(text: str) -> bool:
    """vaultmem's own Stop reminder, sent back by the agent as a user message: never a request."""
    return REMINDER_MARK in text or OLD_REMINDER.search(text) is not None


class Event(SimpleNamespace):
    """One thing that happened in the session, in order: ``kind`` ("prompt", "text", "tool",
    "result"), ``ts`` (the line's ISO timestamp, "" when it has none) and ``cwd`` (the agent's
    working directory at that line, "" when unknown). A SimpleNamespace (repr and equality
    built in), not a dataclass: ``dataclasses`` imports ``inspect``, ~10 ms of every prompt hook."""

    kind: str
    text: str
    tool: str
    input: dict[str, Any]
    id: str
    error: bool
    ts: str
    cwd: str

    def __init__(self, kind: str, text: str = "", tool: str = "", input: dict[str, Any] | None = None, id: str = "",
                 error: bool = False, ts: str = "", cwd: str = ""):  # fmt: skip
        super().__init__(kind=kind, text=text, tool=tool, input={} if input is None else input, id=id, error=error,
                         ts=ts, cwd=cwd)  # fmt: skip


def tail(path: str | os.PathLike | None, max_bytes: int) -> bytes:
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


def load_line(raw: bytes) -> dict[str, Any] | None:
    """One JSONL line as a dict; None for a line that is too long, not JSON or not an object."""
    if len(raw) > MAX_LINE:
        return None
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def iter_lines(path: str | os.PathLike, max_line: int = MAX_LINE) -> Iterator[bytes | None]:
    """The lines of a file, streamed; a line longer than ``max_line`` is skipped without being
    held in memory (yielded as None, so the caller can count it)."""
    with open(path, "rb") as f:
        yield from stream_lines(f, max_line)


def stream_lines(f: Any, max_line: int = MAX_LINE) -> Iterator[bytes | None]:
    """``iter_lines`` of an open binary stream (anything with ``readline(limit)``)."""
    while True:
        line = f.readline(max_line + 1)
        if not line:
            return
        if len(line) > max_line and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # drain the rest of the long line
                line = f.readline(1 << 20)
            yield None
            continue
        yield line.rstrip(b"\r\n")


def clip_output(text: str) -> str:
    half = MAX_EVENT_TEXT // 2
    return text if len(text) <= MAX_EVENT_TEXT else text[:half] + "\n…\n" + text[-half:]


def short_tool(name: str) -> str:
    """``mcp__vaultmem__remember`` -> ``remember``; other names unchanged."""
    return name.split("__")[-1] if name.startswith("mcp__") else name


def is_vaultmem_tool(name: str) -> bool:
    return name.startswith("mcp__") and "vaultmem" in name.split("__")[1] if name.count("__") >= 2 else False


def memory_action(ev: Event) -> str | None:
    """ "save" or "recall" when a tool call writes to or reads from the memory vault."""
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
    asked = {
        e.id for e in events if e.kind == "tool" and is_vaultmem_tool(e.tool) and memory_action(e) == "recall"
    }
    out: set[str] = set()
    for e in events:
        if e.kind == "result" and e.id in asked and not e.error:
            out.update(a or b for a, b in SHOWN_ID_RE.findall(e.text))
    return out


def is_work(ev: Event) -> bool:
    """A file edit or a shell command that is not itself a memory call."""
    return ev.kind == "tool" and (
        ev.tool in EDIT_TOOLS or (ev.tool in SHELL_TOOLS and memory_action(ev) is None)
    )


def unsaved_work(events: list[Event]) -> bool:
    """Whether the session did real work after its last memory save (or never saved)."""
    last_save = max((i for i, e in enumerate(events) if memory_action(e) == "save"), default=-1)
    return any(is_work(e) for e in events[last_save + 1 :])
