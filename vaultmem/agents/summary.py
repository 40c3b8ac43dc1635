"""What a session leaves behind, from its events (``events.Event``), with no LLM: the user's
requests, the files changed, the commands that failed and what fixed them, the memories saved or
recalled, and the sentences in which the user states a lasting rule ("always ...", "never ...",
"I prefer ...", "remember that ..."); and the markdown of its session summary note.
"""

from __future__ import annotations

import functools
import re
from types import SimpleNamespace

from .events import EDIT_TOOLS, SHELL_TOOLS, SHOWN_ID_RE, is_reminder, memory_action, short_tool

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's small-talk test)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .events import Event


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


SAID_CHARS = 1500  # of one request, in a chat's note (``render_summary(said=True)``)
SAID_MOST = 60  # requests kept whole in a chat's note (and answers' openings)
ANSWER_CHARS = 300  # of one answer, in a chat's note


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
    said: list[str]  # the user's requests whole (a chat's note keeps them: ``render_summary(said=True)``)
    answers: list[str]  # the opening of each answer (a chat's note keeps them too)

    def __init__(self) -> None:
        super().__init__(requests=[], files=[], failures=[], commands=0, saved=[], recalled=[], rules=[], outcome="",
                         start="", end="", cwd="", subagents=[], said=[], answers=[])  # fmt: skip

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
                s.said.append(clip(" ".join(ev.text.split()), SAID_CHARS))
            s.rules.extend(rule_sentences(ev.text, feedback=ev.tool == "feedback"))
        elif ev.kind == "text":
            s.outcome = clip(ev.text, 300)
            s.answers.append(clip(" ".join(ev.text.split()), ANSWER_CHARS))
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
                   titles: dict[str, str] | None = None, said: bool = False) -> str:  # fmt: skip
    """The markdown body of the session summary note (``shown``: lines naming the memories the
    hooks showed the session; ``titles``: id -> title of the vault's notes; ``said``: what the
    user said, every request whole, instead of each one's first line, and the opening of each
    answer: an imported chat's facts, numbers and names are in what was written, not in tools
    and files)."""
    out: list[str] = []

    def section(title: str, items: list[str], most: int = limit) -> None:
        if items:
            extra = [f"- … and {len(items) - most} more"] if len(items) > most else []
            out.extend(["", f"## {title}", *(f"- {i}" for i in items[:most]), *extra])

    if said:
        section("What the user said", s.said, SAID_MOST)
        section("Answers (their openings)", s.answers, SAID_MOST)
    else:
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
