"""Is a new memory an update of an older one? Signals and the decision (pure).

Signals of a pair (old, new) of the same type, each in [0, 1]:

- ``cosine``: embedding similarity of the two memory texts;
- ``context``: the two share a ``context`` entry (file, folder, ticket);
- ``anchor``: the two hang off the same anchor note;
- ``title``: share of the key words of the titles in common (Jaccard);
- ``body``: share of the key words of the texts in common (Jaccard);
- ``changed``: the new text says something changed ("now", "no longer", "moved to", ...);
- ``retracts``: the new text retracts the old memory's *subject*: a word of the old *title*
  (one the new title does not repeat) where a retraction points at it (among the first two key
  words after "instead of", "replaced", "moved from", "moved out of", "left the", "no longer",
  "dropped", ... or the last two before "is gone", "was removed", "were imported and deleted", a
  bare "removed" ending a clause, "->": "replaced Rollbar with Sentry", "Fluentd is gone",
  "from 100 to 500 req/min"; two words in a row count as one, "times out" for "timeout"; a word
  the new title says only after a negation, "works without VPN", is not repeated), and the new
  memory is about what the old one applies to: it names one of the old title's other key words
  ("error tracking" for "Error tracking in Rollbar"), so "Session cookies for the web app ...
  instead of storing JWTs" does not retract "JWT for API auth"; nor does a new text that says a
  word of the old title stays ("staging deploys still do": another thing's retraction).
- ``slot``: the new memory gives the old one's slot a new value (``slots.slot_change``): the
  same title frame with one value changed and the change said ("CI runs on ubuntu-20.04" ->
  "CI now runs on ubuntu-22.04"), with no other subject, addition, hedge or kept old value.
- ``status``: a progress memory gives the same effort a new status ("Dark mode not started" ->
  "Dark mode shipped"; ``revisions.status_change``).
- ``corrects``: the new memory corrects the old fix or cause ("Correction: ...", "Real fix for
  the scraper 403"; ``revisions.corrects``).

The rule never supersedes on similarity: two different memories about one subject can be as
similar as an update (a bulk of near-identical notes reached 0.91 cosine; "Use SQLite for the
cache" and "Purge the cache in the post-deploy hook" 0.54). A pair is an update on its own
(``auto``) only when the new text retracts the old memory's subject (above: the old title's own
words, and the new one names what the old one applies to, which relates them; or, for an old
title that is only what is retracted, a shared context entry or anchor or title key words in
common) and they are at least as similar as a possible update; or when it gives the old one's
slot a new value (``slot``), a progress note a new status (``status``) or corrects it
(``corrects``), they are related and at least ``slot_cosine`` similar. Everything
else that is similar (``possible_cosine``) and related, shares words or says something changed
is a ``possible`` update: returned to the writer and shown on
the older note, never applied. Never automatic: different types, session summaries, or a new
memory older than the old one. Never even possible: anchors (project notes), session summaries
and handoffs (``NEVER_UPDATES``); the project rule (``memory.projects``) is the caller's.
Measured on the labelled pairs by ``benchmarks/supersede_v2.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .revisions import corrects, status_change
from .slots import CLAUSE_RE, is_key, key_words, slot_change, tokens

SIGNALS = (
    "cosine",
    "context",
    "anchor",
    "title",
    "body",
    "changed",
    "retracts",
    "slot",
    "status",
    "corrects",
)
SERIES_TYPES = frozenset({"session_summary"})
# a project's anchor (a project note under no other note), its session summaries and handoffs:
# records of their own, never updates of one another
NEVER_UPDATES = frozenset({"project", "session_summary", "handoff"})
CHANGE_RE = re.compile(
    r"\b(now|no longer|not any ?more|anymore|instead|replaced|replaces|switched|switch(?:ed)? to|moved|migrated|"
    r"changed|raised|lowered|dropped|removed|gone|deprecated|took over|overtook|slipped|rewrote|rewritten|"
    r"upgraded|downgraded|extended|reversed|was still|real (?:cause|fix)|from \S+ to)\b|->|\u2192",
    re.IGNORECASE,
)
# a retraction word followed by what it retracts ("instead of Redis", "replaced Rollbar")
RETRACT_BEFORE = re.compile(
    r"\b(instead of|rather than|replac(?:ed|es|ing)|(?:switched|moved|migrated|changed) (?:away )?from|moved off|"
    r"(?:moved|taken|pulled|split|extracted|carved) out of|left (?:the|our|his|her|their)|"
    r"from(?=\s+\S+(?:\s+\S+)?\s+(?:to|->|\u2192)\s)|no longer(?: uses?| needs?| needed| runs?| on| in)?|not any ?more|dropp(?:ed|ing)|remov(?:ed|ing)|"
    r"retir(?:ed|ing)|deprecat(?:ed|ing)|delet(?:ed|ing)|shut down|stopped using|took over from|overtook)\b",
    re.IGNORECASE,
)
# what is retracted followed by the retraction ("Fluentd is gone", "the 100 limit -> 500")
RETRACT_AFTER = re.compile(
    r"\b(?:is|was|are|were|got|has been|have been)\s+(?:\w+\s+and\s+)?(?:gone|dropped|removed|replaced|retired|deprecated|deleted|"
    r"shut down|abandoned)\b|\b(?:removed|dropped|retired|deleted|gone)(?=\s*(?:[.;,)]|$))|\bno longer\b|\bis gone\b|"
    r"\banymore\b|->|\u2192",
    re.IGNORECASE,
)
# the old subject said to stay as it is ("staging deploys still do"; not "was still flaky", the
# past, nor "keeps its counters", a verb of its own)
STAYS = re.compile(r"\b(?:stays?|stayed|remains?|unchanged|(?<!was )(?<!were )still)\b", re.IGNORECASE)
# "instead of on every request": what follows is when or where, not what is retracted
CIRCUMSTANCE = frozenset("on in at during for when after before while by with within per every each".split())
WINDOW = 2  # key words on the retracted side of a retraction ("instead of loading a second Tailwind
# build" retracts "loading", not "Tailwind")


@dataclass(frozen=True)
class Thresholds:
    """The thresholds (measured in ``benchmarks/results/supersede-v2.json``)."""

    auto_cosine: float = 0.40  # a retraction counts only between memories at least this similar
    slot_cosine: float = 0.50  # a same-slot value change counts only between memories this similar
    title: float = 0.1  # title key words in common that count as "related"
    possible_cosine: float = 0.40  # similar enough to list (every labelled update reaches it)
    body: float = 0.15  # text key words in common that count as related for a possible update


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _folded(values: Iterable[str] | None) -> set[str]:
    return {v.strip().lower() for v in values or () if v and v.strip()}


@dataclass(frozen=True)
class Memory:
    """The parts of a memory the decision looks at."""

    title: str
    content: str
    type: str | None = None
    context: tuple[str, ...] = ()
    anchors: tuple[str, ...] = ()
    when: str = ""  # created (ISO 8601); compared as text


def _key_words_of(words: list[str]) -> list[str]:
    """The key words of a run of words, in order (see ``key_words``); a possessive is not what
    is retracted ("instead of Stripe's receipt emails" retracts the emails)."""
    return [
        k
        for w in words
        if not w.lower().rstrip(".,;:!?").endswith(("'s", "\u2019s"))
        for k in sorted(key_words(w))
    ]


def _retracted(old_words: set[str], new: Memory) -> set[str]:
    """The words of ``old_words`` the new text retracts: among the first ``WINDOW`` key words
    after a retraction word ("replaced Rollbar"), or the last ones before "is gone", "->", ...
    ("Fluentd is gone")."""
    return {w for words in _windows(f"{new.title} {new.content}") for w in old_words.intersection(words)}


@lru_cache(maxsize=4096)
def _windows(text: str) -> tuple[tuple[str, ...], ...]:
    """The key words a text retracts, one tuple per retraction (``_retracted``), with each two
    in a row joined (``_joined``)."""
    after = (_key_words_of(words)[:WINDOW] for m in RETRACT_BEFORE.finditer(text)
             if (words := text[m.end() :].split()[: 4 * WINDOW]) and words[0].lower() not in CIRCUMSTANCE)  # fmt: skip
    before = (
        _key_words_of(text[: m.start()].split()[-4 * WINDOW :])[-WINDOW:]
        for m in RETRACT_AFTER.finditer(text)
    )
    return tuple(tuple(_joined(words)) for side in (after, before) for words in side)


def _joined(words: list[str]) -> list[str]:
    """Key words with each two in a row joined: "times out" retracts "timeout", "log in" "login"."""
    return [*words, *(a + b for a, b in zip(words, words[1:], strict=False))]


NEGATIONS = frozenset({"without", "not", "no", "never", "non"})


def _affirmed(title: str) -> set[str]:
    """The key words of a title but one right after a negation: "Staging deploy works without
    VPN" does not repeat "VPN" (its text may still retract it: "no longer needs the VPN")."""
    words = tokens(title)
    return {w for i, w in enumerate(words) if is_key(w) and not (i and words[i - 1] in NEGATIONS)}


def _kept(words: set[str], content: str) -> bool:
    """Whether the new text says one of ``words`` (the old title's, not the new title's) stays as
    it was ("CSV export still does", "infra stays on CloudFormation"): what it retracts is
    another thing's: one of them among the three words before "still", "stays", ... in its clause
    (its subject: "several Redis nodes: overkill, still TTL-based" keeps no Redis)."""
    for m in STAYS.finditer(content):
        near = CLAUSE_RE.split(content[: m.start()])[-1].split()[-3:]  # in its clause
        if words & key_words(" ".join(near)):
            return True
    return False


def _mentions(words: set[str], text_words: set[str]) -> bool:
    """Whether a text names one of ``words``, or a longer form of one ("queue" in "queued",
    "cron" in "cronjob")."""
    return any(w in text_words or (len(w) >= 4 and any(t.startswith(w) for t in text_words)) for w in words)


def retracts(old: Memory, new: Memory) -> float:
    """Whether the new memory retracts the old one's *subject*: the new text retracts a word of
    the old title that the new title does not repeat (``_retracted``), and it is about what the
    old one applies to: it names one of the old title's other key words ("Error tracking in
    Rollbar" -> "We replaced Rollbar ... error tracking"): 1.0, which relates the two. An old
    title that is only what is retracted ("Rollbar") gives 0.5: the pair must be related
    otherwise. "Session cookies for the web app ... instead of storing JWTs" retracts the word of
    "JWT for API auth" but names neither "API" nor "auth": a different subject, 0.0."""
    title_words = key_words(old.title)
    hit = _retracted(title_words - _affirmed(new.title), new)
    if not hit or _kept(title_words - key_words(new.title), new.content):
        return 0.0
    applies_to = title_words - hit
    if not applies_to:
        return 0.5
    return 1.0 if _mentions(applies_to, key_words(f"{new.title} {new.content}")) else 0.0


def _other_files(old: Memory, new: Memory) -> bool:
    """Each names files (``context``), none in common."""
    a, b = _folded(old.context), _folded(new.context)
    return bool(a and b and not a & b)


def signals(old: Memory, new: Memory, cosine: float) -> dict[str, float]:
    """The signals of the pair (old, new); ``cosine`` from the embedder."""
    return {
        "cosine": float(cosine),
        "context": float(bool(_folded(old.context) & _folded(new.context))),
        "anchor": float(bool(_folded(old.anchors) & _folded(new.anchors))),
        "title": jaccard(key_words(old.title), key_words(new.title)),
        "body": jaccard(key_words(f"{old.title} {old.content}"), key_words(f"{new.title} {new.content}")),
        "changed": float(bool(CHANGE_RE.search(f"{new.title} {new.content}"))),
        "retracts": retracts(old, new),
        "slot": float(slot_change(old.title, old.content, new.title, new.content, _other_files(old, new))),
        "status": float(
            old.type == new.type and status_change(new.type or "", old.title, new.title, new.content)
        ),
        "corrects": float(corrects(old.title, new.title, new.content)),
    }


@dataclass(frozen=True)
class Verdict:
    """``auto`` (supersede on its own), ``possible`` (list it) or ``no``, with the evidence."""

    decision: str
    signals: dict[str, float]

    @property
    def similarity(self) -> float:
        return round(self.signals["cosine"], 4)


def decide(sig: dict[str, float], th: Thresholds = Thresholds()) -> str:
    """``auto``, ``possible`` or ``no`` for a pair's signals (type and time rules aside)."""
    related = bool(sig["context"] or sig["anchor"] or sig["title"] >= th.title)
    if (sig["retracts"] >= 1.0 or (sig["retracts"] and related)) and sig["cosine"] >= th.auto_cosine:
        return "auto"
    if (
        (sig.get("slot") or sig.get("status") or sig.get("corrects"))
        and related
        and sig["cosine"] >= th.slot_cosine
    ):
        return "auto"  # a new value in the old slot, a new status of one effort, a correction
    if sig["cosine"] >= th.possible_cosine and (related or sig["changed"] or sig["body"] >= th.body):
        return "possible"
    return "no"


def is_record_of_its_own(m: Memory) -> bool:
    """An anchor (a ``project`` note with no anchor of its own), a session summary or a handoff."""
    return m.type in NEVER_UPDATES and (m.type != "project" or not m.anchors)


def judge(old: Memory, new: Memory, cosine: float, th: Thresholds = Thresholds()) -> Verdict:
    """Decide whether ``new`` updates ``old``. Different types, session summaries and a new
    memory older than the old one are at most ``possible``; anchors (project notes), session
    summaries and handoffs are never updates of one another (``no``)."""
    sig = signals(old, new, cosine)
    if is_record_of_its_own(old) or is_record_of_its_own(new):
        return Verdict("no", sig)
    decision = decide(sig, th)
    never = old.type != new.type or new.type in SERIES_TYPES
    older = bool(old.when and new.when and new.when < old.when)
    if decision == "auto" and (never or older):
        decision = "possible"
    return Verdict(decision, sig)
