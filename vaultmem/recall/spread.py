"""A note's session: questions answered by a session's best note, not its whole text (pure).

In a conversation log a turn is often clear only next to the turn that says what it is about
("Melanie: Yeah, I painted that lake sunrise last year!" after "What a picture!"). Notes dated
on the same day (their first named date, ``Record.dates``) form a session; a session scores
its best candidate's score (its best note, not its whole text or its average), and each of
its notes gets ``[recall] session_weight`` times that, so a note in the session that holds
the best match rises over a similar note elsewhere. Gated by the question's shape: only for
a question (``question.is_question``; claims and keywords, e.g. SciFact's, are left alone)
that asks for neither a list (``subject.is_list``) nor a count ("how many"): their answers are
spread over sessions, and one session's lift pushes the others out. Measured in benchmarks/README.md (LoCoMo dev).
"""

from __future__ import annotations

import re

from ..index.manifest import Record
from .question import is_question
from .subject import is_list

COUNT_RE = re.compile(r"\bhow (many|often)\b", re.IGNORECASE)  # counted over sessions, as a list is


def applies(query: str) -> bool:
    """Whether a query gets the session part: a question not asking for a list or a count."""
    return is_question(query) and not is_list(query) and not COUNT_RE.search(query)


def session_of(rec: Record) -> str | None:
    """A note's session: the first day it names (None: it names none)."""
    return rec.dates[0] if rec.dates else None


def session_best(groups: dict[str, str | None], scores: dict[str, float]) -> dict[str, float]:
    """Session -> its best note's score (floored at 0), from note -> session and note -> score."""
    out: dict[str, float] = {}
    for path, group in groups.items():
        if group is not None:
            out[group] = max(out.get(group, 0.0), scores[path])
    return out
