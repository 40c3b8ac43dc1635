"""The embedding model inside BM25 (SciFact; train for the sweep, test once for its best).

    python benchmarks/learned/termweights.py    # after sf_arrays.py; embeds ~13.5k words (cached)

Each vocabulary term (document frequency >= 2) is embedded once as its most frequent surface
word. For a query:

- ``w``: each query term's BM25 weight becomes ``(1 - alpha) + alpha * max(0, cos)^p``, cos
  being the term's cosine with the whole query's vector (terms off the query's topic count less);
- ``x``: the m vocabulary terms nearest the query's vector join the BM25 query with weight
  ``beta * cos`` (dense -> sparse expansion).

The fused score is recall's ``0.30 z(bm25) + 0.70 z(vector)``. Writes
``benchmarks/results/scifact-termweights.json``.
"""
from __future__ import annotations

import itertools
import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ev import z  # noqa: E402
from sf_bm25 import Postings  # noqa: E402

from benchmarks.common import WORK, CachedEmbedder, ndcg_at  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "results" / "scifact-termweights.json"


def weights(q: dict, vocab: list[str], E: np.ndarray, vpos: dict, p, alpha, m, beta) -> dict:
    qv, terms = q["qvec"], list(dict.fromkeys(q["terms"]))
    cos = {t: float(E[vpos[t]] @ qv) if t in vpos else 0.5 for t in terms}
    w = {t: (1 - alpha) + alpha * max(c, 0.0) ** p for t, c in cos.items()}
    if m:
        sims = E @ qv
        added = [vocab[j] for j in np.argsort(-sims)[: m + len(terms)] if vocab[j] not in w][:m]
        w.update({t: beta * float(sims[vpos[t]]) for t in added})
    return w


def main() -> None:
    D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
    ids = D["notes"]["ids"]
    vault = Vault(WORK / "scifact-vault", CachedEmbedder())
    P = Postings(vault)
    vocab = sorted(t for t, (a, _) in P.post.items() if len(a) >= 2)
    E = np.asarray(vault.embedder.embed([P.surface[t].most_common(1)[0][0] for t in vocab]), np.float32)
    vpos = {t: i for i, t in enumerate(vocab)}

    def run(split: str, *setting) -> float:
        out = []
        for q in D[split]:
            b = P.bm25(weights(q, vocab, E, vpos, *setting))
            fused = 0.3 * z(b) + 0.7 * z(q["vmax"])
            out.append(ndcg_at([ids[i] for i in np.argsort(-fused, kind="stable")[:10]], q["qrels"]))
        return round(float(np.mean(out)), 4)

    rows = [{"variant": "base", "setting": [1, 0, 0, 0], "train": run("train", 1, 0, 0, 0)}]
    for p, alpha in itertools.product((1, 2), (0.25, 0.5, 0.75, 1.0)):
        rows.append({"variant": "w", "setting": [p, alpha, 0, 0], "train": run("train", p, alpha, 0, 0)})
    for m, beta in itertools.product((3, 5, 10), (0.1, 0.2, 0.4)):
        rows.append({"variant": "x", "setting": [1, 0, m, beta], "train": run("train", 1, 0, m, beta)})
    for r in rows:
        print(r, flush=True)
    best = max(rows[1:], key=lambda r: r["train"])
    result = {"vocabulary": len(vocab), "rows": rows, "best": best,
              "test": {"base": run("test", 1, 0, 0, 0), "best": run("test", *best["setting"])}}  # fmt: skip
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(result["best"], result["test"])


if __name__ == "__main__":
    main()
