"""The learned combination without the chunks part (its SciFact train gain was unstable across
quarters of the train queries, ablate.py): bm25 weight, short-note prior and context weight
on SciFact train and both LoCoMo halves (A = conv-26/30/41, B = conv-42/43), offline (ev2).

    python benchmarks/learned/nochunks.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ev2 import TODAY, lc_score, load_lc, load_sf, sf_score  # noqa: E402

A, B = {"conv-26", "conv-30", "conv-41"}, {"conv-42", "conv-43"}
sf = load_sf("train")
L = {(s, k): load_lc(s, c) for s in ("flat", "linked") for k, c in (("A", A), ("B", B))}


def show(name, w):
    parts = []
    for k in "AB":
        f, l = lc_score(L[("flat", k)], w), lc_score(L[("linked", k)], w)
        parts.append(f"{k}: flat {f['all']:.1f} linked {l['all']:.1f} mh {l['multi-hop']:.1f}")
    print(f"{name:<34} sf train {sf_score(sf, w):.4f} | " + " | ".join(parts), flush=True)


show("today (sum)", TODAY)
for b in (0.30, 0.35):
    for short in (0.1, 0.15, 0.2):
        for ctx in (0.2, 0.3, 0.4):
            show(f"bm25 {b} short {short} context {ctx}", {"bm25": b, "vector": 1 - b, "spread": 0.0, "context": ctx, "short": short})
