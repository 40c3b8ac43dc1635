"""LoCoMo dev variants in one process: every variant through ``Vault.recall``, real model.

    python benchmarks/multihop_variants.py base 'off:recall.session_weight=0'
    python benchmarks/multihop_variants.py --paired 'before:recall.session_weight=0' after
    python benchmarks/multihop_variants.py --index-cost x   # contextual vectors' index cost

Each argument is ``NAME`` (``base``: the vault's settings) or ``NAME:SECTION.KEY=VALUE[,...]``.
The ten vaults of ``locomo.py`` (5 conversations x flat/linked, under
``benchmarks/.work/locomo/``; written here when missing) are opened once and every question is asked of each variant in
turn (no retrieval logging, adaptive off: ``locomo.py`` equals adaptive off since
``from_retrievals = false``), so a variant costs the recalls only. Prints evidence R@10 by
category against the audit's corrected evidence (first) and the cited one, for both shapes,
and the p50 of a recall. Results: benchmarks/results/multihop-variants[-TAG].json (``--paired``:
multihop-latency[-TAG].json). Tuning here is on the dev split.
"""

from __future__ import annotations

import importlib
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, CachedEmbedder, mean, parser, write_result
from benchmarks.locomo import CATEGORIES, audited, load_audit, overrides, write_conversation
from vaultmem.core import config as configmod
from vaultmem.vault import Vault

SHAPES = ("flat", "linked")


def parse_variant(text: str) -> tuple[str, dict, dict]:
    """(name, config overrides, module constants ``py.MODULE.NAME=value`` of vaultmem.recall)."""
    name, _, sets = text.partition(":")
    pairs = [s for s in sets.split(",") if s]
    consts = {k[3:]: json.loads(v) for k, _, v in (p.partition("=") for p in pairs if p.startswith("py."))}
    return name, overrides([p for p in pairs if not p.startswith("py.")]), consts


def set_constants(consts: dict) -> dict:
    """Set ``MODULE.NAME`` constants of vaultmem.recall; returns the old values."""
    old = {}
    for key, value in consts.items():
        mod, _, attr = key.rpartition(".")
        module = importlib.import_module(f"vaultmem.recall.{mod}")
        old[key] = getattr(module, attr)
        setattr(module, attr, value)
    return old


def load(
    data: Path, work: Path, embedder, convs: str = "", turns: int = 0, shapes: tuple[str, ...] = SHAPES
) -> dict[str, list[tuple[Vault, list]]]:  # type: ignore[no-untyped-def]
    """Shape -> [(open vault, its questions as (question, category, cited, corrected, conversation))];
    ``convs``: comma-separated positions (all when empty); ``turns``: only the first N notes."""
    samples = json.loads(data.read_text())
    audit = load_audit(data)
    out: dict[str, list] = {}
    for shape in shapes:
        out[shape] = []
        for i, sample in enumerate(samples):
            if convs and str(i) not in convs.split(","):
                continue
            root = work / shape / sample["sample_id"]
            write_conversation(root, sample, shape, turns)  # writes only what differs
            vault = Vault(root, embedder)
            vault.reindex()
            fixed = {q: ev for (c, q), ev in audit.items() if c == i}
            qs = [(qa["question"], qa["category"], ev, cor, sample["sample_id"])
                  for qa, ev, cor in audited(sample, vault, fixed)]  # fmt: skip
            out[shape].append((vault, qs))
    return out


def run(vaults: dict, extra: dict, k: int = 10) -> dict:
    """Shape -> {"corrected"|"cited": category -> R@k, "p50_ms": ...} for one variant."""
    result: dict = {}
    for shape, items in vaults.items():
        rows, seconds = [], []
        for vault, qs in items:
            base = vault.config
            vault.config = configmod.merge(base, extra)
            for question, cat, cited, corrected, conv in qs:
                start = time.perf_counter()
                ranked = [
                    h.id for h in vault.recall(question, k=50, log=False, adaptive=False, snippets=False)
                ]
                seconds.append(time.perf_counter() - start)
                top = set(ranked[:k])
                rows.append((cat, len(top & set(cited)) / len(cited),
                             len(top & set(corrected)) / len(corrected) if corrected else None, conv))  # fmt: skip
            vault.config = base
        shape_out: dict = {"p50_ms": round(1000 * statistics.median(seconds), 2)}
        for label, col in (("corrected", 2), ("cited", 1)):
            sel = [r for r in rows if r[col] is not None]
            block = {"overall": round(100 * mean(r[col] for r in sel), 1)}
            for c, name in CATEGORIES.items():
                block[name] = round(100 * mean(r[col] for r in sel if r[0] == c), 1)
            shape_out[label] = block
        result[shape] = shape_out
    return result


def paired(vaults: dict, a: dict, b: dict, passes: int = 3) -> dict:
    """Recall time of variants ``a`` and ``b`` question by question, alternating which goes
    first, ``passes`` times: shape -> p50 of each and the median of the per-question ratio b/a."""
    out = {}
    for shape, items in vaults.items():
        ta: list[float] = []
        tb: list[float] = []
        for n in range(passes):
            for vault, qs in items:
                base = vault.config
                configs = [configmod.merge(base, a), configmod.merge(base, b)]
                for i, (question, *_rest) in enumerate(qs):
                    took = [0.0, 0.0]
                    for which in (0, 1) if (i + n) % 2 == 0 else (1, 0):
                        vault.config = configs[which]
                        start = time.perf_counter()
                        vault.recall(question, k=50, log=False, adaptive=False, snippets=False)
                        took[which] = time.perf_counter() - start
                    ta.append(took[0])
                    tb.append(took[1])
                vault.config = base
        out[shape] = {"p50_ms_a": round(1000 * statistics.median(ta), 2), "p50_ms_b": round(1000 * statistics.median(tb), 2),
                      "median_ratio": round(statistics.median(y / x for x, y in zip(ta, tb)), 3), "recalls": len(ta)}  # fmt: skip
    return out


class Counting:
    """An embedder that counts the texts it embeds (index cost, ``--index-cost``)."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.name, self.max_tokens, self.texts = inner, inner.name, inner.max_tokens, 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return self.inner.embed(texts)

    def embed_query(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return self.inner.embed_query(texts)


def index_cost(data: Path, conv: int = 0) -> dict:
    """One linked conversation indexed from nothing with the real model (no cache), with and
    without contextual vectors (``[embedding] context``): seconds and texts embedded; then the
    texts one edit re-embeds (a turn's text; a session note's first line)."""
    import re
    import tempfile

    from vaultmem.index.embed import FastEmbedder

    sample = json.loads(data.read_text())[conv]
    embedder = Counting(FastEmbedder())
    embedder.embed(["load the model"])
    out: dict = {"conversation": sample["sample_id"]}
    for on in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            write_conversation(root, sample, "linked")
            (root / ".vaultmem.toml").write_text(f"[embedding]\ncontext = {str(on).lower()}\n")
            vault = Vault(root, embedder)
            row: dict = {"notes": len(list(root.glob("*.md")))}
            for step, edit in (("index", None), ("edit a turn", "D2-3.md"), ("edit a session note", "S2.md")):
                if edit:
                    path = root / edit
                    path.write_text(re.sub(r"(\n---\n)(.)", r"\1Edited: \2", path.read_text(), count=1))
                embedder.texts = 0
                start = time.perf_counter()
                vault.reindex()
                row[step] = {
                    "seconds": round(time.perf_counter() - start, 2),
                    "texts_embedded": embedder.texts,
                }
            vault.close()
        out["context on" if on else "context off"] = row
    return out


def show(name: str, res: dict) -> None:
    for shape in res:
        for label in ("corrected", "cited"):
            b = res[shape][label]
            cats = " ".join(f"{v:5.1f}" for v in b.values())
            print(f"{name:<28} {shape:<6} {label:<9} {cats}  p50 {res[shape]['p50_ms']} ms", flush=True)


def main() -> None:
    ap = parser(__doc__, data="locomo-dev/locomo-dev.json", tag=True)
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--work", type=Path, default=WORK / "locomo")
    ap.add_argument("--paired", action="store_true", help="time the two variants given, question by question")
    ap.add_argument("--convs", default="", help="comma-separated conversation positions (0-4)")
    ap.add_argument(
        "--turns", type=int, default=0, help="only the first N notes of each conversation (a smoke run)"
    )
    ap.add_argument("--shape", choices=("flat", "linked", "both"), default="both")
    ap.add_argument("--model", default="", help="[embedding] model (its vaults: locomo.py --model's folder)")
    ap.add_argument(
        "--index-cost", action="store_true", help="index one conversation with and without contextual vectors"
    )
    args = ap.parse_args()
    if not args.data.exists():
        sys.exit(f"multihop_variants.py: no LoCoMo data at {args.data} (pass --data PATH)")
    suffix = f"-{args.tag}" if args.tag else ""
    if args.index_cost:
        cost = index_cost(args.data)
        print(json.dumps(cost))
        print(f"wrote {write_result('context-index-cost' + suffix, cost)}")
        return
    if args.model and args.work == WORK / "locomo":
        args.work = WORK / f"locomo-{args.model.rsplit('/', 1)[-1]}"
    shapes = SHAPES if args.shape == "both" else (args.shape,)
    vaults = load(args.data, args.work, CachedEmbedder(model=args.model), args.convs, args.turns, shapes)
    if args.paired:
        (_, a, _), (_, b, _) = (parse_variant(v) for v in args.variants[:2])
        res = paired(vaults, a, b)
        print(json.dumps(res))
        print(
            f"wrote {write_result('multihop-latency' + suffix, {'a': args.variants[0], 'b': args.variants[1], **res})}"
        )
        return
    print(f"{'variant':<28} shape  evidence  all   " + " ".join(n[:5] for n in CATEGORIES.values()))
    done: dict = {}
    for text in args.variants:
        name, extra, consts = parse_variant(text)
        old = set_constants(consts)
        res = run(vaults, extra)
        set_constants(old)
        show(name, res)
        done[name] = {"overrides": extra, "constants": consts, **res}
    print(f"wrote {write_result('multihop-variants' + suffix, done)}")


if __name__ == "__main__":
    main()
