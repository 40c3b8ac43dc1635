"""Ablation of the learned combination on SciFact train (offline, ev2): each part left out,
bm25 weight back to 0.30, and the per-query gain over the hand-set sum in 4 random quarters
of the train queries (how stable the gain is).

    python benchmarks/learned/ablate.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ev2 import TODAY, load_sf, ndcg10, rank  # noqa: E402

SHIPPED = {"bm25": 0.35, "vector": 0.65, "spread": 0.5, "context": 0.4, "short": 0.15}
VARIANTS = {
    "today (sum)": TODAY, "shipped": SHIPPED,
    "without chunks": {**SHIPPED, "spread": 0.0}, "without length": {**SHIPPED, "short": 0.0},
    "bm25 0.30": {**SHIPPED, "bm25": 0.30, "vector": 0.70},
    "bm25 0.30, without length": {**SHIPPED, "bm25": 0.30, "vector": 0.70, "short": 0.0},
    "chunks 0.25": {**SHIPPED, "spread": 0.25},
}
sf = load_sf("train")
base = np.array([ndcg10(q, rank(q, TODAY)) for q in sf])
rng = np.random.default_rng(0)
quarters = np.array_split(rng.permutation(len(sf)), 4)
for name, w in VARIANTS.items():
    got = np.array([ndcg10(q, rank(q, w)) for q in sf])
    d = got - base
    print(f"{name:<28} train {got.mean():.4f}  gain {d.mean():+.4f}  quarters {' '.join(f'{d[i].mean():+.4f}' for i in quarters)}"
          f"  better/worse queries {int((d > 1e-9).sum())}/{int((d < -1e-9).sum())}", flush=True)
