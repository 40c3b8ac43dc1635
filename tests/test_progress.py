"""Progress of long work (issue 45; ``cli/progress.py``): a bar with counts and an estimate on a
terminal, plain lines when none watches, JSON events with ``--json``; ``index`` through each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import write

from vaultmem.cli import progress

REPO = Path(__file__).resolve().parent.parent


def test_the_time_left_reads_in_seconds_minutes_or_hours():
    assert progress.about(None) == ""
    assert progress.about(40) == "about 40 s left"
    assert progress.about(180) == "about 3 min left"
    assert progress.about(4800 + 3600) == "about 2 h 20 min left"


def test_plain_lines_count_and_estimate(capsys, monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    shown = progress.Lines("indexing", every=0)
    shown(0, 30)
    now[0] = 10.0
    shown(10, 30)  # 10 in 10 s: 20 left at that rate
    now[0] = 30.0
    shown(30, 30)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["vaultmem: indexing 0/30 (0%)", "vaultmem: indexing 10/30 (33%), about 20 s left",
                     "vaultmem: indexing 30/30 (100%)"]  # fmt: skip


def test_json_events_carry_the_phase_counts_and_time_left(capsys):
    shown = progress.reporter("indexing", as_json=True)
    shown.event({"phase": "vectors", "done": 0, "total": 8, "seconds_left": None})
    shown.event({"phase": "vectors", "done": 8, "total": 8, "seconds_left": 0})
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert events[0] == {"event": "progress", "what": "indexing", "phase": "vectors", "done": 0, "total": 8,
                         "seconds_left": None}  # fmt: skip
    assert events[-1]["done"] == events[-1]["total"] == 8


def test_a_terminal_gets_a_bar_with_counts_per_phase(capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    shown = progress.reporter("indexing")
    assert isinstance(shown, progress.Bar)
    shown.event({"phase": "keywords", "done": 256, "total": 300, "seconds_left": 3})
    shown.event({"phase": "vectors", "done": 12, "total": 300, "seconds_left": 60})
    shown.close()
    err = capsys.readouterr().err
    assert "indexing keywords" in err and "256/300" in err
    assert "indexing vectors" in err and "12/300" in err and "about 60 s left" in err


def test_index_shows_plain_progress_lines_without_a_terminal(tmp_path):
    root = tmp_path / "v"
    for i in range(20):
        write(root, f"n/Note {i}.md", f"# Note {i}\n\nword{i}\n")
    write(root, ".vaultmem.toml", '[embedding]\nmodel = "none"\n')
    (root / ".vaultmem").mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "vaultmem", "index", "--vault", str(root)],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "vaultmem: indexing 0/20 (0%)" in proc.stderr and "vaultmem: indexing 20/20 (100%)" in proc.stderr
    assert proc.stdout.startswith("20 added")
