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
        self._row_paths = list(row_paths)
        self.paths: list[str] = []
        starts: list[int] = []
        for i, path in enumerate(row_paths):
            if not self.paths or self.paths[-1] != path:
                self.paths.append(path)
                starts.append(i)
        self._starts = np.asarray(starts, dtype=np.int64)
        self._one_each = len(starts) == len(row_paths)  # one chunk per note: no pooling needed
        # aligned_scores' positions, and the map they were built for: held, not its id(),
        # because a freed map's id is often reused by the next one
        self._pos = np.zeros(0, dtype=np.int64)
        self._pos_for: dict | None = None
        self._mask = np.zeros(0, dtype=bool)

    def updated(self, row_paths: list[str], matrix: np.ndarray, removed: set[str]) -> VectorIndex:
        """A new index with the rows of ``removed`` paths dropped and the given rows put in
        (each path's rows replace its old ones); rows stay grouped in path order."""
        replaced = removed | set(row_paths)
        keep = [i for i, p in enumerate(self._row_paths) if p not in replaced]
        rows = [self._row_paths[i] for i in keep] + list(row_paths)
        parts = [self.matrix[keep]] if len(keep) else []
        if len(row_paths):
            parts.append(np.asarray(matrix, dtype=np.float32))
        if not rows:
            return VectorIndex(
                [], np.zeros((0, self.matrix.shape[1] if self.matrix.ndim == 2 else 0), dtype=np.float32)
            )
        stacked = np.concatenate(parts) if len(parts) > 1 else parts[0]
        order = sorted(range(len(rows)), key=lambda i: rows[i])  # stable: chunk order kept
        return VectorIndex([rows[i] for i in order], stacked[order])

    def note_vector(self, path: str) -> np.ndarray | None:
        """The mean of a note's chunk vectors (None when it has none)."""
        if not hasattr(self, "_at"):
            self._at = {p: i for i, p in enumerate(self.paths)}
        i = self._at.get(path)
        if i is None:
            return None
        end = int(self._starts[i + 1]) if i + 1 < len(self._starts) else len(self._row_paths)
        return self.matrix[int(self._starts[i]) : end].mean(axis=0)

    def __len__(self) -> int:
        return len(self.paths)

    def note_scores(self, qvec: np.ndarray) -> np.ndarray:
        """Cosine similarity of the query with each note (best chunk), in ``self.paths`` order."""
        if not self.paths:
            return np.zeros(0, dtype=np.float32)
        sims = self.matrix @ qvec.astype(np.float32)
        return sims if self._one_each else np.maximum.reduceat(sims, self._starts)

    def aligned_scores(self, qvec: np.ndarray, index: dict[str, int], n: int) -> np.ndarray:
        """Cosine of every note placed at ``index[path]`` (0 for notes without vectors)."""
        self._align(index, n)
        out = np.zeros(n, dtype=np.float64)
        if self.paths:
            scores = self.note_scores(qvec)
            ok = self._pos >= 0
            out[self._pos[ok]] = scores[ok]
        return out

    def better(self, qvec: np.ndarray, index: dict[str, int], plain: np.ndarray) -> np.ndarray:
        """``plain`` (cosines in ``index`` order) with each note this index has a vector for
        raised to that vector's cosine when it is higher (the contextual vectors' use)."""
        if not self.paths:
            return plain
        scores = self.aligned_scores(qvec, index, len(plain))
        return np.where(self._mask, np.maximum(plain, scores), plain)

    def _align(self, index: dict[str, int], n: int) -> None:
        if self._pos_for is not index or len(self._mask) != n:
            self._pos = np.array([index.get(p, -1) for p in self.paths], dtype=np.int64)
            self._pos_for = index
            self._mask = np.zeros(n, dtype=bool)
            self._mask[self._pos[self._pos >= 0]] = True
