"""BM25 k1/b on the SciFact train split, offline: postings of the vault's content (as
``bm25.Doc.content`` indexes it) rebuilt in numpy, checked against ``BM25Index.score_all``.

    python benchmarks/learned/sf_bm25.py     # needs sf_arrays.py's output
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

from benchmarks.common import WORK  # noqa: E402
from ev import W, z  # noqa: E402
from vaultmem.analysis import analyzer  # noqa: E402
from vaultmem.chunking import plain_text  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
notes = D["notes"]
vault = Vault(WORK / "scifact-vault")
src = vault.sources()
an = analyzer()
post: dict = {}
lengths = np.zeros(len(src.universe))
for i, p in enumerate(src.universe):
    rec = src.records[p]
    content = "\n".join((rec.title, rec.title, "", "", plain_text(vault.body(p))))
    toks = [t.text for t in an(content)]
    lengths[i] = len(toks)
    for t, c in Counter(toks).items():
        post.setdefault(t, ([], []))
        post[t][0].append(i)
        post[t][1].append(c)
post = {t: (np.array(a), np.array(b, float)) for t, (a, b) in post.items()}
N = len(lengths)
avg = lengths.mean()


def bm25(terms, k1, b):
    out = np.zeros(N)
    norm = k1 * ((1 - b) + b * lengths / avg)
    for t in terms:
        if t not in post:
            continue
        ids, tf = post[t]
        idf = math.log(N / (len(ids) + 1)) + 1
        out[ids] += idf * tf * (k1 + 1) / (tf + norm[ids])
    return out


q0 = D["train"][0]
print("check vs index", np.abs(bm25(q0["terms"], 1.2, 0.75) - q0["bm25"]).max())


def nd(q, s):
    order = np.argsort(-s)[:10]
    gains = [q["qrels"].get(notes["ids"][i], 0) for i in order]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(q["qrels"].values(), reverse=True)[:10]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


for k1 in (0.6, 0.9, 1.2, 1.5, 2.0):
    for b in (0.4, 0.6, 0.75, 0.9):
        bm = [bm25(q["terms"], k1, b) for q in D["train"]]
        only = np.mean([nd(q, s) for q, s in zip(D["train"], bm)])
        hyb = np.mean([nd(q, W * z(s) + (1 - W) * z(q["vmax"])) for q, s in zip(D["train"], bm)])
        print(f"k1 {k1} b {b}: bm25 {only:.4f} hybrid {hyb:.4f}", flush=True)
