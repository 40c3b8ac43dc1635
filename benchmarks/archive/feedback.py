"""Simulated feedback loop on the demo vault, real model: do ratings move memories?

    python benchmarks/feedback.py                  # 20 rounds over 15 queries
    python benchmarks/feedback.py --rounds 40      # more rounds
    python benchmarks/feedback.py --work PATH      # where the vault copies go (default benchmarks/.work)

A copy of ``vaults/demo`` is indexed with the default embedder. Each round runs a fixed set of
15 questions (k=20, logged like any recall) and a simulated agent rates the top 5 of each:
the HELPFUL memories (concrete gotchas and lessons) are rated useful whenever they show up
there, the UNHELPFUL ones (a broad project overview, old session logs, an old handoff) are
rated not useful; everything else is left unrated. After every round the script records,
for the helpful and the unhelpful set, the mean rank and score over the (query, memory)
pairs found in the top 20, how many such pairs there are (top 20 and top 5), and the mean
rank of the pairs tracked from round 0 (a pair that left the top 20 counts as rank 21).

A control copy runs the same rounds without ratings (retrievals are still logged), so the
drift caused by frequency and recency alone is visible. At the end every unhelpful memory is
checked to be still retrievable: still in some top 20 and found by a query naming it (its
title), with its adaptive score at or above the floor (0.35).
Results: benchmarks/results/feedback.json.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, write_result  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

DEMO = Path(__file__).resolve().parent.parent / "vaults" / "demo"
QUERIES = [
    "why did we pick postgres advisory locks over redis for job leases?",
    "what breaks when stripe webhooks arrive twice?",
    "what stops two boaters from reserving the same berth for overlapping nights?",
    "celery worker on fly keeps getting shut down when there is no web traffic",
    "a yen price shows up 100 times too big on the payment page",
    "what should the next agent work on and what is still open?",
    "how does dana want git commit subjects formatted?",
    "who do we talk to at the japanese customer and which words did they ask us to use?",
    "can I push a new native library to the dockhand app with an over-the-air update?",
    "why was the free slip search endpoint slow and what made it fast?",
    "how do we handle payments and refunds with stripe?",
    "what went wrong with background jobs during deploys?",
    "how is the mobile app built and released?",
    "what timezone problems have we hit with bookings?",
    "how do we avoid processing the same event twice?",
]
HELPFUL = [
    "gotchas/Stripe webhooks can arrive twice or out of order.md",
    "gotchas/Booking ranges must be built in marina local time.md",
    "gotchas/Expo OTA updates cannot ship native changes.md",
    "lessons/Keep Celery tasks small and idempotent.md",
    "lessons/Write the idempotency check before the side effect.md",
]
UNHELPFUL = [
    "projects/Project - Tidewater.md",
    "sessions/Session 2026-09-10 kickoff and stack choice.md",
    "sessions/Session 2026-10-14 webhook idempotency.md",
    "handoffs/Handoff 2026-10-31.md",
]
K, TOP, MISSING = 20, 5, 21
FLOOR = 0.35


def prepare(work: Path) -> tuple[Path, Path]:
    """Two indexed copies of the demo vault (rated and control), no usage data."""
    rated, control = work / "feedback-rated", work / "feedback-control"
    for d in (rated, control):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(DEMO, rated, ignore=shutil.ignore_patterns(".vaultmem"))
    with Vault(rated) as v:
        v.reindex()
    shutil.copytree(rated, control)  # the index is copied too: no second embedding run
    return rated, control


def run_round(vault: Vault) -> dict[str, dict[str, tuple[int, float]]]:
    """query -> path -> (rank, score) for the top K of every query (logged as retrievals)."""
    return {q: {h.path: (h.rank, h.score) for h in vault.recall(q, k=K)} for q in QUERIES}


def rate(vault: Vault, results: dict[str, dict[str, tuple[int, float]]]) -> int:
    """The simulated agent: rate the helpful and unhelpful memories it sees in each top 5."""
    records = vault.records()
    n = 0
    for hits in results.values():
        ratings = [(records[p].key, p in HELPFUL) for p, (rank, _) in hits.items()
                   if rank <= TOP and (p in HELPFUL or p in UNHELPFUL)]  # fmt: skip
        if ratings:
            vault.rate(ratings, source="feedback-bench")
            n += len(ratings)
    return n


def summarise(results: dict, members: list[str], tracked: list[tuple[str, str]]) -> dict:
    pairs = [(q, p, *hits[p]) for q, hits in results.items() for p in members if p in hits]
    ranks = [r for _, _, r, _ in pairs]
    scores = [s for _, _, _, s in pairs]
    tracked_ranks = [results[q].get(p, (MISSING, 0.0))[0] for q, p in tracked]
    return {
        "pairs_top20": len(pairs),
        "pairs_top5": sum(r <= TOP for r in ranks),
        "mean_rank": round(statistics.fmean(ranks), 2) if ranks else None,
        "mean_score": round(statistics.fmean(scores), 4) if scores else None,
        "tracked_mean_rank": round(statistics.fmean(tracked_ranks), 2) if tracked_ranks else None,
        "tracked_left_top20": sum(r == MISSING for r in tracked_ranks),
    }


def per_memory(first: dict, last: dict) -> dict:
    """Each tracked memory's ranks in the queries that had it in the top 20 at round 0."""
    out = {}
    for p in HELPFUL + UNHELPFUL:
        queries = [q for q, hits in first.items() if p in hits]
        out[p] = {"queries": len(queries), "ranks_round0": [first[q][p][0] for q in queries],
                  "ranks_final": [last[q].get(p, (MISSING, 0.0))[0] for q in queries]}  # fmt: skip
    return out


def loop(vault: Vault, rounds: int, with_ratings: bool) -> dict:
    history, tracked, ratings, first = [], {}, 0, {}
    for i in range(rounds + 1):  # round 0 is the state before any feedback
        results = run_round(vault)
        if i == 0:
            first = results
            tracked = {name: [(q, p) for q, hits in results.items() for p in members if p in hits]
                       for name, members in (("helpful", HELPFUL), ("unhelpful", UNHELPFUL))}  # fmt: skip
        history.append({"round": i, "helpful": summarise(results, HELPFUL, tracked["helpful"]),
                        "unhelpful": summarise(results, UNHELPFUL, tracked["unhelpful"])})  # fmt: skip
        if with_ratings and i < rounds:
            ratings += rate(vault, results)
    return {"rounds": history, "ratings_given": ratings, "per_memory": per_memory(first, results), "last_results": results}


def still_retrievable(vault: Vault, results: dict) -> dict:
    """Every unhelpful memory: still in some top 20, and found by a query naming it."""
    records = vault.records()
    out = {}
    for p in UNHELPFUL:
        rec = records[p]
        hits = vault.recall(rec.title, k=K, log=False)
        own = next((h for h in hits if h.path == p), None)
        out[p] = {
            "queries_with_it_in_top20": sum(p in hits_ for hits_ in results.values()),
            "rank_for_its_title": own.rank if own else None,
            "adaptive": own.explain.get("adaptive") if own else None,
            "blend": own.explain.get("blend") if own else None,
            "usefulness": own.explain.get("usefulness") if own else None,
        }
    return out


def no_adaptive_ranks(vault: Vault) -> dict:
    """The same pairs ranked without usage data (the text-only ranking), for reference."""
    out = {}
    for name, members in (("helpful", HELPFUL), ("unhelpful", UNHELPFUL)):
        ranks = [h.rank for q in QUERIES for h in vault.recall(q, k=K, adaptive=False, log=False) if h.path in members]
        out[name] = {"pairs_top20": len(ranks), "mean_rank": round(statistics.fmean(ranks), 2) if ranks else None}
    return out


def line(r: dict) -> str:
    h, u = r["helpful"], r["unhelpful"]
    return (f"{r['round']:>5}  helpful rank {h['mean_rank']:>5} score {h['mean_score']:.3f} "
            f"tracked {h['tracked_mean_rank']:>5} top5 {h['pairs_top5']:>2} top20 {h['pairs_top20']:>2} | "
            f"unhelpful rank {u['mean_rank']:>5} score {u['mean_score']:.3f} tracked {u['tracked_mean_rank']:>5} "
            f"top5 {u['pairs_top5']:>2} top20 {u['pairs_top20']:>2}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--work", type=Path, default=WORK)
    args = ap.parse_args()
    start = time.perf_counter()
    rated_root, control_root = prepare(args.work)
    print(f"feedback loop: {len(QUERIES)} queries x {args.rounds} rounds, top {TOP} rated, k={K}", flush=True)

    with Vault(rated_root) as vault:
        baseline = no_adaptive_ranks(vault)
        rated = loop(vault, args.rounds, with_ratings=True)
        retrievable = still_retrievable(vault, rated.pop("last_results"))
        model = vault.embedder.name
    with Vault(control_root) as vault:
        control = loop(vault, args.rounds, with_ratings=False)
        control.pop("last_results")

    print("with ratings:")
    for r in rated["rounds"]:
        if r["round"] in (0, 1, 2, 3, 5, 10) or r["round"] == args.rounds:
            print(line(r))
    print("control (no ratings):")
    for r in control["rounds"]:
        if r["round"] in (0, 1) or r["round"] == args.rounds:
            print(line(r))
    first, last = rated["rounds"][0], rated["rounds"][-1]
    checks = {
        "helpful_rose": last["helpful"]["tracked_mean_rank"] < first["helpful"]["tracked_mean_rank"],
        "unhelpful_sank": last["unhelpful"]["tracked_mean_rank"] > first["unhelpful"]["tracked_mean_rank"],
        "unhelpful_never_vanish": all(
            v["queries_with_it_in_top20"] > 0 and v["rank_for_its_title"] is not None
            and v["adaptive"] is not None and v["adaptive"] >= FLOOR for v in retrievable.values()
        ),
    }  # fmt: skip
    print("ranks per memory (round 0 -> last round, in the queries that had it in the top 20 at first):")
    for p, v in rated["per_memory"].items():
        print(f"  {'+' if p in HELPFUL else '-'} {p}: {v['ranks_round0']} -> {v['ranks_final']}")
    print("unhelpful memories at the end:")
    for p, v in retrievable.items():
        print(f"  {p}: in top 20 of {v['queries_with_it_in_top20']} queries, rank {v['rank_for_its_title']} "
              f"for its title, adaptive {v['adaptive']}, blend {v['blend']}")  # fmt: skip
    print("checks: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in checks.items()))
    path = write_result("feedback", {
        "model": model, "queries": QUERIES, "rounds": args.rounds, "k": K, "rated_top": TOP,
        "helpful": HELPFUL, "unhelpful": UNHELPFUL, "no_adaptive_reference": baseline,
        "with_ratings": rated, "control_no_ratings": control, "unhelpful_at_end": retrievable,
        "checks": checks, "seconds": round(time.perf_counter() - start, 1),
    })  # fmt: skip
    print(f"wrote {path}")
    if not all(checks.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
