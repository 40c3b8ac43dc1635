"""Offline score arrays of every LoCoMo dev question, both shapes, with the current code.

    python benchmarks/learned/lc_arrays.py      # -> benchmarks/.work/exp/locomo-arrays.pkl

Needs the vaults of ``benchmarks/locomo.py`` under ``benchmarks/.work/locomo/``. Per
question: BM25 as recall scores it (question words out), cosine of every note, query terms,
evidence; per note: neighbour pairs (as ``neighbours.edges``), the graph's one-hop
neighbours, title and content terms, file size.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from vaultmem.recall.question import content_query  # noqa: E402

from benchmarks.common import WORK, CachedEmbedder  # noqa: E402
from benchmarks.locomo import DEFAULT_DATA, evidence_of  # noqa: E402
from vaultmem.index import neighbours  # noqa: E402
from vaultmem.index.graph import neighbourhood  # noqa: E402
from vaultmem.recall import pipeline as R  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

OUT = WORK / "exp" / "locomo-arrays.pkl"


def main() -> None:
    samples = json.loads(DEFAULT_DATA.read_text())
    emb = CachedEmbedder()
    data = {}
    for shape in ("flat", "linked"):
        for s in samples:
            v = Vault(WORK / "locomo" / shape / s["sample_id"], emb)
            v.reindex()
            src = v.sources()
            recs = src.records
            ids = [recs[p].key for p in src.universe]
            adj = [[src.index[q] for q in neighbourhood(src.graph, p, 1) if q != p and q in src.index] for p in src.universe]
            an = v.bm25.terms
            qs = []
            known = set(ids)
            for qa in s["qa"]:
                ev = evidence_of(qa, known)
                if not ev:
                    continue
                q = str(qa["question"])
                b, vv, qv = R.raw_scores(src, q, "hybrid")
                qs.append(dict(q=q, cat=qa["category"], ev=ev, bm25=b.copy(), vec=vv.copy(), qvec=qv.copy(),
                               terms=an(content_query(q))))  # fmt: skip
            data[(shape, s["sample_id"])] = dict(
                ids=ids, adj=adj, pairs=neighbours.edges(src.graph, src.index), qs=qs,
                title_terms=[set(an(recs[p].title)) for p in src.universe],
                content_terms=[set(an("\n".join((recs[p].title, v.body(p))))) for p in src.universe],
                size=np.array([recs[p].size for p in src.universe], float),
            )  # fmt: skip
            v.close()
            print(shape, s["sample_id"], len(qs), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    pickle.dump(data, open(OUT, "wb"))


if __name__ == "__main__":
    main()
