"""Question words are not content: the BM25 query of a question without its interrogatives
and auxiliaries (pure).

A query is a question when it ends with "?" or opens with a question word; statements
(claims, keywords) are left alone. "What did Caroline research?" matches every note that itself asks "what did ..." as strongly
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


OPENERS = QUESTION_WORDS | {"when", "is", "are", "can", "will", "may"}


def _base(word: str) -> str:
    return word.lower().replace("’", "'").split("'")[0]


def is_question(query: str) -> bool:
    """Ends with ``?`` or opens with a question word ("Does X cause Y" but not "X does Y")."""
    words = WORD_RE.findall(query)
    return query.rstrip().endswith("?") or bool(words and _base(words[0]) in OPENERS)


def content_query(query: str) -> str:
    """A question without its question words (the query itself when it is not a question,
    or when nothing else is left)."""
    if not is_question(query):
        return query
    kept = [w for w in WORD_RE.findall(query) if _base(w) not in QUESTION_WORDS]
    return " ".join(kept) if kept else query


def keyword_query(query: str, question_words: bool = False) -> str:
    """What BM25 scores of a query: ``content_query`` unless ``[recall] question_words``."""
    return query if question_words else content_query(query)
