"""What the user states in a prompt that outlasts the session, with no LLM: decisions ("we decided
to ...", "let's go with ...", "we'll use X from now on"), rules and preferences ("always ...",
"never ...", "I prefer ...", "remember that ..."). A compound rule is split into its rules ("always
run ruff, and never push to main" is two); a sentence holding a secret, or one that points back at
a secret ("My token is ... Always use it ..."), is no statement. ``summary.py`` imports this module
only when it summarises (the prompt hook never needs it). ``agent_statements``: the decisions,
fixes and conventions the agent states in its own text.
"""

from __future__ import annotations

import functools
import re

SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
FILLER = r"(?:(?:please|and|also|so|ok|okay|oh|btw|fyi|but|just)[,:]?\s+)*"
# "never mind", "always the same error", "never worked": always/never not followed by what to do
NOT_A_RULE = (
    r"(?!\s+(?:mind|the|a|an|this|that|these|those|so|such|same|been|was|is|are|were|worked|works|happened"
    r"|happens|fails|failed|again)\b)"
)
# "After the outage we decided that ...": a short lead before a decision, but not a condition, a
# question or a doubt ("If we decided", "Explain why we decided", "I think we decided")
DECISION_LEAD = (
    r"(?:(?![^,]*\b(?:if|whether|unless|when|once|until|not|never|haven'?t|hasn'?t|why|how|what|who|did|do|does"
    r"|explain|maybe|perhaps|think|thought|wonder|forgot|unsure|unclear)\b)[^,;]{3,60},?\s+)?"
)
RULE_FILLER = r"(?:(?:please|and|also|so|ok|okay|oh|btw|fyi|but|note|remember|just)[,:]?\s+)*"


@functools.cache
def patterns() -> dict[str, re.Pattern[str]]:
    """The statement patterns, compiled on first use."""
    return {
        "rule": re.compile(
            rf"^{RULE_FILLER}"
            rf"(?P<kind>(?:always|never){NOT_A_RULE}|don'?t ever|do not ever|from now on|in future|in the future|going forward"
            r"|i (?:always |really |strongly )?prefer|i'?d (?:rather|prefer)|i (?:like|want) (?:it|us|you) to"
            r"|remember that|keep in mind that|note that we|we always|we never|i always|i never)\b",
            re.I,
        ),
        "decision": re.compile(
            rf"^{RULE_FILLER}(?P<lead>{DECISION_LEAD}"
            r"(?:we|i|the team)(?:'ve| have| has)? (?:decided|agreed|settled)(?: to| that| on)?\s+"
            r"|(?:we|i)(?:'re| are|'m| am) going with\s+"
            r"|let'?s (?:go|stick) with\s+|let'?s switch to\s+"
            r"|(?:our |the )?decision(?:\s+is\s+|:\s*)(?:to\s+|that\s+)?"
            r"|we(?:'ll| will| are going to|'re going to)\s+"
            r"(?=(?:use|go with|switch to|move to|adopt|standardi[sz]e on)\b.*"
            r"\b(?:from now on|going forward|by default|for all|everywhere)\b))",  # "instead of": often this task's
            re.I,
        ),
        "feedback": re.compile(r"^(?:please\s+)?(?:don'?t|do not|never|always|use|prefer|stop)\b", re.I),
        "lead_in": re.compile(
            rf"^{FILLER}"
            r"(?:(?:remember|keep in mind|note)(?: that)?[,:]?\s+|(?:from now on|in (?:the )?future|going forward)[,:]?\s+)?"
            r"(?:(?:i|we) (?:always |really |strongly |usually )?(?:want|prefer|like|need)(?: (?:it|us|you) to)?\s+"
            r"|i'?d (?:rather|prefer)(?: (?:it|us|you) to)?\s+|(?:i|we) always\s+)?",
            re.I,
        ),
        # where a compound rule splits: "; " and ", and never ...", " and always ..."
        "split": re.compile(
            r";\s+|,\s+(?:and|but)\s+(?=(?:we\s+|i\s+|you\s+)?(?:always|never|don'?t|do not)\b)"
            r"|\s+and\s+(?=(?:always|never)\b)",
            re.I,
        ),
        "no_referent": re.compile(r"\b(?:do|did|does|doing|repeat|try|say)\s+(?:that|this|it)\b", re.I),
        "points_back": re.compile(r"\b(?:it|them|this one|that one)\b", re.I),
    }


def kind_of(sentence: str, feedback: bool = False) -> str | None:
    """``decision``, ``lesson`` or ``preference`` for a sentence that states one; else None."""
    p = patterns()
    if p["decision"].match(sentence):
        return "decision"
    m = p["rule"].match(sentence)
    if m:
        kind = m.group("kind").lower()
        return "lesson" if kind.startswith(("remember", "keep in mind", "note that")) else "preference"
    if feedback and p["feedback"].match(sentence):
        return "preference"
    return None


def split_rule(sentence: str) -> list[str]:
    """A compound rule's rules: split at "; " or before "and never"/"and always", a part that
    states nothing by itself ("...; open a pull request instead") staying with the one before."""
    parts: list[str] = []
    for part in patterns()["split"].split(sentence):
        part = part.strip(" ,")
        if parts and kind_of(part, feedback=True) is None:
            parts[-1] = f"{parts[-1]}; {part}"
        elif part:
            parts.append(part)
    return parts


def _has_secret(text: str) -> bool:
    from ..core.secrets import redact

    return bool(redact(text)[1])


def statements(text: str, feedback: bool = False) -> list[tuple[str, str]]:
    """(type, sentence) for each decision, rule or preference the user states in ``text``.

    Questions are no statements. ``feedback``: the text is the user's correction of a rejected
    tool call, where an imperative ("don't write migrations by hand") is a rule too."""
    secret = _has_secret(text)
    out = []
    for raw in SENTENCE_RE.split(text):
        s = " ".join(raw.strip().lstrip("-*> ").split())
        if not (12 <= len(s) <= 300) or s.endswith("?"):
            continue
        kind = kind_of(s, feedback)
        if kind is None or patterns()["no_referent"].search(s):  # "Don't ever do that again": of what?
            continue
        parts = [s] if kind == "decision" else split_rule(s)
        for i, part in enumerate(parts):
            if secret and (_has_secret(part) or patterns()["points_back"].search(part)):
                continue  # a secret, or a rule about one ("Always use it to push"): never kept
            out.append((kind if i == 0 else kind_of(part, True) or kind, part))
    return out


@functools.cache
def agent_patterns() -> dict[str, re.Pattern[str]]:
    """What the agent states in its own text that outlasts the session: a decision (the user's
    decision patterns), a fix ("the fix was to ...", "fixed it by ..."), a convention ("the
    convention here is to ...", "by convention ...")."""
    return {
        "bug_fix": re.compile(
            rf"^{FILLER}(?P<lead>(?:the\s+)?(?:root\s+cause\s+was|(?:actual\s+|real\s+)?fix\s+(?:was|is)"
            r"(?:\s+to)?|solution\s+(?:was|is)(?:\s+to)?)\s+|(?:i|we)\s+fixed\s+(?:it|this|the\s+[\w\s-]{1,40}?)"
            r"\s+by\s+|(?:this|that|it)\s+(?:was\s+)?fixed\s+by\s+)",
            re.I,
        ),
        "pattern": re.compile(
            rf"^{FILLER}(?P<lead>(?:the\s+|our\s+)?convention(?:\s+(?:here|in\s+this\s+(?:repo|repository|project|"
            r"codebase)))?\s+is\s+(?:to\s+|that\s+)?|by\s+convention,?\s+|(?:in\s+this\s+(?:repo|repository|"
            r"project|codebase),?\s+)?(?:we|this\s+project)\s+(?:always|consistently)\s+)",
            re.I,
        ),
    }


def agent_statements(text: str) -> list[tuple[str, str]]:
    """(type, sentence) for each decision, fix or convention the agent states in its own text
    (``decision``, ``bug_fix``, ``pattern``). Questions, sentences holding a secret and orders
    (``core.holdback``: an agent's words are data, never an order kept for later) are none."""
    from ..core.holdback import instruction_shaped

    out = []
    for raw in SENTENCE_RE.split(text):
        s = " ".join(raw.strip().lstrip("-*> ").split()).strip("*_")
        if not (16 <= len(s) <= 300) or s.endswith("?") or _has_secret(s) or instruction_shaped(s):
            continue
        if patterns()["decision"].match(s):
            out.append(("decision", s))
            continue
        for kind, rx in agent_patterns().items():
            if rx.match(s):
                out.append((kind, s))
                break
    return out


def strip_lead(sentence: str) -> str:
    """The statement without its lead-in ("We decided to deploy ..." -> "deploy ...")."""
    p = patterns()
    m = p["decision"].match(sentence)
    if m:
        return sentence[m.end() :]
    for rx in agent_patterns().values():
        m = rx.match(sentence)
        if m:
            return sentence[m.end() :]
    return p["lead_in"].sub("", sentence, count=1)
