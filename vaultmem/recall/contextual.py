"""Which questions score a note by its contextual vector too (pure; ``index/context.py``).

A note with frontmatter links has a second vector, embedded with the first lines of the notes
around it (its session, the turn it follows, its reply). A question that asks about one thing
("When did Caroline paint the lake sunrise?") scores each note by the better of its two
vectors: a reply that names nothing ("Yes, last week!") rises with the turn it answers. Left
out, as for the session part (``spread.py``): questions asking for a list or a count (their
answers are spread over sessions: the neighbours of one good match push the others out) and
suppositions ("Would X enjoy ...?", "What might ..."), whose evidence is a lone statement of
the person's that its neighbours' words dilute. Measured on LoCoMo dev (benchmarks/README.md).
"""

from __future__ import annotations

import re

from . import spread

SUPPOSITION_RE = re.compile(r"\b(would|could|might|likely)\b", re.IGNORECASE)


def applies(query: str) -> bool:
    """Whether a query scores notes by their contextual vectors too."""
    return spread.applies(query) and not SUPPOSITION_RE.search(query)
