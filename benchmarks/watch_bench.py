"""Live-sync benchmarks with the real model (the watcher runs as `vaultmem watch` subprocess).

    python benchmarks/watch_bench.py freshness [--notes 10000] [--edits 100] [--repeat 3]
    python benchmarks/watch_bench.py burst [--notes 10000] [--files 1000] [--repeat 3]
    python benchmarks/watch_bench.py cli [--notes 10000] [--runs 10]
    python benchmarks/watch_bench.py soak [--notes 2000] [--edits 10000] [--rate 25] [--sample-every 100] [--repeat 3] [--steady]

freshness: time from saving an edited note to recall (through the watcher's socket)
returning it, over single-file edits; target p95 <= 1 s.
burst: 1,000 new notes written at once until all are indexed, against embedding the same
chunk texts alone; target <= 1.2x.
cli: wall time of the `vaultmem recall` command without and with a running watcher,
cold (first call) and warm (median of the next runs); target <= 200 ms with the watcher.
soak: many edits over a long run; the watcher's resident memory after warm-up grows by at
most 5%, and at the end its indexes equal a fresh rebuild (notes, hashes, results); with
--repeat (soak, freshness, burst) the result keeps every run and the median of each headline measure.
Results: benchmarks/results/watch-<name>.json
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, latency_summary, own_home, parser, watch_request, write_result
from benchmarks.synth import generate
from vaultmem.vault import Vault

BIN = str(Path(sys.executable).with_name("vaultmem"))


def prepared_vault(notes: int) -> Path:
    """The synthetic vault of ``notes`` notes, indexed (reused across runs)."""
    root = WORK / f"synth-{notes}"
    generate(root, notes)
    (root / ".vaultmem.toml").write_text("")
    v = Vault(root)
    v.reindex()
    v.close()
    return root


def working_copy(root: Path, name: str) -> Path:
    """A private copy (indexes included) so edits never touch the shared vault."""
    dest = WORK / f"{root.name}-{name}"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(root, dest, symlinks=True, ignore=shutil.ignore_patterns("*.sock", "writer.lock"))
    return dest


class WatchProcess:
    """`vaultmem watch` in a subprocess, ready once its socket answers."""

    def __init__(self, root: Path):
        self.root = root
        self.log = WORK / f"{root.name}.watch.log"  # the watcher's stderr: skipped files, errors
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([BIN, "watch", "--vault", str(root)], stderr=log, text=True)
        deadline = time.monotonic() + 600
        while watch_request(root, "ping", timeout=2) is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"watcher did not start: {self.log.read_text()}")
            time.sleep(0.1)

    def errors(self) -> list[str]:
        """Lines the watcher logged about batches it could not apply."""
        return [line for line in self.log.read_text().splitlines() if "could not apply" in line]

    def memory_mb(self) -> dict[str, float]:
        """Resident memory of the watcher: total, anonymous (heaps) and file-backed (mapped files)."""
        out = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile"):
                out[key] = round(int(line.split()[1]) / 1024, 1)
        return out

    def recall(self, query: str, **args) -> list[dict]:
        reply = watch_request(self.root, "recall", {"query": query, **args})
        assert reply and reply["ok"], reply
        return reply["result"]

    def indexed(self) -> int:
        return watch_request(self.root, "status", {"drift": False})["result"]["notes_indexed"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=120)


def edit(path: Path, token: str, steady: bool = False) -> None:
    """Save a note as an editor does: write a temp file, then rename over the note.

    ``token`` goes on a new last line, or with ``steady`` replaces the line an earlier
    steady edit added, so the note keeps its size."""
    text = path.read_text()
    if steady and "\nlast edit: " in text:
        text = text[: text.rindex("\nlast edit: ")]
    text = text + (f"\nlast edit: {token}\n" if steady else f"\n{token}\n")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def freshness(args) -> dict:
    root = working_copy(prepared_vault(args.notes), "fresh")
    notes = sorted(p for p in root.rglob("*.md") if ".vaultmem" not in p.parts)
    rng = random.Random(3)
    w = WatchProcess(root)
    w.recall("warm up")
    seconds = []
    try:
        for i in range(args.edits):
            path = rng.choice(notes)
            token = f"freshtoken{i}x{rng.randrange(10**6)}"
            start = time.perf_counter()
            edit(path, token)
            rel = path.relative_to(root).as_posix()
            while rel not in [h["path"] for h in w.recall(token, k=3, include_resolved=True)]:
                if time.perf_counter() - start > 30:
                    raise RuntimeError(f"edit {i} not visible after 30 s")
                time.sleep(0.01)
            seconds.append(time.perf_counter() - start)
    finally:
        w.stop()
    summary = latency_summary(seconds)
    print(f"freshness over {len(seconds)} edits: p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms")
    return {"notes": args.notes, "edits": args.edits, **summary}


def burst(args) -> dict:
    from vaultmem.core.note import parse
    from vaultmem.index.chunking import chunk, plain_text
    from vaultmem.index.embed import FastEmbedder

    root = working_copy(prepared_vault(args.notes), "burst")
    texts = {f"burst/Burst {i}.md": f"# Burst {i}\n\n" + " ".join(f"word{(i * 7 + j) % 997}" for j in range(120)) + f" unique{i}\n"
             for i in range(args.files)}  # fmt: skip
    w = WatchProcess(root)
    base = w.indexed()
    try:
        start = time.perf_counter()
        for rel, text in texts.items():
            (root / rel).parent.mkdir(exist_ok=True)
            (root / rel).write_text(text)
        while w.indexed() < base + args.files:
            time.sleep(0.5)
        indexed_s = time.perf_counter() - start
    finally:
        w.stop()
    chunks = []
    for rel, text in texts.items():
        note = parse(text, rel)
        chunks += chunk(note.title, plain_text(note.body))
    emb = FastEmbedder()
    emb.embed(["warm up"])
    start = time.perf_counter()
    for i in range(0, len(chunks), 256):
        emb.embed(chunks[i : i + 256])
    embed_s = time.perf_counter() - start
    ratio = indexed_s / embed_s
    print(
        f"burst of {args.files}: indexed in {indexed_s:.1f} s, embedding alone {embed_s:.1f} s, ratio {ratio:.2f}"
    )
    return {"notes": args.notes, "files": args.files, "indexed_s": round(indexed_s, 2),
            "embed_only_s": round(embed_s, 2), "ratio": round(ratio, 3)}  # fmt: skip


def _time_cli(root: Path, query: str) -> float:
    start = time.perf_counter()
    subprocess.run([BIN, "recall", query, "--vault", str(root), "-k", "5"], check=True, capture_output=True)
    return time.perf_counter() - start


def cli(args) -> dict:
    root = working_copy(prepared_vault(args.notes), "cli")
    queries = [f"topic words query {i}" for i in range(args.runs + 1)]
    out = {}
    for label in ("without_watcher", "with_watcher"):
        w = WatchProcess(root) if label == "with_watcher" else None
        try:
            cold = _time_cli(root, queries[0])
            warm = [_time_cli(root, q) for q in queries[1:]]
        finally:
            if w:
                w.stop()
        out[label] = {"cold_ms": round(cold * 1000, 1), "warm_median_ms": round(statistics.median(warm) * 1000, 1),
                      "warm_runs_ms": [round(x * 1000, 1) for x in warm]}  # fmt: skip
        print(f"{label}: cold {out[label]['cold_ms']} ms, warm median {out[label]['warm_median_ms']} ms")
    return {"notes": args.notes, **out}


def trend_growth(samples: list[tuple[int, float]]) -> float:
    """Growth over the sampled span by a least-squares line through (edits, MB), relative to the
    line's start: a leak shows as a steady slope, while single samples wander with garbage
    not yet collected and index files mapped for a merge."""
    if len(samples) < 2:
        return float("nan")
    import numpy as np

    x, y = np.array(samples, dtype=float).T
    slope, intercept = np.polyfit(x, y, 1)
    start = intercept + slope * x[0]
    return float(slope * (x[-1] - x[0]) / start)


def thirds_growth(values: list[float]) -> float:
    """Median of the last third of the samples against the median of the first third."""
    if len(values) < 3:
        return float("nan")
    third = len(values) // 3
    return statistics.median(values[-third:]) / statistics.median(values[:third]) - 1


def soak(args) -> dict:
    root = working_copy(prepared_vault(args.notes), "soak")
    notes = sorted(p for p in root.rglob("*.md") if ".vaultmem" not in p.parts)
    rng = random.Random(5)
    queries = ["note topic", "project anchor", "lessons learned", "decision about", "fixed bug"]
    w = WatchProcess(root)
    rss, parts = [], []
    try:
        start = time.perf_counter()
        for i in range(args.edits):
            words = " ".join(rng.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(5))
            edit(rng.choice(notes), f"soak{i} {words}", steady=args.steady)
            if i % args.sample_every == args.sample_every - 1:
                mem = w.memory_mb()
                rss.append((i + 1, mem["VmRSS"]))
                parts.append((i + 1, mem["RssAnon"], mem["RssFile"]))
                if (i + 1) % 500 == 0:
                    print(
                        f"  {i + 1} edits, rss {mem['VmRSS']} MB (anon {mem['RssAnon']}, file {mem['RssFile']}), "
                        f"{time.perf_counter() - start:.0f} s",
                        flush=True,
                    )
            time.sleep(max(0.0, (i + 1) / args.rate - (time.perf_counter() - start)))
        deadline = time.monotonic() + 300
        while (status := watch_request(root, "status")["result"])["pending"] or not status["in_sync"]:
            if time.monotonic() > deadline:
                raise RuntimeError("watcher did not settle")
            time.sleep(0.5)
        watched = {q: [(h["path"], h["score"]) for h in w.recall(q, log=False)] for q in queries}
        duration = time.perf_counter() - start
    finally:
        w.stop()
    errors = w.errors()
    v = Vault(root)
    watched_hashes = {p: r.hash for p, r in v.manifest.records().items()}
    v.reindex(rebuild=True)
    rebuilt_hashes = {p: r.hash for p, r in v.manifest.records().items()}
    rebuilt = {q: [(h.path, h.score) for h in v.recall(q, log=False)] for q in queries}
    v.close()
    after = [(n, m) for n, m in rss if n >= args.edits * args.warmup]
    warm = [m for _, m in after] or [m for _, m in rss]
    growth = (warm[-1] - warm[0]) / warm[0] if warm else float("nan")
    peak_growth = (max(warm) - warm[0]) / warm[0] if warm else float("nan")
    trend = trend_growth(after)
    thirds = thirds_growth([m for _, m in after])
    same = watched_hashes == rebuilt_hashes and all(
        [p for p, _ in watched[q]] == [p for p, _ in rebuilt[q]] for q in queries
    )
    print(
        f"soak: {args.edits} edits in {duration:.0f} s, rss growth after warm-up ({args.warmup:.0%} of edits): "
        f"trend {trend * 100:.1f}%, median of last vs first third {thirds * 100:.1f}%, first to last sample {growth * 100:.1f}%, peak {peak_growth * 100:.1f}%; "
        f"equal to rebuild: {same}; batches the watcher could not apply: {len(errors)}"
    )
    return {"notes": args.notes, "edits": args.edits, "steady": args.steady, "seconds": round(duration), "rss_mb": rss,
            "rss_anon_file_mb": parts,
            "warmup_fraction": args.warmup, "rss_growth_after_warmup": round(growth, 4),
            "rss_trend_growth_after_warmup": round(trend, 4),
            "rss_thirds_growth_after_warmup": round(thirds, 4), "sample_every_edits": args.sample_every,
            "rss_peak_growth_after_warmup": round(peak_growth, 4), "equal_to_rebuild": same,
            "notes_equal": watched_hashes == rebuilt_hashes, "watcher_errors": errors}  # fmt: skip


MEASURES = {"soak": lambda k: k.startswith("rss_") and k.endswith("_after_warmup"),
            "freshness": lambda k: k in ("p50_ms", "p95_ms"),
            "burst": lambda k: k in ("indexed_s", "embed_only_s", "ratio")}  # fmt: skip


def repeated(args) -> dict:
    """Several runs in a row: each run in full, and the median of each headline measure."""
    runs = [globals()[args.which](args) for _ in range(args.repeat)]
    keys = [k for k in runs[0] if MEASURES[args.which](k)]
    medians = {f"median_{k}": round(statistics.median(r[k] for r in runs), 4) for k in keys}
    print(f"{args.which} medians over {len(runs)} runs: {medians}")
    if args.which == "soak":
        medians["all_equal_to_rebuild"] = all(r["equal_to_rebuild"] for r in runs)
    return {**medians, "runs": runs}


def main() -> None:
    ap = parser(__doc__, runs=10)
    ap.add_argument("which", choices=["freshness", "burst", "cli", "soak"])
    ap.add_argument("--notes", type=int)
    ap.add_argument("--edits", type=int)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=25.0, help="soak edits per second")
    ap.add_argument("--sample-every", type=int, default=100, help="soak: edits between memory samples")
    ap.add_argument("--warmup", type=float, default=0.3, help="soak: fraction of edits counted as warm-up")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="soak, freshness, burst: runs (the result keeps each, and medians)",
    )
    ap.add_argument(
        "--steady",
        action="store_true",
        help="soak: each edit replaces the line the last one added (notes keep their size)",
    )
    ap.add_argument(
        "--tag", help="write results/watch-<name>-<tag>.json (e.g. a longer soak beside the default one)"
    )
    args = ap.parse_args()
    own_home("home")  # never the user's own service, config or state
    defaults = {"freshness": (10000, 100), "burst": (10000, 0), "cli": (10000, 0), "soak": (2000, 10000)}
    args.notes = args.notes or defaults[args.which][0]
    args.edits = args.edits or defaults[args.which][1]
    result = repeated(args) if args.which in MEASURES and args.repeat > 1 else globals()[args.which](args)
    name = f"watch-{args.which}" + (f"-{args.tag}" if args.tag else "")
    print(f"wrote {write_result(name, result)}")


if __name__ == "__main__":
    main()
