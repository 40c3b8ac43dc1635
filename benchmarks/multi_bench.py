"""Recall over several vaults vs one vault holding the same notes (real model).

    python benchmarks/multi_bench.py [--notes 15000] [--parts 3] [--repeats 5]

Builds the synthetic vault of ``--notes`` notes, then splits the same files into ``--parts``
vaults (their vectors are copied from the big vault's store, so nothing is embedded twice),
and times recall (100 queries, in-process, warm; median of --repeats runs) on the single
vault and on all parts searched together. Target: the split search within 1.5x.
Results: benchmarks/results/multi-vault.json
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, latency_summary, parser, write_result
from benchmarks.scale import queries
from benchmarks.synth import generate
from vaultmem.core.scaffold import init_vault
from vaultmem.index.layout import index_dir
from vaultmem.multi import MultiVault
from vaultmem.vault import Vault


def split(big: Path, parts: int) -> dict[str, Path]:
    """Copy the big vault's notes round-robin into ``parts`` vaults, seeding their vectors."""
    out = {}
    notes = sorted(p for p in big.rglob("*.md") if ".vaultmem" not in p.parts)
    for i in range(parts):
        root = WORK / f"{big.name}-part{i}"
        out[f"part{i}"] = root
        if (root / ".complete").exists():
            continue
        shutil.rmtree(root, ignore_errors=True)
        init_vault(root)
        (root / "README.md").unlink()
        shutil.copy2(big / ".vaultmem.toml", root / ".vaultmem.toml")  # the same model as the big vault
        for j, src in enumerate(notes):
            if j % parts == i:
                dest = root / src.relative_to(big)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
        Vault(root).manifest.close()  # creates the schema
        db = sqlite3.connect(index_dir(root) / "manifest.db")  # this install's index folder (layout.py)
        db.execute("ATTACH DATABASE ? AS big", (str(index_dir(big) / "manifest.db"),))
        db.execute("INSERT OR IGNORE INTO embeddings SELECT * FROM big.embeddings")
        db.commit()
        db.close()
        v = Vault(root)
        summary = v.reindex()
        print(f"part{i}: {summary.added} notes, {summary.embedded} chunks embedded", flush=True)
        v.close()
        (root / ".complete").write_text("ok")
    return out


def timed(fn, qs: list[str], repeats: int) -> dict:
    for q in qs[:10]:
        fn(q)
    runs = []
    for _ in range(repeats):
        seconds = []
        for q in qs:
            t = time.perf_counter()
            fn(q)
            seconds.append(time.perf_counter() - t)
        runs.append(latency_summary(seconds))
    runs.sort(key=lambda r: r["p50_ms"])
    return {"runs": runs, "median_p50_ms": runs[len(runs) // 2]["p50_ms"],
            "median_p95_ms": sorted(r["p95_ms"] for r in runs)[len(runs) // 2]}  # fmt: skip


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--notes", type=int, default=15000)
    ap.add_argument("--parts", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--model",
        default="",
        help='"none": BM25 and the graph only (a smoke run); default: the default model',
    )
    args = ap.parse_args()
    big = WORK / f"synth-{args.notes}{'-' + args.model if args.model else ''}"
    meta = generate(big, args.notes)
    (big / ".vaultmem.toml").write_text(f'[embedding]\nmodel = "{args.model}"\n' if args.model else "")
    single = Vault(big)
    start = time.perf_counter()
    s = single.reindex()
    print(
        f"single vault: {s.added} added, {s.embedded} chunks embedded in {time.perf_counter() - start:.0f} s",
        flush=True,
    )
    parts = split(big, args.parts)
    multi = MultiVault.open(parts, embedder=single.embedder)
    for v in multi.vaults.values():
        v.reindex()
    qs = [q for q, _ in queries(meta)]
    one = timed(lambda q: single.recall(q, k=10, log=False), qs, args.repeats)
    many = timed(lambda q: multi.recall(q, k=10, log=False), qs, args.repeats)
    ratio = many["median_p50_ms"] / one["median_p50_ms"]
    print(
        f"single {args.notes}: p50 {one['median_p50_ms']} ms; {args.parts} vaults: p50 {many['median_p50_ms']} ms; ratio {ratio:.2f}"
    )
    print(
        f"wrote {write_result('multi-vault', {'notes': args.notes, 'parts': args.parts, 'single': one, 'multi': many, 'ratio_p50': round(ratio, 3)})}"
    )


if __name__ == "__main__":
    main()
