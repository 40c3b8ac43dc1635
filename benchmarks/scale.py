"""Scale benchmark on a synthetic vault (real model unless --no-vectors).

    python benchmarks/scale.py --notes 10000
    python benchmarks/scale.py --notes 100000 --no-vectors

Measures: full index time, recall p50/p95 over 100 queries once warm (median of --repeats
runs), peak RSS of the process, and the no-change reconcile time of a fresh open.
Results: benchmarks/results/scale-<notes>[-novec].json
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, latency_summary, peak_rss_mb, write_result  # noqa: E402
from benchmarks.synth import generate  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402


def queries(meta: list[dict], n: int = 100, seed: int = 11) -> list[tuple[str, str]]:
    """(query, expected path): 4 distinctive words of a random note."""
    rng = random.Random(seed)
    out = []
    for item in rng.sample(meta, n):
        words = [w for w in item["words"] if len(w) > 5]
        out.append((" ".join(rng.sample(words, min(4, len(words)))), item["path"]))
    return out


def set_model(root: Path, no_vectors: bool) -> None:
    cfg = root / ".vaultmem" / "config.toml"
    cfg.write_text('[embedding]\nmodel = "none"\n' if no_vectors else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--no-vectors", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep-index", action="store_true", help="reuse an existing index (skip the build timing)")
    args = ap.parse_args()
    tag = f"{args.notes}" + ("-novec" if args.no_vectors else "")
    root = WORK / f"synth-{args.notes}"
    start = time.perf_counter()
    meta = generate(root, args.notes)
    print(f"generated {args.notes} notes in {time.perf_counter() - start:.1f} s", flush=True)
    set_model(root, args.no_vectors)
    vault = Vault(root)
    start = time.perf_counter()
    summary = vault.reindex(rebuild=not args.keep_index)
    index_s = time.perf_counter() - start
    print(f"index: {summary.as_dict()['added']} added in {index_s:.1f} s", flush=True)
    qs = queries(meta)
    for q, _ in qs[:10]:
        vault.recall(q)
    runs, found = [], 0
    for _ in range(args.repeats):
        seconds = []
        for q, expected in qs:
            t = time.perf_counter()
            hits = vault.recall(q, k=10, log=False)
            seconds.append(time.perf_counter() - t)
            found += expected in [h.path for h in hits]
        runs.append(latency_summary(seconds))
    runs.sort(key=lambda r: r["p50_ms"])
    rss = peak_rss_mb()
    vault.close()
    rec = []
    for _ in range(3):
        t = time.perf_counter()
        v = Vault(root)
        s = v.reindex()
        rec.append(time.perf_counter() - t)
        assert not s.changed
        v.close()
    rec.sort()
    result = {
        "notes": args.notes, "vectors": not args.no_vectors, "index_s": round(index_s, 1),
        "recall": {"runs": runs, "median_p50_ms": runs[len(runs) // 2]["p50_ms"],
                   "median_p95_ms": sorted(r["p95_ms"] for r in runs)[len(runs) // 2]},
        "expected_in_top10": round(found / (len(qs) * args.repeats), 3),
        "peak_rss_mb": round(rss, 1), "reconcile_no_change_s": [round(x, 3) for x in rec],
    }  # fmt: skip
    print(result, flush=True)
    print(f"wrote {write_result(f'scale-{tag}', result)}")


if __name__ == "__main__":
    main()
