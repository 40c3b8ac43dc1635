"""The relevance floor: a note is a hit only when it shares meaning with the query beyond chance.

Recall ranks by scores standardised over the vault, so a query that matches nothing still has
notes above the vault's average: "zebra quantum xylophone" used to list eight notes of a
12-note vault (cosine ~0.10 each), and a note with one word in common was shown with a
negative score. A note now needs meaning in common with the query on an absolute scale
(cosines on MiniLM's scale, ``embed.similarity``, so the floor means the same with either
encoder):

- it shares a keyword with the query (a name, a term: BM25's evidence), or
- its cosine with the query is at least ``MEANING``, what unrelated texts do not reach;

and its score is above the vault's average note (never a negative score). Calibrated on the
LoCoMo dev questions (``benchmarks/encoders.py --part floor``, benchmarks/README.md): the
share of true evidence hits it drops, and the hits it leaves 21 nonsense queries.
Without vectors (BM25 mode, the keyword answer while the model loads, ``embedding.model =
"none"``) a keyword in common is the evidence, as before.
"""

from __future__ import annotations

MEANING = 0.30  # a cosine unrelated texts do not reach (see the module)


def meaningful(cosine: float, keyword: bool, vectors: bool = True) -> bool:
    """Whether a note with this cosine (MiniLM's scale), sharing a keyword with the query or
    not, shares meaning with it beyond chance; without vectors, a keyword decides."""
    return keyword or (vectors and cosine >= MEANING)
