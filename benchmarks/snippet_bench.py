"""A recall hit's snippet from a huge note (issue 39, Low): time and peak memory per snippet.

    python benchmarks/snippet_bench.py [--mb 23] [--runs 3] [--before main]

A seeded note body of ``--mb`` MB (12-word lines of 12 words, one line with the query's words
in the middle) and the query "advisory locks"; each run is a fresh process that imports
``vaultmem/recall/hit.py`` (``after``: this tree; ``before``: the file at git ref ``--before``)
and makes the snippet once: seconds and peak RSS (MB, ``ru_maxrss``). Before and after run in
turns (paired). Medians. Results: benchmarks/results/snippet.json.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import parser, write_result

REPO = Path(__file__).resolve().parent.parent
QUERY_TERMS = ["advisori", "lock"]  # the analyzed terms of "advisory locks"
ONE = r"""
import importlib.util, json, resource, sys, time
sys.path.insert(0, sys.argv[3])
spec = importlib.util.spec_from_file_location("vaultmem.recall.hit_under_test", sys.argv[1])
hit = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = hit
spec.loader.exec_module(hit)
body = open(sys.argv[2], encoding="utf-8").read()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
snippet, words = hit.make_snippet(body, json.loads(sys.argv[4]))
took = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": took, "peak_mb": peak / 1024, "extra_mb": (peak - base) / 1024,
                  "found": "advisory locks" in snippet}))
"""


def body(mb: float) -> str:
    rng = random.Random(1)
    words = "alpha beta gamma delta river stone cloud paper window garden harbour crane".split()
    lines = []
    size = 0
    while size < mb * 1e6:
        lines.append(" ".join(rng.choice(words) for _ in range(12)) + ".\n")
        size += len(lines[-1])
    lines.insert(len(lines) // 2, "The advisory locks of the harbour cranes lease jobs.\n")
    return "# Huge log\n\n" + "".join(lines)


def once(module: Path, text: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", ONE, str(module), str(text), str(REPO), json.dumps(QUERY_TERMS)],
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout)


def main() -> None:
    ap = parser(__doc__, runs=3)
    ap.add_argument("--mb", type=float, default=23)
    ap.add_argument("--before", default="main")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "body.md"
        text.write_text(body(args.mb), encoding="utf-8")
        old = Path(tmp) / "hit_before.py"
        old.write_text(subprocess.run(["git", "-C", str(REPO), "show", f"{args.before}:vaultmem/recall/hit.py"],
                                      capture_output=True, text=True, check=True).stdout)  # fmt: skip
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.runs):
            runs["before"].append(once(old, text))
            runs["after"].append(once(REPO / "vaultmem/recall/hit.py", text))
    med = {k: {m: round(statistics.median(r[m] for r in rs), 3) for m in ("seconds", "peak_mb", "extra_mb")}
           for k, rs in runs.items()}  # fmt: skip
    ratios = [b["seconds"] / a["seconds"] for b, a in zip(runs["before"], runs["after"])]
    result = {"mb": args.mb, "runs": args.runs, "before_ref": args.before, "median": med,
              "paired_speedup_median": round(statistics.median(ratios), 1),
              "found": {k: all(r["found"] for r in rs) for k, rs in runs.items()}, "raw": runs}  # fmt: skip
    write_result("snippet", result)
    print(json.dumps({k: v for k, v in result.items() if k != "raw"}, indent=2))


if __name__ == "__main__":
    main()
