"""BM25 k1/b on the SciFact train split, offline: postings of the vault's content (as
``bm25.Doc.content`` indexes it) rebuilt in numpy, checked against ``BM25Index.score_all``.

    python benchmarks/learned/sf_bm25.py     # needs sf_arrays.py's output

``Postings`` is also what ``termweights.py`` scores with.
"""
from __future__ import annotations

import math
import pickle
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ev import W, z  # noqa: E402

from benchmarks.common import WORK  # noqa: E402
from vaultmem.index.analysis import analyzer  # noqa: E402
from vaultmem.index.chunking import plain_text  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402


class Postings:
    """Term -> (note positions, term counts) of a vault's BM25 content, with each term's most
    frequent surface form (the word as written, for embedding it)."""

    def __init__(self, vault: Vault):
        src = vault.sources()
        an = analyzer()
        post: dict = {}
        self.surface: dict[str, Counter] = defaultdict(Counter)
        self.lengths = np.zeros(len(src.universe))
        for i, p in enumerate(src.universe):
            rec = src.records[p]
            content = "\n".join((rec.title, rec.title, "", "", plain_text(vault.body(p))))
            toks = []
            for t in an(content, chars=True):
                toks.append(t.text)
                self.surface[t.text][content[t.startchar : t.endchar].lower()] += 1
            self.lengths[i] = len(toks)
            for t, c in Counter(toks).items():
                post.setdefault(t, ([], []))
                post[t][0].append(i)
                post[t][1].append(c)
        self.post = {t: (np.array(a), np.array(b, float)) for t, (a, b) in post.items()}
        self.n = len(self.lengths)

    def idf(self, term: str) -> float:
        return math.log(self.n / (len(self.post[term][0]) + 1)) + 1

    def bm25(self, weights: dict[str, float], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
        """BM25 of every note for query terms with these weights (1 each: plain BM25)."""
        out = np.zeros(self.n)
        norm = k1 * ((1 - b) + b * self.lengths / self.lengths.mean())
        for t, w in weights.items():
            if t in self.post and w:
                ids, tf = self.post[t]
                out[ids] += w * self.idf(t) * tf * (k1 + 1) / (tf + norm[ids])
        return out


def nd(q, s, ids):
    order = np.argsort(-s)[:10]
    gains = [q["qrels"].get(ids[i], 0) for i in order]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(q["qrels"].values(), reverse=True)[:10]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def main() -> None:
    D = pickle.load(open(WORK / "exp" / "scifact-arrays.pkl", "rb"))
    ids = D["notes"]["ids"]
    P = Postings(Vault(WORK / "scifact-vault"))
    q0 = D["train"][0]
    print("check vs index", np.abs(P.bm25(Counter(q0["terms"])) - q0["bm25"]).max())
    for k1 in (0.6, 0.9, 1.2, 1.5, 2.0):
        for b in (0.4, 0.6, 0.75, 0.9):
            bm = [P.bm25(Counter(q["terms"]), k1, b) for q in D["train"]]
            only = np.mean([nd(q, s, ids) for q, s in zip(D["train"], bm)])
            hyb = np.mean([nd(q, W * z(s) + (1 - W) * z(q["vmax"]), ids) for q, s in zip(D["train"], bm)])
            print(f"k1 {k1} b {b}: bm25 {only:.4f} hybrid {hyb:.4f}", flush=True)


if __name__ == "__main__":
    main()
