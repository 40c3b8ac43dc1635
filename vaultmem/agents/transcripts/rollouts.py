"""Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``, ``archived_sessions/``):
the one reader, read whole for ``import --from codex`` (``read_rollout``) and from a live
rollout's last 32 MB for the hooks (``read_tail``, ``line_events``; the hooks pass
``transcript_path``). Not a documented contract: read from Codex's protocol dumps and
third-party parsers (docs/agents.md).

Each line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta``,
``response_item``, ``event_msg``, ``turn_context``, ``compacted`` (newer builds add more: they
are skipped and counted). The oldest format (CLI 0.1.x) has a bare meta object on line 1 and bare
response items after it, with ``record_type`` markers. The transcript is built from the response
items (always written); ``event_msg.user_message`` and the paginated ``item_completed`` events
fill in when a rollout has no user messages among them. A command failed when its output says so
(``metadata.exit_code``, ``Exit code: N``, ``Process exited with code N``, ``exec_command_end``,
an MCP ``isError``); when it does not say, its result is left unknown (neither failed nor fixed).
Compressed rollouts (``.jsonl.zst``, after 7 idle days) are read when the ``zstandard`` module is
installed (``pip install 'vaultmem-md[codex]'``); a plain file wins over its compressed twin.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ...core import environment
from ..events import MAX_BYTES, MAX_EVENT_TEXT, Event, clip_output, load_line, stream_lines, tail
from .common import memory_tool, texts

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from .history import Transcript

AGENT = "codex"
ENVELOPE = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
ITEM_TYPES = {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
              "custom_tool_call_output", "local_shell_call", "web_search_call"}  # fmt: skip
BOILERPLATE = ("# AGENTS.md instructions for", "<user_instructions>", "<environment_context>", "<skill>",
               "<codex_internal_context", "<permissions instructions>", "<hook_prompt")  # fmt: skip
REQUEST_MARK = "## My request for Codex:"
PATCH_FILE_RE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
EXIT_RE = re.compile(r"^Exit code: (-?\d+)|Process exited with code (-?\d+)", re.M)


def default_root() -> Path:
    return environment.CODEX_HOME.get() or environment.home() / ".codex"


def zstd_available() -> bool:
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


def rollout_files(root: Path) -> tuple[list[Path], list[Path]]:
    """(rollouts to read, compressed rollouts skipped because ``zstandard`` is missing) under
    ``root`` (a rollout file, a sessions folder or ``$CODEX_HOME``); a plain file wins over its
    ``.zst`` twin."""
    if root.is_file():
        files = [root]
    else:
        files = sorted(
            p
            for p in root.rglob("rollout-*.jsonl*")
            if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zst"))
        )
    plain = {str(p) for p in files if p.name.endswith(".jsonl")}
    files = [p for p in files if not (p.name.endswith(".zst") and str(p)[:-4] in plain)]
    if zstd_available():
        return files, []
    return [p for p in files if not p.name.endswith(".zst")], [p for p in files if p.name.endswith(".zst")]


def _open(path: Path) -> Any:
    f = open(path, "rb")
    if not path.name.endswith(".zst"):
        return f
    import zstandard

    return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(f, closefd=True))


def read_tail(path: str | os.PathLike | None, max_bytes: int = MAX_BYTES) -> list[Event]:
    """The events of a live rollout's last ``max_bytes`` (the hooks), by ``read_rollout``'s rules."""
    t, state = _sink(), _State()
    for raw in tail(path, max_bytes).splitlines():
        t.lines += 1
        obj = load_line(raw)
        if obj is not None:
            _line(t, state, obj)
    return state.finish()


def line_events(obj: dict[str, Any]) -> list[Event]:
    """The events of one rollout line on its own (the prompt hook parses only some lines)."""
    t, state = _sink(), _State()
    t.lines = 2  # not a file's first line
    _line(t, state, obj)
    return state.events + state.typed


def _sink() -> Any:
    """What ``_line`` records about the thread, when no ``Transcript`` is being built."""
    return SimpleNamespace(id="", cwd="", parent="", lines=0, known=0, bad=0, skipped=Counter())


def read_rollout(path: str | os.PathLike) -> Transcript:
    """One rollout as a ``Transcript`` (events in the shape of Claude Code's: prompts, assistant
    text, ``Bash``/``Edit`` tool calls and their results); NotATranscript when no line is a rollout's."""
    from .history import NotATranscript, Transcript

    path = Path(path)
    t = Transcript(AGENT, path.name.split(".")[0], str(path))
    state = _State()
    with _open(path) as f:
        for raw in stream_lines(f):
            t.lines += 1
            obj = load_line(raw) if raw else None
            if raw is None or (obj is None and raw.strip()):
                t.bad += 1
            elif obj is not None:
                _line(t, state, obj)
    if not t.known:
        raise NotATranscript(f"{path}: not a Codex rollout (no line of its JSONL shape)")
    t.events = state.finish()
    return t


class _State:
    """Events as they are read, with the user's turns kept apart by where they came from."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.typed: list[Event] = []  # event_msg.user_message / item_completed(UserMessage)
        self.results: dict[str, Event] = {}
        self.shell: set[str] = (
            set()
        )  # calls that ran a command: their result counts only when it says how it ended
        self.meta_seen = False

    def finish(self) -> list[Event]:
        if not any(e.kind == "prompt" for e in self.events):
            return sorted(self.events + self.typed, key=lambda e: e.ts)
        return self.events


def _line(t: Transcript, st: _State, obj: dict[str, Any]) -> None:
    kind, payload, ts = obj.get("type"), obj.get("payload"), obj.get("timestamp")
    ts = ts if isinstance(ts, str) else ""
    if isinstance(kind, str) and isinstance(payload, dict):
        if kind not in ENVELOPE:
            t.skipped[kind[:40]] += 1
            return
        t.known += 1
        if kind == "session_meta":
            _meta(t, st, payload, ts)
        elif kind == "turn_context" and isinstance(payload.get("cwd"), str) and not t.cwd:
            t.cwd = payload["cwd"]
        elif kind == "response_item":
            _item(t, st, payload, ts)
        elif kind == "event_msg":
            _event(st, payload, ts)
    elif "record_type" in obj:
        t.known += 1
    elif obj.get("type") in ITEM_TYPES:  # the oldest format: bare response items
        t.known += 1
        _item(t, st, obj, ts)
    elif t.lines == 1 and "id" in obj and "timestamp" in obj:  # ... after a bare meta line
        t.known += 1
        _meta(t, st, obj, "")


def _meta(t: Transcript, st: _State, meta: dict[str, Any], ts: str) -> None:
    """The first ``session_meta`` is the thread's identity (a fork writes its own further down)."""
    if st.meta_seen:
        return
    st.meta_seen = True
    if isinstance(meta.get("id"), str) and meta["id"]:
        t.id = meta["id"][:200]
    if isinstance(meta.get("cwd"), str):
        t.cwd = meta["cwd"]
    parent = meta.get("parent_thread_id") or meta.get("forked_from_id")
    t.parent = parent if isinstance(parent, str) else ""
    when = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else ts
    if when:  # a session's start, even before its first message
        st.events.append(Event("meta", ts=when, cwd=t.cwd))


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))


def user_text(text: str) -> str:
    """What the user typed in a ``user`` message: "" for Codex's injected context."""
    text = text.strip()
    if REQUEST_MARK in text:
        return text.split(REQUEST_MARK, 1)[1].strip()
    return "" if text.startswith(BOILERPLATE) else text


def _item(t: Transcript, st: _State, item: dict[str, Any], ts: str) -> None:
    kind = item.get("type")
    if kind == "message":
        role, text = item.get("role"), _texts(item.get("content"))
        if role == "user" and user_text(text):
            st.events.append(Event("prompt", user_text(text)[:MAX_EVENT_TEXT], ts=ts))
        elif role == "assistant" and text.strip():
            st.events.append(Event("text", text.strip()[:MAX_EVENT_TEXT], ts=ts))
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        for ev in _calls(item, ts):
            if ev.tool == "Bash":
                st.shell.add(ev.id)
            st.events.append(ev)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        _output(st, str(item.get("call_id") or ""), item.get("output"), ts)


def _calls(item: dict[str, Any], ts: str) -> Iterator[Event]:
    """A tool call as ``Bash`` (a command) or ``Edit`` events (one per file a patch touches)."""
    call = str(item.get("call_id") or item.get("id") or "")
    name = str(item.get("name") or "")
    args: Any = item.get("arguments") if item.get("type") == "function_call" else item.get("input")
    if isinstance(args, str) and item.get("type") == "function_call":
        try:
            args = json.loads(args)
        except ValueError:
            args = {}
    if item.get("type") == "local_shell_call":
        action = item.get("action")
        args, name = (action if isinstance(action, dict) else {}), "shell"
    patch = (
        args
        if isinstance(args, str)
        else (args.get("input") or args.get("patch"))
        if isinstance(args, dict)
        else None
    )
    if name == "apply_patch" and isinstance(patch, str):
        for f in dict.fromkeys(PATCH_FILE_RE.findall(patch)):
            yield Event("tool", tool="Edit", input={"file_path": f.strip()}, id=call, ts=ts)
        return
    command = _command(args) if isinstance(args, dict) else ""
    if command:
        yield Event("tool", tool="Bash", input={"command": command}, id=call, ts=ts)
    elif name:
        tool = memory_tool(name) or name[:100]  # vaultmem's own tools, as the summary counts them
        yield Event("tool", tool=tool, input=args if isinstance(args, dict) else {}, id=call, ts=ts)


def _command(args: dict[str, Any]) -> str:
    """The command line of a ``shell``/``exec_command`` call (``bash -lc X`` -> ``X``)."""
    cmd = args.get("command", args.get("cmd"))
    if isinstance(cmd, list) and all(isinstance(c, str) for c in cmd):
        if len(cmd) == 3 and cmd[0].endswith(("bash", "sh", "zsh")) and cmd[1] in ("-lc", "-c"):
            return cmd[2]
        return shlex.join(cmd)
    return cmd if isinstance(cmd, str) else ""


def failed(output: Any) -> bool | None:
    """Whether a tool's output says it failed; None when it does not say."""
    text = output if isinstance(output, str) else ""
    data: Any = None
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
    if isinstance(output, dict):
        data = output
    if isinstance(data, dict):
        meta = data.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
            return meta["exit_code"] != 0
        if isinstance(data.get("isError"), bool):
            return data["isError"]
        if isinstance(data.get("success"), bool):
            return not data["success"]
    m = EXIT_RE.search(text)
    if m:
        return int(m.group(1) or m.group(2)) != 0
    return True if text.startswith("err: ") else None


def _output_text(output: Any) -> str:
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            data = json.loads(output)
        except ValueError:
            return output
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            return data["output"]
        if isinstance(data, dict):
            return texts(data) or output  # an MCP result: the text of its content blocks
    return (
        output
        if isinstance(output, str)
        else _texts(output.get("content"))
        if isinstance(output, dict)
        else ""
    )


def _output(st: _State, call: str, output: Any, ts: str) -> None:
    error = failed(output)
    if not call or (error is None and call in st.shell):  # a command that does not say how it ended
        return
    text = _output_text(output)
    text = clip_output(text)
    ev = Event("result", text, id=call, error=bool(error), ts=ts)
    st.results[call] = ev
    st.events.append(ev)


def _event(st: _State, p: dict[str, Any], ts: str) -> None:
    kind = p.get("type")
    if kind == "user_message" and isinstance(p.get("message"), str) and user_text(p["message"]):
        st.typed.append(Event("prompt", user_text(p["message"])[:MAX_EVENT_TEXT], ts=ts))
    elif kind == "exec_command_end" and isinstance(p.get("exit_code"), int):
        call = str(p.get("call_id") or "")
        if call and call not in st.results:
            _output(st, call, f"Exit code: {p['exit_code']}\n{p.get('aggregated_output') or ''}", ts)
    elif kind == "item_completed" and isinstance(p.get("item"), dict):
        _paginated(st, p["item"], ts)


def _paginated(st: _State, item: dict[str, Any], ts: str) -> None:
    """``item_completed`` items of the paginated history mode (PascalCase types)."""
    kind = item.get("type")
    if kind == "UserMessage":
        text = user_text(_texts(item.get("content")))
        if text:
            st.typed.append(Event("prompt", text[:MAX_EVENT_TEXT], ts=ts))
    elif kind == "CommandExecution":
        call = str(item.get("id") or f"cmd{len(st.events)}")
        command = _command(item)
        if command:
            st.typed.append(Event("tool", tool="Bash", input={"command": command}, id=call, ts=ts))
            status, code = item.get("status"), item.get("exitCode")
            if status in ("completed", "failed") or isinstance(code, int):
                error = status == "failed" or (isinstance(code, int) and code != 0)
                st.typed.append(Event("result", str(item.get("aggregatedOutput") or "")[:MAX_EVENT_TEXT], id=call,
                                      error=error, ts=ts))  # fmt: skip
