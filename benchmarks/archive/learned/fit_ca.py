"""Fit the learned combination: a linear ranker by coordinate ascent on the metrics
(SciFact train nDCG@10 + LoCoMo R@10 of the fitting conversations, flat and linked).

    python benchmarks/learned/fit_ca.py [--convs conv-26,conv-30,conv-41] [--out PATH]

Needs ``sf_arrays.py`` and ``lc_arrays.py`` outputs. The weight of vector is 1 - bm25 (the
score keeps today's scale, so graph, anchor and time parts add on it as before). Prints the
held-out conversations' numbers for the fitted weights and today's.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ev2 import TODAY, lc_score, load_lc, load_sf, sf_score  # noqa: E402

GRID = {
    "bm25": [0.2, 0.25, 0.3, 0.35, 0.4, 0.45],
    "spread": [0.0, 0.25, 0.5, 0.75],
    "context": [0.1, 0.2, 0.3, 0.4],
    "short": [0.0, 0.05, 0.1, 0.15, 0.2, 0.3],
}
ALL = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--convs", default="conv-26,conv-30,conv-41")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    fit_convs = set(args.convs.split(","))
    held = set(ALL) - fit_convs
    sf = load_sf("train")
    lc = {s: load_lc(s, fit_convs) for s in ("flat", "linked")}
    lh = {s: load_lc(s, held) for s in ("flat", "linked")} if held else None

    def weights(p):
        return {"bm25": p["bm25"], "vector": 1 - p["bm25"], "spread": p["spread"], "context": p["context"], "short": p["short"]}

    cache: dict = {}

    def objective(p):
        key = tuple(sorted(p.items()))
        if key not in cache:
            w = weights(p)
            s = sf_score(sf, w)
            f, l = lc_score(lc["flat"], w)["all"], lc_score(lc["linked"], w)["all"]
            cache[key] = (s + (f + l) / 200, s, f, l)
        return cache[key]

    p = {"bm25": 0.3, "spread": 0.0, "context": 0.2, "short": 0.0}
    print("start", p, objective(p), flush=True)
    for r in range(args.rounds):
        for name, values in GRID.items():
            best = max(values, key=lambda v: objective({**p, name: v})[0])
            p[name] = best
            print(f"round {r} {name} -> {best}", [round(x, 4) for x in objective(p)], flush=True)
    w = weights(p)
    out = {"fit_convs": sorted(fit_convs), "weights": w, "fit": dict(zip(("objective", "scifact_train", "flat", "linked"), objective(p)))}
    if lh:
        for name, ww in (("learned", w), ("today", TODAY)):
            out[f"held_{name}"] = {s: lc_score(lh[s], ww) for s in ("flat", "linked")}
            print(name, "held", {s: {k: round(v, 1) for k, v in out[f'held_{name}'][s].items()} for s in lh}, flush=True)
    print(json.dumps(out["weights"]))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
