"""How far fusion of today's two signals can go on SciFact (issue 18's 0.76 target).

    python benchmarks/learned/ceiling.py     # after sf_arrays.py; ~2 min on 2 busy cores

Over the arrays of ``sf_arrays.py`` (every note's BM25 and best-chunk cosine per query):

- each signal alone, and recall's convex fusion ``w z(bm25) + (1 - w) z(vector)`` for w in
  0..1 on both splits: the best *global* weight read off the test split itself is an upper
  bound for any re-weighting of these two scores;
- the per-query oracle (each query's own best w): the bound for query-adaptive weighting;
- query-adaptive weighting from query-performance predictors (the top score's lead over the
  10th and the 2nd, in standard deviations, for each signal; top-10 overlap; query length):
  ``w = w0 + c * standardised predictor``, fitted on train, then test;
- other fusion families (reciprocal rank, min-max over the top 100), best setting on test;
- a third signal: the query's cosine with each note's title alone.

Writes ``benchmarks/results/scifact-ceiling.json``.
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

from ev import z  # noqa: E402  (recall's standardisation: centred, over 6 standard deviations)

from benchmarks.common import WORK, CachedEmbedder, ndcg_at  # noqa: E402

WEIGHTS = np.round(np.linspace(0, 1, 21), 2)
OUT = Path(__file__).resolve().parents[1] / "results" / "scifact-ceiling.json"


def score(scores: np.ndarray, q: dict, ids: list[str]) -> float:
    return ndcg_at([ids[i] for i in np.argsort(-scores, kind="stable")[:10]], q["qrels"])


def by_weight(queries: list[dict], ids: list[str]) -> np.ndarray:
    """nDCG@10 of every query (rows) at every fusion weight (columns)."""
    return np.array([[score(w * z(q["bm25"]) + (1 - w) * z(q["vmax"]), q, ids) for w in WEIGHTS] for q in queries])


def predictors(q: dict) -> dict[str, float]:
    out = {}
    for name in ("bm25", "vmax"):
        x = np.asarray(q[name], float)
        top, sd = np.sort(x)[::-1], x.std() or 1.0
        out[f"{name}_lead10"] = (top[0] - top[9]) / sd
        out[f"{name}_lead2"] = (top[0] - top[1]) / sd
    out["overlap10"] = len(set(np.argsort(-q["bm25"])[:10]) & set(np.argsort(-q["vmax"])[:10])) / 10
    out["query_terms"] = float(len(q["terms"]))
    return out


def adaptive(M: dict, P: dict) -> dict:
    """Best ``w0 + c * z(predictor)`` per predictor on train, and its test score."""
    rows = []
    for name in P["train"][0]:
        v = np.array([p[name] for p in P["train"]])
        mu, sd = v.mean(), v.std() or 1.0
        for w0, c in itertools.product(np.linspace(0.1, 0.5, 9), np.linspace(-0.3, 0.3, 13)):
            got = {}
            for split in ("train", "test"):
                w = np.array([w0 + c * (p[name] - mu) / sd for p in P[split]])
                col = np.clip(np.round(w * 20), 0, 20).astype(int)
                got[split] = float(M[split][np.arange(len(col)), col].mean())
            rows.append({"predictor": name, "w0": round(w0, 2), "c": round(c, 2), **got})
    best = {}
    for r in rows:
        if r["predictor"] not in best or r["train"] > best[r["predictor"]]["train"]:
            best[r["predictor"]] = r
    return best


def families(queries: list[dict], ids: list[str]) -> dict[str, float]:
    def rank(x):
        r = np.empty(len(x))
        r[np.argsort(-x)] = np.arange(len(x))
        return r

    def minmax(x, k=100):
        top = np.sort(x)[-k:]
        return (x - top[0]) / (top[-1] - top[0] + 1e-12)

    out = {}
    for k in (10, 30, 60):
        out[f"rrf k={k}"] = np.mean([score(1 / (k + rank(q["bm25"])) + 1 / (k + rank(q["vmax"])), q, ids) for q in queries])
    for w in (0.3, 0.4, 0.5):
        out[f"min-max top 100, w={w}"] = np.mean([score(w * minmax(q["bm25"]) + (1 - w) * minmax(q["vmax"]), q, ids) for q in queries])
    return {k: round(float(v), 4) for k, v in out.items()}


def with_titles(D: dict, ids: list[str]) -> dict:
    titles = np.asarray(CachedEmbedder().embed(D["notes"]["titles"]), np.float32)
    out = {}
    for split in ("train", "test"):
        Q = D[split]
        parts = [(z(q["bm25"]), z(q["vmax"]), z(titles @ q["qvec"])) for q in Q]
        out[split] = {"title alone": round(float(np.mean([score(p[2], q, ids) for p, q in zip(parts, Q)])), 4)}
        for wt in (0.05, 0.1, 0.2):
            out[split][f"0.30 bm25 + {0.7 - wt:.2f} vector + {wt} title"] = round(float(np.mean(
                [score(0.3 * p[0] + (0.7 - wt) * p[1] + wt * p[2], q, ids) for p, q in zip(parts, Q)])), 4)  # fmt: skip
    return out


def main() -> None:
    D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
    ids = D["notes"]["ids"]
    M = {s: by_weight(D[s], ids) for s in ("train", "test")}
    P = {s: [predictors(q) for q in D[s]] for s in ("train", "test")}
    result = {"weights": WEIGHTS.tolist()}
    for s in ("train", "test"):
        mean = M[s].mean(0)
        result[s] = {
            "bm25 alone (w=1)": round(float(mean[-1]), 4), "vector alone (w=0)": round(float(mean[0]), 4),
            "today (w=0.30)": round(float(mean[6]), 4),
            "best global w": float(WEIGHTS[mean.argmax()]), "at best global w": round(float(mean.max()), 4),
            "per-query oracle w": round(float(M[s].max(1).mean()), 4), "by weight": [round(float(x), 4) for x in mean],
            "other families": families(D[s], ids),
        }  # fmt: skip
    result["adaptive (fit on train)"] = adaptive(M, P)
    result["title vector"] = with_titles(D, ids)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "weights"}, indent=1))


if __name__ == "__main__":
    main()
