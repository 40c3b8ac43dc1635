"""Helpers of the adversarial tests (a module of its own: ``conftest`` is a name every test
folder has, so ``from conftest import ...`` could load another folder's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import Running as Watching  # noqa: F401  (a watcher in a thread of the test process)
from helpers import wait_for  # noqa: F401  (the tests' one poller, used from here by the adversarial tests)

CLI = [str(Path(sys.executable).with_name("vaultmem"))]  # the installed console script
SITE = Path(__file__).resolve().parents[1] / "service_site"
# service_site/sitecustomize.py: the small hash embedder instead of the model, in every process
FAKE_MODEL = {"PYTHONPATH": os.pathsep.join([str(SITE), str(SITE.parent)]), "VAULTMEM_TEST_MODEL_DELAY": "0"}


def cli_env(real_model: bool = False, **extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: offline, the test cache, no caller's vault, no memory
    service; the small hash embedder instead of the model unless ``real_model`` (what these tests
    check, the model does not change: it would cost each process a model load)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VAULTMEM_") or k in ("VAULTMEM_CACHE", "VAULTMEM_NO_SERVICE")
    }
    env["HF_HUB_OFFLINE"] = "1"
    if not real_model:
        env.update(FAKE_MODEL)
    env.update(extra)
    return env


def run(*args: str, timeout: float = 120, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """Run ``vaultmem ARGS`` to completion; text output captured."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                          env=env or cli_env(), **kw)  # fmt: skip


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    """Start ``vaultmem ARGS`` in the background (stdout/stderr captured)."""
    return subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or cli_env())  # fmt: skip


FAKE_SERVER = r"""
import json, os, socket, sys
path, uid = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
os.setuid(uid)          # SO_PEERCRED reports the credentials at listen() time
s.listen(4)
print("ready", flush=True)
hit = {"id": "fake0001", "title": "FAKE ANSWER from another user", "path": "fake.md", "type": "fact",
       "score": 9.9, "snippet": "planted", "highlights": [], "rank": 1}
while True:
    c, _ = s.accept()
    c.makefile().readline()
    c.sendall(json.dumps({"ok": True, "result": [hit]}).encode() + b"\n")
    c.close()
"""


def fake_watcher(path: Path, uid: int) -> subprocess.Popen:
    """A process that binds ``path`` as root, becomes ``uid`` and answers every request with
    a planted recall hit: the impersonation the socket checks must defeat (needs root)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", FAKE_SERVER, str(path), str(uid)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "ready"
    return proc
