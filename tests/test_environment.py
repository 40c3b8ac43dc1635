"""The environment is read at one point: ``vaultmem/core/environment.py`` declares every variable
vaultmem reads (type, default, one line) and reads them, when asked; no other module reads
``os.environ``; docs/environment.md is its table."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultmem.core import environment

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "vaultmem"
THE_ROOT = PKG / "core" / "environment.py"
DOC = ROOT / "docs" / "environment.md"
# what reads the environment: os.environ (and os.environb), os.getenv and the like, the home
# folder (Path.home() reads $HOME) and the temp folder (tempfile reads $TMPDIR)
READS = {("os", "environ"), ("os", "environb"), ("os", "getenv"), ("os", "getenvb"), ("os", "putenv"),
         ("os", "unsetenv"), ("Path", "home"), ("tempfile", "gettempdir"), ("tempfile", "gettempdirb")}  # fmt: skip


def environment_reads(source: str) -> list[int]:
    """The lines of ``source`` that read the environment (by attribute or imported name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in READS:
                found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "tempfile"):
            if any((node.module, a.name) in READS for a in node.names):
                found.append(node.lineno)
    return sorted(found)


def test_the_check_finds_every_way_of_reading():
    source = "import os\nfrom os import environ\nos.environ.get('X')\nos.getenv('Y')\nPath.home()\n" \
             "tempfile.gettempdir()\nx = os.environ\n"  # fmt: skip
    assert environment_reads(source) == [2, 3, 4, 5, 6, 7]
    assert environment_reads("import os\nos.path.join('a')\nenvironment.HOME.get()\n") == []


def test_no_module_but_the_root_reads_the_environment():
    """Every variable is read by core/environment.py (a child process's environment is made there too)."""
    found = [f"{path.relative_to(PKG)}:{line}" for path in sorted(PKG.rglob("*.py")) if path != THE_ROOT
             for line in environment_reads(path.read_text(encoding="utf-8"))]  # fmt: skip
    assert found == []


def _string_constants(path: Path) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}  # fmt: skip


def _env_lookups(path: Path) -> set[str]:
    """The names looked up as ``env.get("X")`` or ``env["X"]`` in a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target, key = node.func.value, node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "env" and isinstance(key, ast.Constant):
            found.add(key.value)
    return found


def test_every_variable_vaultmem_names_is_declared():
    """A ``VAULTMEM_*`` name in the code, or a name an agent module looks up in the hook's
    environment (``env.get("X")``), is one of the declared variables."""
    declared = {v.name for v in environment.VARIABLES}
    named = {s for path in PKG.rglob("*.py") if path != THE_ROOT for s in _string_constants(path)
             if re.fullmatch(r"VAULTMEM_[A-Z0-9_]+", s)}  # fmt: skip
    looked_up = {name for path in (PKG / "agents").rglob("*.py") for name in _env_lookups(path)}
    assert {"CODEX_HOME", "COPILOT_HOME", "CURSOR_VERSION"} <= looked_up  # the scan sees them
    assert sorted((named | looked_up) - declared) == []


def test_each_variable_is_declared_once_under_its_own_name():
    names = [v.name for v in environment.VARIABLES]
    assert len(names) == len(set(names))
    assert all(getattr(environment, v.name) is v and v.doc and v.default for v in environment.VARIABLES)


def test_the_docs_table_is_the_declaration():
    """docs/environment.md holds ``environment.table()`` (regenerate it with
    ``python -m vaultmem.core.environment`` after a change to the declaration)."""
    assert environment.table() in DOC.read_text(encoding="utf-8")


@pytest.mark.integration  # Python in a subprocess
def test_the_root_is_stdlib_only_and_cheap_to_import():
    """The fast paths of recall and the hooks load it: it imports os and pathlib (tempfile when
    the temp folder is asked for), nothing of vaultmem and nothing outside the standard library."""
    imported = set()
    for node in ast.walk(ast.parse(THE_ROOT.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    assert imported <= {"__future__", "os", "pathlib", "tempfile", "collections.abc"}
    code = "import sys, os, pathlib; before = set(sys.modules); import vaultmem.core.environment; " \
           "print(sorted(m for m in set(sys.modules) - before if not m.startswith('vaultmem')))"  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_values_are_read_when_asked_not_at_import(monkeypatch, tmp_path):
    """A test (or a service) that changes the environment after import is seen at the next call;
    an empty value is unset; a flag is on unless it is 0."""
    from vaultmem.core.registry import home

    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "a"))
    assert home() == tmp_path / "a"
    monkeypatch.setenv("VAULTMEM_HOME", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert home() == tmp_path / "cfg" / "vaultmem"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert home() == tmp_path / "h" / ".config" / "vaultmem"
    for value, on in (("1", True), ("yes", True), ("0", False), (" 0 ", False), ("", False)):
        monkeypatch.setenv("VAULTMEM_NO_SERVICE", value)
        assert environment.VAULTMEM_NO_SERVICE.get() is on, value
    monkeypatch.setenv("VAULTMEM_TEAM_DIR", "~/team")
    assert environment.VAULTMEM_TEAM_DIR.get() == tmp_path / "h" / "team"


def test_a_child_gets_this_environment_with_its_changes(monkeypatch):
    monkeypatch.setenv("PAGER", "less")
    monkeypatch.setenv("VAULTMEM_ANCHOR", "Project: X")
    env = environment.for_child({"LC_ALL": "C"}, drop=("PAGER",))
    assert env["LC_ALL"] == "C" and "PAGER" not in env and env["VAULTMEM_ANCHOR"] == "Project: X"
    assert env == {**{k: v for k, v in os.environ.items() if k != "PAGER"}, "LC_ALL": "C"}


def test_the_agents_see_the_declared_variables_of_the_hooks_environment(monkeypatch):
    """A hook's agent is told by its environment's marks (Cursor sets CURSOR_VERSION)."""
    from vaultmem.agents.adapters import detect

    assert detect({"prompt": "hi"}) == "claude"
    monkeypatch.setenv("CURSOR_VERSION", "1.7")
    assert detect({"prompt": "hi"}) == "cursor"


def test_the_cli_follows_the_variables_set_per_call(monkeypatch, tmp_path, fake_model):
    """End to end: ``VAULTMEM_VAULT`` set after the CLI was imported picks the vault of each call."""
    from vaultmem.cli.app import app
    from vaultmem.core.scaffold import init_vault

    runner = CliRunner()
    for name in ("one", "two"):
        init_vault(tmp_path / name)
        monkeypatch.setenv("VAULTMEM_VAULT", str(tmp_path / name))
        done = runner.invoke(app, ["remember", "fact", f"The {name} fact", "Said in vault {name}."])
        assert done.exit_code == 0, done.output
    for name in ("one", "two"):
        monkeypatch.setenv("VAULTMEM_VAULT", str(tmp_path / name))
        listed = runner.invoke(app, ["list"])
        assert listed.exit_code == 0 and f"the {name} fact" in listed.output.lower(), listed.output
        assert ("two" if name == "one" else "one") + " fact" not in listed.output.lower()


def test_a_seconds_variable_is_a_positive_number_or_unset(monkeypatch):
    """The tests' shorter waits (VAULTMEM_STOP_GRACE, VAULTMEM_READ_TIMEOUT): anything but a
    positive number leaves the product's default."""
    from vaultmem.service import server

    var = environment.VAULTMEM_READ_TIMEOUT
    for raw, seconds in (("1.5", 1.5), ("", None), ("soon", None), ("0", None), ("-3", None)):
        monkeypatch.setenv(var.name, raw)
        assert var.get() == seconds, raw
        assert server.read_timeout() == (seconds or server.READ_TIMEOUT), raw


def test_a_count_variable_sets_a_bulk_writes_checkpoints(monkeypatch):
    """VAULTMEM_BULK_EVERY (the killed-import test's shorter run): a whole number above zero,
    else the default 250."""
    from vaultmem.memory import batch

    written: list[int] = []
    flushed: list[int] = []

    class Vault:
        def flush(self) -> int:
            flushed.append(len(written))
            return 0

    for raw, every in (("3", 3), ("", 250), ("2.5", 250), ("0", 250), ("x", 250)):
        monkeypatch.setenv("VAULTMEM_BULK_EVERY", raw)
        assert environment.VAULTMEM_BULK_EVERY.get() == (None if every == 250 else every), raw
    monkeypatch.setenv("VAULTMEM_BULK_EVERY", "3")
    for item in batch.paced(Vault(), list(range(7))):
        written.append(item)
    assert flushed == [3, 6, 7]
