"""Time questions: recall@5 with and without the time handling, real model, fixed clocks.

    python benchmarks/time_questions.py            # build (once) and run
    python benchmarks/time_questions.py --boost 0.5 1 2

The vault (``tests/data/time_vault.json``, written for the tests): 60 dated memories over six
months of one project (weekly payments progress notes, session summaries, dated decisions with
validity, two events, meetings whose date is only in the title or the body). The questions
(``tests/data/time_questions.json``, 66, written for the tests) each carry the clock they are
asked at ("now") and the ids of the notes that answer them. recall@5 = share of a question's
relevant notes in its top 5, averaged. Variants: time handling off (the query as written), the
default boost (``recall.TIME_BOOST``) and other boost weights, and the filter mode.
Results: benchmarks/results/time-questions.json.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, parser, write_result
from vaultmem.core.note import render
from vaultmem.core.timeexpr import parse_query
from vaultmem.recall.options import TIME_BOOST
from vaultmem.recall.timefilter import parse_now
from vaultmem.vault import Vault

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
FIELDS = (
    "id",
    "type",
    "title",
    "created",
    "date",
    "valid_from",
    "valid_until",
    "key",
    "status",
    "superseded_by",
    "context",
)


def build(root: Path, notes: list[dict]) -> None:
    """Write the vault (``updated`` = ``created``, so file times play no part)."""
    if root.exists():
        shutil.rmtree(root)
    Vault.init(root)
    for n in notes:
        meta = {k: n[k] for k in FIELDS if n.get(k)}
        meta["updated"] = n["created"]
        folder = root / n["type"]
        folder.mkdir(exist_ok=True)
        (folder / f"{n['id']}.md").write_text(render(meta, f"# {n['title']}\n\n{n['body']}\n"))


def evaluate(vault: Vault, questions: list[dict], **kw) -> dict:
    per = []
    for q in questions:
        hits = vault.recall(q["query"], k=5, log=False, adaptive=False, snippets=False, now=q["now"], **kw)
        got = {h.id for h in hits}
        per.append(len(got & set(q["relevant"])) / len(q["relevant"]))
    return {"recall@5": round(statistics.fmean(per), 4), "per_question": [round(x, 3) for x in per]}


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--boost", type=float, nargs="*", default=[0.5, 2.0], help="other boost weights to try")
    args = ap.parse_args()
    notes = json.loads((DATA / "time_vault.json").read_text())
    questions = json.loads((DATA / "time_questions.json").read_text())
    root = WORK / "time-vault"
    build(root, notes)
    vault = Vault.open(root)
    start = time.perf_counter()
    vault.reindex()
    index_s = time.perf_counter() - start
    parsed = [parse_query(q["query"], parse_now(q["now"])) for q in questions]
    variants = {
        "off": evaluate(vault, questions, time="off"),
        f"boost {TIME_BOOST} (default)": evaluate(vault, questions, time="boost"),
    }
    for w in args.boost:
        vault.config["recall"]["time_boost"] = w
        variants[f"boost {w}"] = evaluate(vault, questions, time="boost")
    vault.config["recall"].pop("time_boost", None)
    variants["filter"] = evaluate(vault, questions, time="filter")
    vault.close()
    print(
        f"{len(notes)} notes, {len(questions)} questions, indexed in {index_s:.1f}s; "
        f"{sum(p.range is not None for p in parsed)} questions with an expression found without event notes"
    )
    for name, res in variants.items():
        print(f"  {name:<22} recall@5 {res['recall@5']:.3f}")
    off = variants["off"]["per_question"]
    on = variants[f"boost {TIME_BOOST} (default)"]["per_question"]
    worse = [q["query"] for q, a, b in zip(questions, off, on) if b < a]
    print("questions worse with time handling:", worse or "none")
    path = write_result(
        "time-questions",
        {
            "vault": "tests/data/time_vault.json",
            "questions_file": "tests/data/time_questions.json",
            "notes": len(notes),
            "questions": len(questions),
            "index_seconds": round(index_s, 2),
            "metric": "recall@5 (share of a question's relevant notes in the top 5, mean)",
            "default_boost": TIME_BOOST,
            "variants": {k: v["recall@5"] for k, v in variants.items()},
            "worse_with_time": worse,
            "per_question": [
                {
                    "query": q["query"],
                    "now": q["now"],
                    "relevant": q["relevant"],
                    "range": p.range.as_dict() if p.range else None,
                    **{k: v["per_question"][i] for k, v in variants.items()},
                }
                for i, (q, p) in enumerate(zip(questions, parsed))
            ],
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
