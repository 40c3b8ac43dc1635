"""What a session leaves behind, from its events (``events.Event``), with no LLM: the user's
requests, the files changed, the commands that failed and what fixed them, the memories saved or
recalled, and the sentences in which the user states a lasting rule ("always ...", "never ...",
"I prefer ...", "remember that ..."); and the markdown of its session summary note.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from ..core.titles import clause_clip, title_words
from .events import EDIT_TOOLS, SHELL_TOOLS, SHOWN_ID_RE, is_reminder, memory_action, short_tool

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's small-talk test)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .events import Event


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
    """(type, sentence) for each decision, rule or preference the user states (``statements.py``)."""
    from .statements import statements

    return statements(text, feedback)


def rule_title(sentence: str, width: int = 90) -> str:
    """A statement's title: its first line without its lead-in ("Also, remember that I always
    want integer cents for money, never floats." -> "Integer cents for money, never floats"; "We
    decided to deploy with OIDC" -> "Deploy with OIDC"), cut at a clause end when too long."""
    from .statements import strip_lead

    text = " ".join(sentence.split("\n", 1)[0].split()).rstrip(" .!;:")
    rest = strip_lead(text).strip(" ,")
    if len(rest) < 8:  # the lead-in was most of it
        rest = text
    first = rest.split(" ", 1)[0]
    if first.isalpha():  # "test_jpy_refund", "npm": a name, kept as written
        rest = rest[:1].upper() + rest[1:]
    return clause_clip(rest, width)


TURN_CHARS = 4000  # of one message in a chat's transcript (benchmarks/README.md, issue 37)
CODE_CHARS = 1000  # of one code block in it: longer code bought no recall (``import_recall.py --pad``)


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


def topic(requests: list[str], n: int = 12) -> str:
    """A session's topic for its title: the first clause of its first request sentence that
    states no rule or decision ("Always use cents. Fix the refund" -> "Fix the refund")."""
    from .statements import SENTENCE_RE

    sentences = [x for r in requests for x in SENTENCE_RE.split(r) if x.strip()]
    plain = [x for x in sentences if not rule_sentences(x)] or sentences
    return next(
        (w for w in (title_words(x, n) for x in plain) if len(w.split()) >= 2),
        title_words(plain[0], n) if plain else "",
    )


FAILING = re.compile(
    r"\b(?:fail\w*|broken|breaks?|error\w*|crash\w*|stuck|bug|exception|won'?t (?:start|build|run|install)"
    r"|doesn'?t (?:work|start|build|run)|not working|cannot|can'?t)\b",
    re.I,
)
READ_ONLY = re.compile(
    r"^(?:ls|cat|head|tail|less|grep|rg|find|pwd|echo|which|type|env|git (?:status|diff|log|show|branch)"
    r"|sed -n|wc|stat|file|ps|df|du)\b"
)
# failures that are routine, not a bug worth a memory: a linter or formatter, a push behind its remote
ROUTINE = re.compile(
    r"^(?:git|ruff|black|isort|flake8|pylint|eslint|prettier|gofmt|rustfmt|cargo fmt|cargo clippy|pre-commit"
    r"|npm run (?:lint|format)|yarn (?:lint|format))\b"
)
POLITE = {"noted", "welcome", "you're", "youre", "anytime", "glad", "help", "helped", "problem", "np", "happy",
          "to", "i", "will", "got", "understood", "of", "course", "sure", "thing"}  # fmt: skip


def polite(text: str) -> bool:
    """An acknowledgement ("Noted.", "OK.", "You're welcome."): not what a session ended with."""
    words = WORD_RE.findall(text.lower())
    return len(words) <= 6 and all(w in SMALL_TALK or w in POLITE for w in words)


FENCE_LINE_RE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def turn_text(text: str, width: int = TURN_CHARS, code: int = CODE_CHARS) -> str:
    """One message of a chat's transcript (redacted before: ``importers.base``): its lines kept
    (code stays code), runs of blank lines made one, a heading outside code made bold (the note's
    sections stay its own), each code block's first ``code`` characters, at most ``width``
    characters in all, cut at a line or word end, an open code fence closed."""
    out: list[str] = []
    fenced, size, block, dropped = False, 0, 0, 0
    for line in text.strip().splitlines():
        line = line.rstrip()
        if FENCE_LINE_RE.match(line):
            if fenced and dropped:
                out.append(f"… ({dropped} more lines)")
            fenced, block, dropped = not fenced, 0, 0
        elif fenced and block + len(line) > code:
            dropped += 1
            continue
        elif not fenced and (m := HEADING_RE.match(line)):
            line = f"**{m.group(1)}**" if m.group(1) else ""
        if not line and (not out or not out[-1]) and not fenced:
            continue
        if size + len(line) > width:
            rest = clip(line, width - size) if width - size > 40 else ""
            out += [rest.rstrip("…") + "…" if rest else "…"] + (["```"] if fenced else [])
            break
        out.append(line)
        size += len(line) + 1
        block += len(line) + 1 if fenced else 0
    return "\n".join(out).strip()


def request_text(text: str, width: int = 400) -> str:
    """A request whole: its lines joined ("Add a coupon field.\n- accept codes\n- reject
    expired ones" -> "Add a coupon field. — accept codes; reject expired ones")."""
    lines = [" ".join(ln.strip().lstrip("-*•> ").split()) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return ""
    rest = "; ".join(lines[1:])
    return clip(lines[0] + (f" — {rest}" if rest else ""), width)


class Summary(SimpleNamespace):
    """What a session leaves behind, filled in by ``summarise`` (a SimpleNamespace, as ``Event``)."""

    requests: list[str]
    files: list[str]
    failures: list[
        dict[str, Any]
    ]  # command, error, output, fixed_by (files), commands (that fixed it), fixed
    commands: int
    actions: int  # commands that are not read-only (``ls``, ``cat``, ``git status`` ... are not)
    saved: list[str]
    recalled: list[tuple[str, list[str]]]  # (what was asked, ids shown)
    rules: list[tuple[str, str]]
    outcome: str  # the agent's last words that are not an acknowledgement, first sentences
    last_ok: str  # the last command that succeeded
    start: str  # ISO timestamps of the first and last timed events
    end: str
    cwd: str  # the project folder: the one given, else the transcript's first
    subagents: list[str]  # subagents whose work is folded in
    turns: list[tuple[str, str]]  # an imported chat's messages in order: (who, text) (``turn_text``)

    def __init__(self) -> None:
        super().__init__(requests=[], files=[], failures=[], commands=0, actions=0, saved=[], recalled=[], rules=[], outcome="",
                         last_ok="", start="", end="", cwd="", subagents=[], turns=[])  # fmt: skip

    @property
    def empty(self) -> bool:
        return not (self.requests or self.files or self.commands or self.saved)

    @property
    def fixed(self) -> list[dict[str, Any]]:
        return [f for f in self.failures if f["fixed"]]

    @property
    def chat_only(self) -> bool:
        """Nothing was done: no file changed, no command run but read-only ones, no memory saved."""
        return not (self.files or self.actions or self.saved)

    @property
    def fixes(self) -> list[dict[str, Any]]:
        """Failures worth a ``bug_fix`` memory: fixed by another command (``terraform
        force-unlock`` after a failed ``terraform plan``), or by edits in a session whose request
        was about a failure or that failed before any file was edited (a test that fails on code
        not yet written is no bug); a linter's or ``git``'s failure is routine, none."""
        asked = any(FAILING.search(r) for r in self.requests)
        fixed = [f for f in self.fixed if not ROUTINE.match(f["command"])]
        return [f for f in fixed if f["commands"] or (f["fixed_by"] and (asked or f["before_edits"]))]

    @property
    def memories(self) -> list[tuple[str, str]]:
        """(type, text) of what the session leaves as candidate memories: the user's decisions and
        rules (a sentence), then its bug fixes (a title line, then the body)."""
        return self.rules + [("bug_fix", fix_text(f)) for f in self.fixes]


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


DIAGNOSTIC = r"[^\s:]+:\d+(?::\d+)?:\s"  # a compiler's or linter's "path:line:col: message"


def _error_line(text: str) -> str:
    """The most telling line of a failed command's output."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pattern in (r"(FAILED|ERROR)\b|error(\[\w+\])?:", r"(?:E\s+)?\w*(Error|Exception)\b:", DIAGNOSTIC):
        for (
            ln
        ) in lines:  # pytest's summary line, a compiler's "error:", a traceback's last word, "file:line:"
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


def summarise(events: list[Event], cwd: str | None = None, chat: bool = False) -> Summary:
    """What the session did, from its events (``cwd``: the project folder; ``chat``: an imported
    chat, whose note keeps every message: ``turns``)."""
    s = Summary()
    roots = _roots(events, cwd)
    s.cwd = roots[0] if roots else ""
    results = {e.id: e for e in events if e.kind == "result" and e.id}
    open_failures: dict[str, dict[str, Any]] = {}
    times = [e.ts for e in events if e.ts]
    s.start, s.end = (min(times), max(times)) if times else ("", "")
    for ev in events:
        if ev.kind == "prompt":
            if is_reminder(ev.text):
                continue
            if not trivial(ev.text) and ev.tool != "feedback":
                s.requests.append(request_text(ev.text))
            if chat and ev.tool != "feedback":
                s.turns.append(("User", turn_text(ev.text)))
            s.rules.extend(rule_sentences(ev.text, feedback=ev.tool == "feedback"))
        elif ev.kind == "text":
            if chat:
                s.turns.append(("Assistant", turn_text(ev.text)))
            if not polite(ev.text):
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
            _edit(s, ev, results, roots, open_failures)
        elif ev.tool in SHELL_TOOLS and isinstance(ev.input.get("command"), str):
            _shell(s, ev, results, open_failures)
    for failure in open_failures.values():
        failure["fixed"] = bool(failure["variants"])  # a variant passed: fixed, by what is not known
    s.rules = list(dict.fromkeys(s.rules))
    return s


def _edit(s: Summary, ev: Event, results: dict[str, Event], roots: list[str],
          open_failures: dict[str, dict[str, Any]]) -> None:  # fmt: skip
    path = ev.input.get("file_path") or ev.input.get("notebook_path")
    if isinstance(path, str) and path and not (results.get(ev.id) and results[ev.id].error):
        rel = _rel(path, roots)
        if rel not in s.files:
            s.files.append(rel)
        for failure in open_failures.values():
            if rel not in failure["fixed_by"]:
                failure["fixed_by"].append(rel)


def _shell(
    s: Summary, ev: Event, results: dict[str, Event], open_failures: dict[str, dict[str, Any]]
) -> None:
    """A shell call: a failure opens (once per command), a later success of the same command
    closes it; the other commands that succeeded in between are what fixed it (a variant of the
    failing command too, as ``migrate 0042 --fake`` before ``migrate`` passes, when no file was
    edited)."""
    cmd = " ".join(ev.input["command"].split())
    s.commands += 1
    s.actions += not READ_ONLY.match(cmd)
    res = results.get(ev.id)
    key = _command_key(cmd)
    if res is not None and res.error:
        if key not in open_failures:
            opened: dict[str, Any] = {"command": cmd, "error": _error_line(res.text), "output": _telling_lines(res.text),
                                      "fixed_by": [], "commands": [], "variants": [], "fixed": False, "before_edits": not s.files}  # fmt: skip
            open_failures[key] = opened
            s.failures.append(opened)
        return
    if res is None:
        return
    s.last_ok = s.last_ok if READ_ONLY.match(cmd) else cmd
    failure = open_failures.get(key)
    if failure is not None and cmd != failure["command"]:
        failure["variants"].append(cmd)  # closes the failure only if the command itself never passes
    elif failure is not None:
        open_failures.pop(key)["fixed"] = True
        if not failure["fixed_by"]:
            failure["commands"] += [v for v in failure["variants"] if not READ_ONLY.match(v)]
    elif not READ_ONLY.match(cmd):
        for failure in open_failures.values():
            failure["commands"].append(cmd)


def _telling_lines(text: str, n: int = 4) -> list[str]:
    """Up to ``n`` lines of a failed command's output, those naming an error first."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [
        ln for ln in lines if not re.match(r"(?:exit code|process exited|<shellid)\b|[=_-]{3,}", ln, re.I)
    ]
    bad = [ln for ln in lines
           if re.search(r"err|fail|exception|denied|not found|in use|already", ln, re.I) or re.match(DIAGNOSTIC, ln)]  # fmt: skip
    return [clip(ln, 200) for ln in (bad or lines)[:n]]


def _what_failed(f: dict[str, Any]) -> str:
    """The failure in a few words: "test_jpy_refund failed with AssertionError", "Error acquiring
    the state lock"."""
    error = f["error"]
    m = re.match(r"(?:FAILED|ERROR)\s+(\S+)(?:\s+-\s+(\w+))?", error)
    if m:
        return f"{m.group(1).split('::')[-1]} failed" + (f" with {m.group(2)}" if m.group(2) else "")
    return re.sub(r"^(?:Error|error|ERROR)\b:?\s*", "", error).strip() or "failure"


def _command_words(cmd: str, n: int = 3) -> str:
    """A command named in a title: its first words, up to an option after the second word, a
    shell operator or a long argument ("terraform force-unlock -force 8f3c..." -> "terraform
    force-unlock")."""
    out: list[str] = []
    for w in cmd.split()[:n]:
        if (len(out) >= 2 and w.startswith("-")) or w in ("&&", "||", "|", ";") or len(w) > 24:
            break
        out.append(w)
    return " ".join(out) or cmd.split()[0]


def fix_text(f: dict[str, Any]) -> str:
    """A bug fix as a memory: its title ("Error acquiring the state lock in terraform, fixed by
    terraform force-unlock"), a blank line, then the failure, its output and the fix."""
    how = (
        "by running " + " then ".join(f"`{c}`" for c in f["commands"][:3])
        if f["commands"]
        else "by editing " + ", ".join(f"`{p}`" for p in f["fixed_by"][:4])
    )
    fix = (_command_words(f["commands"][0]) if f["commands"]
           else "editing " + ", ".join(p.rsplit("/", 1)[-1] for p in f["fixed_by"][:2]))  # fmt: skip
    what = _what_failed(f)
    where = "" if " failed" in what else f" in {_command_words(f['command'], 2)}"
    title = f"{clause_clip(what, 50)}{where}, fixed by {clause_clip(fix, 40)}"
    out = "\n".join(f"    {ln}" for ln in f["output"])
    return (f"{title}\n\n`{f['command']}` failed:\n\n{out}\n\nFixed {how}; "
            f"`{f['command']}` passed after that.")  # fmt: skip


def _failure_line(f: dict[str, Any]) -> str:
    line = f"`{f['command']}` failed" + (f": {f['error']}" if f["error"] else "")
    if not f["fixed"]:
        return line + "; not fixed in this session"
    if f["commands"]:
        return line + "; passed after " + ", ".join(f"`{c}`" for c in f["commands"][:3])
    if f["fixed_by"]:
        return line + "; passed after editing " + ", ".join(f"`{p}`" for p in f["fixed_by"])
    return line + "; passed on a later run"


def _fixed_line(f: dict[str, Any]) -> str:
    what = f["error"] or "its failure"
    if f["commands"]:
        how = " by running " + ", ".join(f"`{c}`" for c in f["commands"][:3])
    elif f["fixed_by"]:
        how = " by editing " + ", ".join(f"`{p}`" for p in f["fixed_by"])
    else:
        how = " (passed on a later run)"
    return f"{what} (`{f['command']}`){how}"


def outcome_lines(s: Summary) -> list[str]:
    """What the session changed, for ``## Outcome``: the agent's last words (not an
    acknowledgement), then a list of the files changed, the failures fixed and how, what still
    fails, and the last command that succeeded."""
    out = []
    if s.files:
        more = f" and {len(s.files) - 8} more" if len(s.files) > 8 else ""
        out.append("Changed " + ", ".join(f"`{f}`" for f in s.files[:8]) + more + ".")
    for f in s.fixed:
        how = (f" after `{f['commands'][0]}`" if f["commands"]
               else " after editing " + ", ".join(f"`{p}`" for p in f["fixed_by"][:3]) if f["fixed_by"] else "")  # fmt: skip
        out.append(f"`{clip(f['command'], 120)}` passes{how}.")
    out += [f"`{clip(f['command'], 120)}` still fails." for f in s.failures if not f["fixed"]]
    if s.last_ok and not any(s.last_ok in line for line in out):
        out.append(f"Last command that succeeded: `{clip(s.last_ok, 160)}`.")
    return ([s.outcome] if s.outcome else []) + [f"- {line}" for line in out]


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


def chat_head(s: Summary, until: str) -> str:
    """An imported chat's first line: its day in words ("Conversation of Tuesday 23 May 2023,
    13:56 to 14:04 UTC": a question names a day so), its messages and answers."""
    import datetime as dt

    answers = sum(who == "Assistant" for who, _ in s.turns)
    try:
        d = dt.datetime.fromisoformat(s.start.replace("Z", "+00:00"))
        when = f" of {d:%A} {d.day} {d:%B %Y, %H:%M} to {until} UTC"
    except ValueError:
        when = ""
    return f"Conversation{when}: {len(s.turns) - answers} message(s) of the user, {answers} answer(s)."


def render_summary(s: Summary, shown: list[str] | None = None, limit: int = 12,
                   titles: dict[str, str] | None = None, said: bool = False) -> str:  # fmt: skip
    """The markdown body of the session summary note (``shown``: lines naming the memories the
    hooks showed the session; ``titles``: id -> title of the vault's notes; ``said``: an imported
    chat's note, its summary then the whole conversation under ``## Transcript``, every message
    with who said it: the facts, numbers and names of a chat are in what was written, not in
    tools and files)."""
    out: list[str] = []

    def section(title: str, items: list[str], most: int = limit) -> None:
        if items:
            extra = [f"- … and {len(items) - most} more"] if len(items) > most else []
            out.extend(["", f"## {title}", *(f"- {i}" for i in items[:most]), *extra])

    section("Requests", s.requests)
    section("Fixed", [_fixed_line(f) for f in s.fixed])
    section("Files changed", [f"`{f}`" for f in s.files])
    section("Commands that failed", [_failure_line(f) for f in s.failures])
    section("Memories saved", s.saved)
    section("Memories recalled", recalled_lines(s, titles) + list(shown or []))
    section("Stated by the user", [f"({t}) {r}" for t, r in s.rules])
    section("Subagents", s.subagents)
    outcome = [] if said else outcome_lines(s)  # a chat's last words are in its transcript
    if outcome:
        out.extend(["", "## Outcome", *outcome])
    if said and s.turns:  # an imported chat: the whole conversation, after its summary
        out.extend(["", "## Transcript", *(f"\n**{who}:** {text}" for who, text in s.turns)])
    fixed = f", {len(s.fixed)} failure(s) fixed" if s.fixed else ""
    until = s.end[11:16] if s.end[:10] == s.start[:10] else s.end[:16].replace("T", " ")
    when = f" ({s.start[:16].replace('T', ' ')} to {until} UTC)" if s.start and s.end else ""
    head = (f"Session{when} of {len(s.requests)} request(s), {len(s.files)} file(s) changed, "
            f"{s.commands} command(s) run{fixed}.")  # fmt: skip
    if said:
        head = chat_head(s, until)
    return head + "\n" + "\n".join(out) + "\n"
