"""CLI latency of this checkout against another one (e.g. main before a change), paired.

Each round runs, for both checkouts in turn (the order alternates between rounds), the same
calls on its own copy of the demo vault: with that checkout's own watcher running, `vaultmem
recall` and `vaultmem hook prompt` (payload on stdin), and, with no watcher, `vaultmem list`
(the typer app without the model). Medians per checkout of each call's wall time and of its CPU
time (user + system, steadier when the machine is loaded) and their ratios (this / base) are
written; the machine is shared, so only ratios within one run mean much.

    python benchmarks/paired_cli.py --base ../main-before [--rounds 5] [--calls 10]
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, fresh_copy, own_home, parser, watch_request, write_result

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "vaults" / "demo"
QUERY = "why did we pick postgres advisory locks over redis for job leases?"


def _bin(checkout: Path) -> list[str]:
    """The console entry of a checkout (before the layer folders it was vaultmem.cli_fast)."""
    entry = "vaultmem.cli_fast" if (checkout / "vaultmem" / "cli_fast.py").exists() else "vaultmem.cli.main"
    return [
        sys.executable,
        "-P",
        "-c",
        f"import sys; sys.argv[0] = 'vaultmem'; from {entry} import main; main()",
    ]


def _env(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1"}


CPU: list[float] = []  # CPU seconds (user + system) of each timed call, beside its wall time


def _timed(cmd: list[str], env: dict[str, str], stdin: str | None = None) -> float:
    """Wall seconds of one call; its CPU seconds go to ``CPU`` (steadier on a loaded machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise SystemExit(f"paired_cli.py: {' '.join(cmd[:3])} failed: {out.stderr.strip()[-500:]}")
    return seconds


def _vault(label: str, checkout: Path, model: str) -> Path:
    """A copy of the demo vault notes, indexed by ``checkout`` (reused across rounds)."""
    root = WORK / f"paired-{label}-{model or 'default'}"
    fresh_copy(DEMO, root)
    if model:
        (root / ".vaultmem.toml").write_text(f'[embedding]\nmodel = "{model}"\n')
    _timed([*_bin(checkout), "index", "--vault", str(root)], _env(checkout))
    return root


def _with_watcher(checkout: Path, root: Path, calls: int) -> dict[str, list[float]]:
    env, vaultmem = _env(checkout), _bin(checkout)
    watcher = subprocess.Popen(
        [*vaultmem, "watch", "--vault", str(root)], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.time() + 300
        while watch_request(root, "ping", timeout=2) is None:
            if time.time() > deadline or watcher.poll() is not None:
                raise SystemExit("paired_cli.py: the watcher did not start")
            time.sleep(0.2)
        _timed([*vaultmem, "recall", "warm up", "--vault", str(root), "-k", "1"], env)
        times: dict[str, list[float]] = {
            "recall": [],
            "recall_cpu": [],
            "hook_prompt": [],
            "hook_prompt_cpu": [],
        }
        for i in range(calls):
            times["recall"].append(_timed([*vaultmem, "recall", QUERY, "--vault", str(root), "--json"], env))
            times["recall_cpu"].append(CPU[-1])
            payload = json.dumps(
                {"session_id": f"bench-{time.time()}-{i}", "prompt": QUERY, "cwd": str(root)}
            )
            times["hook_prompt"].append(
                _timed([*vaultmem, "hook", "prompt", "--vault", str(root)], env, payload)
            )
            times["hook_prompt_cpu"].append(CPU[-1])
        return times
    finally:
        watcher.terminate()
        watcher.wait(timeout=60)


def main() -> None:
    ap = parser(__doc__, base=("required", "the other checkout (its vaultmem/ is imported)"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10, help="calls of each kind per checkout and round")
    ap.add_argument("--model", default="", help='"none": BM25 and the graph only (a smoke run)')
    ap.add_argument("--name", default="paired-cli", help="result file name (without .json)")
    args = ap.parse_args()
    own_home("home")  # never the user's own service, config or state
    checkouts = {"base": args.base.resolve(), "this": HERE.parent}
    roots = {label: _vault(label, path, args.model) for label, path in checkouts.items()}
    kinds = ("recall", "recall_cpu", "hook_prompt", "hook_prompt_cpu", "list", "list_cpu")
    times: dict[str, dict[str, list[float]]] = {label: {kind: [] for kind in kinds} for label in checkouts}
    for r in range(args.rounds):
        order = list(checkouts) if r % 2 == 0 else list(reversed(checkouts))
        for label in order:
            for kind, values in _with_watcher(checkouts[label], roots[label], args.calls).items():
                times[label][kind] += values
            for _ in range(args.calls):
                times[label]["list"].append(
                    _timed(
                        [*_bin(checkouts[label]), "list", "--vault", str(roots[label])],
                        _env(checkouts[label]),
                    )
                )
                times[label]["list_cpu"].append(CPU[-1])
        print(f"round {r + 1}/{args.rounds} done", flush=True)
    result: dict = {"base": str(checkouts["base"]), "rounds": args.rounds, "calls": args.calls, "model": args.model or "default",
                    "load_avg": os.getloadavg()[0]}  # fmt: skip
    for kind in kinds:
        med = {label: round(statistics.median(times[label][kind]) * 1000, 1) for label in checkouts}
        result[kind] = {"p50_ms": med, "ratio_this_over_base": round(med["this"] / med["base"], 3)}
        print(
            f"{kind:<12} base p50 {med['base']} ms, this {med['this']} ms, ratio {result[kind]['ratio_this_over_base']}"
        )
    print(f"wrote {write_result(args.name, result)}")


if __name__ == "__main__":
    main()
