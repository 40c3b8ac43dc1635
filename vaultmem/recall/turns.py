"""Conversation turns that tell over turns that ask (pure).

In a conversation log the answer to a question about someone is a turn where they tell
about themselves ("Nate: I just got a new addition to the family, this is Max!"), rarely one
that reacts or asks ("Nate: Pets make us so much happier. Have you thought of getting one?").
A turn (a note opening with ``Name: text``, ``subject.speaker``) gets +1 when one of its
sentences is a first-person statement (I, my, we, our, ... not ending in "?") and -1 when it
asks something ("?"), so a turn that only asks scores -1, one that only tells +1; a question
lifts each turn by ``[recall] turn_weight`` x that (a turn: its speaker opens at least two of
the candidates). Measured in benchmarks/README.md (LoCoMo dev, issue 37).
"""

from __future__ import annotations

import re
from collections import Counter

from .subject import said

FIRST_PERSON = re.compile(r"\b(I|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself|[Ww]e|[Oo]ur|[Oo]urs|us)\b")  # not "US"
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
MIN_TURNS = 2  # a speaker counts when they open at least this many of the candidates


def value(body: str) -> tuple[str | None, float]:
    """(speaker, +1 for a turn that tells, -1 for one that asks, both: 0); (None, 0) for a
    note that is no conversation turn."""
    turn = said(body)
    if turn is None:
        return None, 0.0
    speaker, text = turn
    tells = any(FIRST_PERSON.search(s) and not s.rstrip().endswith("?") for s in SENTENCE_END.split(text))
    return speaker, float(tells) - float("?" in text)


def conversational(speakers: list[str | None]) -> set[str]:
    """The speakers that open at least ``MIN_TURNS`` of the given notes (a note that merely
    opens with "Summary: ..." is no conversation)."""
    count = Counter(s for s in speakers if s)
    return {s for s, n in count.items() if n >= MIN_TURNS}
