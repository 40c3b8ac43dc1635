"""Offline replica of recall's ranking with a linear combination over whole-vault arrays.

Score of every note: ``base = sum(w_f * f)`` over the text features (bm25, vector, chunk
spread, short-note prior centred on the vault), ``context = w_c * best_neighbour(base without
the short-note prior)`` (``ctx_no_short=False``: with it; ``uncentred=True``: prior not centred), candidates = top 100 of
base + context, then the graph step of ``recall._graph`` (top 5 seeds scoring >= half the best
pass 0.3 * 0.5 * seed score to their one-hop neighbours). Time boosts are not replicated
(they add the same amount under either combination).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ev import best_neighbour, by_category, ndcg10, z  # noqa: E402

from benchmarks.common import WORK  # noqa: E402

TEXT = ["bm25", "vector", "spread", "short", "mean_spread"]
TODAY = {"bm25": 0.30, "vector": 0.70, "context": 0.2}


class Q:
    def __init__(self, F, rel, meta, pairs=None, adj=None):
        self.F, self.rel, self.meta, self.pairs, self.adj = F, rel, meta, pairs, adj


def short_prior(size: np.ndarray, ref: float) -> np.ndarray:
    """min(0, log(size / ref)): 0 for notes of ``ref`` bytes or more, negative below (the
    feature is this minus its mean over the vault, so an average note still scores 0)."""
    return np.minimum(0.0, np.log(np.maximum(size, 1.0) / ref))


def feats(bm25, vmax, size, v2=None, vmean=None, ref=1024.0):
    v = z(vmax)
    return {"bm25": z(bm25), "vector": v,
            "spread": (np.asarray(v2, float) - vmax) / (6 * np.std(vmax)) if v2 is not None else np.zeros_like(v),
            "mean_spread": (z(vmean) - v) if vmean is not None else np.zeros_like(v),
            "short": short_prior(size, ref) - short_prior(size, ref).mean()}  # fmt: skip


def load_sf(split, ref=1024.0):
    D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
    ids = D["notes"]["ids"]
    out = []
    for q in D[split]:
        F = feats(q["bm25"], q["vmax"], D["notes"]["size"], q["v2"], q["vmean"], ref)
        rel = np.array([q["qrels"].get(d, 0) for d in ids], float)
        out.append(Q(F, rel, {"ideal": sorted(q["qrels"].values(), reverse=True)}))
    return out


def load_lc(shape, convs=None, ref=1024.0):
    D = pickle.load(open(WORK / "exp" / "locomo-arrays.pkl", "rb"))
    out = []
    for (sh, conv), d in D.items():
        if sh != shape or (convs and conv not in convs):
            continue
        for q in d["qs"]:
            F = feats(q["bm25"], q["vec"], d["size"], ref=ref)
            ev = set(q["ev"])
            rel = np.array([i in ev for i in d["ids"]], float)
            out.append(Q(F, rel, {"cat": q["cat"], "conv": conv, "nev": len(ev), "short_mean": float(short_prior(d["size"], ref).mean())},
                         d["pairs"], d["adj"]))  # fmt: skip
    return out


def rank(q: Q, w: dict, seeds=5, gw=0.3, decay=0.5, cand=100) -> np.ndarray:
    short = q.F["short"] + (q.meta.get("short_mean", 0.0) if w.get("uncentred") else 0.0)
    base = sum(w.get(f, 0.0) * q.F[f] for f in TEXT if f != "short") + w.get("short", 0.0) * short
    cbase = base - w.get("short", 0.0) * short if w.get("ctx_no_short", True) else base  # as learned.parts
    ctx = w.get("context", 0.0) * best_neighbour(cbase, q.pairs) if q.pairs is not None else 0.0
    tot = base + ctx
    idx = np.argpartition(-tot, cand - 1)[:cand] if len(tot) > cand else np.arange(len(tot))
    final = {int(i): float(tot[i]) for i in idx}
    if q.adj is not None and seeds:
        top = sorted(final, key=lambda i: -final[i])[:seeds]
        best = final[top[0]]
        if best > 0:
            bonus: dict = {}
            seed_set = {s for s in top if final[s] >= 0.5 * best}
            for s in seed_set:
                for j in q.adj[s]:
                    if j in seed_set:
                        continue
                    bonus[j] = max(bonus.get(j, 0.0), final[s] * decay)
            for j, b in bonus.items():
                final[j] = float(tot[j]) + gw * b
    order = sorted(final, key=lambda i: (-final[i], i))
    return np.array(order)


def sf_score(qs, w):
    return float(np.mean([ndcg10(q, rank(q, w)) for q in qs]))


def lc_score(qs, w):
    return by_category(qs, [rank(q, w) for q in qs])
