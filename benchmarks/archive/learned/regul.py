"""Score regularisation among the top candidates (cluster hypothesis), offline on SciFact.

    python benchmarks/learned/regul.py            # sweep on train, quarters, test once for the best
    python benchmarks/learned/regul.py --no-test  # train only

Base score per note: recall's fused score ``0.30 * z(bm25) + 0.70 * z(vector)`` (``ev.z``: whole
vault standardised, /6 sd; SciFact has no links, so context and the graph step are 0 and this
is ``Vault.recall``'s ranking, train 0.7365). The top N candidates (by base score) are
re-scored with their note vectors' cosine matrix S (self excluded) and put back in the order
of the new score; notes below N keep their place. Forms (``regularise``):

- ``knn``: s_i + lam * mean of s_j over the m candidates most similar to i;
- ``knnw``: the same mean weighted by max(S_ij, 0);
- ``soft``: s_i + lam * sum_j softmax_j(S_ij / T) s_j;
- ``lp``: one step of label propagation on the symmetric kNN graph (m neighbours each),
  s + lam * D^-1/2 W D^-1/2 (s - mean(s)), W_ij = max(S_ij, 0): a note in a dense region of
  high-scoring candidates gains more than an isolated one (not a mean: degree counts).

Note vectors (``vec``): ``mean`` = normalised mean of the note's chunk vectors (query-free),
``best`` = the note's chunk closest to the query. Both from the chunk matrix that
``sf_arrays.py`` read through ``Vault.vectors()``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ev import W, z  # noqa: E402

from benchmarks.common import WORK  # noqa: E402

NMAX = 100
RESULTS = Path(__file__).resolve().parents[1] / "results" / "scifact-regularise.json"


def prepare(D: dict, split: str, NV: np.ndarray) -> list[dict]:
    """Per query: top-NMAX candidates in base order, their base scores, gains, and S per vec."""
    rows, M = D["chunk_rows"], D["chunk_matrix"]
    ids = D["notes"]["ids"]
    out = []
    for q in D[split]:
        s = W * z(q["bm25"]) + (1 - W) * z(q["vmax"])
        # recall keeps the top 100 and sorts by (-score, position)
        idx = np.argpartition(-s, NMAX - 1)[:NMAX]
        cand = np.array(sorted(idx, key=lambda i: (-s[i], i)))
        sims = M @ q["qvec"].astype(np.float32)
        best = {}
        for r in np.flatnonzero(np.isin(rows, cand)):
            i = int(rows[r])
            if i not in best or sims[r] > sims[best[i]]:
                best[i] = r
        BV = M[[best[int(i)] for i in cand]].astype(float)
        BV /= np.linalg.norm(BV, axis=1, keepdims=True)
        MV = NV[cand]
        gains = np.array([q["qrels"].get(ids[i], 0) for i in cand], float)
        ideal = sorted(q["qrels"].values(), reverse=True)[:10]
        idcg = sum(g / math.log2(k + 2) for k, g in enumerate(ideal))
        out.append({"s": s[cand], "gains": gains, "idcg": idcg,
                    "S": {"mean": MV @ MV.T, "best": BV @ BV.T}})  # fmt: skip
    return out


def regularise(s: np.ndarray, S: np.ndarray, form: str, lam: float, m: int = 5, T: float = 0.05) -> np.ndarray:
    """New scores of the candidates (s: base scores in rank order, S: their cosine matrix)."""
    n = len(s)
    S = S.copy()
    np.fill_diagonal(S, -np.inf)
    if form in ("knn", "knnw", "lp"):
        m = min(m, n - 1)
        nb = np.argpartition(-S, m - 1, axis=1)[:, :m]
        if form == "knn":
            return s + lam * s[nb].mean(1)
        w = np.maximum(np.take_along_axis(S, nb, 1), 0.0)
        if form == "knnw":
            return s + lam * (w * s[nb]).sum(1) / np.maximum(w.sum(1), 1e-9)
        Wm = np.zeros((n, n))
        np.put_along_axis(Wm, nb, w, 1)
        Wm = np.maximum(Wm, Wm.T)
        d = Wm.sum(1)
        dinv = 1 / np.sqrt(np.maximum(d, 1e-9))
        return s + lam * (dinv[:, None] * Wm * dinv[None, :]) @ (s - s.mean())
    if form == "soft":
        e = np.exp((S - S[np.isfinite(S)].max()) / T)
        e[~np.isfinite(S)] = 0.0
        P = e / e.sum(1, keepdims=True)
        return s + lam * P @ s
    raise ValueError(form)


def ndcg(q: dict, order: np.ndarray) -> float:
    g = q["gains"][order[:10]]
    return float(sum(x / math.log2(k + 2) for k, x in enumerate(g)) / q["idcg"]) if q["idcg"] else 0.0


def per_query(qs: list[dict], cfg: dict | None) -> np.ndarray:
    out = np.empty(len(qs))
    for k, q in enumerate(qs):
        if cfg is None:
            out[k] = ndcg(q, np.arange(NMAX))
            continue
        N = cfg["N"]
        new = regularise(q["s"][:N], q["S"][cfg["vec"]][:N, :N], cfg["form"], cfg["lam"], cfg.get("m", 5), cfg.get("T", 0.05))
        top = np.array(sorted(range(N), key=lambda i: (-new[i], i)))
        out[k] = ndcg(q, np.r_[top, np.arange(N, NMAX)])
    return out


def grid() -> list[dict]:
    cfgs = []
    for vec, N in itertools.product(("mean", "best"), (20, 50, 100)):
        for form, m in itertools.product(("knn", "knnw", "lp"), (1, 3, 5, 10)):
            for lam in (0.05, 0.1, 0.2, 0.3, 0.5):
                cfgs.append({"form": form, "vec": vec, "N": N, "m": m, "lam": lam})
        for T, lam in itertools.product((0.02, 0.05, 0.1), (0.05, 0.1, 0.2, 0.3, 0.5)):
            cfgs.append({"form": "soft", "vec": vec, "N": N, "T": T, "lam": lam})
    return cfgs


def refine() -> list[dict]:
    """A finer grid around the first sweep's best (knn / knnw, best-chunk vectors)."""
    return [{"form": f, "vec": "best", "N": N, "m": m, "lam": lam}
            for f in ("knn", "knnw") for N in (30, 40, 50, 60, 75) for m in (2, 3, 4)
            for lam in (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-test", action="store_true")
    ap.add_argument("--refine", action="store_true", help="the finer grid (writes scifact-regularise-refine.json)")
    args = ap.parse_args()
    t0 = time.time()
    D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
    n = len(D["nchunks"])
    NV = np.zeros((n, D["chunk_matrix"].shape[1]))
    np.add.at(NV, D["chunk_rows"], D["chunk_matrix"])
    NV /= np.linalg.norm(NV, axis=1, keepdims=True)
    tr = prepare(D, "train", NV)
    print(f"prepared train in {time.time() - t0:.0f}s", flush=True)
    base = per_query(tr, None)
    print(f"base train {base.mean():.4f}", flush=True)
    quarters = np.array_split(np.random.default_rng(0).permutation(len(tr)), 4)
    rows = []
    for cfg in refine() if args.refine else grid():
        got = per_query(tr, cfg)
        d = got - base
        rows.append({**cfg, "train": round(float(got.mean()), 4), "gain": round(float(d.mean()), 4),
                     "quarters": [round(float(d[i].mean()), 4) for i in quarters],
                     "better": int((d > 1e-9).sum()), "worse": int((d < -1e-9).sum())})  # fmt: skip
    rows.sort(key=lambda r: -r["train"])
    for r in rows[:25]:
        print(json.dumps(r), flush=True)
    best_by = {}
    for r in rows:
        key = (r["form"], r["vec"], r["N"])
        best_by.setdefault(key, r)
    print("best per form x vec x N:")
    for key, r in sorted(best_by.items()):
        print(" ", key, r["train"], r["gain"], r["quarters"], r.get("m", r.get("T")), r["lam"])
    out = {"base_train": round(float(base.mean()), 4), "grid": rows, "best": rows[0]}
    if not args.no_test:
        te = prepare(D, "test", NV)
        tb = per_query(te, None)
        tg = per_query(te, rows[0])
        out["test"] = {"base": round(float(tb.mean()), 4), "best": round(float(tg.mean()), 4),
                       "better": int((tg - tb > 1e-9).sum()), "worse": int((tg - tb < -1e-9).sum())}  # fmt: skip
        print("test", out["test"])
    res = RESULTS.with_name("scifact-regularise-refine.json") if args.refine else RESULTS
    body = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in out.items() if k != "grid"]
    grid_txt = ",\n".join("  " + json.dumps(r) for r in rows)
    res.write_text("{\n" + ",\n".join([f' "grid": [\n{grid_txt}\n ]', *body]) + "\n}\n")
    print(f"done in {time.time() - t0:.0f}s -> {res}")


if __name__ == "__main__":
    main()
