"""Every command warm through the memory service: this checkout against another (today's main),
paired.

Each checkout gets its own private HOME and runtime folder, its own copy of the demo vault and
its own memory service (started once, then warm; the small hash embedder of
``tests/service_site`` in both, so no model loads and the numbers are the CLI's own). The
hooks get Claude Code's payloads (``tests/data/hooks``), a new session each call. Each round
runs every command once per checkout, the order of the checkouts alternating between rounds.
Written: the median and p90 wall time of each command per checkout and the paired ratio of the
medians (this / base). The machine is shared: only ratios within one run mean much.

    python benchmarks/door_bench.py --base /work/main [--rounds 7] [--name door]
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import fresh_copy, parser, private_home, write_result

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "vaults" / "demo"
SITE = HERE.parent / "tests" / "service_site"
NOTE = "yx66znwj"
COMMANDS = {
    "recall": ["recall", "why advisory locks for job leases?", "-k", "5"],
    "show": ["show", NOTE],
    "list": ["list"],
    "stats": ["stats"],
    "edit": ["edit", NOTE, "--set", "importance=8"],
    "resolve": ["resolve", NOTE],
    "reopen": ["reopen", NOTE],
    "wake": ["wake", "--budget", "800"],
    "doctor": ["doctor"],
    "hook start": ["hook", "start"],
    "hook stop": ["hook", "stop"],
    "hook end": ["hook", "end"],
    "hook prompt": ["hook", "prompt"],
}
HOOKS = HERE.parent / "tests" / "data" / "hooks"
# Claude Code's payloads (a new session each call: stop reads the transcript, end writes a summary)
PAYLOADS = {
    "hook start": "session_start.json",
    "hook stop": "stop.json",
    "hook end": "session_end.json",
    "hook prompt": "prompt_webhooks.json",
}
EXIT = {"doctor": (0, 1)}  # the demo vault's broken links: doctor exits 1


def payload(command: str, n: int) -> str | None:
    import json

    if command not in PAYLOADS:
        return None
    raw = (HOOKS / PAYLOADS[command]).read_text().replace("TRANSCRIPT", str(HOOKS / "coding_session.jsonl"))
    return json.dumps({**json.loads(raw), "session_id": f"bench-{n:04d}"})


class Checkout:
    def __init__(self, path: Path, work: Path):
        self.path = path
        home = work / path.name
        (home / "run").mkdir(parents=True, mode=0o700)
        self.vault = home / "demo"
        fresh_copy(DEMO, self.vault)
        self.env = {**os.environ, **private_home(home), "PYTHONPATH": f"{SITE}{os.pathsep}{path}",
                    "VAULTMEM_TEST_MODEL_DELAY": "0"}  # fmt: skip
        self.env.pop("VAULTMEM_NO_SERVICE", None)
        self.cpu: list[float] = []  # CPU seconds of each call (steadier than wall time on a loaded machine)
        self.cmd = [sys.executable, "-P", "-c", "import sys; sys.argv[0] = 'vaultmem'; "
                    "from vaultmem.cli.main import main; main()"]  # fmt: skip

    def run(self, args: list[str], stdin: str | None = None, ok: tuple[int, ...] = (0,)) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([*self.cmd, *args, "--vault", str(self.vault)], env=self.env, capture_output=True,
                              text=True, timeout=600, input=stdin)  # fmt: skip
        took = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode not in ok:
            raise SystemExit(f"{self.path}: vaultmem {' '.join(args)} failed: {done.stderr}")
        return took

    def start(self) -> None:
        subprocess.run(
            [*self.cmd, "service", "start"], env=self.env, check=True, capture_output=True, timeout=300
        )
        self.run(COMMANDS["recall"])  # the service opens and indexes the vault

    def stop(self) -> None:
        subprocess.run([*self.cmd, "service", "stop"], env=self.env, capture_output=True, timeout=120)


def main() -> None:
    ap = parser(__doc__, base=("required", "the other checkout (e.g. today's main)"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--name", default="door")
    a = ap.parse_args()
    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="door-bench-"))
    this, base = Checkout(HERE.parent, work / "this"), Checkout(a.base.resolve(), work / "base")
    times: dict[str, dict[str, list[float]]] = {c: {"this": [], "base": []} for c in COMMANDS}
    cpu: dict[str, dict[str, list[float]]] = {c: {"this": [], "base": []} for c in COMMANDS}
    # both checkouts with their bytecode compiled (base's must be already: it is not written to)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(this.path / "vaultmem")], check=True)
    try:
        for side in (this, base):
            side.start()
        for r in range(a.rounds):
            order = [("this", this), ("base", base)] if r % 2 == 0 else [("base", base), ("this", this)]
            for i, (name, args) in enumerate(COMMANDS.items()):
                for label, side in order:
                    stdin = payload(name, r * len(COMMANDS) + i)
                    times[name][label].append(side.run(args, stdin, EXIT.get(name, (0,))))
                    cpu[name][label].append(side.cpu[-1])
    finally:
        for side in (this, base):
            side.stop()
        shutil.rmtree(work, ignore_errors=True)
    out = {}
    for name, t in times.items():
        med = {k: statistics.median(v) for k, v in t.items()}
        p90 = {k: sorted(v)[max(0, round(0.9 * len(v)) - 1)] for k, v in t.items()}
        out[name] = {"this_p50_ms": round(med["this"] * 1000, 1), "base_p50_ms": round(med["base"] * 1000, 1),
                     "this_p90_ms": round(p90["this"] * 1000, 1), "base_p90_ms": round(p90["base"] * 1000, 1),
                     "ratio_p50": round(med["this"] / med["base"], 3),
                     "this_cpu_ms": round(statistics.median(cpu[name]["this"]) * 1000, 1),
                     "base_cpu_ms": round(statistics.median(cpu[name]["base"]) * 1000, 1)}  # fmt: skip
        print(f"{name:<10} this {out[name]['this_p50_ms']:7.1f} ms   base {out[name]['base_p50_ms']:7.1f} ms   "
              f"ratio {out[name]['ratio_p50']:.2f}   cpu {out[name]['this_cpu_ms']:.0f} / {out[name]['base_cpu_ms']:.0f} ms")  # fmt: skip
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    path = write_result(a.name, {"rounds": a.rounds, "load_avg_at_start": [round(x, 2) for x in load_start],
                                 "load_avg_at_end": [round(x, 2) for x in load], "base": str(a.base), "embedder": "hash (tests/service_site)",
                                 "commands": {k: " ".join(v) for k, v in COMMANDS.items()}, "results": out})  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
