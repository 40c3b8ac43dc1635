"""Automatic supersede without similarity: false automatic supersedes and flagged updates on the labelled pairs.

    python benchmarks/supersede_v2.py                  # default pair files, default model
    python benchmarks/supersede_v2.py --limit 20       # the first 20 pairs of each file (a smoke run)
    python benchmarks/supersede_v2.py --probe VAULT... --name NAME   # slot changes among real notes

Pairs: ``tests/data/supersede_pairs.json`` (209 pairs: ``update`` = the new memory replaces the
old one, ``distinct`` = both stay; halves as in the retired ``archive/supersede_signals.py``: pair i is in the
calibration half when i is even, held-out when odd) and ``tests/data/supersede_adversarial.json``
(issue 25's two shapes: a bulk of near-identical but different notes, and a different decision
under the same anchor that names the old one's words near "instead"; issue 37's different subjects
sharing a retracted word of the old title; plus true updates of those
shapes). Each pair gets ``vaultmem.core.updates.judge`` (cosine from the default FastEmbedder over
``memory_text``), the rule ``remember`` applies; it is compared with the rule shipped before
(an update on its own at cosine >= 0.91, or a retraction of any old word within five words of a
retraction word, related, cosine >= 0.54), reproduced here in ``before``.

Reported per set: automatic supersedes (true and false), updates at least flagged (auto or
possible), distinct pairs flagged as possible, per half of the labelled pairs too; each pair's
outcome and its ``retracts`` and ``slot`` signals are in the result. Results:
benchmarks/results/supersede-v2.json (``--name``: another name).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import parser, write_result
from benchmarks.supersede_calibration import DEFAULT_PAIRS, load
from vaultmem.core.errors import NoteParseError
from vaultmem.core.note import parse
from vaultmem.core.updates import SERIES_TYPES, Memory, Thresholds, judge, key_words, retracts, signals
from vaultmem.index.embed import DEFAULT_MODEL, make_embedder, similarity
from vaultmem.memory.lifecycle import memory_text

ADVERSARIAL = DEFAULT_PAIRS.parent / "supersede_adversarial.json"
FRESH = DEFAULT_PAIRS.parent / "supersede_fresh.json"  # issue 47: written before its rules, no shared wording
FRESH2 = DEFAULT_PAIRS.parent / "supersede_fresh2.json"  # issue 47, second round: written before its tuning
OLD_RETRACT = re.compile(
    r"\b(instead|no longer|not any ?more|anymore|replaced|replaces|replacing|switched|moved|migrated|dropped|"
    r"removed|gone|deprecated|took over|overtook|rather than|slipped|rewrote|rewritten|retired|shut down|"
    r"deleted|was|were|not|from)\b|->|\u2192",
    re.IGNORECASE,
)


def memory(side: dict, type_: str) -> Memory:
    anchor = side.get("anchor")
    return Memory(
        side["title"], side["content"], type_, tuple(side.get("context") or ()), (anchor,) if anchor else ()
    )


def before(old: Memory, new: Memory, cosine: float) -> str:
    """The rule shipped before this change (auto / possible / no), for comparison."""
    old_words = key_words(f"{old.title} {old.content}") - key_words(new.title)
    text = f"{new.title} {new.content}"
    tokens, starts = text.split(), [m.start() for m in re.finditer(r"\S+", text)]
    retract = False
    for m in OLD_RETRACT.finditer(text):
        i = next((k for k, s in enumerate(starts) if s >= m.start()), len(tokens) - 1)
        retract |= bool(key_words(" ".join(tokens[max(0, i - 5) : i + 6])) & old_words)
    sig = signals(old, new, cosine)
    related = bool(sig["context"] or sig["anchor"] or sig["title"] >= 0.1)
    if cosine >= 0.91 or (retract and related and cosine >= 0.54):
        decision = "auto"
    elif cosine >= 0.45 and (related or sig["changed"]):
        decision = "possible"
    else:
        decision = "no"
    if decision == "auto" and (old.type != new.type or new.type in SERIES_TYPES):
        decision = "possible"
    return decision


def score(rows: list[dict], key: str) -> dict:
    upd = [r for r in rows if r["label"] == "update"]
    dis = [r for r in rows if r["label"] == "distinct"]
    return {
        "pairs": len(rows), "updates": len(upd), "distinct": len(dis),
        "auto_true": sum(r[key] == "auto" for r in upd), "auto_false": sum(r[key] == "auto" for r in dis),
        "updates_flagged": sum(r[key] != "no" for r in upd),
        "distinct_flagged_possible": sum(r[key] == "possible" for r in dis),
    }  # fmt: skip


def _titled(path: Path) -> list[tuple[str, str]]:
    """(title, text: its first 1,500 characters) of each note of a vault, or of each document of
    a BEIR ``corpus.jsonl``."""
    if path.suffix == ".jsonl":
        return [
            (d["title"], d["text"][:1500])
            for d in map(json.loads, path.read_text().splitlines())
            if d.get("title")
        ]
    out = []
    for f in sorted(path.rglob("*.md")):
        if not any(part.startswith(".") for part in f.relative_to(path).parts):
            with contextlib.suppress(NoteParseError, UnicodeDecodeError):
                n = parse(f.read_text(encoding="utf-8"), str(f))
                out.append((n.title, " ".join(n.body.split())[:1500]))
    return out


def probe(path: Path, common: int = 60) -> dict:
    """Slot changes (``slots.slot_change``, at any cosine) between notes that share a title key
    word (one held by at most ``common`` titles): none of these notes updates another, so each
    is a false positive the rule would need only a cosine and a relation to apply."""
    from vaultmem.core.slots import slot_change  # not on main before issue 37's slot rule

    items = _titled(path)
    by_word: dict[str, set[int]] = {}
    for i, (title, _) in enumerate(items):
        for w in key_words(title):
            by_word.setdefault(w, set()).add(i)
    pairs = {(a, b) for ids in by_word.values() if len(ids) <= common for a in ids for b in ids if a != b}
    fires = [(items[a][0], items[b][0]) for a, b in sorted(pairs)
             if slot_change(items[a][0], items[a][1], items[b][0], items[b][1])]  # fmt: skip
    # a retraction of the old subject (1.0: automatic at any cosine >= auto_cosine, related or not)
    notes = [Memory(t, text) for t, text in items]
    retract = [(items[a][0], items[b][0]) for a, b in sorted(pairs) if retracts(notes[a], notes[b]) >= 1.0]
    print(
        f"{path}: {len(items)} notes, {len(pairs)} ordered pairs sharing a title word, {len(fires)} slot changes, "
        f"{len(retract)} retractions"
    )
    return {"path": str(path), "notes": len(items), "pairs": len(pairs), "slot_changes": fires,
            "retractions": retract}  # fmt: skip


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS, help="labelled pair file (JSON list)")
    ap.add_argument("--adversarial", type=Path, default=ADVERSARIAL, help="labelled adversarial pair file")
    ap.add_argument("--fresh", type=Path, default=FRESH, help="labelled pair file written fresh (issue 47)")
    ap.add_argument("--fresh2", type=Path, default=FRESH2, help="the second fresh pair file (issue 47)")
    ap.add_argument("--model", default="", help="the embedding model of the cosines (default: the default)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N pairs of each file (0: all)")
    ap.add_argument("--name", default="supersede-v2", help="result name under benchmarks/results/")
    ap.add_argument("--probe", nargs="+", type=Path, default=[],
                    help="instead: count slot changes between the notes of these vaults (or BEIR corpus.jsonl)")  # fmt: skip
    args = ap.parse_args()
    if args.probe:
        path = write_result(args.name, {"probe": [probe(p) for p in args.probe]})
        print(f"wrote {path}")
        return
    sets = {
        "labelled": load(args.pairs),
        "adversarial": load(args.adversarial),
        "fresh": load(args.fresh),
        "fresh2": load(args.fresh2),
    }
    if args.limit:
        sets = {k: v[: args.limit] for k, v in sets.items()}
    embedder = make_embedder(args.model or DEFAULT_MODEL)
    t = time.perf_counter()
    rows: dict[str, list[dict]] = {}
    for name, pairs in sets.items():
        vecs = embedder.embed(
            [memory_text(p[s]["title"], p[s]["content"]) for p in pairs for s in ("old", "new")]
        )
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        rows[name] = []
        for i, p in enumerate(pairs):
            old, new = memory(p["old"], p["type"]), memory(p["new"], p["type"])
            cos = float(similarity(embedder, vecs[2 * i] @ vecs[2 * i + 1]))
            verdict = judge(old, new, cos)
            rows[name].append({"i": i, "label": p["label"], "cosine": round(cos, 4), "now": verdict.decision,
                               "before": before(old, new, cos), "retracts": verdict.signals["retracts"],
                               "slot": verdict.signals.get("slot", 0.0),
                               "old": p["old"]["title"], "new": p["new"]["title"]})  # fmt: skip
    seconds = time.perf_counter() - t
    lab = rows["labelled"]
    halves = {
        "calibration": [r for r in lab if r["i"] % 2 == 0],
        "held_out": [r for r in lab if r["i"] % 2 == 1],
    }
    result = {
        "pairs_files": [str(args.pairs), str(args.adversarial), str(args.fresh), str(args.fresh2)], "model": embedder.name,
        "embed_seconds": round(seconds, 1), "thresholds": vars(Thresholds()),
        "now": {**{k: score(v, "now") for k, v in halves.items()}, "labelled": score(lab, "now"),
                "adversarial": score(rows["adversarial"], "now"), "fresh": score(rows["fresh"], "now"),
                "fresh2": score(rows["fresh2"], "now")},
        "before": {**{k: score(v, "before") for k, v in halves.items()}, "labelled": score(lab, "before"),
                   "adversarial": score(rows["adversarial"], "before"), "fresh": score(rows["fresh"], "before"),
                   "fresh2": score(rows["fresh2"], "before")},
        "fresh_pairs": rows["fresh"],
        "fresh2_pairs": rows["fresh2"],
        "adversarial_pairs": rows["adversarial"],
        "labelled_pairs": lab,
        "false_auto_now": [r for v in rows.values() for r in v if r["label"] == "distinct" and r["now"] == "auto"],
        "unflagged_updates_now": [r for v in rows.values() for r in v if r["label"] == "update" and r["now"] == "no"],
    }  # fmt: skip
    path = write_result(args.name, result)
    for name in ("calibration", "held_out", "labelled", "adversarial", "fresh", "fresh2"):
        for rule in ("before", "now"):
            s = result[rule][name]
            print(f"{name:12} {rule:7} auto {s['auto_true']}/{s['updates']} true, {s['auto_false']}/{s['distinct']} "
                  f"false; updates flagged {s['updates_flagged']}/{s['updates']}; "
                  f"distinct flagged {s['distinct_flagged_possible']}/{s['distinct']}")  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
