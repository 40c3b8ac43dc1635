"""SciFact with and without time handling: which queries hold a time expression, and is the
ranking the same?

    python benchmarks/time_scifact.py             # builds benchmarks/.work/scifact-vault once
    python benchmarks/time_scifact.py --parse-only  # no index: the notes' metadata from the files

With ``--parse-only`` the notes are parsed from the files (no embedding) and recall's
``time_query`` is asked, for each query with an expression, whether it would use the range;
when it does not, ``search`` runs exactly the code path of ``--time off`` (no time part, no
change of candidates), so the ranking is identical by construction.

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
from vaultmem.core.timeexpr import parse_query  # noqa: E402
from vaultmem.recall import timefilter  # noqa: E402
from vaultmem.vault import Vault  # noqa: E402

NOW = dt.datetime(2026, 11, 22, 12, tzinfo=dt.timezone.utc)


def parse_only(root: Path, found: dict) -> dict:
    """Whether recall would use each expression's range over the SciFact notes (from the files)."""
    from types import SimpleNamespace

    from vaultmem.recall.pipeline import Options, time_query

    from vaultmem.core.note import parse
    from vaultmem.index.manifest import Record

    records = {}
    for path in sorted(root.glob("*.md")):
        st = path.stat()
        records[path.name] = Record.from_note(parse(path.read_text(), path.name, st.st_mtime), st.st_mtime_ns, st.st_size)
    src = SimpleNamespace(records=records)
    used = {}
    for qid, f in found.items():
        text, span, inside = time_query(src, f["query"], Options(), NOW)
        used[qid] = {"range_used": span is not None, "notes_in_range": len(inside),
                     "notes_in_range_before_check": len(timefilter.in_range(records.values(), parse_query(f["query"], NOW).range))}
    return {"notes": len(records), "queries": used}


def main() -> None:
    if "--parse-only" in sys.argv:
        every = {q["_id"]: q["text"] for q in map(json.loads, (DEFAULT_DATA / "queries.jsonl").open())}
        found = {qid: {"query": t, "range": parse_query(t, NOW).range.as_dict()} for qid, t in every.items()
                 if parse_query(t, NOW).range is not None}
        root = WORK / "scifact-vault"
        corpus, _, _ = load(DEFAULT_DATA, "test")
        write_vault(corpus, root)
        res = parse_only(root, found)
        for qid, r in res["queries"].items():
            print(f"  [{qid}] {found[qid]['range']['expression']!r}: {r['notes_in_range_before_check']} of "
                  f"{res['notes']} notes dated in range -> range used: {r['range_used']}")
        print(f"wrote {write_result('time-scifact-parse', {'queries_parsed': len(every), 'with_expression': found, **res})}")
        return
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
