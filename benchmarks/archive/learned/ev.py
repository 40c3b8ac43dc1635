"""Offline evaluation of combinations over the cached arrays (SciFact and LoCoMo).

Each query becomes a candidate list (the top ``CAND`` notes by today's fused score plus
neighbour context, as ``recall._retrieve`` keeps them) with a feature matrix; a variant is a
scoring function over that matrix. ``fit`` fits a linear ranker (listwise softmax or
pointwise logistic), so a variant costs seconds.
"""

from __future__ import annotations

import math
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import WORK  # noqa: E402

CAND = 100
W = 0.30  # today's bm25 weight
CTX = 0.2  # today's neighbour context weight
CATS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def z(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, float)
    sd = x.std()
    return (x - x.mean()) / (6 * sd) if sd > 1e-12 else np.zeros_like(x)


def best_neighbour(scores: np.ndarray, pairs) -> np.ndarray:
    src, dst = pairs
    out = np.zeros(scores.shape[0])
    if src.size == 0:
        return out
    starts = np.flatnonzero(np.r_[True, src[1:] != src[:-1]])
    out[src[starts]] = np.maximum(np.maximum.reduceat(scores[dst], starts), 0.0)
    return out


def cover(qterms, term_sets, idx, idf=None) -> np.ndarray:
    """Share of the query's terms (idf-weighted if given) found in each candidate's terms."""
    if not qterms:
        return np.zeros(len(idx))
    wts = np.array([idf.get(t, 1.0) if idf else 1.0 for t in qterms])
    return np.array([sum(w for t, w in zip(qterms, wts) if t in term_sets[i]) for i in idx]) / wts.sum()


def phrase(qterms, bigram_sets, idx) -> np.ndarray:
    """Share of the query's adjacent term pairs found adjacent in the candidate (unused if None)."""
    pairs = list(zip(qterms, qterms[1:]))
    if not pairs or bigram_sets is None:
        return np.zeros(len(idx))
    return np.array([sum(p in bigram_sets[i] for p in pairs) for i in idx]) / len(pairs)


FEATURES = ["bm25", "vector", "context", "title", "coverage", "idf_coverage", "length", "v2", "vmean", "nchunks", "bm25_raw_log"]


class Query:
    def __init__(self, cand, X, rel, meta=None):
        self.cand, self.X, self.rel, self.meta = cand, X, rel, meta or {}


def idf_of(term_sets) -> dict:
    n = len(term_sets)
    df: dict = {}
    for s in term_sets:
        for t in s:
            df[t] = df.get(t, 0) + 1
    return {t: math.log(n / (d + 1)) + 1 for t, d in df.items()}


def build(bm25, vmax, qterms, notes, pairs=None, v2=None, vmean=None, w=W, ctx=CTX, cand=CAND):
    """(candidate positions, feature matrix) of one query."""
    b, v = z(bm25), z(vmax)
    fused = w * b + (1 - w) * v
    c = ctx * best_neighbour(fused, pairs) if pairs is not None else np.zeros_like(fused)
    total = fused + c
    idx = np.argpartition(-total, cand - 1)[:cand] if len(total) > cand else np.arange(len(total))
    idx = idx[np.argsort(-total[idx], kind="stable")]
    cols = {
        "bm25": b[idx], "vector": v[idx], "context": c[idx] / ctx if ctx else c[idx],
        "title": cover(qterms, notes["title_terms"], idx),
        "coverage": cover(qterms, notes["content_terms"], idx),
        "idf_coverage": cover(qterms, notes["content_terms"], idx, notes["idf"]),
        "length": np.log(notes["size"][idx]),
        "v2": z(v2)[idx] if v2 is not None else v[idx],
        "vmean": z(vmean)[idx] if vmean is not None else v[idx],
        "nchunks": np.log(notes["nchunks"][idx]) if "nchunks" in notes else np.zeros(len(idx)),
        "bm25_raw_log": np.log1p(np.asarray(bm25)[idx]),
    }  # fmt: skip
    return idx, np.stack([cols[f] for f in FEATURES], 1)


# ------------------------------------------------------------------ data sets


def scifact(split: str) -> list[Query]:
    D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
    notes = D["notes"]
    notes["idf"] = idf_of(notes["content_terms"])
    notes["nchunks"] = D["nchunks"].astype(float)
    pos = {d: i for i, d in enumerate(notes["ids"])}
    out = []
    for q in D[split]:
        idx, X = build(q["bm25"], q["vmax"], q["terms"], notes, None, q["v2"], q["vmean"])
        rel = np.array([q["qrels"].get(notes["ids"][i], 0) for i in idx], float)
        ideal = sorted(q["qrels"].values(), reverse=True)
        out.append(Query(idx, X, rel, {"ideal": ideal, "id": q["id"], "nrel_total": len(q["qrels"])}))
    _ = pos
    return out


def locomo(shape: str, convs=None) -> list[Query]:
    D = pickle.load(open(WORK / "exp" / "locomo-arrays.pkl", "rb"))
    out = []
    for (sh, conv), d in D.items():
        if sh != shape or (convs and conv not in convs):
            continue
        notes = {"title_terms": d["title_terms"], "content_terms": d["content_terms"], "size": d["size"],
                 "idf": idf_of(d["content_terms"]), "nchunks": np.ones(len(d["ids"]))}  # fmt: skip
        for q in d["qs"]:
            idx, X = build(q["bm25"], q["vec"], q["terms"], notes, d["pairs"])
            ev = set(q["ev"])
            rel = np.array([d["ids"][i] in ev for i in idx], float)
            out.append(Query(idx, X, rel, {"cat": q["cat"], "conv": conv, "nev": len(ev), "adj": d["adj"], "q": q}))
    return out


# ------------------------------------------------------------------ metrics


def ndcg10(q: Query, order) -> float:
    gains = q.rel[order[:10]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(q.meta["ideal"][:10]))
    return dcg / idcg if idcg else 0.0


def recall10(q: Query, order) -> float:
    return float(q.rel[order[:10]].sum()) / q.meta["nev"]


def score_sf(qs, fn) -> float:
    return float(np.mean([ndcg10(q, np.argsort(-fn(q), kind="stable")) for q in qs]))


def score_lc(qs, fn) -> dict:
    return by_category(qs, [np.argsort(-fn(q), kind="stable") for q in qs])


def by_category(qs, orders) -> dict:
    """Evidence recall@10 (percent) of each question's ranking: over all, and per category."""
    r = [(q.meta["cat"], recall10(q, order)) for q, order in zip(qs, orders)]
    out = {"all": 100 * np.mean([x for _, x in r])}
    for c, n in CATS.items():
        sel = [x for cc, x in r if cc == c]
        if sel:
            out[n] = 100 * np.mean(sel)
    return out


def fmt(o: dict) -> str:
    return " ".join(f"{k} {v:.1f}" for k, v in o.items())


def today(q: Query) -> np.ndarray:
    X = q.X
    return W * X[:, 0] + (1 - W) * X[:, 1] + CTX * X[:, 2]


def linear(weights: dict):
    wv = np.array([weights.get(f, 0.0) for f in FEATURES])
    return lambda q: q.X @ wv


# ------------------------------------------------------------------ fitting


def fit(groups, feats, l2=1e-2, it=400, lr=0.3, loss="listwise", weight=None):
    """Linear weights over ``feats`` (dict), fit on lists of Query with any relevant candidate.

    ``weight``: per-group weight (e.g. to balance two data sets)."""
    cols = [FEATURES.index(f) for f in feats]
    gs = [(q.X[:, cols], q.rel) for q in groups if q.rel.sum() > 0]
    gw = np.ones(len(gs)) if weight is None else np.array([w for q, w in zip(groups, weight) if q.rel.sum() > 0])
    allX = np.concatenate([x for x, _ in gs])
    mu, sd = allX.mean(0), allX.std(0) + 1e-9
    gs = [((x - mu) / sd, r) for x, r in gs]
    w = np.zeros(len(cols))
    # Adam
    m, v = np.zeros_like(w), np.zeros_like(w)
    b0 = 0.0
    for t in range(1, it + 1):
        g = np.zeros_like(w)
        gb = 0.0
        for (x, r), wt in zip(gs, gw):
            s = x @ w + (b0 if loss == "pointwise" else 0.0)
            if loss == "listwise":
                p = np.exp(s - s.max())
                p /= p.sum()
                target = r / r.sum()
                g += wt * (x.T @ (p - target))
            else:
                p = 1 / (1 + np.exp(-s))
                pw = (len(r) - r.sum()) / r.sum()
                sw = np.where(r > 0, pw, 1.0)
                g += wt * (x.T @ (sw * (p - (r > 0)))) / len(r)
                gb += wt * float((sw * (p - (r > 0))).sum()) / len(r)
        g = g / gw.sum() + l2 * w
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g**2
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        b0 -= 0.1 * gb / gw.sum()
    raw = w / sd
    return dict(zip(feats, raw))


def normalised(weights: dict) -> dict:
    """Scaled so that bm25 + vector weights sum to 1 (today's scale: other parts add on it)."""
    s = weights.get("bm25", 0.0) + weights.get("vector", 0.0)
    return {k: v / s for k, v in weights.items()}
