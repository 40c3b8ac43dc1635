"""SciFact with and without time handling: which queries hold a time expression, and is the
ranking the same?

    python benchmarks/time_scifact.py             # builds benchmarks/.work/scifact-vault once

Every SciFact query (all splits) is parsed with ``timeexpr.parse_query`` (clock fixed at
2026-11-22). Then every test query is recalled (hybrid, top 10, no adaptive scoring) with the
time handling off and on (default boost): the number of queries whose top 10 differ, and
nDCG@10 both ways. Results: benchmarks/results/time-scifact.json.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, mean, ndcg_at, write_result  # noqa: E402
from benchmarks.scifact import DEFAULT_DATA, doc_id, load, write_vault  # noqa: E402
from vaultmem.timeexpr import parse_query  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

NOW = dt.datetime(2026, 11, 22, 12, tzinfo=dt.timezone.utc)


def main() -> None:
    corpus, queries, qrels = load(DEFAULT_DATA, "test")
    every = {q["_id"]: q["text"] for q in map(json.loads, (DEFAULT_DATA / "queries.jsonl").open())}
    found = {}
    for qid, text in every.items():
        parsed = parse_query(text, NOW)
        if parsed.range is not None:
            found[qid] = {"query": text, "range": parsed.range.as_dict(), "text": parsed.text, "test": qid in queries}
    print(f"{len(every)} SciFact queries, {len(found)} with a time expression:")
    for qid, f in found.items():
        print(f"  [{qid}{' test' if f['test'] else ''}] {f['range']['expression']!r} -> {f['range']['from']}..{f['range']['until']}")
    root = WORK / "scifact-vault"
    write_vault(corpus, root)
    vault = Vault.open(root)
    start = time.perf_counter()
    vault.reindex()
    build_s = time.perf_counter() - start
    differ, nd = [], {"off": [], "boost": []}
    for qid, text in queries.items():
        ranks = {}
        for mode in ("off", "boost"):
            hits = vault.recall(text, k=10, log=False, adaptive=False, snippets=False, now=NOW, time=mode)
            ranks[mode] = [doc_id(h.path) for h in hits]
            nd[mode].append(ndcg_at(ranks[mode], qrels[qid], 10))
        if ranks["off"] != ranks["boost"]:
            differ.append(qid)
    vault.close()
    result = {"queries_parsed": len(every), "with_expression": found, "test_queries": len(queries),
              "test_rankings_that_differ": differ, "ndcg@10_off": round(mean(nd["off"]), 4),
              "ndcg@10_time": round(mean(nd["boost"]), 4), "index_seconds": round(build_s, 1)}
    print(f"test: {len(queries)} queries, {len(differ)} top-10 rankings differ; nDCG@10 off {result['ndcg@10_off']} "
          f"/ with time handling {result['ndcg@10_time']} (index {build_s:.0f}s)")
    print(f"wrote {write_result('time-scifact', result)}")


if __name__ == "__main__":
    main()
