"""Every kept benchmark script starts, answers --help, and runs on a tiny sample (so none rots).

The runs write into a temporary folder (VAULTMEM_BENCH_DIR), never into benchmarks/results/.
A new script in benchmarks/ needs a row in SMOKE; retired scripts leave their figures in
benchmarks/README.md and their code in git history.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent)
)  # `pytest` alone (not `python -m`): the repo root
from benchmarks.common import DATA  # $VAULTMEM_DATA, else shared/data beside the (main) checkout

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
NOT_SCRIPTS = {"__init__", "common", "capture_set"}  # capture_set: the labelled set capture_bench reads

# script -> (tiny-run arguments, loads the real model?, needs ../shared/data?)
SMOKE: dict[str, tuple[list[str], bool, bool]] = {
    "scale": (["--notes", "300", "--no-vectors", "--repeats", "1", "--reconciles", "1"], False, False),
    "git_sync": (["--notes", "20", "--runs", "1", "--model", "none"], False, False),
    "multi_bench": (["--notes", "300", "--parts", "2", "--repeats", "1", "--model", "none"], False, False),
    "synth": (["{tmp}/synth", "--notes", "30"], False, False),
    "import_bench": (["--sessions", "12", "--runs", "1", "--big-mb", "2"], False, False),
    "sync_soak": (["--minutes", "0.05", "--no-watch"], False, False),
    "replace_race": (["--saves", "50"], False, False),
    "paired_cli": (["--base", "{repo}", "--rounds", "1", "--calls", "1", "--model", "none"], False, False),
    "door_bench": (["--base", "{repo}", "--rounds", "1"], False, False),
    "obsidian_bench": (["--fixture", "--parts", "links,chunking", "--max-mb", "0.3"], False, False),
    "scifact": (["--queries", "5", "--skip-build-timing", "--repeats", "1"], True, True),
    "locomo": (["--convs", "0", "--turns", "40"], True, True),
    "multihop_variants": (["base", "--convs", "0", "--turns", "40"], True, True),
    "hook_bench": (["latency", "--runs", "1", "--cold-runs", "1", "--repeat", "1"], True, False),
    "watch_bench": (["freshness", "--notes", "20", "--edits", "2"], True, False),
    "service_bench": (["soak", "--calls", "20", "--every", "10"], True, False),
    "first_recall": (["--runs", "1"], True, False),
    "first_index": (["--notes", "30", "--limit", "120", "--every", "0.5"], True, False),
    "embed_rate": (["--notes", "40", "--texts", "8", "--rounds", "1"], True, False),
    "embed_variants": (["--notes", "40", "--texts", "8", "--rounds", "1"], True, False),
    "time_questions": ([], True, False),
    "supersede_calibration": ([], True, False),
    "supersede_v2": (["--limit", "6"], True, False),
    "project_scope": (["--label", "smoke"], True, False),
    "capture_bench": (["--label", "smoke", "--split", "heldout3"], False, False),  # 6 of the 40 sessions
    "secrets_bench": (["--scifact", "50", "--repeats", "1"], False, True),
    "holdback_bench": ([], False, False),
    "holdback_embed": (["--sample", "8", "--final"], True, True),
    "web_floor": ([], True, False),
    "import_recall": (["--convs", "0", "--questions", "10"], True, True),
    "snippet_bench": (["--mb", "0.5", "--runs", "1", "--before", "HEAD"], False, False),
    "warmup_answer": (["--convs", "0", "--turns", "40"], False, True),
    "agents_e2e": (["--agents", "copilot", "--runs", "1"], True, False),  # installs that CLI (npm, ~190 MB)
    "encoders": (["--part", "multilingual", "--models", "minilm"], True, False),
    "vault_questions": (["--vault", "{repo}/tests/fixtures/obsidian_vault"], True, False),
}
# scripts whose smoke run copies the demo vault and indexes it with the real model (~11 CPU-s
# each copy): they run on its first 12 notes (VAULTMEM_BENCH_NOTES, benchmarks/common.py)
SAMPLED = {"service_bench", "hook_bench", "web_floor", "paired_cli"}
SAMPLE_NOTES = "12"


def _scripts() -> list[str]:
    return sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in NOT_SCRIPTS)


def _run(args: list[str], tmp: Path, timeout: int, sample: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "VAULTMEM_BENCH_DIR": str(tmp), "HF_HUB_OFFLINE": "1"}
    # as a user runs it: a script must keep off the caller's service itself
    env.pop("VAULTMEM_NO_SERVICE", None)
    if sample:
        env["VAULTMEM_BENCH_NOTES"] = SAMPLE_NOTES
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_every_kept_script_has_a_smoke_run():
    assert sorted(SMOKE) == _scripts()


def test_every_kept_script_has_a_row_in_the_readme_table():
    """benchmarks/README.md's table gives each kept script its command (the first table)."""
    table = (BENCH / "README.md").read_text().split("\n\n| ")[1].split("\n\n")[0]
    assert [s for s in _scripts() if s != "synth" and f"benchmarks/{s}.py" not in table] == []


@pytest.mark.parametrize("script", _scripts())
def test_help(script, capsys, monkeypatch):
    """As ``python benchmarks/SCRIPT.py --help``, in this process (a subprocess proves no more):
    the script's imports resolve and its arguments parse."""
    path = BENCH / f"{script}.py"
    monkeypatch.setattr(sys, "argv", [str(path), "--help"])
    monkeypatch.setattr(sys, "path", [str(BENCH), *sys.path])  # python puts the script's folder first
    environ = dict(os.environ)  # a script may set a default at import (VAULTMEM_NO_SERVICE, ...)
    try:
        with pytest.raises(SystemExit) as done:
            runpy.run_path(str(path), run_name="__main__")
    finally:
        os.environ.clear()
        os.environ.update(environ)
    assert done.value.code in (0, None) and "usage:" in capsys.readouterr().out


def _smoke(script: str, tmp: Path) -> None:
    args, _, needs_data = SMOKE[script]
    if needs_data and not DATA.is_dir():
        pytest.skip(f"no shared data sets at {DATA}")
    argv = [f"benchmarks/{script}.py", *(a.format(tmp=tmp, repo=REPO) for a in args)]
    out = _run(argv, tmp, 900, sample=script in SAMPLED)
    assert out.returncode == 0, (out.stdout[-2000:], out.stderr[-3000:])
    runtime = Path(os.environ["XDG_RUNTIME_DIR"]) / f"vaultmem-{os.getuid()}"
    started = sorted(p.name for p in runtime.glob("*.sock")) if runtime.is_dir() else []
    assert not started, f"{script} started a memory service in the caller's HOME: {started}"
    results = list((tmp / "results").glob("*.json")) if (tmp / "results").exists() else []
    assert results or script == "synth", out.stdout[-2000:]


@pytest.mark.parametrize("script", [s for s, (_, model, _) in SMOKE.items() if not model])
@pytest.mark.integration  # Python in a subprocess
def test_tiny_run(script, tmp_path):
    _smoke(script, tmp_path)


@pytest.mark.model  # each loads the real embedding model in a subprocess
@pytest.mark.parametrize("script", [
    pytest.param(s, marks=pytest.mark.agents_e2e) if s == "agents_e2e" else s  # drives a real agent CLI
    for s, (_, model, _) in SMOKE.items() if model
])  # fmt: skip
def test_tiny_run_with_the_model(script, tmp_path):
    _smoke(script, tmp_path)


@pytest.mark.model
def test_scifact_tune_runs(tmp_path):
    """`scifact.py --tune` crashed (it called vault._universe(), renamed long ago)."""
    if not DATA.is_dir():
        pytest.skip(f"no shared data sets at {DATA}")
    out = _run(["benchmarks/scifact.py", "--tune", "--queries", "5"], tmp_path, 900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "results" / "scifact-tune.json").exists()
