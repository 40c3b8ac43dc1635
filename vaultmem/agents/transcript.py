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

import functools
import json
import os
import re
import stat
from pathlib import Path
from types import SimpleNamespace

from ..core.private import strip_private

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from typing import Any

MAX_BYTES = 32 << 20  # a transcript larger than this is read from its last 32 MB
MAX_LINE = 4 << 20
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
SHELL_TOOLS = {"Bash"}
SAVE_TOOLS = {"remember", "write_note", "sleep", "checkpoint"}
RECALL_TOOLS = {"recall", "wake", "read_note"}
VAULTMEM_CLI = re.compile(r"(?:^|[\s;&|(])vaultmem\s+(remember|sleep|checkpoint|recall|wake)\b")
HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.S)  # Gemini escapes < > inside
REMINDER_MARK = "[vaultmem stop reminder]"  # ends vaultmem's Stop reason: the agent may send it back as a prompt
OLD_REMINDER = re.compile(r"Before you finish: this session did real work \([^)]*\) and saved no memory since\.")


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


def read_events(
    path: str | os.PathLike | None, max_bytes: int = MAX_BYTES, fmt: str = "claude"
) -> list[Event]:
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


def _parse(raw: bytes) -> list[Event]:
    """The events of one transcript line; [] for a line that is not a known JSON shape."""
    obj = load_line(raw)
    return list(line_events(obj)) if obj is not None else []


REJECTED = "The user doesn't want to proceed with this tool use."
FEEDBACK_RE = re.compile(r"the user said:\s*\n(?P<said>.+)", re.S)
MAX_EVENT_TEXT = 8000  # a tool's output is kept to its first and last 4,000 characters


def _clip_output(text: str) -> str:
    half = MAX_EVENT_TEXT // 2
    return text if len(text) <= MAX_EVENT_TEXT else text[:half] + "\n…\n" + text[-half:]


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
            yield Event("result", _clip_output(text), id=str(b.get("tool_use_id") or ""), error=error)
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


# ---------------------------------------------------------------------- what the session did


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
    results = [
        e for raw in lines if b"tool_result" in raw and any(a in raw for a in asked) for e in _parse(raw)
    ]
    return shown_by_tools(uses + results)


def is_work(ev: Event) -> bool:
    """A file edit or a shell command that is not itself a memory call."""
    return ev.kind == "tool" and (
        ev.tool in EDIT_TOOLS or (ev.tool in SHELL_TOOLS and memory_action(ev) is None)
    )


def unsaved_work(events: list[Event]) -> bool:
    """Whether the session did real work after its last memory save (or never saved)."""
    last_save = max((i for i, e in enumerate(events) if memory_action(e) == "save"), default=-1)
    return any(is_work(e) for e in events[last_save + 1 :])


# ---------------------------------------------------------------------- rule sentences


@functools.cache
def _rule_res() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(rule, feedback rule, lead-in) patterns, compiled on first use: the prompt hook imports this
    module at every prompt and never needs them (~1.5 ms to compile)."""
    rule = re.compile(
        r"^(?:(?:please|and|also|so|ok|okay|oh|btw|but|note|remember)[,:]?\s+)*"
        r"(?P<kind>always|never|don'?t ever|do not ever|from now on|in future|in the future|going forward"
        r"|i (?:always |really |strongly )?prefer|i'?d (?:rather|prefer)|i (?:like|want) (?:it|us|you) to"
        r"|remember that|keep in mind that|note that we|we always|we never|i always|i never)\b",
        re.I,
    )
    feedback = re.compile(r"^(?:please\s+)?(?:don'?t|do not|never|always|use|prefer|stop)\b", re.I)
    lead_in = re.compile(
        r"^(?:(?:please|and|also|so|ok|okay|oh|btw|but|just)[,:]?\s+)*"
        r"(?:(?:remember|keep in mind|note)(?: that)?[,:]?\s+|(?:from now on|in (?:the )?future|going forward)[,:]?\s+)?"
        r"(?:(?:i|we) (?:always |really |strongly |usually )?(?:want|prefer|like|need)(?: (?:it|us|you) to)?\s+"
        r"|i'?d (?:rather|prefer)(?: (?:it|us|you) to)?\s+|(?:i|we) always\s+)?",
        re.I,
    )
    return rule, feedback, lead_in


SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
SMALL_TALK = {
    "ok", "okay", "thanks", "thank", "you", "thx", "ty", "yes", "no", "yep", "nope", "sure", "great", "good", "nice",
    "cool", "perfect", "done", "continue", "go", "ahead", "please", "lgtm", "sounds", "right", "fine", "do", "it",
    "that", "this", "awesome", "proceed", "next", "stop", "wait", "hi", "hello", "hey", "the", "a", "and", "k",
    "much", "so", "very", "works", "now", "looks",
}  # fmt: skip
WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


def trivial(prompt: str) -> bool:
    """Small talk and acknowledgements ("thanks!", "ok, go ahead"): not a request, and no recall
    at the prompt hook."""
    return all(w.lower() in SMALL_TALK for w in WORD_RE.findall(prompt))


def rule_sentences(text: str, feedback: bool = False) -> list[tuple[str, str]]:
    """(type, sentence) for each sentence stating a lasting rule or preference.

    "remember that ..." / "keep in mind that ..." -> lesson; always/never/prefer/... -> preference.
    Questions are not rules. ``feedback``: the text is the user's correction of a rejected tool
    call, where an imperative ("don't write migrations by hand") is a rule too."""
    rule_re, feedback_re, _ = _rule_res()
    out = []
    for raw in SENTENCE_RE.split(text):
        s = " ".join(raw.strip().lstrip("-*> ").split())
        if not (12 <= len(s) <= 300) or s.endswith("?"):
            continue
        m = rule_re.match(s)
        if m:
            kind = m.group("kind").lower()
            out.append(
                ("lesson" if kind.startswith(("remember", "keep in mind", "note that")) else "preference", s)
            )
        elif feedback and feedback_re.match(s):
            out.append(("preference", s))
    return out


def rule_title(sentence: str, width: int = 90) -> str:
    """A rule's title: the rule without its lead-in ("Also, remember that I always want integer
    cents for money, never floats." -> "Integer cents for money, never floats")."""
    text = " ".join(sentence.split()).rstrip(" .!;:")
    rest = _rule_res()[2].sub("", text, count=1).strip(" ,")
    if len(rest) < 8:  # the lead-in was most of it
        rest = text
    return clip(rest[:1].upper() + rest[1:], width)


def clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters at a sentence end or, failing that, a word
    boundary (with "…"); never in the middle of a word."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end >= width // 2:
        return cut[: end + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:-") + "…"


def title_words(text: str, n: int = 8) -> str:
    """The first clause of ``text`` as at most ``n`` words fit for a file name (no ``;``, quotes,
    slashes or other punctuation)."""
    clause = re.split(r"[.;:!?\n]|,\s", text, maxsplit=1)[0]
    words = [w for w in re.sub(r"[^\w\s'-]", " ", clause).split() if w.strip("'-")]
    return " ".join(words[:n])


def topic(requests: list[str], n: int = 8) -> str:
    """A session's topic for its title: the first words of its first request sentence that is
    not a stated rule ("Always use cents. Fix the refund" -> "Fix the refund")."""
    sentences = [x for r in requests for x in SENTENCE_RE.split(r) if x.strip()]
    plain = [x for x in sentences if not rule_sentences(x)] or sentences
    return next(
        (w for w in (title_words(x, n) for x in plain) if len(w.split()) >= 2),
        title_words(plain[0], n) if plain else "",
    )


# ---------------------------------------------------------------------- the summary


class Summary(SimpleNamespace):
    """What a session leaves behind, filled in by ``summarise`` (a SimpleNamespace, as ``Event``)."""

    requests: list[str]
    files: list[str]
    failures: list[dict[str, Any]]  # command, error, fixed_by, fixed
    commands: int
    saved: list[str]
    recalled: list[tuple[str, list[str]]]  # (what was asked, ids shown)
    rules: list[tuple[str, str]]
    outcome: str  # the agent's last words, first sentences
    start: str  # ISO timestamps of the first and last timed events
    end: str
    cwd: str  # the project folder: the one given, else the transcript's first
    subagents: list[str]  # subagents whose work is folded in

    def __init__(self) -> None:
        super().__init__(requests=[], files=[], failures=[], commands=0, saved=[], recalled=[], rules=[], outcome="",
                         start="", end="", cwd="", subagents=[])  # fmt: skip

    @property
    def empty(self) -> bool:
        return not (self.requests or self.files or self.commands or self.saved)

    @property
    def fixed(self) -> list[dict[str, Any]]:
        return [f for f in self.failures if f["fixed"]]


def _rel(path: str, roots: list[str]) -> str:
    """``path`` relative to the first project folder that holds it (else as given)."""
    for root in roots:
        root = root.rstrip("/")
        if root and path.startswith(root + "/"):
            return path[len(root) + 1 :]
    return path


def _first_line(text: str, width: int = 160) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return clip(line, width)


def _error_line(text: str) -> str:
    """The most telling line of a failed command's output."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pattern in (r"(FAILED|ERROR)\b|error(\[\w+\])?:", r"(?:E\s+)?\w*(Error|Exception)\b:"):
        for ln in lines:  # pytest's summary line, a compiler's "error:", then a traceback's last word
            if re.match(pattern, ln):
                return _first_line(re.sub(r"^E\s+", "", ln), 160)
    for ln in reversed(lines):
        if re.search(r"error|failed|exception|assert|not found|denied", ln, re.I) and not re.match(
            r"exit code \d+$", ln, re.I
        ):
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


def _roots(events: list[Event], cwd: str | None) -> list[str]:
    """The project folders paths are made relative to: the given one, then the transcript's own."""
    return list(dict.fromkeys(r for r in [cwd or "", *(e.cwd for e in events if e.cwd)] if r))


def summarise(events: list[Event], cwd: str | None = None) -> Summary:
    """What the session did, from its events (``cwd``: the project folder)."""
    s = Summary()
    roots = _roots(events, cwd)
    s.cwd = roots[0] if roots else ""
    results = {e.id: e for e in events if e.kind == "result" and e.id}
    open_failures: dict[str, dict[str, Any]] = {}
    edits_since: dict[str, list[str]] = {}
    times = [e.ts for e in events if e.ts]
    s.start, s.end = (min(times), max(times)) if times else ("", "")
    for ev in events:
        if ev.kind == "prompt":
            if is_reminder(ev.text):
                continue
            if not trivial(ev.text) and ev.tool != "feedback":
                s.requests.append(_first_line(ev.text, 200))
            s.rules.extend(rule_sentences(ev.text, feedback=ev.tool == "feedback"))
        elif ev.kind == "text":
            s.outcome = clip(ev.text, 300)
        if ev.kind != "tool":
            continue
        action = memory_action(ev)
        if action:
            if action == "save":
                s.saved.append(_memory_label(ev))
            else:
                res = results.get(ev.id)
                ids = [a or b for a, b in SHOWN_ID_RE.findall(res.text)] if res and not res.error else []
                s.recalled.append((_memory_label(ev), list(dict.fromkeys(ids))))
            continue
        if ev.tool in EDIT_TOOLS:
            path = ev.input.get("file_path") or ev.input.get("notebook_path")
            if isinstance(path, str) and path and not (results.get(ev.id) and results[ev.id].error):
                rel = _rel(path, roots)
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


def _failure_line(f: dict[str, Any]) -> str:
    line = f"`{f['command']}` failed" + (f": {f['error']}" if f["error"] else "")
    if not f["fixed"]:
        return line + "; not fixed in this session"
    if f["fixed_by"]:
        return line + "; passed after editing " + ", ".join(f"`{p}`" for p in f["fixed_by"])
    return line + "; passed on a later run"


def _fixed_line(f: dict[str, Any]) -> str:
    what = f["error"] or "its failure"
    how = (
        " by editing " + ", ".join(f"`{p}`" for p in f["fixed_by"])
        if f["fixed_by"]
        else " (passed on a later run)"
    )
    return f"{what} (`{f['command']}`){how}"


def recalled_lines(s: Summary, titles: dict[str, str] | None = None) -> list[str]:
    """One line per memory the session's own recall calls were shown: its id, its title when
    known, and what was asked; calls that showed nothing are not listed."""
    titles = titles or {}
    out: dict[str, str] = {}
    for asked, ids in s.recalled:
        for i in ids:
            name = f" {titles[i]}" if i in titles else ""
            out.setdefault(i, f"[{i}]{name} (recall: {asked})")
    return list(out.values())


def render_summary(s: Summary, shown: list[str] | None = None, limit: int = 12,
                   titles: dict[str, str] | None = None) -> str:  # fmt: skip
    """The markdown body of the session summary note (``shown``: lines naming the memories the
    hooks showed the session; ``titles``: id -> title of the vault's notes)."""
    out: list[str] = []

    def section(title: str, items: list[str]) -> None:
        if items:
            extra = [f"- … and {len(items) - limit} more"] if len(items) > limit else []
            out.extend(["", f"## {title}", *(f"- {i}" for i in items[:limit]), *extra])

    section("Requests", s.requests)
    section("Fixed", [_fixed_line(f) for f in s.fixed])
    section("Files changed", [f"`{f}`" for f in s.files])
    section("Commands that failed", [_failure_line(f) for f in s.failures])
    section("Memories saved", s.saved)
    section("Memories recalled", recalled_lines(s, titles) + list(shown or []))
    section("Rules stated by the user", [f"({t}) {r}" for t, r in s.rules])
    section("Subagents", s.subagents)
    if s.outcome:
        out.extend(["", "## Outcome", s.outcome])
    fixed = f", {len(s.fixed)} failure(s) fixed" if s.fixed else ""
    until = s.end[11:16] if s.end[:10] == s.start[:10] else s.end[:16].replace("T", " ")
    when = f" ({s.start[:16].replace('T', ' ')} to {until} UTC)" if s.start and s.end else ""
    head = (f"Session{when} of {len(s.requests)} request(s), {len(s.files)} file(s) changed, "
            f"{s.commands} command(s) run{fixed}.")  # fmt: skip
    return head + "\n" + "\n".join(out) + "\n"
