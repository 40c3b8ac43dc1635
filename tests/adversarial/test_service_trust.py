"""The memory service belongs to its user, home and install (issue 39 High 3 and Low, issue 34).

End to end: the real `vaultmem` CLI in subprocesses with the small hash embedder
(``tests/service_site``), each test in its own HOME. "Another local user" is simulated by a
folder chown'ed to uid 65534 (as root), by a folder open to others, or by a symlink.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from .adversarial_helpers import CLI, wait_for

pytestmark = pytest.mark.integration  # the CLI in subprocesses

TESTS = Path(__file__).resolve().parent.parent
SITE = TESTS / "service_site"
NOBODY = 65534
needs_root = pytest.mark.skipif(os.getuid() != 0, reason="chown to another user needs root")


class Svc:
    """`vaultmem` with the memory service turned on, in one HOME (its own XDG folders)."""

    def __init__(self, home: Path, runtime: Path | None, tmpdir: Path | None = None):
        env = {k: v for k, v in os.environ.items() if k not in ("VAULTMEM_NO_SERVICE", "XDG_RUNTIME_DIR")}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".state"),
                   XDG_DATA_HOME=str(home / ".share"), XDG_CACHE_HOME=str(home / ".cache"),
                   PYTHONPATH=os.pathsep.join([str(SITE), str(TESTS), str(TESTS.parent)]), VAULTMEM_TEST_MODEL_DELAY="0",
                   HF_HUB_OFFLINE="1")  # fmt: skip
        if runtime is not None:
            env["XDG_RUNTIME_DIR"] = str(runtime)
        if tmpdir is not None:
            env["TMPDIR"] = str(tmpdir)
        self.env, self.home = env, home
        config = home / ".config" / "vaultmem" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("[service]\nidle_exit = 60\n")  # a leftover does not linger

    def __call__(self, *args: str, timeout: float = 180, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*CLI, *args], capture_output=True, text=True, timeout=timeout, env=self.env, **kw
        )

    def py(self, code: str) -> str:
        """What ``code`` prints in a Python process of this HOME."""
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=self.env,
                              check=True).stdout.strip()  # fmt: skip

    def paths(self, shared: bool = True) -> tuple[Path, Path, Path]:
        """(runtime folder, service socket, lock file) as this HOME's clients see them
        (``shared``: in XDG_RUNTIME_DIR or the temp folder)."""
        out = self.py("from vaultmem.service import client, control; "
                      "print(client.runtime_dir()); print(client.service_socket()); print(control.lock_path())")  # fmt: skip
        folder, sock, lock = map(Path, out.splitlines())
        if shared:
            assert folder.parent == Path(self.env.get("XDG_RUNTIME_DIR") or self.env["TMPDIR"]), folder
        return folder, sock, lock

    def status(self) -> dict:
        return json.loads(self("service", "status", "--json").stdout)

    def log(self) -> str:
        path = self.home / ".state" / "vaultmem" / "service.log"
        return path.read_text() if path.exists() else ""

    def cleanup(self) -> None:
        self("service", "stop", timeout=60)
        out = self.py(
            "import json; from vaultmem.service import control; print(json.dumps(control.holder()))"
        )
        held = json.loads(out or "null")
        if held and isinstance(held.get("pid"), int):
            with contextlib.suppress(ProcessLookupError):
                os.kill(held["pid"], signal.SIGKILL)


@pytest.fixture
def homes(runtime):
    """``homes(name, runtime=..., tmpdir=...)``: an Svc in a fresh HOME (a short path, so that its
    state folder can hold a socket); each stopped at the end (before ``runtime`` is removed: a
    service whose socket and lock were deleted first could not be stopped, and ran on)."""
    base = Path(tempfile.mkdtemp(prefix="vh", dir="/tmp"))
    made: list[Svc] = []

    def make(name: str, runtime: Path | None = None, tmpdir: Path | None = None) -> Svc:
        made.append(Svc(base / name, runtime, tmpdir))
        return made[-1]

    yield make
    for svc in made:
        svc.cleanup()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def runtime() -> Path:
    """The user's XDG_RUNTIME_DIR (a short path, so that a socket fits in it)."""
    folder = Path(tempfile.mkdtemp(prefix="vr", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def shared_tmp() -> Path:
    """A temp folder like /tmp (mode 1777): where the runtime folder goes without XDG_RUNTIME_DIR
    (a short path, so that a socket fits in it)."""
    tmp = Path(tempfile.mkdtemp(prefix="vm", dir="/tmp"))
    tmp.chmod(0o1777)
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def victim():
    """A process the attacker wants killed."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


def plant(folder: Path, how: str, tmp_path: Path) -> None:
    """The runtime folder, created first by "another user" (``how``)."""
    if how == "other-user":
        folder.mkdir(mode=0o700)
        os.chown(folder, NOBODY, NOBODY)
    elif how == "open-mode":
        folder.mkdir()
        folder.chmod(0o777)
    else:  # a symlink to a folder the attacker chose
        target = tmp_path / "attacker"
        target.mkdir(mode=0o700)
        folder.symlink_to(target)


@contextlib.contextmanager
def planted_lock(lock: Path, pid: int):
    """A lock file naming ``pid``, held (flock) by another process, as a running service holds it."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, json.dumps({"pid": pid, "version": "0.1.0"}).encode())
    try:
        yield
    finally:
        os.close(fd)


def _lines_naming(folder: Path, stderr: str) -> int:
    return sum(str(folder) in line for line in stderr.splitlines())


HOW = [pytest.param("other-user", marks=needs_root), "open-mode", "symlink"]


# ---------------------------------------------------------------- issue 39 High 3


@pytest.mark.parametrize("how", HOW)
def test_stop_never_kills_the_pid_a_planted_lock_names(homes, shared_tmp, victim, tmp_path, how):
    svc = homes("home", tmpdir=shared_tmp)
    folder, _, lock = svc.paths()
    plant(folder, how, tmp_path)
    with planted_lock(lock, victim.pid):
        done = svc("service", "stop")
    assert victim.poll() is None, "vaultmem service stop killed the attacker's chosen process"
    assert done.returncode == 0 and "no memory service runs" in done.stdout, done
    assert _lines_naming(folder, done.stderr) == 1, done.stderr


def _until_vectors_are_in(svc, vault: Path) -> None:
    """Recall through the service until it no longer answers by keywords (the first index fills
    its vectors behind its first answer), or two minutes pass."""
    try:
        wait_for(lambda: not json.loads(svc("recall", "Alpha", "--vault", str(vault), "--json").stdout).get("degraded"),
                 timeout=120, interval=0.2, what="a hybrid answer")  # fmt: skip
    except AssertionError:  # still keywords after two minutes: the caller goes on
        pass


@pytest.mark.parametrize("how", HOW)
def test_a_planted_folder_is_replaced_by_a_private_one(homes, shared_tmp, victim, small_vault, tmp_path, how):
    """Recall and the hooks keep a warm service: it runs from a spare folder in the user's state
    folder, and the planted lock and socket are never looked at."""
    svc = homes("home", tmpdir=shared_tmp)
    folder, sock, lock = svc.paths()
    plant(folder, how, tmp_path)
    planted = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # and a socket where the service's goes
    planted.bind(str(sock))
    planted.listen(1)
    with planted_lock(lock, victim.pid), planted:
        began = time.monotonic()
        done = svc("recall", "Alpha", "--vault", str(small_vault))
        took = time.monotonic() - began
        assert done.returncode == 0 and "Alpha" in done.stdout, done
        assert _lines_naming(folder, done.stderr) == 1, done.stderr
        assert took < 30, f"recall waited {took:.1f} s for a service that is not there"  # it was 61.8 s
        spare, spare_sock, _ = svc.paths(shared=False)
        assert (
            spare.parent == svc.home / ".state" / "vaultmem" and stat.S_IMODE(spare.stat().st_mode) == 0o700
        )
        status = svc.status()
        assert (
            status["running"] and status["socket"] == str(spare_sock) and str(small_vault) in status["vaults"]
        )
        _until_vectors_are_in(svc, small_vault)  # the first index answers by keywords until then
        hook = svc("hook", "prompt", "--vault", str(small_vault), input=json.dumps(
            {"prompt": "what about Alpha?", "session_id": "s1", "cwd": str(small_vault)}))  # fmt: skip
        assert hook.returncode == 0 and "Alpha" in hook.stdout and "keyword" not in hook.stdout.lower(), hook
        assert _lines_naming(folder, hook.stderr) == 0  # said once, when the spare folder was made
        assert svc("service", "stop").returncode == 0 and not svc.status()["running"]
    assert victim.poll() is None


@pytest.mark.parametrize("how", HOW)
def test_an_empty_planted_folder_never_blocks_the_service(homes, shared_tmp, small_vault, tmp_path, how):
    svc = homes("home", tmpdir=shared_tmp)
    folder, _, _ = svc.paths()
    plant(folder, how, tmp_path)
    started = svc("service", "start", timeout=60)
    assert started.returncode == 0 and _lines_naming(folder, started.stderr) == 1, started
    assert svc.status()["socket"] == str(svc.paths(shared=False)[1])
    recalled = svc("recall", "Alpha", "--vault", str(small_vault))
    assert recalled.returncode == 0 and "Alpha" in recalled.stdout and recalled.stderr.count("warning") == 0


@pytest.mark.parametrize("how", HOW)
def test_a_blocked_folder_without_a_spare_is_named_in_one_line_at_once(homes, shared_tmp, small_vault, tmp_path,
                                                                       how):  # fmt: skip
    """When the spare folder cannot hold a socket either (its path is too long), every command
    says so in one line at once and works without the service."""
    svc = homes("home", tmpdir=shared_tmp)
    folder, _, _ = svc.paths()
    svc.env["XDG_STATE_HOME"] = str(tmp_path / ("s" * 100))
    plant(folder, how, tmp_path)
    started = svc("service", "start", timeout=60)
    assert started.returncode != 0 and started.stderr.startswith("vaultmem: "), started
    assert _lines_naming(folder, started.stderr) == 1 and len(started.stderr.strip().splitlines()) == 1
    recalled = svc("recall", "Alpha", "--vault", str(small_vault), timeout=60)
    assert recalled.returncode == 0 and "Alpha" in recalled.stdout
    assert _lines_naming(folder, recalled.stderr) == 1, recalled.stderr
    status = svc("service", "status")
    assert status.returncode == 0 and str(folder) in status.stdout, status


def test_stop_never_kills_a_process_that_only_holds_the_lock(homes, runtime):
    """Even in the user's private folder, the lock's holder is signalled only when it is the
    service: here a process of the same user holding the lock file is left alone. (A short stop
    grace: the default 15 s of waiting for the holder to let go proves nothing more.)"""
    svc = homes("home", runtime=runtime)
    svc.env["VAULTMEM_STOP_GRACE"] = "1"
    folder, _, lock = svc.paths()
    folder.mkdir(mode=0o700)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, json, os, sys, time\n"
        f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.write(fd, json.dumps({'pid': os.getpid(), 'version': '0.1.0'}).encode())\n"
        "print('held', flush=True)\ntime.sleep(600)\n")], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        done = svc("service", "stop")
        assert holder.poll() is None, "a process that is not the service was killed"
        assert done.returncode != 0 and "not this user's memory service" in done.stderr, done
    finally:
        holder.kill()
        holder.wait()


def test_stop_still_ends_a_hung_service_of_its_own(running):
    """The checks above do not spare the real service: one that cannot answer (stopped) is
    recognised by the socket's peer credentials and killed. (A short stop grace, 1 s for each of
    asking, waiting and SIGTERM: the default 5 + 15 + 5 s prove nothing more.)"""
    running.env["VAULTMEM_STOP_GRACE"] = "1"
    pid = running.status()["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        done = running("service", "stop")
        assert done.returncode == 0 and f"pid {pid}" in done.stdout, done
        wait_for(
            lambda: not Path(f"/proc/{pid}").exists() or "Z" in _state(pid), what="the hung service gone"
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


# ---------------------------------------------------------------- issue 34: one key per install and user


def test_two_homes_get_two_services_and_stop_leaves_the_other(homes, runtime, small_vault):
    """One uid, one runtime folder, two HOMEs."""
    a, b = homes("home-a", runtime=runtime), homes("home-b", runtime=runtime)
    assert a("service", "start").returncode == 0
    assert b("service", "start").returncode == 0
    pid_a, pid_b = a.status().get("pid"), b.status().get("pid")
    assert pid_a and pid_b and pid_a != pid_b, "the second HOME used the first HOME's service"
    assert a("service", "stop").returncode == 0
    wait_for(lambda: not a.status()["running"], what="home A's service stopped")
    after = b.status()
    assert after["running"] and after["pid"] == pid_b, "stopping home A's service stopped home B's"
    os.kill(pid_b, 0)  # still alive
    recalled = b("recall", "Alpha", "--vault", str(small_vault))
    assert recalled.returncode == 0 and "Alpha" in recalled.stdout
    assert str(small_vault) in b.status()["vaults"]


def _other_install(tmp_path: Path) -> str:
    """The Python of another install on the same account: a second venv (another ``sys.prefix``)
    that sees this one's packages."""
    venv = tmp_path / "other-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    import site as here

    Path(site, "vaultmem_other.pth").write_text(
        f"import site; site.addsitedir({here.getsitepackages()[0]!r})\n"
    )
    return python


def test_an_older_other_install_keeps_its_own_service_and_neither_stops_the_other(homes, runtime, small_vault,
                                                                                  tmp_path):  # fmt: skip
    svc = homes("home", runtime=runtime)
    python = _other_install(tmp_path)
    older = {**svc.env, "VAULTMEM_TEST_VERSION": "0.0.9"}

    def other(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, "-m", "vaultmem", *args], capture_output=True, text=True, env=older,
                              timeout=180)  # fmt: skip

    try:
        assert other("service", "start").returncode == 0
        theirs = json.loads(other("service", "status", "--json").stdout)
        assert theirs["version"] == "0.0.9"
        recalled = svc("recall", "Alpha", "--vault", str(small_vault))  # the newer install's client
        assert recalled.returncode == 0 and "Alpha" in recalled.stdout
        mine = svc.status()
        assert mine["running"] and mine["pid"] != theirs["pid"], "one install used the other's service"
        os.kill(theirs["pid"], 0)  # the older install's service was not replaced
        assert svc("service", "stop").returncode == 0
        after = json.loads(other("service", "status", "--json").stdout)
        assert after["running"] and after["pid"] == theirs["pid"], (
            "stopping one install's service stopped the other"
        )
    finally:
        other("service", "stop")


# ---------------------------------------------------------------- issue 39 Low: the listener


def _raw(sock_path: Path, message: dict | None, timeout: float = 60) -> dict | None:
    """One request on a fresh connection (None: no connection or no answer)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(sock_path))
        s.sendall(json.dumps(message).encode() + b"\n")
        data = s.makefile("rb").readline()
        return json.loads(data) if data else None
    except OSError:
        return None
    finally:
        s.close()


def _version(svc: Svc) -> str:
    return svc.py("from vaultmem.core.version import VERSION; print(VERSION)")


@pytest.fixture
def running(homes, runtime):
    svc = homes("home", runtime=runtime)
    assert svc("service", "start").returncode == 0
    return svc


def test_eighty_concurrent_calls_are_all_served(running):
    _, sock, _ = running.paths()
    ping = {"op": "ping", "args": {}, "version": _version(running)}
    replies: list[dict | None] = [None] * 80
    gate = threading.Barrier(80)

    def call(i: int) -> None:
        gate.wait()
        replies[i] = _raw(sock, ping)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(80)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    unserved = sum(1 for r in replies if not (r and r.get("ok")))
    assert unserved == 0, f"{unserved} of 80 concurrent calls unserved"


def test_a_silent_client_is_dropped_and_early_disconnects_leave_no_traceback(homes, runtime):
    """A service whose clients have 1 s (not the default 5 s) to send their request."""
    running = homes("home", runtime=runtime)
    running.env["VAULTMEM_READ_TIMEOUT"] = "1"
    assert running("service", "start").returncode == 0
    _, sock, _ = running.paths()
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.settimeout(60)
    silent.connect(str(sock))
    try:
        assert silent.recv(1) == b"", "a client that sends nothing is never dropped"
    except TimeoutError:
        pytest.fail("a client that sends nothing holds its connection for good")
    finally:
        silent.close()
    for i in range(20):  # gone before the request, and gone before the reply
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(sock))
        if i % 2:
            s.sendall(b'{"op": "ping", "args": {}}\n')
        s.close()
    assert _raw(sock, {"op": "ping", "args": {}, "version": _version(running)})["ok"]
    assert "Traceback" not in running.log(), running.log()[-2000:]


def _connect_soon(sock_path: Path) -> socket.socket:
    """A connection that says nothing, retried for up to 0.2 s while the backlog is full."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    for _ in range(40):
        try:
            s.connect(str(sock_path))
            break
        except BlockingIOError:
            time.sleep(0.005)
        except OSError:
            break
    return s


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_many_idle_connections_under_a_low_file_limit_neither_spin_nor_lock_out(homes, runtime):
    """A service whose clients have 1 s (not the default 5 s) to send their request: the silent
    ones still fill every slot through the CPU window below, and time out in a fifth of the time."""
    svc = homes("home", runtime=runtime)
    svc.env["VAULTMEM_READ_TIMEOUT"] = "1"

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    log = svc.home / "run.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*CLI, "service", "run", "--idle-exit", "60"], env=svc.env, preexec_fn=low_limit,
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    idle: list[socket.socket] = []
    try:
        _, sock, _ = svc.paths()
        wait_for(lambda: svc.status().get("ready"), timeout=120, what="the service ready")
        for _ in range(300):  # clients that connect and say nothing (more than the file limit allows)
            idle.append(_connect_soon(sock))
        time.sleep(1)
        before, began = _cpu_seconds(proc.pid), time.monotonic()
        time.sleep(3)
        share = (_cpu_seconds(proc.pid) - before) / (time.monotonic() - began)
        assert share < 0.5, f"the service spins at {share:.0%} CPU with idle connections open"
        ping = {"op": "ping", "args": {}, "version": _version(svc)}
        reply = _raw(sock, ping, timeout=120)  # waits its turn while the silent ones time out
        assert reply and reply["ok"], "a client is refused while idle connections are open"
        for s in idle:
            s.close()
        idle.clear()
        reply = _raw(sock, ping, timeout=60)
        assert reply and reply["ok"] and reply["result"]["pid"] == proc.pid
        assert "Traceback" not in log.read_text(), log.read_text()[-2000:]
    finally:
        for s in idle:
            s.close()
        proc.terminate()
        proc.wait(timeout=60)


def test_open_refuses_what_is_not_a_vault_list(running, small_vault, tmp_path):
    _, sock, _ = running.paths()
    version = _version(running)
    plain = tmp_path / "plain"
    plain.mkdir()
    reply = _raw(sock, {"op": "open", "args": {"roots": [str(plain)]}, "version": version})
    assert reply and not reply["ok"] and "not a vault" in reply["error"], reply
    assert not (plain / ".vaultmem").exists(), "a folder that is no vault was opened as one"
    reply = _raw(sock, {"op": "open", "args": {"roots": "qq"}, "version": version})
    assert reply and not reply["ok"] and reply["code"] == 2 and "list" in reply["error"], reply
    for bad in ({"op": "recall", "args": ["q"]}, {"op": ["ping"], "args": {}}, ["ping"]):
        reply = _raw(sock, {**bad, "version": version} if isinstance(bad, dict) else bad)
        assert reply and not reply["ok"] and reply["code"] == 2, (bad, reply)
    reply = _raw(sock, {"op": "open", "args": {"roots": [str(small_vault)]}, "version": version})
    assert reply and reply["ok"] and reply["result"] == [str(small_vault.resolve())], reply
