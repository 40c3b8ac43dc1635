"""The in-memory vector index: a float32 matrix of chunk vectors searched by one matmul.

Rows are grouped by note path; a note's vector score is the best score of its chunks.
The matrix is loaded from the manifest and reloaded after the indexer changes it.
"""

from __future__ import annotations

import numpy as np


class VectorIndex:
    """Chunk vectors of all notes, with per-note max pooling of scores."""

    def __init__(self, row_paths: list[str], matrix: np.ndarray):
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self.paths: list[str] = []
        starts: list[int] = []
        for i, path in enumerate(row_paths):
            if not self.paths or self.paths[-1] != path:
                self.paths.append(path)
                starts.append(i)
        self._starts = np.asarray(starts, dtype=np.int64)
        self._index = {p: i for i, p in enumerate(self.paths)}

    def __len__(self) -> int:
        return len(self.paths)

    def note_scores(self, qvec: np.ndarray) -> np.ndarray:
        """Cosine similarity of the query with each note (best chunk), in ``self.paths`` order."""
        if not self.paths:
            return np.zeros(0, dtype=np.float32)
        sims = self.matrix @ qvec.astype(np.float32)
        return np.maximum.reduceat(sims, self._starts)

    def search(self, qvec: np.ndarray, limit: int = 100, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """Top ``limit`` (path, cosine) pairs, best first; ``allowed`` restricts to those paths."""
        scores = self.note_scores(qvec)
        if allowed is not None:
            mask = np.full(len(self.paths), -np.inf, dtype=np.float32)
            idx = [self._index[p] for p in allowed if p in self._index]
            mask[idx] = 0.0
            scores = scores + mask
        n = min(limit, int(np.isfinite(scores).sum()))
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.paths[i], float(scores[i])) for i in top]

    def score_of(self, qvec: np.ndarray, paths: list[str]) -> dict[str, float]:
        """Cosine scores for specific notes (used by --explain and graph-added notes)."""
        scores = self.note_scores(qvec)
        return {p: float(scores[self._index[p]]) for p in paths if p in self._index}
