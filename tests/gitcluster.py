"""A bare remote and several clones of one vault ("machines"), driven by the real CLI and git.

Git sees only a private global config (``GIT_CONFIG_GLOBAL`` in the test's temp folder); the
user's own config is never read or written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from helpers import wait_for

from vaultmem.core.note import split_frontmatter

GITCONFIG = """[user]
\tname = Vault Tester
\temail = tester@example.com
[init]
\tdefaultBranch = main
[protocol "file"]
\tallow = always
"""


def git_env(tmp: Path) -> dict[str, str]:
    cfg = tmp / "gitconfig"
    if not cfg.exists():
        cfg.write_text(GITCONFIG)
    return {"GIT_CONFIG_GLOBAL": str(cfg), "GIT_CONFIG_NOSYSTEM": "1", "HF_HUB_OFFLINE": "1"}


class Cluster:
    """``remote.git`` plus named clones, each a vault with its own (optional) watcher."""

    def __init__(self, tmp: Path, model: str = "none"):
        self.tmp = tmp
        self.env = {**os.environ, **git_env(tmp), "VAULTMEM_CACHE": str(tmp / "cache")}
        self.env.pop("VAULTMEM_VAULT", None)
        self.env.pop(KILL, None)
        self.model = model
        self.remote = tmp / "remote.git"
        self.git(tmp, "init", "-q", "--bare", str(self.remote))
        self.vaults: dict[str, Path] = {}
        self.watchers: dict[str, subprocess.Popen] = {}

    # ------------------------------------------------------------ running things

    def git(self, cwd: Path, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=cwd, env=self.env, check=True, capture_output=True,
                              text=True).stdout  # fmt: skip

    def vm(self, name: str, *args: str, check: bool = True, env: dict | None = None,
           real: bool = False) -> subprocess.CompletedProcess:  # fmt: skip
        """Run ``vaultmem ARGS --vault <clone>``: in this process (typer's runner) unless
        ``real`` or ``env`` ask for a process of its own (a sync that kills itself)."""
        if not real and not env:
            return self._invoke(name, *args, check=check)
        proc = subprocess.run([sys.executable, "-m", "vaultmem", *args, "--vault", str(self.vaults[name])],
                              env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=120)  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"vaultmem {' '.join(args)} on {name} failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")  # fmt: skip
        return proc

    def _invoke(self, name: str | None, *args: str, check: bool) -> subprocess.CompletedProcess:
        from typer.testing import CliRunner

        from vaultmem.cli.app import app

        env = {k: v for k, v in self.env.items() if k.startswith(("GIT_", "VAULTMEM_", "HF_"))}
        where = ["--vault", str(self.vaults[name])] if name else []
        result = CliRunner().invoke(app, [*args, *where], env=env)
        code = result.exit_code
        if check and code != 0:
            raise AssertionError(f"vaultmem {' '.join(args)} on {name} failed ({code}):\n{result.output}\n"
                                 f"{result.stderr}\n{result.exception!r}")  # fmt: skip
        return subprocess.CompletedProcess(args, code, result.stdout, result.stderr)

    def _configure(self, root: Path) -> None:
        cfg = root / ".vaultmem.toml"
        text = cfg.read_text()
        cfg.write_text(
            text.replace('# model = "sentence-transformers/all-MiniLM-L6-v2"', f'model = "{self.model}"')
        )

    def first(self, name: str) -> Path:
        """The machine that creates the vault (``vaultmem init --git --remote``)."""
        root = self.tmp / name
        self._invoke(None, "init", "--git", "--remote", str(self.remote), str(root), check=True)  # in process
        self._configure(root)
        self.vaults[name] = root
        self.vm(name, "sync")
        return root

    def clone(self, name: str) -> Path:
        """Another machine: git clone, vaultmem init, sync --setup."""
        root = self.tmp / name
        self.git(self.tmp, "clone", "-q", str(self.remote), str(root))
        self._invoke(None, "init", str(root), check=True)
        self._configure(root)
        self.vaults[name] = root
        self.vm(name, "sync", "--setup")
        return root

    def watch(self, name: str, *extra: str) -> None:
        proc = subprocess.Popen([sys.executable, "-m", "vaultmem", "watch", "--vault", str(self.vaults[name]), *extra],
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        self.watchers[name] = proc
        wait_for(
            lambda: self.status(name).get("by") == "service", what=f"{name}'s watcher (the memory service)"
        )

    def status(self, name: str) -> dict:
        proc = self.vm(name, "status", "--json", check=False)
        return json.loads(proc.stdout) if proc.returncode == 0 else {}

    def settle(self, name: str) -> None:
        """Wait until the clone's watcher has applied every change."""
        wait_for(
            lambda: (s := self.status(name)).get("in_sync") and not s.get("pending"), what=f"{name} settled"
        )

    def stop_watchers(self) -> dict[str, str]:
        logs = {}
        for name, proc in self.watchers.items():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            logs[name] = err
        self.watchers.clear()
        return logs

    # ------------------------------------------------------------ looking at clones

    def write(self, name: str, rel: str, text: str) -> Path:
        path = self.vaults[name] / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def read(self, name: str, rel: str) -> str:
        return (self.vaults[name] / rel).read_text(encoding="utf-8")

    def notes(self, name: str) -> dict[str, str]:
        """Every note file of a clone (outside dot-folders) -> its text."""
        root = self.vaults[name]
        out = {}
        for p in sorted(root.rglob("*.md")):
            rel = p.relative_to(root).as_posix()
            if not any(part.startswith(".") for part in rel.split("/")) and rel != "README.md":
                out[rel] = p.read_text(encoding="utf-8")
        return out

    def body_lines(self, name: str) -> set[str]:
        lines: set[str] = set()
        for text in self.notes(name).values():
            fm, body, _, _ = split_frontmatter(text)
            lines |= {line.strip() for line in (text if fm is None else fm + "\n" + body).splitlines()}
        return lines


KILL = "VAULTMEM_SYNC_KILL_AT"
