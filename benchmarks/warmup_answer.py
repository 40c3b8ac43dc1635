"""What the answer given while the memory service warms up costs in quality (issue 26).

A prompt hook that finds no service answers from keywords (``recall.keywords``: BM25 over the
index as it is, no numpy, networkx or model) and shows at most 3 term matches. Before, it ran
the pipeline's BM25 mode in its own process (BM25 plus the link graph's context and expansion,
profiles, importance, usage), which took longer than the hook's whole target. This compares
the two on LoCoMo (protocol of ``locomo.py``: one vault per conversation, flat and linked
shapes), by evidence recall@3 (what the hook can show) and @10, how often their top 3 are the
same (and their top 10 with the pipeline's time expressions off: the keyword answer reads them
as plain words), and their time per query in a process that has both loaded. No model: the
vaults are indexed with ``[embedding] model = "none"``.

    python benchmarks/warmup_answer.py                 # all 5 conversations, both shapes
    python benchmarks/warmup_answer.py --convs 0 --turns 40
    python benchmarks/warmup_answer.py --shapes linked --tag linked

Results: benchmarks/results/warmup-answer.json.

``--speed-base DIR`` instead times the keyword answer (``keywords.recall``, k 10) and the
pipeline's BM25 mode (``Vault.recall``, warm, in process) of this tree and of the vaultmem tree
at DIR (an older commit's worktree) on vaults already built by a run (``--work``): each in a
fresh process, in turns, ``--runs`` times; per-query p50 and the paired ratio. Results:
benchmarks/results/warmup-speed[-TAG].json.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, fresh_usage, in_turns, latency_summary, mean, parser, write_result
from benchmarks.locomo import CATEGORIES, questions, write_conversation
from vaultmem.recall import keywords
from vaultmem.vault import Vault

KS = (3, 10)
NO_MODEL = '[embedding]\nmodel = "none"\n'


def answers(vault: Vault, question: str) -> dict[str, tuple[list[str], float]]:
    """Each side's ranked ids (top 10) and seconds."""
    out = {}
    start = time.perf_counter()
    hits = keywords.recall(vault.root, question, {"k": max(KS)})
    out["keywords"] = ([h["id"] for h in hits], time.perf_counter() - start)
    start = time.perf_counter()
    piped = vault.recall(question, k=max(KS), mode="bm25", log=False)
    out["pipeline_bm25"] = ([h.id for h in piped], time.perf_counter() - start)
    start = (
        time.perf_counter()
    )  # a time expression is plain words to the keyword answer (no every note at hand)
    piped = vault.recall(question, k=max(KS), mode="bm25", log=False, time="off")
    out["pipeline_bm25_time_off"] = ([h.id for h in piped], time.perf_counter() - start)
    return out


def run(sample: dict, shape: str, work: Path, turns: int) -> list[dict]:
    root = work / shape / sample["sample_id"]
    write_conversation(root, sample, shape, turns)
    (root / ".vaultmem.toml").write_text(NO_MODEL)
    fresh_usage(root)
    vault = Vault(root)
    vault.reindex()
    rows = []
    for qa, evidence in questions(sample, vault):
        row: dict = {"category": qa["category"]}
        ranked_of = {}
        for side, (ranked, seconds) in answers(vault, str(qa["question"])).items():
            ranked_of[side] = ranked
            row[side] = {f"r@{k}": len(set(ranked[:k]) & set(evidence)) / len(evidence) for k in KS}
            row[side]["seconds"] = seconds
            row[side]["top3"] = ranked[:3]
        row["same_top3"] = row["keywords"]["top3"] == row["pipeline_bm25"]["top3"]
        row["same_top10_time_off"] = ranked_of["keywords"] == ranked_of["pipeline_bm25_time_off"]
        rows.append(row)
    vault.close()
    return rows


def summarise(rows: list[dict]) -> dict:
    out: dict = {"n": len(rows), "same_top3": round(100 * mean(r["same_top3"] for r in rows), 1),
                 "same_top10_time_off": round(100 * mean(r["same_top10_time_off"] for r in rows), 1)}  # fmt: skip
    for side in ("keywords", "pipeline_bm25", "pipeline_bm25_time_off"):
        out[side] = {f"R@{k}": round(100 * mean(r[side][f"r@{k}"] for r in rows), 1) for k in KS}
        out[side]["per_query"] = latency_summary([r[side]["seconds"] for r in rows])
        out[side]["by_category"] = {CATEGORIES.get(c, str(c)): round(100 * mean(r[side]["r@3"] for r in rows
                                                                                 if r["category"] == c), 1)
                                    for c in sorted({r["category"] for r in rows})}  # fmt: skip
    return out


TIMER = """
import json, statistics, sys, time
from pathlib import Path
from vaultmem.recall import keywords
from vaultmem.vault import Vault
root, questions = Path(sys.argv[1]), json.loads(sys.argv[2])
vault = Vault(root)
answers = {"keywords": lambda q: keywords.recall(root, q, {"k": 10}),
           "pipeline": lambda q: vault.recall(q, k=10, mode="bm25", log=False)}
out = {}
for name, answer in answers.items():
    for q in questions[:5]:
        answer(q)
    ts = []
    for q in questions:
        t = time.perf_counter(); answer(q); ts.append(time.perf_counter() - t)
    out[name] = statistics.median(ts) * 1000
print(json.dumps(out))
"""


def speed(args, samples: list[dict]) -> None:
    """Per-query p50 of the keyword answer and of the pipeline's BM25 mode (in process, warm),
    this tree against ``--speed-base``, in turns."""
    out: dict = {"base": str(args.speed_base), "runs": args.runs, "vaults": {}}
    trees = {"base": args.speed_base, "this": Path(__file__).resolve().parent.parent}
    for shape in args.shapes.split(","):
        for sample in samples:
            root = args.work / shape / sample["sample_id"]
            qs = json.dumps([str(qa["question"]) for qa in sample["qa"]][:150])
            runs = in_turns(trees, TIMER, [str(root), qs], args.runs)
            row = out["vaults"][f"{shape}/{sample['sample_id']}"] = {"runs_ms": runs}
            for answer in ("keywords", "pipeline"):
                times = {side: [r[answer] for r in runs[side]] for side in trees}
                ratio = statistics.median(a / b for a, b in zip(times["this"], times["base"]))
                row[answer] = {"p50_ms": {k: round(statistics.median(v), 2) for k, v in times.items()},
                               "paired_ratio": round(ratio, 3)}  # fmt: skip
            print(shape, sample["sample_id"], {a: row[a] for a in ("keywords", "pipeline")}, flush=True)
    print(f"wrote {write_result('warmup-speed', out, tag=args.tag)}")


def main() -> None:
    ap = parser(__doc__, data="locomo-dev/locomo-dev.json", runs=3, tag=True)
    ap.add_argument("--work", type=Path, default=WORK / "warmup-answer")
    ap.add_argument("--convs", default="", help="comma-separated conversation positions (0-4)")
    ap.add_argument(
        "--turns", type=int, default=0, help="only the first N notes of each conversation (a smoke run)"
    )
    ap.add_argument("--shapes", default="flat,linked", help="comma-separated: flat, linked")
    ap.add_argument("--speed-base", type=Path, help="time the keyword answer against this vaultmem tree")
    args = ap.parse_args()
    if not args.data.exists():
        sys.exit(f"warmup_answer.py: no LoCoMo data at {args.data} (pass --data PATH)")
    samples = json.loads(args.data.read_text())
    if args.convs:
        samples = [s for i, s in enumerate(samples) if str(i) in args.convs.split(",")]
    if args.speed_base:
        return speed(args, samples)
    result: dict = {"conversations": [s["sample_id"] for s in samples], "turns": args.turns or "all"}
    for shape in args.shapes.split(","):
        rows = [row for sample in samples for row in run(sample, shape, args.work, args.turns)]
        result[shape] = s = summarise(rows)
        print(f"{shape}: {s['n']} questions; R@3/R@10 keywords {s['keywords']['R@3']}/{s['keywords']['R@10']}, "
              f"pipeline bm25 {s['pipeline_bm25']['R@3']}/{s['pipeline_bm25']['R@10']}; same top 3 in "
              f"{s['same_top3']}% (top 10 the same as with the pipeline's time off in {s['same_top10_time_off']}%); per query p50 {s['keywords']['per_query']['p50_ms']:.1f} vs "
              f"{s['pipeline_bm25']['per_query']['p50_ms']:.1f} ms", flush=True)  # fmt: skip
    print(f"wrote {write_result('warmup-answer', result, tag=args.tag)}")


if __name__ == "__main__":
    main()
