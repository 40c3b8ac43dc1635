"""Offline score arrays of every SciFact query (train and test) over the built vault.

    python benchmarks/learned/sf_arrays.py      # -> benchmarks/.work/exp/scifact-arrays.pkl

Per query: BM25 (raw, every note), chunk cosines pooled per note (max, second best, mean,
chunk count), the analyzed query terms. Per note: title terms, content terms, file size.
Everything a variant of the combination needs, so a variant costs seconds (``sf_ev.py``).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import WORK, CachedEmbedder  # noqa: E402
from benchmarks.scifact import DEFAULT_DATA, doc_id, load  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

OUT = WORK / "exp" / "scifact-arrays.pkl"


def main() -> None:
    vault = Vault(WORK / "scifact-vault", CachedEmbedder())
    src = vault.sources()
    universe, index = src.universe, src.index
    n = len(universe)
    vi = vault.vectors()
    rows = np.array([index[p] for p in vi._row_paths])  # chunk row -> note position
    an = vault.bm25.terms
    recs = src.records
    notes = {
        "ids": [doc_id(p) for p in universe],
        "title_terms": [set(an(recs[p].title)) for p in universe],
        "content_terms": [set(an("\n".join((recs[p].title, vault.body(p))))) for p in universe],
        "size": np.array([recs[p].size for p in universe], float),
        "titles": [recs[p].title for p in universe],
    }
    out = {"notes": notes}
    for split in ("train", "test"):
        _, queries, qrels = load(DEFAULT_DATA, split)
        texts = list(queries.values())
        qv = vault.embedder.embed(texts)
        qs = []
        for (qid, text), q in zip(queries.items(), qv):
            sims = vi.matrix @ q
            mx = np.full(n, -1.0)
            np.maximum.at(mx, rows, sims)
            # second best: mask the max row of each note
            order = np.lexsort((-sims, rows))
            first = np.r_[True, rows[order][1:] != rows[order][:-1]]
            rest = order[~first]
            second = mx.copy()
            sec = np.full(n, -1.0)
            np.maximum.at(sec, rows[rest], sims[rest])
            second = np.where(sec > -1, sec, mx)
            cnt = np.bincount(rows, minlength=n)
            mean = np.bincount(rows, weights=sims, minlength=n) / np.maximum(cnt, 1)
            bm25 = src.bm25.score_all(text, index, n)
            qs.append({"id": qid, "text": text, "qrels": qrels[qid], "terms": an(text),
                       "bm25": bm25.astype(np.float32), "vmax": mx.astype(np.float32),
                       "v2": second.astype(np.float32), "vmean": mean.astype(np.float32), "qvec": q})  # fmt: skip
        out[split] = qs
        print(split, len(qs), flush=True)
    out["nchunks"] = np.bincount(rows, minlength=n)
    out["chunk_rows"] = rows
    out["chunk_matrix"] = vi.matrix
    OUT.parent.mkdir(parents=True, exist_ok=True)
    pickle.dump(out, open(OUT, "wb"))
    vault.close()


if __name__ == "__main__":
    main()
