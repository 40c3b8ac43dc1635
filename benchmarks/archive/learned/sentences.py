"""Sentence-level vectors for SciFact, offline (issue 18): does a note's best *sentence*
match a claim better than its best ~180-token chunk?

    python benchmarks/learned/sentences.py --embed   # embed every sentence once (CachedEmbedder)
    python benchmarks/learned/sentences.py           # sweep on train, test once for the best

A note's sentences are its body split like the chunker splits an over-long paragraph
(``chunking.SENTENCE_RE``), each embedded as "title: sentence" (``--plain``: the sentence
alone). Variants combine ``smax`` (best sentence cosine) with today's ``vmax`` (best chunk)
into the vector part of recall's fused score ``0.30 * z(bm25) + 0.70 * z(vector)``; the
arrays come from ``sf_arrays.py`` (the same train 0.7365 / test 0.7416 as ``Vault.recall``).
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ev import W, z  # noqa: E402

from benchmarks.common import WORK, CachedEmbedder  # noqa: E402
from vaultmem.core.note import parse  # noqa: E402
from vaultmem.index.chunking import SENTENCE_RE  # noqa: E402

ARRAYS = WORK / "exp" / "scifact-arrays.pkl"
VAULT = WORK / "scifact-vault"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "scifact-sentences.json"


def sentences(D: dict, plain: bool) -> tuple[list[str], np.ndarray]:
    """Every sentence text (with its note's title unless ``plain``) and its note position."""
    texts, owner = [], []
    for i, nid in enumerate(D["notes"]["ids"]):
        note = parse((VAULT / f"{nid}.md").read_text(encoding="utf-8"), f"{nid}.md")
        title = D["notes"]["titles"][i]
        body = re.sub(r"^#.*$", "", note.body, flags=re.M)
        parts = [s.strip() for para in re.split(r"\n\s*\n", body) for s in SENTENCE_RE.split(para) if len(s.split()) >= 3]
        for s in parts or [title]:
            texts.append(s if plain else f"{title}: {s}")
            owner.append(i)
    return texts, np.array(owner)


def ndcg(scores: np.ndarray, q: dict, ids: list[str]) -> float:
    top = np.argsort(-scores, kind="stable")[:10]
    dcg = sum(q["qrels"].get(ids[i], 0) / math.log2(r + 2) for r, i in enumerate(top))
    ideal = sorted(q["qrels"].values(), reverse=True)[:10]
    return dcg / sum(g / math.log2(r + 2) for r, g in enumerate(ideal))


def smax_of(M: np.ndarray, owner: np.ndarray, qvec: np.ndarray, n: int) -> np.ndarray:
    sims = M @ qvec.astype(np.float32)
    out = np.full(n, -1.0)
    np.maximum.at(out, owner, sims)
    return out


def variants():
    yield "today (vmax)", lambda vm, sm, b: W * z(b) + (1 - W) * z(vm)
    yield "smax instead of vmax", lambda vm, sm, b: W * z(b) + (1 - W) * z(sm)
    for a in (0.3, 0.5, 0.7):
        yield f"vector = {a} vmax + {1 - a:.1f} smax (cosines)", lambda vm, sm, b, a=a: W * z(b) + (1 - W) * z(a * vm + (1 - a) * sm)
    for a in (0.3, 0.5, 0.7):
        yield f"vector = {a} z(vmax) + {1 - a:.1f} z(smax)", lambda vm, sm, b, a=a: W * z(b) + (1 - W) * (a * z(vm) + (1 - a) * z(sm))
    for w in (0.25, 0.35):
        yield f"bm25 w {w}, vector = 0.5 z(vmax) + 0.5 z(smax)", lambda vm, sm, b, w=w: w * z(b) + (1 - w) * (0.5 * z(vm) + 0.5 * z(sm))
    yield "vector = max(vmax, smax)", lambda vm, sm, b: W * z(b) + (1 - W) * z(np.maximum(vm, sm))
    for w in (0.2, 0.25, 0.35, 0.4):
        yield f"bm25 w {w}, smax instead of vmax", lambda vm, sm, b, w=w: w * z(b) + (1 - w) * z(sm)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embed", action="store_true")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--no-test", action="store_true")
    args = ap.parse_args()
    D = pickle.load(open(ARRAYS, "rb"))
    texts, owner = sentences(D, args.plain)
    print(f"{len(texts)} sentences over {len(D['notes']['ids'])} notes", flush=True)
    emb = CachedEmbedder()
    M = np.vstack([emb.embed(texts[i:i + 2000]) for i in range(0, len(texts), 2000)]).astype(np.float32)
    if args.embed:
        print(f"embedded {emb.embedded} new", flush=True)
        return
    ids, n = D["notes"]["ids"], len(D["notes"]["ids"])
    out = {"sentences": len(texts), "plain": args.plain, "train": {}, "quarters": {}}
    rng = np.random.default_rng(0)
    quarter = rng.permutation(len(D["train"])) % 4
    cache = {}
    for name, fn in variants():
        per = []
        for k, q in enumerate(D["train"]):
            sm = cache.setdefault(("train", k), smax_of(M, owner, q["qvec"], n))
            per.append(ndcg(fn(q["vmax"], sm, q["bm25"]), q, ids))
        per = np.array(per)
        out["train"][name] = round(float(per.mean()), 4)
        out["quarters"][name] = [round(float(per[quarter == j].mean()), 4) for j in range(4)]
        print(f"train {per.mean():.4f}  quarters {out['quarters'][name]}  {name}", flush=True)
    best = max(out["train"], key=out["train"].get)
    if not args.no_test:
        for name, fn in variants():
            if name not in (best, "today (vmax)"):
                continue
            per = [ndcg(fn(q["vmax"], smax_of(M, owner, q["qvec"], n), q["bm25"]), q, ids) for q in D["test"]]
            out.setdefault("test", {})[name] = round(float(np.mean(per)), 4)
            print(f"test {np.mean(per):.4f}  {name}", flush=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
