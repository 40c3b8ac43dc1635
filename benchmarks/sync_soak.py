"""Soak of git sync under faults (issue 24): three clones of one vault, a bare remote, a CLI
writer, an editor (truncate-and-write and rename saves) and a sync driver per clone that
SIGKILLs syncs at random moments and at named steps, a watcher with --sync-every 5s; then the
clones are synced until they agree and checked: every acknowledged write on every clone, every
commit a branch held on the remote, every index equal to a rebuild (lost must be 0).

    nice python benchmarks/sync_soak.py --minutes 30 [--seed 1] [--no-watch]

Writes benchmarks/results/sync-soak.json (counts, what was lost, seconds).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from benchmarks.common import WORK, parser, write_result  # noqa: E402


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--minutes", type=float, default=30.0, help="how long the load runs (default 30)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-watch", action="store_true", help="no watcher with --sync-every on the third clone")
    args = ap.parse_args()

    from gitcluster import Cluster
    from syncload import Load

    WORK.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="sync-soak-", dir=WORK))
    home = tmp / "home"
    home.mkdir()
    # no memory service: each clone's CLI and watcher keep the vault's writer lock themselves
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
                      XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
                      GIT_AUTHOR_NAME="Soak", GIT_AUTHOR_EMAIL="soak@example.com",
                      GIT_COMMITTER_NAME="Soak", GIT_COMMITTER_EMAIL="soak@example.com",
                      VAULTMEM_NO_SERVICE="1")  # fmt: skip
    load = Load(Cluster(tmp), seed=args.seed, watch=None if args.no_watch else "mate")
    started = time.perf_counter()
    try:
        load.start()
        load.run(args.minutes * 60)
        settle_t = time.perf_counter()
        load.settle(rounds=10)
        lost = load.check()
        drift = load.index_drift()
    finally:
        load.c.stop_watchers()
    c = load.counts
    lost_total = sum(len(v) for k, v in lost.items() if k not in ("errors", "unclean")) + len(drift)
    result = {
        "minutes": args.minutes, "seed": args.seed, "watcher": not args.no_watch,
        "writes": c.writes, "editor_saves": c.editor_saves, "cli_writes": c.cli_writes,
        "syncs": c.syncs, "kills": c.kills, "sync_errors": c.sync_errors, "sync_error_lines": c.sync_error_lines,
        "cli_timeouts": c.cli_timeouts,
        "lost": lost_total,
        "lost_detail": {k: v[:20] for k, v in lost.items()}, "index_drift": drift,
        "settle_seconds": round(time.perf_counter() - settle_t, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    path = write_result("sync-soak", result)
    print({k: v for k, v in result.items() if k != "lost_detail"}, "->", path)
    if lost_total == 0 and not lost["unclean"]:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if lost_total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
