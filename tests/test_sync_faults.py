"""Fault injection (issue 24): a bare remote and three clones under a mixed load (CLI writers,
an editor saving in place and by rename, a watcher syncing every 5 s, syncs SIGKILLed at random
moments and at every named step) for a bounded time; then every acknowledged write is on every
clone, no commit any clone's branch ever held is missing from the remote, and every index
equals a rebuild. The long version is benchmarks/sync_soak.py."""

from __future__ import annotations

import os

from gitcluster import Cluster
from syncload import Load

SECONDS = float(os.environ.get("VAULTMEM_FAULT_SECONDS", "35"))


def test_no_acknowledged_write_or_commit_is_lost_under_kills(tmp_path):
    load = Load(Cluster(tmp_path), seed=24)
    try:
        load.start()
        load.run(SECONDS)
        load.settle()
        lost = load.check()
    finally:
        load.c.stop_watchers()
    c = load.counts
    print(c)
    assert c.writes >= 20 and c.kills >= 3 and c.syncs >= 3, c
    assert not any(lost.values()) and not c.cli_timeouts, (lost, c)
    assert not load.index_drift()
