"""Helpers shared by the benchmarks: timing, percentiles, metrics, result files."""

from __future__ import annotations

import json
import math
import os
import platform
import resource
import statistics
import time
from pathlib import Path
from typing import Iterable, Sequence

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
WORK = HERE / ".work"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float]) -> dict:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "mean_ms": round(statistics.fmean(ms), 2) if ms else None,
    }


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded relevance (BEIR's definition)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 100) -> float:
    rel = {d for d, r in relevant.items() if r > 0}
    return len(rel & set(ranked[:k])) / len(rel) if rel else 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> dict:
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}


def write_result(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"benchmark": name, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(), **data}
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0
