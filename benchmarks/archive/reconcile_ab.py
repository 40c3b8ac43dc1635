"""No-change reconcile of a fresh open, two code versions alternating on one vault (a ratio
measured under the same load).

    git archive main vaultmem | tar -x -C /tmp/old   # the code to compare against
    python benchmarks/reconcile_ab.py VAULT /tmp/old . --rounds 3 --runs 3 --name scale-100000-reconcile

Each round runs each version in a fresh process that opens the vault and reconciles
``--runs`` times (a new ``Vault`` each time); wall and CPU seconds of every run are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import write_result  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import vaultmem
from vaultmem.vault import Vault
assert vaultmem.__file__.startswith(sys.argv[1]), vaultmem.__file__
out = []
for _ in range(int(sys.argv[3])):
    t, c = time.perf_counter(), time.process_time()
    v = Vault(sys.argv[2])
    s = v.reindex()
    out.append((time.perf_counter() - t, time.process_time() - c))
    assert not s.changed, s.as_dict()
    v.close()
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("before", type=Path, help="folder holding the old vaultmem package")
    ap.add_argument("after", type=Path, help="folder holding the new vaultmem package")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--name", default="reconcile-ab")
    args = ap.parse_args()
    runs: dict[str, list] = {"before": [], "after": []}
    loads = []
    for _ in range(args.rounds):
        for label, code in (("before", args.before), ("after", args.after)):
            cmd = [sys.executable, "-c", CHILD, str(code.resolve()), str(args.vault), str(args.runs)]
            runs[label] += json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            loads.append(os.getloadavg()[0])
            print(label, [round(w, 2) for w, _ in runs[label][-args.runs:]], flush=True)
    med = {k: {"wall_s": round(statistics.median(w for w, _ in v), 3), "cpu_s": round(statistics.median(c for _, c in v), 3)}
           for k, v in runs.items()}  # fmt: skip
    result = {"vault": str(args.vault), "median": med,
              "ratio_wall": round(med["before"]["wall_s"] / med["after"]["wall_s"], 2),
              "ratio_cpu": round(med["before"]["cpu_s"] / med["after"]["cpu_s"], 2),
              "load_avg": [round(x, 2) for x in loads],
              "runs": {k: [[round(w, 3), round(c, 3)] for w, c in v] for k, v in runs.items()}}  # fmt: skip
    print(result["median"], result["ratio_wall"], result["ratio_cpu"])
    print(f"wrote {write_result(args.name, result)}")


if __name__ == "__main__":
    main()
