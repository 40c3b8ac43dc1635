"""The test suite itself: a private home, and demo copies that hold notes only."""

import os
import pwd
from pathlib import Path

from conftest import XDG, copy_notes


def test_tests_run_with_a_private_home():
    real = pwd.getpwuid(os.getuid()).pw_dir
    home = Path(os.environ["HOME"])
    assert str(home) != real and home.is_dir()
    assert all(Path(os.environ[var]).is_relative_to(home) for var in XDG)


def test_a_copy_leaves_a_readme_runs_usage_store_behind(tmp_path):
    """README command 1 leaves vaults/demo/.vaultmem-usage/; a test's copy must not take it."""
    src = tmp_path / "src"
    (src / ".vaultmem-usage").mkdir(parents=True)
    (src / ".vaultmem-usage" / "usage.db").write_bytes(b"x")
    (src / ".vaultmem" / "index").mkdir(parents=True)
    (src / "Note.md").write_text("# Note\n", encoding="utf-8")
    dest = copy_notes(src, tmp_path / "dest")
    assert sorted(p.name for p in dest.iterdir()) == ["Note.md"]


def test_test_modules_import_their_helpers_as_ci_runs_them():
    """CI runs `pytest` (not `python -m pytest`), which puts tests/ on the path but not the
    repository: `from tests.x import ...` passed locally and broke collection under CI."""
    import re

    here = Path(__file__).parent
    bad = [f"{p.name}:{n}" for p in sorted(here.glob("*.py"))
           for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if re.match(r"\s*(from tests[. ]|import tests\b|from \. import|from \.\w)", line)]  # fmt: skip
    assert bad == []
