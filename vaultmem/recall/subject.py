"""Questions about a speaker: a second recall round (pure).

Conversation memories are notes in a person's own words (``Melanie: I signed up for a
pottery class``), and a question names that person in the third person ("What activities
does Melanie partake in?"). Embedded as written, the question is pulled towards every note
that *mentions* the name (the other speaker's "Wow, Melanie!") rather than the ones Melanie
said. When the first round's top hits show that a name in the question is a speaker (a note
opening with ``Name:``), recall runs a second round: the vector part embeds the question
with the name replaced by a pronoun ("What activities does they partake in?"), BM25 keeps
the question as it is, and the named speaker's own notes among the candidates get a small
lift, larger for a question asking for a list ("What books...", "... both ...") whose answer
is spread over several notes. Measured in benchmarks/README.md (LoCoMo, multi-hop).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

WEIGHT = 0.05  # lift of a named speaker's own notes (standardised score units; an average note is 0)
LIST_WEIGHT = 0.2  # added to WEIGHT when the question asks for several things
FIRST = 20  # first-round hits whose speakers are looked at
MIN_NOTES = 2  # a name counts as a speaker when it opens at least this many of them

SPEAKER_RE = re.compile(r"^([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}):\s+\S")
WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
LIST_CUES = re.compile(r"\b(both|in common|all the|ways|things|some|each)\b")
NOT_PLURAL = frozenset("is was does has this his its us yes as always".split())


@dataclass(frozen=True)
class Subject:
    """The speakers a question is about, and what recall does with them."""

    names: tuple[str, ...]
    vector_query: str  # the question the vector part embeds
    lift: float  # added to a named speaker's own notes
    found_in: tuple[str, ...] = ()  # first-round hits (keys) that showed the names are speakers

    def reason(self) -> str:
        """One line for ``--explain``."""
        shown = ", ".join(self.found_in[:3]) + (" ..." if len(self.found_in) > 3 else "")
        return f"question about {' and '.join(self.names)} (speaker of first-round hits {shown}); vector query {self.vector_query!r}"


def said(body: str) -> tuple[str, str] | None:
    """(speaker, what they say) of a note whose first line reads ``Name: text`` (one to three
    capitalised words); None for a note that is no conversation turn."""
    for line in body.splitlines():
        line = line.strip()
        if line:
            m = SPEAKER_RE.match(line)
            return (m.group(1), line[len(m.group(1)) + 1 :].strip()) if m and len(m.group(1)) <= 40 else None
    return None


def speaker(body: str) -> str | None:
    """The speaker of a note whose first line reads ``Name: text`` (``said``)."""
    turn = said(body)
    return turn[0] if turn else None


def is_list(question: str) -> bool:
    """A question asking for several things: "What books has X read?", "... both ...", "in what ways ..."."""
    text = question.lower()
    if LIST_CUES.search(text):
        return True
    if not re.match(r"\s*(what|which)\b", text):
        return False
    for word in re.findall(r"[a-z'’-]+", text)[1:4]:  # a plural right after the question word
        if (
            len(word) > 3
            and word.endswith("s")
            and not word.endswith(("'s", "’s", "ss"))
            and word not in NOT_PLURAL
        ):
            return True
    return False


def third_person_out(question: str, names: Iterable[str]) -> str:
    """The question with each name replaced by a pronoun ("Melanie's kids" -> "their kids";
    one name -> "they", several -> removed)."""
    names = list(names)
    out = question
    for name in names:
        first = re.escape(name.split()[0])
        out = re.sub(rf"\b{first}(?:'s|’s)(?!\w)", "their", out)
        out = re.sub(rf"\b{first}\b", "they" if len(names) == 1 else "", out)
    return re.sub(r"\s{2,}", " ", out).strip()


def names_in(question: str) -> set[str]:
    """The words of a question that could be a name: capitalised, with a lower-case letter,
    not the question's first word ("What did Melanie paint?" -> {"Melanie"})."""
    return {w for w in WORD_RE.findall(question)[1:] if w[0].isupper() and any(c.islower() for c in w[1:])}


def find(question: str, first_round: list[tuple[str, str | None]]) -> Subject | None:
    """The Subject of a question given the first round's top hits as (key, speaker), best
    first; None when the question names no one who speaks in them."""
    words = names_in(question)
    count: dict[str, list[str]] = {}
    for key, who in first_round[:FIRST]:
        if who and who.split()[0] in words:
            count.setdefault(who, []).append(key)
    names = tuple(sorted(n for n, keys in count.items() if len(keys) >= MIN_NOTES))
    if not names:
        return None
    found = tuple(k for n in names for k in count[n])
    lift = WEIGHT + (LIST_WEIGHT if is_list(question) else 0.0)
    return Subject(names, third_person_out(question, names), lift, found)
