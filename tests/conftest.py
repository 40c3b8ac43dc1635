"""Shared fixtures. The model hub is never contacted (HF_HUB_OFFLINE=1)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import lanes
import leaks
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "vaults" / "demo"
MODEL_GUARD = Path(__file__).resolve().parent / "modelguard"
NOT_NOTES = (
    ".vaultmem",
    ".vaultmem-usage",
)  # a demo copy holds the notes only, whatever a README run left behind
XDG = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_CACHE_HOME": ".cache",
    "XDG_STATE_HOME": ".local/state",
    "XDG_DATA_HOME": ".local/share",
}  # fmt: skip (XDG_RUNTIME_DIR: see _private_home)
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid", "GIT_COMMITTER_NAME": "Test",
                "GIT_COMMITTER_EMAIL": "test@example.invalid"}  # fmt: skip


SHORT_RUNTIME: list[Path] = []  # short folders made for a too-long temp folder; removed at the end


def short_folder(near: Path, room: int) -> Path:
    """``near`` when ``room`` more bytes of path under it still fit a unix socket; else a short
    private folder of this run's own (mkdtemp in /tmp, removed when the run ends). A test's
    sockets so never depend on the basetemp's length (xdist's workers' are longer, so is a long
    TMPDIR or --basetemp) and never fall back to the machine-wide /tmp/vaultmem-UID."""
    from vaultmem.service.client import MAX_SOCKET_PATH

    if len(os.fsencode(str(near))) + room <= MAX_SOCKET_PATH:
        return near
    SHORT_RUNTIME.append(Path(tempfile.mkdtemp(prefix="vmt-", dir="/tmp")))
    return SHORT_RUNTIME[-1]


def runtime_room() -> int:
    """The path a runtime folder must still hold: ``/vaultmem-UID`` and a socket's name in it."""
    from vaultmem.service.client import LONGEST_NAME

    return len(f"/vaultmem-{os.getuid()}") + LONGEST_NAME


def _runtime_dir(home: Path) -> Path:
    """``home/run`` when a socket fits in it, else a short folder of this run's own."""
    return short_folder(home / "run", runtime_room())


@pytest.fixture
def socket_tmp(tmp_path):
    """``socket_tmp(room)``: a folder of this test's own where ``room`` more bytes of path still
    fit a unix socket (``tmp_path``, or a short folder of the run's own when it is too long)."""
    return lambda room: short_folder(tmp_path, room)


def _private_home(mp: pytest.MonkeyPatch, home: Path) -> None:
    """HOME and every XDG folder (the runtime folder too) inside ``home``, the temp folder this
    run's own (``home``'s parent, in this process and its children); no vaultmem setting
    from the caller's shell; no memory service (the service tests turn it back on)."""
    mp.setenv("HOME", str(home))
    for var, sub in XDG.items():
        mp.setenv(var, str(home / sub))
    mp.setenv("XDG_RUNTIME_DIR", str(_runtime_dir(home)))
    mp.setenv("TMPDIR", str(home.parent))  # --basetemp outside TMPDIR: temp files stay in the run's folder
    mp.setattr(tempfile, "tempdir", str(home.parent))
    mp.setenv("VAULTMEM_NO_SERVICE", "1")
    for var in ("VAULTMEM_HOME", "VAULTMEM_TEAM_DIR", "VAULTMEM_AGENT_ID", "VAULTMEM_VAULT",
                "VAULTMEM_SERVICE_KEY"):  # fmt: skip
        mp.delenv(var, raising=False)
    for var, value in GIT_IDENTITY.items():  # the real ~/.gitconfig is out of reach
        mp.setenv(var, value)


# ---------------------------------------------------------------- lanes, and nothing left behind


def pytest_addoption(parser):
    lanes.addoption(parser)


def pytest_configure(config):
    lanes.configure(config)
    lanes.install_guard()
    _temp_in_ram(config)
    _bytecode_once(config)


def pytest_unconfigure(config):
    if PYCACHE:
        shutil.rmtree(PYCACHE.pop(), ignore_errors=True)


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): three workers for every two cores. A third of the
    suite's wall is waiting (a subprocess starting, a socket, a git child, a file event), so
    one worker per core left the cores idle that long; measured in benchmarks/README ("The
    test suite's time"). PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores * 3 // 2)


RAM_ROOM = 4 << 30  # bytes a RAM folder must have free to hold the run's temp folders


def _temp_in_ram(config) -> None:
    """The run's temp folders in RAM (``/dev/shm``, a tmpfs) when the machine has one with room
    and the run names no other place: the tests write, fsync and commit thousands of small files,
    each durable write ~4 ms on a disk and ~0 in RAM (a killed process loses nothing either way:
    what it wrote is in the page cache). pytest still numbers, keeps and cleans them as under
    /tmp (``PYTEST_DEBUG_TEMPROOT``, documented by pytest); xdist's workers get their basetemp
    from this process."""
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    try:
        mounts = Path("/proc/mounts").read_text()
        free = os.statvfs("/dev/shm")
    except OSError:
        return
    if (
        " /dev/shm tmpfs " in mounts
        and os.access("/dev/shm", os.W_OK)
        and free.f_bavail * free.f_frsize >= RAM_ROOM
    ):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = "/dev/shm"


PYCACHE: list[str] = []  # this run's bytecode folder (made by the controller, removed at its end)


def _bytecode_once(config) -> None:
    """Under ``PYTHONDONTWRITEBYTECODE`` every Python child (a few thousand ``vaultmem`` runs,
    services, benchmark scripts) and every xdist worker compiles each module it imports from
    source again; this run writes its bytecode once, into a temp folder of its own
    (``PYTHONPYCACHEPREFIX``, removed when the run ends), never into the checkout. Without that
    variable Python's own ``__pycache__`` folders serve, as in any run."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or hasattr(config, "workerinput"):
        return
    PYCACHE.append(tempfile.mkdtemp(prefix="vmt-pyc-", dir=os.environ.get("PYTEST_DEBUG_TEMPROOT")))
    os.environ["PYTHONPYCACHEPREFIX"] = PYCACHE[0]
    del os.environ["PYTHONDONTWRITEBYTECODE"]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks it adds
def pytest_collection_modifyitems(config, items):
    lanes.collection_modifyitems(config, items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    lanes.begin(item)
    lanes.phase_started(item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    lanes.phase_started(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    lanes.phase_started(item)
    try:
        return (yield)
    finally:
        lanes.end()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    lanes.phase_report(item, report)
    return report


def pytest_runtest_logreport(report):
    lanes.logreport(report)


def pytest_terminal_summary(terminalreporter, config):
    lanes.terminal_summary(terminalreporter, config)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """What a module- or session-scoped fixture starts carries that fixture's tag (it may outlive
    the test that first asked for it; it must not outlive the run)."""
    if fixturedef.scope == "function":
        return (yield)
    old = os.environ.get(leaks.OWNER)
    os.environ[leaks.OWNER] = leaks.new_tag(f"{fixturedef.scope}-{fixturedef.argname}-")
    try:
        return (yield)
    finally:
        if old is None:
            os.environ.pop(leaks.OWNER, None)
        else:
            os.environ[leaks.OWNER] = old


@pytest.fixture(scope="session", autouse=True)
def _nothing_left_behind(tmp_path_factory):
    """At the end of the run (torn down last): no process the run started still runs, and the
    short folders it made outside its temp folder are gone; else the run fails."""
    yield
    problems = []
    if leaks.supported():
        left = leaks.left_running(lambda: leaks.of_run(tmp_path_factory.getbasetemp()))
        if left:
            problems.append(leaks.report("the run's fixtures", left))
    stuck = leaks.remove_folders(SHORT_RUNTIME)
    if stuck:
        problems.append(f"folders outside the run's temp folder could not be removed: {stuck}")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture(autouse=True)
def _no_process_left(request):
    """A test stops what it starts: a process it started that still runs a few seconds after its
    teardown fails it (and is killed); so does a process a unit-lane test tried to start."""
    tag = leaks.new_tag("test")
    old = os.environ.get(leaks.OWNER)
    os.environ[leaks.OWNER] = tag
    yield
    if old is None:
        os.environ.pop(leaks.OWNER, None)
    else:
        os.environ[leaks.OWNER] = old
    problems = [f"{request.node.nodeid} is in the unit lane but started a process ({what}): mark it "
                "@pytest.mark.integration" for what in lanes.GUARD.refused[:3]]  # fmt: skip
    if lanes.GUARD.started and leaks.supported():
        left = leaks.left_running(lambda: leaks.of_test(tag))
        if left:
            problems.append(leaks.report(request.node.nodeid, left))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def _session_home(tmp_path_factory):
    """Session- and module-scoped fixtures (servers, browsers) start with a private home too."""
    with pytest.MonkeyPatch.context() as mp:
        _private_home(mp, tmp_path_factory.mktemp("session-home"))
        yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """No test sees the caller's vault or writes the user's cache (the model folder is shared)."""
    monkeypatch.setenv("VAULTMEM_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    # never the real home folder: HOME and every XDG folder point into this test's own temp folder
    _private_home(monkeypatch, tmp_path_factory.mktemp("home"))
    # not inside this project's git checkout: remember would scope memories to its branch
    monkeypatch.chdir(tmp_path_factory.getbasetemp())
    # a note this test just wrote is rewritten after 0.05 s, not the 0.3 s that protect a person's
    # in-place save (the tests of that protection use ``real_settle``)
    monkeypatch.setenv("VAULTMEM_SETTLE", "0.05")


@pytest.fixture
def real_settle(monkeypatch):
    """The product's settle window (``store.SETTLE``): for tests of an editor saving in place."""
    monkeypatch.delenv("VAULTMEM_SETTLE")


@pytest.fixture(autouse=True)
def _model_only_when_marked(request, monkeypatch):
    """A test that loads the real model in this process must be marked ``model``, so that
    ``pytest -m "not model"`` (the fast lane) never does. Subprocesses are marked by hand."""
    if request.node.get_closest_marker("model") is None:
        from vaultmem.index.embed import FastEmbedder

        # and in its subprocesses: tests/modelguard/sitecustomize.py refuses to import fastembed
        monkeypatch.setenv("VAULTMEM_TEST_NO_MODEL", request.node.nodeid)
        monkeypatch.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(MODEL_GUARD), os.environ.get("PYTHONPATH")]))
        )

        def refuse(self):
            pytest.fail(f"{request.node.nodeid} loads the real model: mark it @pytest.mark.model")

        monkeypatch.setattr(FastEmbedder, "_load", refuse)


@pytest.fixture(scope="session")
def _shared_model():
    """The default model, loaded once per worker, with the vectors of the texts it has embedded
    kept (the demo vault indexed by a second test costs no model time)."""
    import numpy as np

    from vaultmem.index.embed import FastEmbedder

    class Remembering(FastEmbedder):
        def __init__(self) -> None:
            super().__init__(threads=1)  # one per worker: xdist runs 1.5 workers per core
            self.seen: dict[str, np.ndarray] = {}

        def _embed(self, texts):
            new = list(dict.fromkeys(t for t in texts if t not in self.seen))
            if new:
                self.seen.update(zip(new, super()._embed(new)))
            return np.stack([self.seen[t] for t in texts])

    return Remembering()


@pytest.fixture
def real_model(request, _shared_model, monkeypatch):
    """For model-lane tests: every vault this process opens with the default model gets the
    worker's loaded copy (no load per vault); returns it. A subprocess still loads its own."""
    from vaultmem.index.embed import DEFAULT_BATCH, DEFAULT_MODEL, make_embedder

    assert request.node.get_closest_marker("model"), (
        f"{request.node.nodeid} uses the real model: mark it model"
    )

    def shared(model: str, batch_size: int = DEFAULT_BATCH):
        return _shared_model if model == DEFAULT_MODEL else make_embedder(model, batch_size)

    monkeypatch.setattr("vaultmem.vault.make_embedder", shared)
    monkeypatch.setattr("vaultmem.service.daemon.make_embedder", shared)
    return _shared_model


@pytest.fixture
def demo_copy(tmp_path) -> Path:
    """A private copy of the shipped demo vault."""
    return copy_notes(DEMO, tmp_path / "demo")


def copy_notes(src: Path, dest: Path) -> Path:
    """A copy of a vault's notes, without its indexes and usage store."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*NOT_NOTES))
    return dest


@pytest.fixture
def fake_embedder():
    from helpers import HashEmbedder

    return HashEmbedder()


@pytest.fixture
def fake_model(fake_embedder, monkeypatch):
    """Every vault opened during the test (by the CLI, the MCP tools, ...) gets the small test
    embedder instead of loading the model its config names; returns that embedder."""
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    return fake_embedder


@pytest.fixture
def open_vault(fake_embedder):
    """Opens vaults with the small test embedder; each is closed when the test ends."""
    from vaultmem.vault import Vault

    opened = []

    def _open(root: Path) -> Vault:
        opened.append(Vault(root, embedder=fake_embedder))
        return opened[-1]

    yield _open
    for v in opened:
        v.close()


@pytest.fixture
def demo(demo_copy, open_vault):
    """The demo vault copy opened with the small test embedder."""
    return open_vault(demo_copy)


@pytest.fixture
def empty_vault(tmp_path) -> Path:
    from vaultmem.core.scaffold import init_vault

    root = tmp_path / "vault"
    init_vault(root)
    return root


# ---------------------------------------------------------------- both backends

# a service's address names its HOME: the module's service serves every test home under this key
MODULE_SERVICE_KEY = "tests"
SERVICE_KEYS: dict[Path, Path] = {}  # a module service's runtime folder -> its install's signing key


def share_service_key(run: Path) -> None:
    """This test's HOME signs with the module service's key (``core.ownkey``): one install, as a
    user's CLI and service are, so each trusts the indexes and records the other wrote."""
    target = Path(os.environ["XDG_STATE_HOME"]) / "vaultmem" / "index.key"
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copy(SERVICE_KEYS[run], target)
    from vaultmem.core import ownkey

    ownkey._cache.pop(target, None)  # a key this process read before the copy is not this HOME's any more


@pytest.fixture(scope="module")
def module_service(tmp_path_factory):
    """The real memory service (``daemon.Service``, as ``vaultmem service run`` runs it) in a
    thread of this process with the small test embedder, in a private runtime folder, shared by a
    module's tests on the service backend; stopped when the module ends, leaving nothing behind
    (``service_thread.py``). Clients reach it through its socket. Yields that runtime folder."""
    from helpers import HashEmbedder
    from service_thread import ServiceThread

    home = tmp_path_factory.mktemp("service-home")
    run = _runtime_dir(home)  # short enough for the socket, whatever the basetemp's length
    run.mkdir(mode=0o700, exist_ok=True)
    key = home / "state" / "vaultmem" / "index.key"  # the install's key: each test on it gets a copy
    key.parent.mkdir(parents=True, mode=0o700)
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    SERVICE_KEYS[run] = key
    with pytest.MonkeyPatch.context() as mp:  # where it listens and keeps its lock
        mp.setenv("XDG_RUNTIME_DIR", str(run))
        mp.setenv("VAULTMEM_SERVICE_KEY", MODULE_SERVICE_KEY)
        mp.setenv("XDG_STATE_HOME", str(home / "state"))
        mp.delenv("VAULTMEM_NO_SERVICE", raising=False)
        service = ServiceThread(run, HashEmbedder())
    try:
        yield run
    finally:
        service.stop()


@pytest.fixture(params=["process", "service"])
def backend(request, monkeypatch):
    """Run the test on both backends: in this process (``VAULTMEM_NO_SERVICE=1``), and through
    the real memory service (``module_service``, on its socket): the service is invisible when
    both pass alike."""
    if request.param == "service":
        run = request.getfixturevalue("module_service")
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
        share_service_key(run)
        monkeypatch.setenv("VAULTMEM_SERVICE_KEY", MODULE_SERVICE_KEY)  # each test's HOME: one service
        monkeypatch.delenv("VAULTMEM_NO_SERVICE", raising=False)
    return request.param


@pytest.fixture
def service_thread(monkeypatch, socket_tmp, fake_embedder):
    """The real memory service (``daemon.Service``) in a thread of this test, with the small test
    embedder, on a socket in this test's temp folder; clients of the test (and its subprocesses)
    reach it. Stopped when the test ends, leaving no thread, socket or folder (``service_thread.py``)."""
    from service_thread import start

    running = start(monkeypatch, socket_tmp(runtime_room() + 8) / "run", fake_embedder)
    yield running
    running.stop()
