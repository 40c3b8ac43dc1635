"""Embedding batch size: throughput and memory of the default model per batch size.

    python benchmarks/embed_batch.py [--sizes 2 4 8 16] [--runs 2] [--data ../shared/data/scifact]

Three workloads: 800 SciFact abstracts (long, mostly truncated at 256 tokens), 600 chunks
of synthetic notes (benchmarks/synth.py, medium), 800 short texts of 10-30 words. Each
batch size runs in its own process, so its resident memory (peak, VmHWM) is its own:
onnxruntime keeps the largest working set a process has needed. Time: the best of --runs
passes over each workload, fed 256 texts per call as the indexer does.
Results: benchmarks/results/embed-batch.json
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, write_result  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "scifact"


def workloads(data: Path) -> dict[str, list[str]]:
    from benchmarks.synth import generate
    from vaultmem.core.note import parse
    from vaultmem.index.chunking import chunk, plain_text

    scifact = []
    with open(data / "corpus.jsonl") as f:
        for line in f:
            doc = json.loads(line)
            scifact.append(doc["title"] + "\n" + doc["text"])
            if len(scifact) == 800:
                break
    root = WORK / "synth-2000"
    generate(root, 2000)
    notes = []
    for path in sorted(root.rglob("*.md")):
        if ".vaultmem" not in path.parts and len(notes) < 600:
            note = parse(path.read_text(), path.relative_to(root).as_posix())
            notes += chunk(note.title, plain_text(note.body))
    rng = random.Random(2)
    words = "alpha beta gamma delta note project memory vault recall index watcher".split()
    short = [" ".join(rng.choice(words) for _ in range(rng.randint(10, 30))) for _ in range(800)]
    return {"scifact_abstracts": scifact, "synthetic_chunks": notes[:600], "short_texts": short}


def measure(size: int, runs: int, data: Path) -> dict:
    """One batch size, in this process: texts per second per workload and peak memory."""
    from vaultmem.index.embed import FastEmbedder

    loads = workloads(data)
    emb = FastEmbedder(batch_size=size)
    emb.embed(["warm up"])
    out: dict = {"batch_size": size}
    for name, texts in loads.items():
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            for i in range(0, len(texts), 256):
                emb.embed(texts[i : i + 256])
            best = min(best, time.perf_counter() - start)
        out[name] = {"texts": len(texts), "seconds": round(best, 2), "per_s": round(len(texts) / best, 1)}
    status = Path("/proc/self/status").read_text().splitlines()
    out["peak_rss_mb"] = next(round(int(line.split()[1]) / 1024) for line in status if line.startswith("VmHWM:"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8, 16])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: measure one size
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.runs, args.data)))
        return
    rows = []
    for size in args.sizes:
        cmd = [sys.executable, __file__, "--one", str(size), "--runs", str(args.runs), "--data", str(args.data)]
        row = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        rows.append(row)
        rates = ", ".join(f"{k} {v['per_s']}/s" for k, v in row.items() if isinstance(v, dict))
        print(f"batch {size}: {rates}; peak RSS {row['peak_rss_mb']} MB", flush=True)
    print(f"wrote {write_result('embed-batch', {'runs': args.runs, 'sizes': rows})}")


if __name__ == "__main__":
    main()
