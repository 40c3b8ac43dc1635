"""RM3-style BM25 query expansion on SciFact train (offline): the top-k hybrid hits' most
frequent terms (weighted by the hit's rank share and idf) added to the BM25 query at weight
beta of an original term; and a bigram (phrase) feature: share of the query's adjacent term
pairs found adjacent in the note, added to the hybrid score at weight g.

    python benchmarks/learned/rm3.py
"""
from __future__ import annotations

import math
import pickle
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ev import W, z  # noqa: E402

from benchmarks.common import WORK  # noqa: E402
from vaultmem.index.analysis import analyzer  # noqa: E402
from vaultmem.index.chunking import plain_text  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
notes = D["notes"]
vault = Vault(WORK / "scifact-vault")
src = vault.sources()
an = analyzer()
post: dict = {}
tfs, bigrams = [], []
lengths = np.zeros(len(src.universe))
for i, p in enumerate(src.universe):
    rec = src.records[p]
    body = plain_text(vault.body(p))
    toks = [t.text for t in an("\n".join((rec.title, rec.title, "", "", body)))]
    seq = [t.text for t in an("\n".join((rec.title, body)))]
    bigrams.append(set(zip(seq, seq[1:])))
    lengths[i] = len(toks)
    c = Counter(toks)
    tfs.append(c)
    for t, n in c.items():
        post.setdefault(t, ([], []))
        post[t][0].append(i)
        post[t][1].append(n)
post = {t: (np.array(a), np.array(b, float)) for t, (a, b) in post.items()}
N, avg = len(lengths), lengths.mean()
IDF = {t: math.log(N / (len(ids) + 1)) + 1 for t, (ids, _) in post.items()}


def bm25(weighted: dict, k1=1.2, b=0.75):
    out = np.zeros(N)
    norm = k1 * ((1 - b) + b * lengths / avg)
    for t, w in weighted.items():
        if t in post:
            ids, tf = post[t]
            out[ids] += w * IDF[t] * tf * (k1 + 1) / (tf + norm[ids])
    return out


def nd(q, s):
    order = np.argsort(-s)[:10]
    gains = [q["qrels"].get(notes["ids"][i], 0) for i in order]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(q["qrels"].values(), reverse=True)[:10]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def run(k=5, m=10, beta=0.0, g=0.0):
    res = []
    for q in D["train"]:
        terms = dict.fromkeys(q["terms"], 1.0)
        v = z(q["vmax"])
        fused = W * z(q["bm25"]) + (1 - W) * v
        if beta:
            top = np.argsort(-fused)[:k]
            score: Counter = Counter()
            for r, i in enumerate(top):
                tot = sum(tfs[i].values())
                for t, n in tfs[i].items():
                    score[t] += (n / tot) * IDF[t] / (r + 1)
            extra = [t for t, _ in score.most_common(m + len(terms)) if t not in terms][:m]
            terms.update({t: beta for t in extra})
            fused = W * z(bm25(terms)) + (1 - W) * v
        if g:
            pairs = list(zip(q["terms"], q["terms"][1:]))
            if pairs:
                ph = np.array([sum(p in bigrams[i] for p in pairs) / len(pairs) for i in range(N)])
                fused = fused + g * ph
        res.append(nd(q, fused))
    return float(np.mean(res))


print("base", round(run(), 4), flush=True)
for beta in (0.1, 0.2, 0.4):
    for k, m in ((3, 10), (5, 20)):
        print(f"rm3 beta {beta} k {k} m {m}", round(run(k, m, beta), 4), flush=True)
for g in (0.02, 0.05, 0.1):
    print(f"phrase g {g}", round(run(g=g), 4), flush=True)
