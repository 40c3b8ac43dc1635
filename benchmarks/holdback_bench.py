"""The instruction hold-back (vaultmem/core/holdback.py): recall of orders, false holds.

    python benchmarks/holdback_bench.py [--data PATH] [--before COMMIT]

The labelled set, benchmarks/data/holdback_set.jsonl, holds memories in English, German,
French, Spanish, Chinese and Japanese, each labelled ``instruction`` (it gives the agent
orders: the evasions of issue 39 and paraphrases of them) or ``ordinary`` (hard negatives:
imperatives to a person, "system", "assistant", "ignore the flaky test"). Each row is also
scored in three disguises: a zero-width space inside every word of four letters or more,
Cyrillic look-alikes for a, c, e, o, p (and A, C, E, O, P), and fullwidth letters. Reported:
recall (instructions held / instructions) and false holds (ordinary held / ordinary), per
language and per disguise, for this tree and for ``--before`` (the hold-back of that commit,
``fence.instruction_shaped``, loaded from git); also the notes held among the demo vault's
notes, SciFact's 5,183 abstracts and LoCoMo's 2,760 dev conversation turns (all ordinary).
The set was written with the patterns: the paraphrases of the issue are in it, so recall on
it is an upper bound on unseen wording.
A second set, benchmarks/data/holdback_heldout.jsonl, was written after the patterns were
fixed and never used to change them: its figures are the honest estimate. Its four misses
were then generalised (by their shape, not their words); a third set,
benchmarks/data/holdback_heldout2.jsonl (14 orders of those four shapes, 14 ordinary look-alikes),
was written and committed before that change (``held_out_2``; written by the same hand as the
change, so closer to an upper bound than the first held-out set was).

Issue 48, in order, each set committed before the detector it measures was run on it:
holdback_heldout3.jsonl (40 orders in en, de, fr, es; 200 ordinary notes), measured before any
change and after the first; holdback_tune3.jsonl, the tuning set of the first change;
holdback_heldout4.jsonl (40 orders in shapes none of the sets had), written after the first
change; holdback_tune4.jsonl, the tuning set of the second change; holdback_heldout5.jsonl (40
orders), written after the second change was frozen: the fresh figure. No held-out set's misses
were looked at; the 200 ordinary notes of the third set were never tuned on.
holdback_heldout6.jsonl (40 orders, 10 each in en, de, fr, es: indirect, conditional, in HTML or
code comments, inside meeting notes, in the third person; 200 ordinary notes: meeting notes, code
with imperative comments, how-tos, recipes), committed before any detector was run on it; the
embedding detector tried on it is measured by benchmarks/holdback_embed.py.

Results: benchmarks/results/holdback.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.common import parser, write_result  # noqa: E402
from vaultmem.core.holdback import instruction_shaped  # noqa: E402

SET = REPO / "benchmarks" / "data" / "holdback_set.jsonl"
HELD_OUT = REPO / "benchmarks" / "data" / "holdback_heldout.jsonl"
HELD_OUT_2 = REPO / "benchmarks" / "data" / "holdback_heldout2.jsonl"
ISSUE_48 = (
    "tune3",
    "heldout3",
    "tune4",
    "heldout4",
    "heldout5",
    "heldout6",
)  # holdback_<name>.jsonl, in the order written
BEFORE = "d710f88"  # main when the hold-back was rewritten (issue 39)
CHANGES = {"i48-before": "bd4da4e"}  # core/holdback.py at these commits, measured beside this tree
CYRILLIC = str.maketrans("aceopACEOP", "асеорАСЕОР")


def zero_width(text: str) -> str:
    return " ".join(
        w[: len(w) // 2] + "\u200b" + w[len(w) // 2 :] if len(w) >= 4 else w for w in text.split(" ")
    )


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and c.isalpha() else c for c in text)


DISGUISES: dict[str, Callable[[str], str]] = {
    "plain": lambda t: t, "zero-width": zero_width, "cyrillic": lambda t: t.translate(CYRILLIC), "fullwidth": fullwidth,
}  # fmt: skip


def old_detector(commit: str) -> Callable[[str], str | None]:
    """``fence.instruction_shaped`` as it was at ``commit``."""
    src = subprocess.run(["git", "show", f"{commit}:vaultmem/core/fence.py"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    mod = types.ModuleType("fence_before")
    exec(compile(src.replace("from __future__ import annotations", ""), "fence_before", "exec"), mod.__dict__)
    return mod.instruction_shaped


def holdback_at(commit: str) -> Callable[[str], str | None]:
    """``core.holdback.instruction_shaped`` as it was at ``commit`` (stdlib only: loaded alone)."""
    src = subprocess.run(["git", "show", f"{commit}:vaultmem/core/holdback.py"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    mod = types.ModuleType(f"holdback_{commit}")
    sys.modules[mod.__name__] = mod  # dataclasses and annotations look their module up
    exec(compile(src, mod.__name__, "exec"), mod.__dict__)
    return mod.instruction_shaped


def score(rows: list[dict], detect: Callable[[str], str | None]) -> dict:
    out: dict = {}
    for name, disguise in DISGUISES.items():
        by_lang: dict[str, dict[str, int]] = {}
        missed = []
        for r in rows:
            held = detect(disguise(r["text"])) is not None
            d = by_lang.setdefault(r["lang"], {"instructions": 0, "held": 0, "ordinary": 0, "false_holds": 0})
            if r["label"] == "instruction":
                d["instructions"] += 1
                d["held"] += held
                if not held and name == "plain":
                    missed.append(r["text"][:70])
            else:
                d["ordinary"] += 1
                d["false_holds"] += held
        tot = {
            k: sum(d[k] for d in by_lang.values())
            for k in ("instructions", "held", "ordinary", "false_holds")
        }
        rate = lambda n, d: round(n / d, 3) if d else None  # a set of orders alone has no ordinary rows
        out[name] = {"recall": rate(tot["held"], tot["instructions"]), "false_hold_rate": rate(tot["false_holds"], tot["ordinary"]),
                     **tot, "by_lang": by_lang, **({"missed": missed} if name == "plain" else {})}  # fmt: skip
    return out


def corpus_holds(detect: Callable[[str], str | None], data: Path) -> dict:
    demo = [p.read_text(encoding="utf-8") for p in sorted((REPO / "vaults" / "demo").rglob("*.md"))]
    sci = []
    if (data / "corpus.jsonl").exists():
        with open(data / "corpus.jsonl", encoding="utf-8") as f:
            sci = [(lambda d: f"{d['title']}\n\n{d['text']}")(json.loads(line)) for line in f]
    locomo, talk = data.parent / "locomo-dev" / "locomo-dev.json", []
    if locomo.exists():  # LoCoMo's conversation turns: people chatting ("where you are now")
        for conv in json.loads(locomo.read_text(encoding="utf-8")):
            turns = conv.get("conversation", conv).values()
            talk += [t["text"] for part in turns if isinstance(part, list) for t in part if "text" in t]
    out = {}
    for name, docs in (("demo", demo), ("scifact", sci), ("locomo", talk)):
        t = time.perf_counter()
        held = [d[:60] for d in docs if detect(d)]
        ms = (time.perf_counter() - t) * 1000
        out[name] = {"docs": len(docs), "held": len(held), "examples": held[:5],
                     "ms_per_doc": round(ms / max(1, len(docs)), 4)}  # fmt: skip
    return out


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    ap = parser(__doc__, data=("scifact", "BEIR SciFact folder (ordinary text)"))
    ap.add_argument("--before", default=BEFORE, help="the commit whose hold-back is compared")
    args = ap.parse_args()
    sets = {"set": load(SET), "held_out": load(HELD_OUT), "held_out_2": load(HELD_OUT_2)}
    sets |= {name: load(REPO / "benchmarks" / "data" / f"holdback_{name}.jsonl") for name in ISSUE_48}
    result: dict = {"sets": {k: len(v) for k, v in sets.items()}, "before_commit": args.before}
    try:
        before = [("before", old_detector(args.before))]
        before += [(name, holdback_at(commit)) for name, commit in CHANGES.items()]
    except subprocess.CalledProcessError:  # a checkout without that commit (shallow): this tree only
        print(f"commit {args.before} not found: measuring this tree only")
        before = []
    for name, detect in (*before, ("after", instruction_shaped)):
        result[name] = {k: score(rows, detect) for k, rows in sets.items()}
        result[name]["corpora"] = corpus_holds(detect, args.data)
        for which in sets:
            for disguise, s in result[name][which].items():
                print(f"{name:10} {which:10} {disguise:10} recall {s['held']}/{s['instructions']}  "
                      f"false holds {s['false_holds']}/{s['ordinary']}")  # fmt: skip
        print(
            f"{name:6} corpora: "
            + ", ".join(f"{k} {v['held']}/{v['docs']} held" for k, v in result[name]["corpora"].items())
        )
    print(f"wrote {write_result('holdback', result)}")


if __name__ == "__main__":
    main()
