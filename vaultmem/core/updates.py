"""Is a new memory an update of an older one? Signals and the calibrated decision (pure).

Signals of a pair (old, new) of the same type, each in [0, 1]:

- ``cosine``: embedding similarity of the two memory texts;
- ``context``: the two share a ``context`` entry (file, folder, ticket);
- ``anchor``: the two hang off the same anchor note;
- ``title``: share of the key words of the titles in common (Jaccard);
- ``body``: share of the key words of the texts in common (Jaccard);
- ``changed``: the new text says something changed ("now", "no longer", "moved to", ...);
- ``retracts``: the new text retracts a word of the old one: a word of the old memory (not in
  the new title) stands within five words of "instead", "no longer", "replaced", "gone",
  "from", "not", "was", ... ("Fluentd is gone", "instead of LaunchDarkly", "from 10 MB");
- ``stable``: the type holds one current truth (decision, fact, preference, ...), not a
  series (progress, session summaries).

The rule (thresholds calibrated on the calibration half of the labelled pairs by
``benchmarks/supersede_signals.py``: the highest recall with no false positive, plus a
margin): a pair is an update on its own (``auto``) when the new text retracts a word of the old
one, the two are related (a shared context entry or anchor, or title key words in common) and
the cosine reaches ``auto_cosine``; or when the cosine alone reaches ``cosine_alone``. A pair
that falls short but is similar (``possible_cosine``) and related or marked as a change is a
``possible`` update, listed for the agent or person to decide. Never automatic: different
types, session summaries, or a new memory older than the old one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

SIGNALS = ("cosine", "context", "anchor", "title", "body", "changed", "retracts")
SERIES_TYPES = frozenset({"session_summary"})
STOPWORDS = frozenset("""a an the and or but of to in on at by for from with without into onto is are was were be
been being it its this that these those as we our us i you they them he she his her their there here not no now
so then than too very can could will would should may might must do does did done has have had use used uses
using via per all any each every only just also still""".split())  # fmt: skip
CHANGE_RE = re.compile(
    r"\b(now|no longer|not any ?more|anymore|instead|replaced|replaces|switched|switch(?:ed)? to|moved|migrated|"
    r"changed|raised|lowered|dropped|removed|gone|deprecated|took over|overtook|slipped|rewrote|rewritten|"
    r"upgraded|downgraded|extended|reversed|was still|real (?:cause|fix)|from \S+ to)\b|->|\u2192",
    re.IGNORECASE,
)
RETRACT_RE = re.compile(
    r"\b(instead|no longer|not any ?more|anymore|replaced|replaces|replacing|switched|moved|migrated|dropped|"
    r"removed|gone|deprecated|took over|overtook|rather than|slipped|rewrote|rewritten|retired|shut down|"
    r"deleted|was|were|not|from)\b|->|\u2192",
    re.IGNORECASE,
)
WORD_RE = re.compile(r"[a-z0-9][a-z0-9_.\-/]*", re.IGNORECASE)
WINDOW = 5


@dataclass(frozen=True)
class Thresholds:
    """The calibrated thresholds (see ``benchmarks/results/supersede-signals.json``)."""

    auto_cosine: float = 0.54  # calibrated 0.51 + margin 0.03
    title: float = 0.1  # title key words in common that count as "related"
    cosine_alone: float = 0.91  # calibrated 0.88 + margin 0.03
    possible_cosine: float = 0.45


def key_words(text: str) -> set[str]:
    """Lower-cased words of a text without stop words, a plural ``s`` and edge punctuation."""
    out = set()
    for w in WORD_RE.findall(text.lower()):
        w = w.strip(".-/_")
        if len(w) < 2 or w in STOPWORDS:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


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


def retracts(old: Memory, new: Memory) -> bool:
    """Whether the new text names a word of the old one next to a retraction word."""
    old_words = key_words(f"{old.title} {old.content}") - key_words(new.title)
    if not old_words:
        return False
    text = f"{new.title} {new.content}"
    starts = [m.start() for m in re.finditer(r"\S+", text)]
    tokens = text.split()
    for m in RETRACT_RE.finditer(text):
        i = next((k for k, s in enumerate(starts) if s >= m.start()), len(tokens) - 1)
        if key_words(" ".join(tokens[max(0, i - WINDOW) : i + WINDOW + 1])) & old_words:
            return True
    return False


def signals(old: Memory, new: Memory, cosine: float) -> dict[str, float]:
    """The signals of the pair (old, new); ``cosine`` from the embedder."""
    return {
        "cosine": float(cosine),
        "context": float(bool(_folded(old.context) & _folded(new.context))),
        "anchor": float(bool(_folded(old.anchors) & _folded(new.anchors))),
        "title": jaccard(key_words(old.title), key_words(new.title)),
        "body": jaccard(key_words(f"{old.title} {old.content}"), key_words(f"{new.title} {new.content}")),
        "changed": float(bool(CHANGE_RE.search(f"{new.title} {new.content}"))),
        "retracts": float(retracts(old, new)),
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
    if sig["cosine"] >= th.cosine_alone or (sig["retracts"] and related and sig["cosine"] >= th.auto_cosine):
        return "auto"
    if sig["cosine"] >= th.possible_cosine and (related or sig["changed"]):
        return "possible"
    return "no"


def judge(old: Memory, new: Memory, cosine: float, th: Thresholds = Thresholds()) -> Verdict:
    """Decide whether ``new`` updates ``old``. Different types, session summaries and a new
    memory older than the old one are at most ``possible``."""
    sig = signals(old, new, cosine)
    decision = decide(sig, th)
    never = old.type != new.type or new.type in SERIES_TYPES
    older = bool(old.when and new.when and new.when < old.when)
    if decision == "auto" and (never or older):
        decision = "possible"
    return Verdict(decision, sig)
