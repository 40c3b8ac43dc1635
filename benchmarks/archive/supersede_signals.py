"""Auto-supersede from several signals, calibrated on one half of the labelled pairs, scored on the other.

    python benchmarks/supersede_signals.py                 # default pairs, model, margin
    python benchmarks/supersede_signals.py --margin 0.5    # a larger safety margin (logit units)

Pairs: ``tests/data/supersede_pairs.json`` (written for the tests; ``update`` = the new memory
replaces the old one, ``distinct`` = both stay). Split: pair i is in the calibration half when i
is even, in the held-out half when odd (fixed, so every run sees the same split).

Each pair gets the signals of ``vaultmem.core.updates.signals`` (cosine from the default
FastEmbedder over ``memory_text``). The rule of ``vaultmem.core.updates.decide`` is calibrated on
the calibration half: over a grid of (auto_cosine, title, cosine_alone), the setting with the
highest recall and no false positive (ties: the lowest thresholds), then ``--margin`` is added
to both cosines. Both halves are scored at the calibrated thresholds, at the thresholds
vaultmem ships (``updates.Thresholds()``), with the cosine-only rule vaultmem shipped before
(config [lifecycle]) and with a dropped variant (a logistic regression over the signals,
threshold above every calibration distinct pair).
Results: benchmarks/results/supersede-signals.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import write_result  # noqa: E402
from benchmarks.supersede_calibration import (  # noqa: E402
    CONFIGURED,
    DEFAULT_PAIRS,
    context_kind,
    load,
)
from vaultmem.core.updates import (  # noqa: E402
    SERIES_TYPES,
    SIGNALS,
    Memory,
    Thresholds,
    decide,
    signals,
)
from vaultmem.index.embed import FastEmbedder  # noqa: E402
from vaultmem.memory.lifecycle import memory_text  # noqa: E402


def memory(side: dict, type_: str) -> Memory:
    anchor = side.get("anchor")
    return Memory(side["title"], side["content"], type_, tuple(side.get("context") or ()), (anchor,) if anchor else ())


def fit(x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 20000, lr: float = 0.5) -> tuple[np.ndarray, float]:
    """Logistic regression by gradient descent (features already in [0, 1])."""
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = p - y
        w -= lr * (x.T @ g / len(y) + l2 * w)
        b -= lr * g.mean()
    return w, b


def confusion(scores: np.ndarray, y: np.ndarray, t: float) -> dict:
    pred = scores >= t
    tp, fp = int((pred & (y == 1)).sum()), int((pred & (y == 0)).sum())
    fn, tn = int((~pred & (y == 1)).sum()), int((~pred & (y == 0)).sum())
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None}


def cosine_rule(rows: list[dict]) -> np.ndarray:
    """The rule vaultmem shipped before: cosine >= the threshold of the pair's context group."""
    return np.array([r["cosine"] >= CONFIGURED["shared" if r["context_kind"] == "shared" else "no_shared"]
                     for r in rows], float)


def rule_predictions(rows: list[dict], th: Thresholds) -> np.ndarray:
    return np.array([r["type"] not in SERIES_TYPES and decide(r, th) == "auto" for r in rows], float)


def calibrate(rows: list[dict], y: np.ndarray, margin: float) -> tuple[Thresholds, Thresholds]:
    """(the best zero-FP thresholds on ``rows``, the same with the margin added to the cosines)."""
    best = None
    for alone in [round(0.80 + i / 100, 2) for i in range(21)]:
        for auto in [round(0.30 + i / 100, 2) for i in range(66)]:
            for title in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5):
                th = Thresholds(auto_cosine=auto, title=title, cosine_alone=alone)
                c = confusion(rule_predictions(rows, th), y, 0.5)
                if c["fp"] == 0 and (best is None or c["tp"] > best[0]):
                    best = (c["tp"], th)
    th = best[1]
    return th, Thresholds(auto_cosine=round(th.auto_cosine + margin, 2), title=th.title,
                          cosine_alone=round(min(1.0, th.cosine_alone + margin), 2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    ap.add_argument("--margin", type=float, default=0.03, help="added to the calibrated cosine thresholds")
    ap.add_argument("--name", default="supersede-signals")
    args = ap.parse_args()

    pairs = load(args.pairs)
    texts = [memory_text(p[s]["title"], p[s]["content"]) for p in pairs for s in ("old", "new")]
    embedder = FastEmbedder()
    start = time.perf_counter()
    vec = embedder.embed(texts)
    embed_s = time.perf_counter() - start
    rows = []
    for i, p in enumerate(pairs):
        sig = signals(memory(p["old"], p["type"]), memory(p["new"], p["type"]), float(vec[2 * i] @ vec[2 * i + 1]))
        rows.append({"i": i, "split": "calibration" if i % 2 == 0 else "held_out", "type": p["type"], "label": p["label"],
                     "context_kind": context_kind(p), "style": p.get("style"), **{k: round(v, 4) for k, v in sig.items()},
                     "old": p["old"]["title"], "new": p["new"]["title"]})
    y = np.array([r["label"] == "update" for r in rows], float)
    cal = np.array([r["split"] == "calibration" for r in rows])
    cal_rows = [r for r, m in zip(rows, cal) if m]
    raw, chosen = calibrate(cal_rows, y[cal], args.margin)
    shipped = Thresholds()
    # dropped variant: logistic regression over the signals
    x = np.array([[r[k] for k in SIGNALS] for r in rows])
    w, b = fit(x[cal], y[cal])
    logit = x @ w + b
    logit_t = float(logit[cal & (y == 0)].max()) + 0.25
    result = {}
    for split, mask in (("calibration", cal), ("held_out", ~cal)):
        part = [r for r, m in zip(rows, mask) if m]
        possible = np.array([decide(r, shipped) in ("auto", "possible") for r in part], float)
        result[split] = {
            "pairs": int(mask.sum()), "updates": int(y[mask].sum()), "distinct": int((1 - y[mask]).sum()),
            "rule_calibrated": confusion(rule_predictions(part, chosen), y[mask], 0.5),
            "rule_shipped": confusion(rule_predictions(part, shipped), y[mask], 0.5),
            "possible_or_auto_shipped": confusion(possible, y[mask], 0.5),
            "cosine_rule_before": confusion(cosine_rule(part), y[mask], 0.5),
            "dropped_logistic": confusion(logit[mask], y[mask], logit_t),
        }
    print(f"{len(pairs)} pairs ({int(cal.sum())} calibration / {int((~cal).sum())} held-out), "
          f"{len(texts)} texts embedded in {embed_s:.1f}s")
    print(f"calibrated (zero FP on calibration): {raw}; with margin {args.margin}: {chosen}; shipped: {shipped}")
    for split, res in result.items():
        print(f"[{split}] {res['pairs']} pairs ({res['updates']} updates / {res['distinct']} distinct)")
        for name in ("rule_calibrated", "rule_shipped", "possible_or_auto_shipped", "cosine_rule_before", "dropped_logistic"):
            c = res[name]
            print(f"    {name:<26} TP {c['tp']:>3} FP {c['fp']:>3}  precision {c['precision']}  recall {c['recall']}")
    held = [r for r in rows if r["split"] == "held_out"]
    for r in held:
        if r["label"] == "distinct" and decide(r, shipped) == "auto":
            print(f"  held-out FALSE POSITIVE cos {r['cosine']:.3f} {r['old']!r} vs {r['new']!r}")
    by_style = {}
    for style in ("agent", "hand", None):
        part = [r for r in held if r["style"] == style]
        if part:
            by_style[str(style)] = confusion(rule_predictions(part, shipped),
                                             np.array([r["label"] == "update" for r in part], float), 0.5)
    print("held-out by style (shipped):", by_style)
    path = write_result(args.name, {
        "pairs_file": str(args.pairs), "pairs": len(pairs), "model": embedder.name, "embed_seconds": round(embed_s, 2),
        "split": "pair i: calibration when i is even, held-out when odd", "signals": list(SIGNALS),
        "calibrated_zero_fp": raw.__dict__, "margin": args.margin, "calibrated_with_margin": chosen.__dict__,
        "shipped": shipped.__dict__, "result": result, "held_out_by_style": by_style,
        "dropped_logistic": {"weights": {k: round(float(v), 4) for k, v in zip(SIGNALS, w)}, "bias": round(float(b), 4),
                             "threshold": round(logit_t, 4)},
        "rows": rows,
    })
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
