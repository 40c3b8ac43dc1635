"""Config is read at one point too: every config file of vaultmem's own (the vault's
``.vaultmem.toml``, the user's ``config.toml``) is read by ``core/config.py`` (``read_toml``),
so a broken one is the same one-line error and exit code wherever it is."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "vaultmem"
# agents/setups.py reads and merges the agents' own config files (Codex's config.toml), not vaultmem's
READS_AGENTS_FILES = {"agents/setups.py"}


def _imports_tomllib(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name == "tomllib" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "tomllib":
            return True
    return False


def test_vaultmems_config_files_are_read_by_core_config_only():
    readers = {str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if _imports_tomllib(p)}
    assert readers - READS_AGENTS_FILES == {"core/config.py"}


def _vaultmem(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vaultmem", *args], capture_output=True, text=True, env=env,
                          timeout=300)  # fmt: skip


@pytest.mark.integration  # the CLI in subprocesses
def test_a_broken_user_config_is_the_same_one_line_error_as_a_broken_vault_config(tmp_path):
    """End to end: `service status` and `recall` (which asks whether the service is on) name the
    user's broken config.toml in one line and exit 2, as `list` does for a broken .vaultmem.toml."""
    from vaultmem.core.scaffold import init_vault

    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_NO_SERVICE"}
    user = Path(env["XDG_CONFIG_HOME"]) / "vaultmem" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[service\nidle_exit = 5\n", encoding="utf-8")
    vault = tmp_path / "vault"
    init_vault(vault)
    for args in (("service", "status"), ("recall", "anything", "--vault", str(vault))):
        done = _vaultmem(*args, env=env)
        assert done.returncode == 2 and done.stderr.startswith(f"vaultmem: {user}: invalid config ("), done
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    (vault / ".vaultmem.toml").write_text("[recall\n", encoding="utf-8")
    done = _vaultmem("list", "--vault", str(vault), env={**env, "VAULTMEM_NO_SERVICE": "1"})
    assert done.returncode == 2 and done.stderr.startswith(
        f"vaultmem: {vault / '.vaultmem.toml'}: invalid config ("
    )
