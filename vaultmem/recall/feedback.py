"""A third round for list questions about a person: the evidence gathered from the first hits (pure).

"What activities does Melanie partake in?" has its answer spread over several of Melanie's
turns ("I signed up for a pottery class", "we went camping"), few of which read like the
question. The subject round (``subject.py``) finds that Melanie is a speaker and lifts her
notes; this round takes her best-scoring notes so far as seeds, averages their vectors with
the question's (``weight`` of the seeds against the question's 1) and scores every note of the
same speakers by that vector: notes like the ones already found, about the same person, rise.
No LLM and no index-time work: the seeds are the people a note names (its speaker) and the
notes the first rounds found. Measured in benchmarks/README.md (LoCoMo, per category).
"""

from __future__ import annotations

import numpy as np

SEEDS = 3  # the speaker's best notes averaged into the query vector


def expanded(qvec: np.ndarray, seeds: list[np.ndarray], weight: float) -> np.ndarray:
    """The question's vector moved towards its seeds' mean (unit length)."""
    if not seeds:
        return qvec
    centre = np.mean(np.stack(seeds), axis=0)
    out = qvec / max(float(np.linalg.norm(qvec)), 1e-12) + weight * centre / max(
        float(np.linalg.norm(centre)), 1e-12
    )
    return out / max(float(np.linalg.norm(out)), 1e-12)
