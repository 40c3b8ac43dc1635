"""The test suite itself: a private home, and demo copies that hold notes only."""

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
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


def test_the_service_folder_is_this_runs_own():
    """The runtime folder the service would use is the one the suite set (never the
    machine-wide fallback /tmp/vaultmem-UID), short enough for its socket; the temp folder is
    this run's own."""
    import tempfile

    from vaultmem.service import client

    folder = client.runtime_dir()
    assert folder.parent == Path(os.environ["XDG_RUNTIME_DIR"]), folder
    assert len(os.fsencode(str(client.service_socket()))) <= 107
    base = Path(os.environ["HOME"]).parent
    assert Path(tempfile.gettempdir()) == Path(os.environ["TMPDIR"]) == base
    record = os.environ.get("VAULTMEM_TEST_RECORD")
    if record:  # the run below: where it put them, to check they are gone after it
        Path(record).write_text(os.environ["XDG_RUNTIME_DIR"], encoding="utf-8")


def _inner_pytest(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    here = Path(__file__).resolve().parent
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *args],
                          cwd=here.parent, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


@pytest.mark.integration  # pytest in a subprocess
def test_a_long_tmpdir_leaves_nothing_outside_the_runs_folder(tmp_path):
    """With a TMPDIR too long for a socket, the runtime folder used to fall back to the
    machine-wide /tmp/vaultmem-UID (and a service test left its socket there)."""
    long_tmp = tmp_path / ("t" * 60) / ("u" * 60)
    long_tmp.mkdir(parents=True)
    record = tmp_path / "runtime.txt"
    done = _inner_pytest(tmp_path, f"{Path(__file__)}::test_the_service_folder_is_this_runs_own",
                         env={"TMPDIR": str(long_tmp), "VAULTMEM_TEST_RECORD": str(record)})  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    used = Path(record.read_text(encoding="utf-8"))
    assert not used.exists() or used.is_relative_to(long_tmp)  # a short folder of its own: removed after


@pytest.mark.integration  # pytest in a subprocess
def test_a_basetemp_outside_tmpdir_is_the_runs_temp_folder(tmp_path):
    """`--basetemp` outside TMPDIR: a test that places a command in its tmp_path and expects it
    seen as temporary (setup's warning) failed; the run's temp folder is its basetemp."""
    other = tmp_path / "tmpdir"
    other.mkdir()
    done = _inner_pytest(tmp_path, f"{Path(__file__).parent / 'test_setup.py'}::test_warns_when_vaultmem_lives_in_a_temporary_environment",
                         f"{Path(__file__)}::test_the_service_folder_is_this_runs_own",
                         f"--basetemp={tmp_path / 'bt'}", env={"TMPDIR": str(other)})  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert not any(other.iterdir())  # nothing written to the TMPDIR outside the run's folder


@pytest.mark.integration  # pytest in a subprocess
def test_the_socket_tests_pass_under_a_basetemp_as_long_as_xdists(tmp_path):
    """`pytest -n 2`: a worker's basetemp is longer (``popen-gwN/``); a test whose socket fit only
    under the serial one fell back to the machine-wide /tmp/vaultmem-UID (and timed out)."""
    tests = Path(__file__).resolve().parent
    (tmp_path / "pytest-of-someone").mkdir()
    done = _inner_pytest(tmp_path, f"{tests / 'adversarial' / 'test_escapes.py'}::test_watch_never_serves_from_a_folder_it_does_not_own",
                         f"{tests / 'test_service.py'}::test_the_service_socket_and_lock_are_private",
                         f"{Path(__file__)}::test_the_service_folder_is_this_runs_own",
                         f"--basetemp={tmp_path / 'pytest-of-someone' / 'popen-gw0'}", env={})  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]


LANES_AND_LEAKS = """
import subprocess, sys, time
import pytest

@pytest.fixture(scope="module")
def kept_server():
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # never stopped

def test_a_unit_test_starting_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_a_unit_test_running_git():
    subprocess.run(["git", "--version"], check=True, capture_output=True)

@pytest.mark.integration
def test_an_integration_test_that_waits():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.mark.integration
def test_an_integration_test_that_leaves_a_process(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    (tmp_path.parent / "leaked.pid").write_text(str(proc.pid))

@pytest.mark.integration
def test_a_module_fixture_that_leaves_a_process(kept_server, tmp_path):
    (tmp_path.parent / "kept.pid").write_text(str(kept_server.pid))
"""


@pytest.mark.integration  # pytest in a subprocess
def test_a_test_names_its_lane_and_stops_what_it_starts(tmp_path):
    """The suite's own checks (tests/lanes.py, tests/leaks.py) on a module of made-up tests, run
    with this suite's conftest: a unit test may run git but not Python; a process a test or a
    module fixture leaves running fails it (the test at its end, the fixture at the run's) and
    is killed."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not this project's addopts
    (tmp_path / "test_made_up.py").write_text(LANES_AND_LEAKS, encoding="utf-8")
    tests = Path(__file__).resolve().parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("VMTEST_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]), VMTEST_LEAK_GRACE="0.5"
    )
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-rA",
                           f"--basetemp={tmp_path / 'bt'}", "test_made_up.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out[-3000:]
    assert "PASSED test_made_up.py::test_a_unit_test_running_git" in out
    assert "PASSED test_made_up.py::test_an_integration_test_that_waits" in out
    assert "FAILED test_made_up.py::test_a_unit_test_starting_python" in out
    assert "is in the unit lane but started a process (subprocess.Popen" in out
    assert "ERROR at teardown of test_an_integration_test_that_leaves_a_process" in out
    assert "test_made_up.py::test_an_integration_test_that_leaves_a_process left 1 process(es) running" in out
    assert "the run's fixtures left 1 process(es) running" in out  # at the end of the run
    for name in ("leaked.pid", "kept.pid"):
        pid = int((tmp_path / "bt" / name).read_text())
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
