"""Hostile hook input, through the installed `vaultmem hook ...` in a subprocess: a transcript path
that is not a regular file, JSON nested too deeply, a payload over 1 MB. Every hook answers in
bounded time; a payload it cannot read is one line on stderr with exit code 1 (never 2, which
Claude Code reads as "block"); an unreadable transcript is treated as no transcript (exit 0)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .adversarial_helpers import run

pytestmark = pytest.mark.integration  # the CLI in subprocesses

HOOKS = ["stop", "end", "pre-compact", "start"]


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "v"
    assert run("init", str(root)).returncode == 0
    return root


def _hook(vault: Path, name: str, stdin: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return run("hook", name, "--vault", str(vault), input=stdin, timeout=timeout)


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_transcript_path_that_is_not_a_regular_file_never_hangs_a_hook(vault, tmp_path, hook, kind):
    """Before: the hook opened a FIFO and waited for a writer forever (killed by the timeout)."""
    path = {"directory": tmp_path, "device": Path("/dev/zero")}.get(kind, tmp_path / "fifo")
    if kind == "fifo":
        os.mkfifo(path)
    payload = json.dumps({"session_id": "abc123", "transcript_path": str(path), "cwd": str(tmp_path)})
    result = _hook(vault, hook, payload, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("hook", ["prompt", *HOOKS])
def test_deeply_nested_json_is_one_line(vault, hook):
    """Before: a RecursionError traceback."""
    result = _hook(vault, hook, "[" * 100_000)
    assert result.returncode == 1
    assert result.stderr == "vaultmem: the hook input is JSON nested too deeply\n"


@pytest.mark.parametrize("hook", ["prompt", "stop"])
def test_a_payload_over_one_megabyte_is_called_too_large(vault, hook):
    """Before: cut at 1 MB and reported as "not JSON"."""
    result = _hook(vault, hook, json.dumps({"prompt": "x" * (1 << 20)}))
    assert result.returncode == 1
    assert result.stderr == "vaultmem: the hook input is larger than 1 MB\n"


def test_a_transcript_path_that_is_not_a_string_is_no_transcript(vault):
    for bad in (0, 1, ["a"], {"x": 1}):
        result = _hook(vault, "stop", json.dumps({"session_id": "s", "transcript_path": bad}))
        assert result.returncode == 0 and result.stderr == "", (bad, result.stderr)
