"""README's first recall (issue 38): the command a new user runs first, on a fresh copy of the
demo vault with no index and no service running (a cold service: it starts, loads the model,
indexes the vault, answers). Each run has a private HOME and runtime folder (the user's own
service is never touched) and stops its service after.

    python benchmarks/first_recall.py --runs 5 [--base DIR]

``--base DIR``: also run the checkout in DIR (e.g. ``git worktree add DIR main``; its package on
PYTHONPATH, this environment's dependencies), alternating the two sides round by round (paired:
the machine is shared and its load moves). Results: benchmarks/results/first-recall.json
(medians, the paired ratio, every run, the load average before and after).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE.parent))
from benchmarks.common import fresh_copy, parser, private_home, write_result  # noqa: E402


def first_recall() -> list[str]:
    """README's first `vaultmem recall` (the arguments after `vaultmem`)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme.split("## Set up", 1)[1], re.S).group(1)  # type: ignore[union-attr]
    command = next(part for part in block.split("&&") if part.strip().startswith("vaultmem recall"))
    return shlex.split(command)[1:]


def one_run(exe: str, args: list[str], pythonpath: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="vmfr") as tmp:
        home = Path(tmp)
        vault = home / "demo"
        fresh_copy(REPO / "vaults" / "demo", vault)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("VAULTMEM_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(private_home(home))
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        (home / "run").mkdir(mode=0o700)
        argv = [a if a != "vaults/demo" else str(vault) for a in args]
        start = time.perf_counter()
        done = subprocess.run([exe, *argv], env=env, capture_output=True, text=True, timeout=600, cwd=home)
        wall = time.perf_counter() - start
        again_start = time.perf_counter()
        subprocess.run([exe, *argv], env=env, capture_output=True, text=True, timeout=600, cwd=home)
        again = time.perf_counter() - again_start
        subprocess.run([exe, "service", "stop"], env=env, capture_output=True, timeout=120, cwd=home)
        first = done.stdout.splitlines()[0] if done.stdout else ""
        return {"seconds": round(wall, 3), "second_call_seconds": round(again, 3), "exit": done.returncode,
                "first_hit": first.strip(), "stderr": done.stderr.strip().splitlines()}  # fmt: skip


def main() -> None:
    ap = parser(
        __doc__, runs=3, base=("optional", "another checkout to pair against (its vaultmem/ on PYTHONPATH)")
    )
    opts = ap.parse_args()
    exe = str(Path(sys.executable).with_name("vaultmem"))
    args = first_recall()
    sides = {"current": None, **({"base": str(Path(opts.base).resolve())} if opts.base else {})}
    load_before = os.getloadavg()
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for i in range(opts.runs):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for side in order:
            runs[side].append(one_run(exe, args, sides[side]))
            print(side, runs[side][-1]["seconds"], runs[side][-1]["second_call_seconds"], flush=True)
    result = {"command": "vaultmem " + shlex.join(args), "runs": opts.runs, "load_before": load_before,
              "load_after": os.getloadavg(), "cpus": os.cpu_count(), "sides": {}}  # fmt: skip
    for side, rows in runs.items():
        result["sides"][side] = {"median_seconds": round(statistics.median(r["seconds"] for r in rows), 3),
                                 "median_second_call_seconds": round(statistics.median(r["second_call_seconds"] for r in rows), 3),
                                 "runs": rows}  # fmt: skip
    if opts.base:
        ratios = [b["seconds"] / c["seconds"] for b, c in zip(runs["base"], runs["current"])]
        result["paired_speedup_median"] = round(statistics.median(ratios), 2)
    write_result("first-recall", result)
    print(
        json.dumps(
            {k: v for k, v in result.items() if k != "sides"}
            | {s: {k: v for k, v in d.items() if k != "runs"} for s, d in result["sides"].items()},
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
