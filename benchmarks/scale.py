"""Scale benchmark on a synthetic vault (real model unless --no-vectors).

    python benchmarks/scale.py --notes 10000
    python benchmarks/scale.py --notes 100000 --no-vectors
    nice -n 10 python benchmarks/scale.py --notes 100000 --fill-cache   # embed once (resumable)
    python benchmarks/scale.py --notes 100000 --cache                   # index from that cache

Measures: full index time and the peak RSS of the indexing process; then, in a fresh
process (the vault's own embedder: queries go through the real model), the no-change
reconcile of a fresh open (median of --reconciles), recall p50/p95 over 100 queries once
warm (median of --repeats runs) and that process's peak RSS.

With --cache the index is built by ``common.ReusedEmbedder`` from the text-hash cache that
--fill-cache fills (``.work/synth-embed-cache.sqlite``): the model does not run while
indexing, so the index time is the non-embedding part; the embedding part is reported
separately (texts x the seconds per text measured by --fill-cache). Texts missing from
the cache get a stand-in vector (counted in ``stand_ins``; 0 when the cache is complete).
Results: benchmarks/results/scale-<notes>[-novec|-cached].json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, latency_summary, own_home, parser, peak_rss_mb, write_result
from benchmarks.synth import generate
from vaultmem.core.config import CONFIG_FILE
from vaultmem.vault import Vault

CACHE = WORK / "synth-embed-cache.sqlite"  # text sha256 -> vector of the default model


def queries(meta: list[dict], n: int = 100, seed: int = 11) -> list[tuple[str, str]]:
    """(query, expected path): 4 distinctive words of a random note."""
    rng = random.Random(seed)
    out = []
    for item in rng.sample(meta, n):
        words = [w for w in item["words"] if len(w) > 5]
        out.append((" ".join(rng.sample(words, min(4, len(words)))), item["path"]))
    return out


def chunk_texts(root: Path) -> dict[str, list[str]]:
    """The chunk texts the indexer will embed, by note path (same parse, same chunking)."""
    from vaultmem.core.store import Store
    from vaultmem.index.chunking import chunk, plain_text
    from vaultmem.index.indexer import MAX_CHUNKS, capped

    store = Store(root)
    out = {}
    for path in store.list_paths():
        note = store.read(path)
        out[path] = capped(chunk(note.title, plain_text(note.body), 256), MAX_CHUNKS)
    return out


def fill_cache(root: Path, cache: Path, first: list[str], part: int = 256, limit: int = 0) -> dict:
    """Embed every chunk text of the vault not yet in the text-hash cache (resumable: each part
    is committed), the notes in ``first`` (the queries' targets) before the others; ``limit``:
    stop after embedding that many. Returns the throughput measured on what was embedded now
    (wall and CPU seconds per text)."""
    from benchmarks.common import CachedEmbedder

    by_path = chunk_texts(root)
    order = list(dict.fromkeys([*first, *by_path]))
    texts = [t for p in order for t in by_path[p]]
    emb = CachedEmbedder(path=cache)
    emb.inner._load()  # the model load is not embedding time
    t0, c0, done = time.perf_counter(), time.process_time(), 0
    for i in range(0, len(texts), part):
        before = emb.embedded
        emb.embed(texts[i : i + part])
        done += emb.embedded - before
        if emb.embedded != before:
            rate = done / (time.perf_counter() - t0)
            print(f"{i + part}/{len(texts)} texts, {done} embedded now, {rate:.1f}/s, load {os.getloadavg()[0]:.1f}",
                  flush=True)  # fmt: skip
        if limit and done >= limit:
            break
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    cached = emb.db.execute("SELECT COUNT(*) FROM v WHERE model=?", (emb.name,)).fetchone()[0]
    return {"texts": len(texts), "cached": cached, "embedded_now": done, "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "wall_ms_per_text": round(1000 * wall / done, 1) if done else None,
            "cpu_ms_per_text": round(1000 * cpu / done, 1) if done else None,
            "load_avg_end": round(os.getloadavg()[0], 2)}  # fmt: skip


def set_model(root: Path, no_vectors: bool) -> None:
    (root / ".vaultmem" / "config.toml").unlink(missing_ok=True)  # where runs before issue 18 wrote it
    (root / CONFIG_FILE).write_text('[embedding]\nmodel = "none"\n' if no_vectors else "")


def vm_hwm_mb() -> float:
    """This process's peak RSS (``ru_maxrss`` would include the parent's: it survives exec)."""
    status = Path("/proc/self/status").read_text().splitlines()
    return round(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024, 1)


def serve(root: Path, qfile: Path, repeats: int, reconciles: int) -> dict:
    """What a fresh process sees: no-change reconciles of fresh opens, then warm recall."""
    rec = []
    for _ in range(reconciles):
        t = time.perf_counter()
        v = Vault(root)
        s = v.reindex()
        rec.append(time.perf_counter() - t)
        assert not s.changed, s.as_dict()
        v.close()
    rss_after_reconcile = vm_hwm_mb()
    qs = json.loads(qfile.read_text())
    vault = Vault(root)
    t = time.perf_counter()
    vault.recall(qs[0][0], k=10, log=False)
    first_s = time.perf_counter() - t
    for q, _ in qs[:10]:
        vault.recall(q, k=10, log=False)
    runs, found, cpu = [], [], time.process_time()
    for _ in range(repeats):
        seconds = []
        for q, expected in qs:
            t = time.perf_counter()
            hits = vault.recall(q, k=10, log=False)
            seconds.append(time.perf_counter() - t)
            found.append(expected in [h.path for h in hits])
        runs.append(latency_summary(seconds))
    cpu_ms = 1000 * (time.process_time() - cpu) / (repeats * len(qs))  # all threads (model, BLAS)
    runs.sort(key=lambda r: r["p50_ms"])
    return {
        "reconcile_no_change_s": [round(x, 3) for x in rec], "reconcile_median_s": round(statistics.median(rec), 3),
        "first_recall_s": round(first_s, 2), "recall_cpu_ms_per_query": round(cpu_ms, 1),
        "recall": {"runs": runs, "median_p50_ms": runs[len(runs) // 2]["p50_ms"],
                   "median_p95_ms": sorted(r["p95_ms"] for r in runs)[len(runs) // 2]},
        "found": found[: len(qs)], "peak_rss_mb": vm_hwm_mb(),
        "peak_rss_after_reconciles_mb": rss_after_reconcile, "load_avg": round(os.getloadavg()[0], 2),
    }  # fmt: skip


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--no-vectors", action="store_true")
    ap.add_argument("--cache", action="store_true", help="index from the text-hash cache (see above)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--reconciles", type=int, default=5)
    ap.add_argument(
        "--keep-index", action="store_true", help="reuse an existing index (skip the build timing)"
    )
    ap.add_argument("--suffix", default="", help="appended to the result name (repeated runs)")
    ap.add_argument(
        "--fill-cache",
        action="store_true",
        help="only embed the vault's chunk texts into the cache (run once, under nice)",
    )
    ap.add_argument("--limit", type=int, default=0, help="with --fill-cache: embed at most this many texts")
    ap.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # internal: the fresh measuring process
    ap.add_argument("--queries", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    own_home("home")  # never the user's own service, config or state
    if args.serve:
        print(json.dumps(serve(args.serve, args.queries, args.repeats, args.reconciles)))
        return
    tag = f"{args.notes}" + ("-novec" if args.no_vectors else "-cached" if args.cache else "") \
        + ("-serve" if args.keep_index else "") + args.suffix  # fmt: skip
    root = WORK / f"synth-{args.notes}"
    start = time.perf_counter()
    meta = generate(root, args.notes)
    print(f"generated {args.notes} notes in {time.perf_counter() - start:.1f} s", flush=True)
    if args.fill_cache:
        filled = fill_cache(root, CACHE, [p for _, p in queries(meta)], limit=args.limit)
        print(filled, flush=True)
        print(f"wrote {write_result(f'scale-{args.notes}-embed', {'notes': args.notes, **filled})}")
        return
    set_model(root, args.no_vectors)
    result: dict = {
        "notes": args.notes,
        "vectors": not args.no_vectors,
        "load_avg_start": round(os.getloadavg()[0], 2),
    }
    qs = queries(meta)
    if not args.keep_index:
        embedder = None
        if args.cache:
            from benchmarks.common import ReusedEmbedder
            from vaultmem.index.embed import DEFAULT_MODEL

            embedder = ReusedEmbedder(CACHE, DEFAULT_MODEL)
        vault = Vault(root, embedder)
        start = time.perf_counter()
        summary = vault.reindex(rebuild=True)
        result["index_s"] = round(time.perf_counter() - start, 1)
        result["index_peak_rss_mb"] = round(peak_rss_mb(), 1)
        vault.close()
        print(f"index: {summary.as_dict()['added']} added in {result['index_s']} s", flush=True)
        if embedder is not None:
            result["index_s_note"] = "without embedding: vectors read from the cache (see embedding)"
            result["vectors_real"], result["stand_ins"] = embedder.real, embedder.stand_ins
            result["embedding"] = embedding_estimate(root)
    qfile = WORK / f"scale-{args.notes}-queries.json"
    qfile.write_text(json.dumps(qs))
    cmd = [sys.executable, __file__, "--serve", str(root), "--queries", str(qfile),
           "--repeats", str(args.repeats), "--reconciles", str(args.reconciles)]  # fmt: skip
    served = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    found = served.pop("found")
    result.update(served)
    result["expected_in_top10"] = round(sum(found) / len(found), 3)
    if args.cache:
        own = own_vectors(root, [p for _, p in qs])
        mine = [f for f, o in zip(found, own) if o]
        result["expected_in_top10_own_vector"] = {"found": sum(mine), "queries": len(mine)}
    print(result, flush=True)
    print(f"wrote {write_result(f'scale-{tag}', result)}")


def embedding_estimate(root: Path) -> dict:
    """The embedding part of a full index from --fill-cache's measured seconds per text."""
    n = sum(len(ts) for ts in chunk_texts(root).values())
    measured = _fill_result(root)
    out = {"texts": n, "fill": measured}
    if measured and measured.get("wall_ms_per_text"):
        out["extrapolated_s_at_fill_rate"] = round(n * measured["wall_ms_per_text"] / 1000)
    return out


def own_vectors(root: Path, paths: list[str]) -> list[bool]:
    """Whether each note's indexed vectors are its own (the model's, from the cache), not stand-ins."""
    import sqlite3

    import numpy as np

    from vaultmem.core.store import Store
    from vaultmem.index.chunking import chunk, plain_text
    from vaultmem.index.embed import DEFAULT_MODEL
    from vaultmem.index.layout import index_dir
    from vaultmem.index.manifest import Manifest

    store, db = Store(root), sqlite3.connect(str(CACHE))
    manifest = Manifest(index_dir(root) / "manifest.db", readonly=True)
    out = []
    for path in paths:
        note = store.read(path)
        texts = chunk(note.title, plain_text(note.body), 256)
        _, indexed = manifest.vectors(DEFAULT_MODEL, [path])
        cached = [db.execute("SELECT vec FROM v WHERE model=? AND h=?",
                             (DEFAULT_MODEL, hashlib.sha256(t.encode()).hexdigest())).fetchone() for t in texts]  # fmt: skip
        out.append(
            all(cached)
            and len(indexed) == len(texts)
            and all(np.array_equal(np.frombuffer(c[0], dtype=np.float32), v) for c, v in zip(cached, indexed))
        )
    manifest.close()
    return out


def _fill_result(root: Path) -> dict | None:
    from benchmarks.common import RESULTS

    path = RESULTS / f"scale-{root.name.split('-')[-1]}-embed.json"
    return json.loads(path.read_text()) if path.exists() else None


if __name__ == "__main__":
    main()
