"""The in-memory vector index: per-note max pooling, with and without multi-chunk notes."""

from __future__ import annotations

import numpy as np

from vaultmem.index.vectors import VectorIndex


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, 8)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_one_chunk_per_note_scores_equal_pooled_scores():
    rng = np.random.default_rng(3)
    m, q = _unit(rng, 5), _unit(rng, 1)[0]
    single = VectorIndex(["a", "b", "c", "d", "e"], m)
    assert np.array_equal(single.note_scores(q), np.maximum.reduceat(m @ q, np.arange(5)))


def test_a_note_scores_its_best_chunk():
    rng = np.random.default_rng(4)
    m, q = _unit(rng, 5), _unit(rng, 1)[0]
    index = VectorIndex(["a", "a", "b", "c", "c"], m)
    sims = m @ q
    assert index.paths == ["a", "b", "c"]
    assert np.allclose(index.note_scores(q), [max(sims[0], sims[1]), sims[2], max(sims[3], sims[4])])
    # a batch that gives "b" a second chunk turns pooling back on for it
    grown = index.updated(["b", "b"], m[:2], set())
    assert np.allclose(
        grown.note_scores(q), [max(sims[0], sims[1]), max(sims[0], sims[1]), max(sims[3], sims[4])]
    )


def test_manifest_matrix_equals_the_stored_rows(empty_vault, open_vault):
    from helpers import write

    long_body = "\n\n".join(f"Paragraph {i} about topic {i} " + "word " * 40 for i in range(6))
    write(empty_vault, "a/Long.md", f"# Long\n\n{long_body}\n")  # several chunks
    write(empty_vault, "a/Short.md", "# Short\n\nOne line.\n")
    vault = open_vault(empty_vault)
    paths0, m0 = vault.manifest.vectors(vault.embedder.name)
    assert paths0 == [] and m0.shape == (0, 0)
    vault.reindex()
    rows = vault.manifest.db.execute(
        "SELECT c.path, e.vec FROM chunks c JOIN embeddings e ON e.chash=c.chash AND e.model=? ORDER BY c.path, c.n",
        (vault.embedder.name,),
    ).fetchall()
    paths, matrix = vault.manifest.vectors(vault.embedder.name)
    assert paths == [r[0] for r in rows] and paths.count("a/Long.md") > 1
    assert np.array_equal(matrix, np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows]))
    some, part = vault.manifest.vectors(vault.embedder.name, ["a/Short.md"])
    assert some == ["a/Short.md"] and np.array_equal(part[0], matrix[paths.index("a/Short.md")])
