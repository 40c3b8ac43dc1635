"""Sync of 1,000 changed notes through git: vaultmem vs git alone plus the embedding.

    python benchmarks/git_sync.py [--notes 1000] [--runs 3] [--model none]

Per run: a synthetic vault of N notes (benchmarks/synth.py) is pushed to two bare remotes,
once as a vaultmem vault (clones A and B) and once as a plain repository (clones
GA and GB). Then every note gets a new paragraph, identically in A and GA, and we time

* vaultmem: ``vaultmem sync`` on A (commit + push) and ``vaultmem sync`` on B (pull with
  rebase + reindex, embedding the changed text), both real processes; then one recall on B
  must find a changed note by its new words (timed apart);
* git alone: ``git add -A && git commit && git push`` on GA and ``git pull --rebase`` on GB;
  (B is not indexed before: every changed note's only chunk changes, so the embedding work
  is the same either way, and the 2-core machine is shared; this halves a run);
* the embedding of the new text: the changed notes' chunks embedded by the same model in one
  process, model load included (every vaultmem process loads it too).

Target: vaultmem <= 1.3 x (git alone + embedding).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, own_home, parser, write_result
from benchmarks.synth import generate

GITCONFIG = "[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n"


def run(cmd: list[str], cwd: Path, env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - t


def vaultmem(*args: str, env: dict, cwd: Path) -> float:
    return run([sys.executable, "-m", "vaultmem", *args], cwd, env)


def change_notes(root: Path, stamp: str) -> list[str]:
    """Append a paragraph with distinctive words to every note; returns their paths."""
    changed = []
    for p in sorted(root.rglob("Note *.md")):
        if ".git" in p.parts:
            continue
        i = p.stem.split()[1]
        with p.open("a", encoding="utf-8") as f:
            f.write(f"\nFollow-up {stamp}: zebracrossing{i} checked again on the second machine.\n")
        changed.append(p.relative_to(root).as_posix())
    return changed


def embed_alone(root: Path, paths: list[str], model: str) -> float:
    """Chunk the changed notes like the indexer does and embed them (model load included)."""
    from vaultmem.core.note import parse
    from vaultmem.index.chunking import chunk, plain_text
    from vaultmem.index.embed import make_embedder

    if model == "none":
        return 0.0
    texts = []
    for rel in paths:
        note = parse((root / rel).read_text(encoding="utf-8"), rel)
        texts += chunk(note.title, plain_text(note.body), 256)
    t = time.perf_counter()
    embedder = make_embedder(model, 4)
    for i in range(0, len(texts), 256):
        embedder.embed(texts[i : i + 256])
    return time.perf_counter() - t


def one_run(work: Path, notes: int, model: str, env: dict, seed: int) -> dict:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name in ("remote.git", "plain.git"):
        subprocess.run(["git", "init", "-q", "--bare", str(work / name)], env=env, check=True)
    a, b, ga, gb = (work / n for n in ("A", "B", "GA", "GB"))
    generate(a, notes, seed)
    shutil.rmtree(a / ".vaultmem")
    vaultmem("init", "--git", "--remote", str(work / "remote.git"), str(a), env=env, cwd=work)
    cfg = a / ".vaultmem.toml"
    cfg.write_text(
        cfg.read_text().replace('# model = "sentence-transformers/all-MiniLM-L6-v2"', f'model = "{model}"')
    )
    vaultmem("sync", "--vault", str(a), env=env, cwd=work)
    subprocess.run(["git", "clone", "-q", str(work / "remote.git"), str(b)], env=env, check=True)
    vaultmem("init", str(b), env=env, cwd=work)  # the clone has the config from git
    vaultmem("sync", "--setup", "--vault", str(b), env=env, cwd=work)
    generate(ga, notes, seed)
    shutil.rmtree(ga / ".vaultmem")
    for cmd in (
        ["init", "-q"],
        ["add", "-A"],
        ["commit", "-qm", "seed"],
        ["remote", "add", "origin", str(work / "plain.git")],
        ["push", "-q", "-u", "origin", "main"],
    ):
        subprocess.run(["git", *cmd], cwd=ga, env=env, check=True, capture_output=True)
    subprocess.run(["git", "clone", "-q", str(work / "plain.git"), str(gb)], env=env, check=True)

    stamp = f"run{seed}"
    changed = change_notes(a, stamp)
    change_notes(ga, stamp)
    t_git_a = sum(
        run(["git", *c], ga, env) for c in (["add", "-A"], ["commit", "-qm", "changes"], ["push", "-q"])
    )
    t_git_b = run(["git", "pull", "-q", "--rebase"], gb, env)
    t_vm_a = vaultmem("sync", "--vault", str(a), env=env, cwd=work)
    t_vm_b = vaultmem("sync", "--vault", str(b), env=env, cwd=work)
    probe = changed[len(changed) // 2]
    i = Path(probe).stem.split()[1]
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "vaultmem", "recall", f"zebracrossing{i}", "--json", "-k", "3",
                          "--vault", str(b)], env=env, check=True, capture_output=True, text=True).stdout  # fmt: skip
    t_recall = time.perf_counter() - t
    found = probe in out
    t_embed = embed_alone(
        b, changed, model if model != "default" else "sentence-transformers/all-MiniLM-L6-v2"
    )
    git_alone = t_git_a + t_git_b
    return {"notes_changed": len(changed), "vaultmem_push_s": round(t_vm_a, 3), "vaultmem_pull_index_s": round(t_vm_b, 3),
            "git_push_s": round(t_git_a, 3), "git_pull_s": round(t_git_b, 3), "embed_s": round(t_embed, 3),
            "recall_after_s": round(t_recall, 3), "recallable": found,
            "ratio": round((t_vm_a + t_vm_b) / (git_alone + t_embed), 3)}  # fmt: skip


def main() -> None:
    ap = parser(__doc__, runs=3)
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument(
        "--model", default="sentence-transformers/all-MiniLM-L6-v2", help='or "none" (no vectors)'
    )
    args = ap.parse_args()
    own_home("home")  # never the user's own service, config or state
    work = WORK / "git-sync"
    work.mkdir(parents=True, exist_ok=True)
    (work.parent / "gitconfig-bench").write_text(GITCONFIG)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(work.parent / "gitconfig-bench"), "GIT_CONFIG_NOSYSTEM": "1",
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    env.pop("VAULTMEM_VAULT", None)
    runs = []
    name = "git-sync" if args.model != "none" else "git-sync-novec"
    for r in range(args.runs):
        runs.append(one_run(work / f"run{r}", args.notes, args.model, env, seed=11 + r))
        print(runs[-1], flush=True)
        path = save(name, args, runs)  # after every run: a long benchmark stopped early keeps its runs
    print(f"wrote {path}")


def save(name: str, args: argparse.Namespace, runs: list[dict]) -> Path:
    keys = [k for k in runs[0] if isinstance(runs[0][k], float)]
    median = {k: round(statistics.median(x[k] for x in runs), 3) for k in keys}
    print(f"median of {len(runs)}: {median}", flush=True)
    return write_result(name, {"notes": args.notes, "model": args.model, "runs": runs, "median": median,
                               "target_ratio": 1.3})  # fmt: skip


if __name__ == "__main__":
    main()
