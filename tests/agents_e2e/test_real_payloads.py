"""The fast lane of the real-agents lane: every hook payload a real agent sent
(tests/fixtures/agents/real/<agent>/, recorded by ``benchmarks/agents_e2e.py --record``) is
accepted by the hook setup --write installs for it: exit 0 and an answer that is empty or JSON.
Runs without the agent CLIs (tests/agent_cli.py: the console entry with the test embedder)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agents_e2e.record import EVENTS, SCRUB_ROOT

pytestmark = pytest.mark.integration  # the hooks run as the agents run them: in subprocesses

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "real"
CLI = str(Path(__file__).resolve().parents[1] / "agent_cli.py")
CASES = sorted(p for p in REAL.glob("*/*.json"))


def _hook(path: Path) -> str:
    return EVENTS[path.stem.split("-")[0]]


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    """One vault for every payload (each session has its own state in it)."""
    path = tmp_path_factory.mktemp("real-payloads") / "vault"
    subprocess.run([sys.executable, CLI, "init", str(path)], check=True, capture_output=True)
    return path


@pytest.mark.parametrize("payload", CASES, ids=[f"{p.parent.name}-{p.stem}" for p in CASES])
def test_real_payload_is_accepted(payload: Path, vault: Path, tmp_path: Path) -> None:
    agent, hook = payload.parent.name, _hook(payload)
    root = tmp_path / "e2e"
    text = payload.read_text().replace(SCRUB_ROOT, str(root))
    data = json.loads(text)
    log = data.get("transcript_path") or data.get("transcriptPath")
    recorded = next(payload.parent.glob("transcript.*"), None)
    if log and recorded:  # the session log where the payload says it is
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(recorded, log)
    extra = ["--wait"] if hook == "end" else []
    done = subprocess.run(
        [sys.executable, CLI, "hook", hook, "--agent", agent, "--vault", str(vault), *extra],
        input=text,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    if done.stdout.strip():
        json.loads(done.stdout)
