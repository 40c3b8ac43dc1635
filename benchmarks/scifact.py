"""SciFact retrieval benchmark: a vault of one note per SciFact abstract, real model.

    python benchmarks/scifact.py                     # build/index, evaluate test split, time
    python benchmarks/scifact.py --tune              # sweep fusion settings on the train split
    python benchmarks/scifact.py --data PATH         # BEIR SciFact folder (default ../shared/data/scifact)
    python benchmarks/scifact.py --defaults --tag T  # also through Vault.recall with default settings
    python benchmarks/scifact.py --speed-base DIR    # recall p50 of this tree against the tree at DIR

Reports nDCG@10 and Recall@100 for bm25, vector and hybrid; recall latency p50/p95 once
warm; the full index build time against embedding the same texts alone; no-change reconcile.
Results: benchmarks/results/scifact.json (and scifact-tune.json with --tune).

``--speed-base DIR`` times warm ``Vault.recall`` (hybrid with the vault's settings, then BM25
mode; each query embedded beforehand, so the time is the ranking's) of this tree and of the
vaultmem tree at DIR (an older commit's worktree) on the vault a run built: each in a fresh
process, in turns, ``--latency-repeats`` times; per-query p50 and the paired ratio. Results:
benchmarks/results/scifact-speed[-TAG].json.
"""

from __future__ import annotations

import csv
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (
    DATA,
    WORK,
    fresh_usage,
    in_turns,
    latency_summary,
    mean,
    ndcg_at,
    parser,
    recall_at,
    write_result,
)
from vaultmem.recall import fusion
from vaultmem.vault import Vault

DEFAULT_DATA = DATA / "scifact"


def load(data: Path, split: str, limit: int = 0):
    """Corpus, queries and judgements of a split; ``limit``: only the first ``limit`` queries, and
    the documents they judge plus as many others (a quick sample, not a result)."""
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").open()]
    queries = {q["_id"]: q["text"] for q in map(json.loads, (data / "queries.jsonl").open())}
    qrels: dict[str, dict[str, int]] = {}
    with (data / "qrels" / f"{split}.tsv").open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    if limit:
        qrels = dict(list(qrels.items())[:limit])
        judged = {d for rel in qrels.values() for d in rel}
        corpus = [d for d in corpus if d["_id"] in judged] + [d for d in corpus if d["_id"] not in judged][
            : len(judged)
        ]
    return corpus, {q: queries[q] for q in qrels}, qrels


def write_vault(corpus: list[dict], root: Path) -> None:
    """One note per abstract: frontmatter title, body = abstract (written once, reused)."""
    if (root / ".complete").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    (root / ".vaultmem").mkdir(parents=True)
    for doc in corpus:
        title = json.dumps(doc["title"] or doc["_id"], ensure_ascii=False)
        (root / f"{doc['_id']}.md").write_text(f"---\ntitle: {title}\ntype: fact\n---\n{doc['text']}\n")
    (root / ".complete").write_text("ok")


def doc_id(path: str) -> str:
    return path.rsplit("/", 1)[-1][:-3]


def evaluate(vault: Vault, queries: dict[str, str], qrels, k: int = 100) -> dict:
    out = {}
    for mode in ("bm25", "vector", "hybrid"):
        nd, rc = [], []
        for qid, text in queries.items():
            ranked = [doc_id(h.path) for h in vault.recall(text, k=k, mode=mode, log=False, adaptive=False)]
            nd.append(ndcg_at(ranked, qrels[qid], 10))
            rc.append(recall_at(ranked, qrels[qid], 100))
        out[mode] = {"ndcg@10": round(mean(nd), 4), "recall@100": round(mean(rc), 4)}
        print(
            f"  {mode:<7} nDCG@10 {out[mode]['ndcg@10']:.4f}  Recall@100 {out[mode]['recall@100']:.4f}",
            flush=True,
        )
    return out


def through_defaults(
    root: Path, queries: dict[str, str], qrels, extra: dict | None = None, k: int = 10
) -> dict:
    """nDCG@10 through ``Vault.recall(text)`` as an agent calls it (k=10, adaptive scoring and
    retrieval logging on, the vault's config plus ``extra``), queries in order on a fresh usage
    store; also by half of the run, against the same queries with adaptive scoring off."""
    from vaultmem.core import config as configmod

    fresh_usage(root)
    vault = Vault(root)
    vault.config = configmod.merge(vault.config, extra or {})
    on, off = [], []
    for qid, text in queries.items():
        on.append(ndcg_at([doc_id(h.path) for h in vault.recall(text, k=k)], qrels[qid], 10))
        off.append(
            ndcg_at(
                [doc_id(h.path) for h in vault.recall(text, k=k, log=False, adaptive=False)], qrels[qid], 10
            )
        )
    vault.close()
    half = len(on) // 2
    out = {"ndcg@10": round(mean(on), 4), "adaptive_off_ndcg@10": round(mean(off), 4),
           "first_half_minus_off": round(mean(on[:half]) - mean(off[:half]), 4),
           "second_half_minus_off": round(mean(on[half:]) - mean(off[half:]), 4)}  # fmt: skip
    out["k"] = k
    print(f"  Vault.recall defaults k={k} {extra or ''}: nDCG@10 {out['ndcg@10']:.4f} (adaptive off {out['adaptive_off_ndcg@10']:.4f};"
          f" on - off by half {out['first_half_minus_off']:+.4f} / {out['second_half_minus_off']:+.4f})", flush=True)  # fmt: skip
    return out


BEFORE = {
    "recall": {"bm25_weight": 0.25, "context_weight": 0.0, "question_words": True, "combine": "sum"},
    "adaptive": {"from_retrievals": True},
}  # the settings before issue 18
SUBJECT_OFF = {"recall": {"subject": False}}  # main before the question-about-a-speaker round
SUM = {"recall": {"combine": "sum"}}  # the hand-set formula (the default)
LEARNED = {"recall": {"combine": "learned"}}  # the learned combination (vaultmem/learned.py)
DEFAULT_VARIANTS = {"defaults": {}, "defaults_from_retrievals": {"adaptive": {"from_retrievals": True}},
                    "before": BEFORE, "sum": SUM, "learned": LEARNED}  # fmt: skip


def paired_latency(root: Path, queries: dict[str, str], repeats: int = 3, against: dict = BEFORE,
                   now_extra: dict | None = None) -> dict:  # fmt: skip
    """Recall p50 with the settings ``against`` (default: before issue 18) and now (the vault's
    settings plus ``now_extra``), alternating
    query by query (and which goes first) in one process; the query is embedded before both
    are timed, so the times leave the embedding out (the machine is shared: only the ratio
    means much)."""
    from vaultmem.core import config as configmod

    vault = Vault(root)
    now = configmod.merge(vault.config, now_extra or {})
    before = configmod.merge(vault.config, against)
    texts = list(queries.values())
    for t in texts[:20]:
        vault.recall(t, log=False)
    times: dict[str, list[float]] = {"before": [], "now": []}
    pair = [("before", before), ("now", now)]
    for _ in range(repeats):
        for t in texts:
            vault.embedder.embed_query([t])  # cached for both calls
            pair.reverse()
            for name, cfg in pair:
                vault.config = cfg
                start = time.perf_counter()
                vault.recall(t, log=False)
                times[name].append(time.perf_counter() - start)
    vault.close()
    out = {name: latency_summary(x) for name, x in times.items()}
    out["ratio_p50"] = round(out["now"]["p50_ms"] / out["before"]["p50_ms"], 3)
    print(
        f"  paired p50 before {out['before']['p50_ms']} ms, now {out['now']['p50_ms']} ms (x{out['ratio_p50']})",
        flush=True,
    )
    return out


def latency(vault: Vault, queries: dict[str, str], repeats: int) -> dict:
    texts = list(queries.values())
    for t in texts[:20]:
        vault.recall(t)  # warm-up
    runs = []
    for _ in range(repeats):
        seconds = []
        for t in texts:
            start = time.perf_counter()
            vault.recall(t, k=10)
            seconds.append(time.perf_counter() - start)
        runs.append(latency_summary(seconds))
    runs.sort(key=lambda r: r["p50_ms"])
    return {"runs": runs, "median_p50_ms": runs[len(runs) // 2]["p50_ms"],
            "median_p95_ms": sorted(r["p95_ms"] for r in runs)[len(runs) // 2]}  # fmt: skip


def build_timing(root: Path) -> dict:
    """Full index build from nothing vs embedding the same chunk texts alone."""
    from vaultmem.index.chunking import chunk, plain_text
    from vaultmem.index.embed import make_embedder

    vault = Vault(root)
    vault.embedder.embed(["warm up the model"])
    start = time.perf_counter()
    summary = vault.reindex(rebuild=True)
    build = time.perf_counter() - start
    texts = []
    for path in vault.store.list_paths():
        note = vault.store.read(path)
        texts += chunk(note.title, plain_text(note.body), vault.embedder.max_tokens)
    emb = make_embedder(vault.embedder.name, vault.embedder.batch_size)
    emb.embed(["warm up the model"])
    start = time.perf_counter()
    for i in range(0, len(texts), 256):
        emb.embed(texts[i : i + 256])
    embed_only = time.perf_counter() - start
    print(
        f"  build {build:.1f} s, embedding alone {embed_only:.1f} s, ratio {build / embed_only:.3f}",
        flush=True,
    )
    vault.close()
    return {"notes": summary.added, "chunks": len(texts), "build_s": round(build, 2),
            "embed_only_s": round(embed_only, 2), "ratio": round(build / embed_only, 3)}  # fmt: skip


def previous_build() -> dict | None:
    """The build timing of the last full run (kept when a run skips it), marked as such."""
    from benchmarks.common import RESULTS

    try:
        old = json.loads((RESULTS / "scifact.json").read_text())
    except (OSError, ValueError):
        return None
    build = old.get("build")
    if build and "measured" not in build:
        build = {**build, "measured": old.get("date")}
    return build


def reconcile_timing(root: Path, repeats: int = 5) -> dict:
    times = []
    for _ in range(repeats):
        vault = Vault(root)
        start = time.perf_counter()
        summary = vault.reindex()
        times.append(time.perf_counter() - start)
        assert not summary.changed
        vault.close()
    times.sort()
    return {"runs_s": [round(t, 3) for t in times], "median_s": round(times[len(times) // 2], 3)}


def tune(vault: Vault, queries: dict[str, str], qrels) -> dict:
    """Compare fusion methods and BM25 weights on the train split, from cached score arrays."""
    import numpy as np

    universe, index = vault.universe()
    vectors = vault.vectors()
    cached = {}
    for qid, text in queries.items():
        bm25 = vault.bm25.score_all(text, index, len(universe))
        vec = vectors.aligned_scores(vault.embedder.embed_query([text])[0], index, len(universe))
        cached[qid] = (bm25, vec)

    def top(scores: np.ndarray, n: int = 100) -> list[tuple[str, float]]:
        idx = np.argsort(-scores)[:n]
        return [(universe[i], float(scores[i])) for i in idx]

    def score(rank_fn) -> float:
        return round(
            mean(ndcg_at([doc_id(p) for p, _ in rank_fn(*cached[q])], qrels[q], 10) for q in queries), 4
        )

    results = {"bm25": score(lambda b, v: top(b)), "vector": score(lambda b, v: top(v))}
    for w in [x / 20 for x in range(2, 15)]:
        results[f"standardised convex w={w:.2f}"] = score(lambda b, v, w=w: top(sum(fusion.hybrid(b, v, w))))
    for w in (0.3, 0.4, 0.5, 0.6):
        results[f"min-max top-100 convex w={w:.2f}"] = score(
            lambda b, v, w=w: fusion.ranked(
                {k: s for k, (s, _, _) in fusion.convex(top(b), top(v), w).items()}
            )
        )
    for k in (10, 30, 60):
        results[f"rrf k={k}"] = score(lambda b, v, k=k: fusion.ranked(fusion.rrf(top(b), top(v), k=k)))
    for name, value in sorted(results.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<34} {value:.4f}")
    return results


SPEED = """
import json, statistics, sys, time
from pathlib import Path
from vaultmem.vault import Vault
vault, texts = Vault(Path(sys.argv[1])), json.loads(sys.argv[2])
for t in texts[:20]:
    vault.recall(t, log=False)
out = {}
for mode in ("hybrid", "bm25"):
    ts = []
    for t in texts:
        vault.embedder.embed([t])  # cached: the time below is the ranking's
        start = time.perf_counter(); vault.recall(t, mode=mode, log=False); ts.append(time.perf_counter() - start)
    out[mode] = statistics.median(ts) * 1000
vault.close()
print(json.dumps(out))
"""


def speed(work: Path, base: Path, queries: dict[str, str], runs: int, tag: str) -> None:
    """Recall p50 of this tree against the tree at ``base``, paired run by run (``SPEED``)."""
    trees = {"base": base, "this": Path(__file__).resolve().parent.parent}
    times = in_turns(trees, SPEED, [str(work), json.dumps(list(queries.values()))], runs)
    out: dict = {"base": str(base), "runs": runs, "runs_ms": times}
    for mode in ("hybrid", "bm25"):
        ms = {side: [r[mode] for r in times[side]] for side in trees}
        ratio = statistics.median(a / b for a, b in zip(ms["this"], ms["base"]))
        out[mode] = {"p50_ms": {side: round(statistics.median(v), 2) for side, v in ms.items()},
                     "paired_ratio": round(ratio, 3)}  # fmt: skip
        print(
            f"  {mode}: p50 {out[mode]['p50_ms']} ms, paired ratio x{out[mode]['paired_ratio']}", flush=True
        )
    print(f"wrote {write_result('scifact-speed' + (f'-{tag}' if tag else ''), out)}")


def main() -> None:
    ap = parser(__doc__, data="scifact", tag=True)
    ap.add_argument("--work", type=Path, default=WORK / "scifact-vault")
    ap.add_argument("--tune", action="store_true", help="sweep fusion settings on the train split")
    ap.add_argument("--repeats", type=int, default=5, help="latency runs over the query set")
    ap.add_argument("--skip-build-timing", action="store_true")
    ap.add_argument(
        "--defaults",
        action="store_true",
        help="also nDCG@10 through Vault.recall with default settings (adaptive on, logging)",
    )
    ap.add_argument(
        "--model", default="", help="[embedding] model (default: the default model; its own work folder)"
    )
    ap.add_argument(
        "--defaults-k", type=int, default=10, help="k of the --defaults recalls (each logs k retrievals)"
    )
    ap.add_argument(
        "--variants", default=",".join(DEFAULT_VARIANTS), help="--defaults variants to run (comma-separated)"
    )
    ap.add_argument("--latency-repeats", type=int, default=3, help="passes of the paired latency runs")
    ap.add_argument(
        "--queries", type=int, default=0, help="only this many queries and their documents (a smoke run)"
    )
    ap.add_argument("--speed-base", type=Path, help="time recall against this vaultmem tree (a built vault)")
    args = ap.parse_args()
    if args.model and args.work == WORK / "scifact-vault":
        args.work = WORK / f"scifact-vault-{args.model.rsplit('/', 1)[-1]}"
    if not (args.data / "corpus.jsonl").exists():
        sys.exit(f"scifact.py: no SciFact data at {args.data} (pass --data PATH)")
    split = "train" if args.tune else "test"
    corpus, queries, qrels = load(args.data, split, args.queries)
    write_vault(corpus, args.work)
    if args.model:  # the vault's own config names it: every Vault(root) below loads it
        (args.work / ".vaultmem.toml").write_text(f'[embedding]\nmodel = "{args.model}"\n')
    fresh_usage(args.work)  # no usage data from earlier runs
    print(f"SciFact: {len(corpus)} notes, {len(queries)} {split} queries", flush=True)
    if args.speed_base:
        return speed(args.work, args.speed_base, queries, args.latency_repeats, args.tag)
    build = None if (args.tune or args.skip_build_timing) else build_timing(args.work)
    if build is None and not args.tune:
        build = previous_build()
    vault = Vault(args.work)
    vault.reindex()
    if args.tune:
        write_result(
            "scifact-tune",
            {"split": "train", "queries": len(queries), "ndcg@10": tune(vault, queries, qrels)},
        )
        return
    quality = evaluate(vault, queries, qrels)
    if args.defaults:
        for name in args.variants.split(","):
            quality[f"vault_recall_{name}"] = through_defaults(
                args.work, queries, qrels, DEFAULT_VARIANTS[name], args.defaults_k
            )
        quality["paired_latency"] = paired_latency(args.work, queries, args.latency_repeats)
        quality["paired_latency_subject_off"] = paired_latency(
            args.work, queries, args.latency_repeats, SUBJECT_OFF
        )
        quality["paired_latency_learned_vs_sum"] = paired_latency(
            args.work, queries, args.latency_repeats, SUM, LEARNED
        )
    lat = latency(vault, queries, args.repeats)
    print(f"  recall latency p50 {lat['median_p50_ms']} ms, p95 {lat['median_p95_ms']} ms", flush=True)
    vault.close()
    rec = reconcile_timing(args.work)
    print(f"  no-change reconcile {rec['median_s']} s", flush=True)
    path = write_result("scifact", tag=args.tag, data={
        "split": "test", "notes": len(corpus), "queries": len(queries), "model": vault.embedder.name,
        "bm25_weight": vault.config["recall"]["bm25_weight"], "quality": quality,
        "latency": lat, "build": build, "reconcile_no_change": rec,
    })  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
