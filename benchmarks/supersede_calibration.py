"""Auto-supersede threshold calibration on labelled memory pairs, real model.

    python benchmarks/supersede_calibration.py                  # default pair set and model
    python benchmarks/supersede_calibration.py --pairs PATH     # another labelled pair file
    python benchmarks/supersede_calibration.py --margin 0.02    # larger safety margin

Each pair is an old and a new memory of the same type, labelled ``update`` (the new one
replaces the old) or ``distinct`` (both must stay active). Both memories are embedded as
``memory_text(title, content)`` with the default FastEmbedder; cosine = dot product of the
normalised rows. A pair is in the ``shared`` group when the two context lists share an entry
(case-insensitive exact match), otherwise in ``no_shared`` (disjoint or empty contexts).

A pair is predicted ``update`` when cosine >= threshold. The sweep (0.70 .. 0.99, step 0.01)
reports TP/FP/precision/recall per group; the chosen threshold per group is the lowest one
with zero false positives in that group (i.e. the smallest 0.01 step above the group's highest
``distinct`` cosine) plus a safety margin (default 0.01). The combined rule at the chosen
thresholds and at the reference thresholds (0.92 no shared context / 0.85 shared) is scored too.
Results: benchmarks/results/supersede-calibration.json.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import parser, write_result
from vaultmem.core.config import DEFAULTS
from vaultmem.index.embed import FastEmbedder
from vaultmem.memory.lifecycle import memory_text

DEFAULT_PAIRS = Path(__file__).resolve().parent.parent / "tests" / "data" / "supersede_pairs.json"
GROUPS = ("shared", "no_shared")
LABELS = ("update", "distinct")
GRID = [round(0.70 + i / 100, 2) for i in range(30)]  # 0.70 .. 0.99
REFERENCE = {"no_shared": 0.92, "shared": 0.85}
# What vaultmem ships (config.py [lifecycle]): zero false positives here, and never looser
# without shared context than with it, as the rule intends.
CONFIGURED = {
    "no_shared": DEFAULTS["lifecycle"]["supersede_no_context"],
    "shared": DEFAULTS["lifecycle"]["supersede_shared_context"],
}


def load(path: Path) -> list[dict]:
    pairs = json.loads(path.read_text())
    for i, p in enumerate(pairs):
        if p.get("label") not in LABELS:
            raise SystemExit(f"pair {i}: label must be one of {LABELS}, got {p.get('label')!r}")
        for side in ("old", "new"):
            if not p.get(side, {}).get("title") or not p[side].get("content"):
                raise SystemExit(f"pair {i}: {side} needs a title and a content")
    return pairs


def shares_context(a: list[str], b: list[str]) -> bool:
    return bool({c.strip().lower() for c in a or []} & {c.strip().lower() for c in b or []})


def context_kind(p: dict) -> str:
    if shares_context(p["old"].get("context"), p["new"].get("context")):
        return "shared"
    return "empty" if not p["old"].get("context") and not p["new"].get("context") else "disjoint"


def score(rows: list[dict], thresholds: dict[str, float | None]) -> dict:
    """TP/FP/FN/TN, precision and recall of "cosine >= threshold of the pair's group"."""
    tp = fp = fn = tn = 0
    for r in rows:
        t = thresholds[r["group"]]
        predicted = t is not None and r["cosine"] >= t
        if r["label"] == "update":
            tp, fn = tp + predicted, fn + (not predicted)
        else:
            fp, tn = fp + predicted, tn + (not predicted)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
    }


def sweep(rows: list[dict]) -> list[dict]:
    out = []
    for t in GRID:
        s = score(rows, {g: t for g in GROUPS})
        out.append({"threshold": t, **{k: s[k] for k in ("tp", "fp", "precision", "recall")}})
    return out


def choose(rows: list[dict], margin: float) -> dict:
    """Lowest 0.01 step with zero false positives (cosine >= t), plus the safety margin."""
    distinct = [r["cosine"] for r in rows if r["label"] == "distinct"]
    top = max(distinct) if distinct else None
    # smallest multiple of 0.01 strictly above the highest distinct cosine (rounded up)
    zero_fp = GRID[0] if top is None else max(GRID[0], (math.floor(top * 100 + 1e-9) + 1) / 100)
    chosen = round(zero_fp + margin, 2)
    return {
        "max_distinct_cosine": None if top is None else round(top, 4),
        "lowest_zero_fp": round(zero_fp, 2),
        "margin": margin,
        "chosen": chosen,
        "in_sweep_range": chosen <= GRID[-1],
    }


def distribution(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "min": round(min(values), 4),
        "median": round(statistics.median(values), 4),
        "max": round(max(values), 4),
    }


def fmt(x) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS, help="labelled pair file (JSON list)")
    ap.add_argument("--margin", type=float, default=0.01, help="safety margin added to the zero-FP threshold")
    ap.add_argument("--name", default="supersede-calibration", help="result file name (without .json)")
    args = ap.parse_args()

    pairs = load(args.pairs)
    texts = []
    for p in pairs:
        texts += [
            memory_text(p["old"]["title"], p["old"]["content"]),
            memory_text(p["new"]["title"], p["new"]["content"]),
        ]
    embedder = FastEmbedder()
    start = time.perf_counter()
    vectors = embedder.embed(texts)
    embed_s = time.perf_counter() - start

    rows = []
    for i, p in enumerate(pairs):
        cos = float(vectors[2 * i] @ vectors[2 * i + 1])
        kind = context_kind(p)
        rows.append(
            {
                "i": i,
                "type": p.get("type"),
                "label": p["label"],
                "context": kind,
                "group": "shared" if kind == "shared" else "no_shared",
                "cosine": round(cos, 4),
                "old": p["old"]["title"],
                "new": p["new"]["title"],
            }
        )

    by_group = {g: [r for r in rows if r["group"] == g] for g in GROUPS}
    counts = {g: {lab: sum(r["label"] == lab for r in by_group[g]) for lab in LABELS} for g in GROUPS}
    counts_by_context = {
        k: {lab: sum(r["context"] == k and r["label"] == lab for r in rows) for lab in LABELS}
        for k in ("shared", "disjoint", "empty")
    }
    sweeps = {g: sweep(by_group[g]) for g in GROUPS}
    choices = {g: choose(by_group[g], args.margin) for g in GROUPS}
    chosen = {g: choices[g]["chosen"] for g in GROUPS}
    combined = {"overall": score(rows, chosen), **{g: score(by_group[g], chosen) for g in GROUPS}}
    reference = {"overall": score(rows, REFERENCE), **{g: score(by_group[g], REFERENCE) for g in GROUPS}}
    configured = {"overall": score(rows, CONFIGURED), **{g: score(by_group[g], CONFIGURED) for g in GROUPS}}
    dists = {
        g: {lab: distribution([r["cosine"] for r in by_group[g] if r["label"] == lab]) for lab in LABELS}
        for g in GROUPS
    }
    hardest = {
        "distinct_highest": sorted((r for r in rows if r["label"] == "distinct"), key=lambda r: -r["cosine"])[
            :8
        ],
        "update_lowest": sorted((r for r in rows if r["label"] == "update"), key=lambda r: r["cosine"])[:8],
    }
    false_positives_reference = [
        r for r in rows if r["label"] == "distinct" and r["cosine"] >= REFERENCE[r["group"]]
    ]

    print(f"{len(pairs)} pairs, {len(texts)} texts embedded in {embed_s:.1f}s with {embedder.name}")
    for k, c in counts_by_context.items():
        print(f"  context {k:<9} update {c['update']:>3}  distinct {c['distinct']:>3}")
    for g in GROUPS:
        print(f"\n[{g}] sweep (predict update when cosine >= t)")
        print("     t   TP  FP  prec   recall")
        for s in sweeps[g]:
            print(
                f"  {s['threshold']:.2f}  {s['tp']:>3} {s['fp']:>3}  {fmt(s['precision'])}  {fmt(s['recall'])}"
            )
    print("\ncosine distributions (min / median / max)")
    for g in GROUPS:
        for lab in LABELS:
            d = dists[g][lab]
            if d["n"]:
                print(f"  {g:<9} {lab:<8} n={d['n']:>3}  {d['min']:.3f} / {d['median']:.3f} / {d['max']:.3f}")
    print("\nchosen thresholds (lowest zero-FP step + margin)")
    for g in GROUPS:
        c = choices[g]
        print(
            f"  {g:<9} max distinct {c['max_distinct_cosine']}  zero-FP from {c['lowest_zero_fp']:.2f}"
            f"  -> chosen {c['chosen']:.2f}"
        )
    if chosen["shared"] > chosen["no_shared"]:
        print("  WARNING: the shared-context threshold came out stricter than the no-shared one")
    for name, res, th in (("chosen", combined, chosen), ("reference", reference, REFERENCE),
                          ("shipped", configured, CONFIGURED)):  # fmt: skip
        o = res["overall"]
        print(
            f"\n{name:<9} no_shared {th['no_shared']:.2f} / shared {th['shared']:.2f}: "
            f"TP {o['tp']} FP {o['fp']} FN {o['fn']}  precision {fmt(o['precision'])}  recall {fmt(o['recall'])}"
        )
        for g in GROUPS:
            s = res[g]
            print(
                f"    {g:<9} TP {s['tp']:>2} FP {s['fp']:>2} FN {s['fn']:>2}  "
                f"precision {fmt(s['precision'])}  recall {fmt(s['recall'])}"
            )
    if false_positives_reference:
        print("\nreference false positives:")
        for r in false_positives_reference:
            print(f"  {r['cosine']:.3f} [{r['group']}] {r['old']!r} vs {r['new']!r}")
    print("\nhighest-cosine distinct pairs:")
    for r in hardest["distinct_highest"][:5]:
        print(f"  {r['cosine']:.3f} [{r['group']}] {r['old']!r} vs {r['new']!r}")
    print("lowest-cosine update pairs:")
    for r in hardest["update_lowest"][:5]:
        print(f"  {r['cosine']:.3f} [{r['group']}] {r['old']!r} -> {r['new']!r}")

    path = write_result(
        args.name,
        {
            "pairs_file": str(args.pairs),
            "pairs": len(pairs),
            "model": embedder.name,
            "embed_seconds": round(embed_s, 2),
            "rule": "predict update when cosine >= threshold of the pair's group; shared = a context entry in common "
            "(case-insensitive exact match)",
            "counts": counts,
            "counts_by_context": counts_by_context,
            "sweep": sweeps,
            "choice": choices,
            "chosen_thresholds": chosen,
            "chosen_result": combined,
            "configured_thresholds": CONFIGURED,
            "configured_result": configured,
            "reference_thresholds": REFERENCE,
            "reference_result": reference,
            "reference_false_positives": false_positives_reference,
            "cosine_distribution": dists,
            "hardest": hardest,
            "rows": rows,
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
