"""Question words are not content: the BM25 query of a question without its interrogatives
and auxiliaries (pure).

"What did Caroline research?" matches every note that itself asks "what did ..." as strongly
as the one about research; BM25 gets "Caroline research". Vectors still embed the whole
question, and snippets use the whole query. Measured in benchmarks/README.md (LoCoMo).
"""

from __future__ import annotations

import re

QUESTION_WORDS = frozenset(
    "what whats which who whom whose where why how "
    "did does do doing was were has have had would could should might shall".split()
)  # whoosh's stop list already drops a, an, are, be, can, is, may, when, will, ...
WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


def content_query(query: str) -> str:
    """``query`` without question words (the query itself when nothing else is left)."""
    words = WORD_RE.findall(query)
    kept = [w for w in words if w.lower().replace("’", "'").split("'")[0] not in QUESTION_WORDS]
    return " ".join(kept) if kept else query
