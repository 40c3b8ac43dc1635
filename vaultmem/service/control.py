"""Finding, starting and stopping the per-user memory service (light: stdlib only).

One service per user, home and install (``client.service_key``): it holds an exclusive
``flock`` on ``service-KEY.lock`` in the user's private runtime folder for its whole life (a
second one started at the same moment finds the lock taken and exits), and writes its pid and
version there.

Trust: the runtime folder must be this user's own real folder, mode 0700 (with
``XDG_RUNTIME_DIR`` unset it is in the shared temp folder, where another user could create it
first): anything else is replaced by a spare folder in the user's state folder
(``client.runtime_dir``), or, when none can be made, refused at once with one line naming it,
and calls work in their own process. A pid is signalled only when it is this user's service of this install: the process
listening on the service socket (its peer credentials), or a process of this user running
``vaultmem service run`` with the lock file open. Clients start it detached (a new
session, stdin from /dev/null, stdout and stderr appended to ``service.log`` in the user's
state folder) and never wait for it unless asked to.

Settings: ``[service]`` in the user's ``config.toml`` (next to ``registry.json``):
``enabled`` (default true) and ``idle_exit`` (seconds without a call before it exits;
default 1800, 0 = never). ``VAULTMEM_NO_SERVICE=1`` turns the service off for a process.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from ..core import environment
from ..core.errors import BadInput, VaultError
from ..core.registry import home
from ..core.version import VERSION as __version__
from . import client

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every client call imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

ENV_OFF = environment.VAULTMEM_NO_SERVICE.name
DEFAULTS: dict[str, Any] = {"enabled": True, "idle_exit": 1800}
LOG_NAME = "service.log"
LOG_KEEP = 1 << 20  # a log larger than this is moved to service.log.1 when a service starts
WAIT_READY = 60.0  # seconds a caller that waits gives a starting service to load the model
START_GRACE = 5.0  # seconds a just-spawned service has to take its lock before it counts as failed


def config_file() -> Path:
    return home() / "config.toml"


def settings() -> dict[str, Any]:
    """``[service]`` of the user's config file over the defaults (a bad value: BadInput)."""
    from ..core.config import read_toml, tell_unknown

    path = config_file()
    data = read_toml(path)
    tell_unknown(path, data, {"service": DEFAULTS})
    section = data.get("service", {})
    out = {**DEFAULTS, **(section if isinstance(section, dict) else {})}
    if not isinstance(out["enabled"], bool):
        raise BadInput(f"{path}: [service] enabled must be true or false")
    idle = out["idle_exit"]
    if isinstance(idle, bool) or not isinstance(idle, (int, float)) or idle < 0:
        raise BadInput(f"{path}: [service] idle_exit must be a number of seconds >= 0 (0: never)")
    return out


def enabled() -> bool:
    """Whether calls may go to (and start) the service: not with ``VAULTMEM_NO_SERVICE=1`` or
    ``[service] enabled = false``."""
    if environment.VAULTMEM_NO_SERVICE.get():
        return False
    return bool(settings()["enabled"])


def state_dir() -> Path:
    """The user's state folder for vaultmem (the service log): ``$XDG_STATE_HOME/vaultmem``,
    else ``~/.local/state/vaultmem``; ``~/Library/Logs/vaultmem`` on macOS."""
    if sys.platform == "darwin":
        return environment.home() / "Library" / "Logs" / "vaultmem"
    return environment.state_home() / "vaultmem"


def log_path() -> Path:
    return state_dir() / LOG_NAME


def lock_path(folder: Path | None = None) -> Path:
    return (folder or client.runtime_dir()) / f"service-{client.service_key()}.lock"


class FolderBlocked(VaultError):
    """The runtime folder is not this user's private folder: no service can run there."""


def blocked_message(problem: str) -> str:
    return f"cannot use the memory service's folder: {problem}; remove it or set XDG_RUNTIME_DIR"


def check_folder() -> None:
    """FolderBlocked (one line naming the folder) when the runtime folder exists but is not this
    user's private folder."""
    problem = client.runtime_problem()
    if problem:
        raise FolderBlocked(blocked_message(problem))


def private_runtime_dir() -> Path:
    """The runtime folder, created 0700; refused unless it is a real folder of this user's
    that nobody else can enter."""
    folder = client.runtime_dir()
    try:
        folder.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    problem = client.private_folder_problem(folder)
    if problem:
        raise FolderBlocked(blocked_message(problem))
    client.record_runtime_dir(folder)  # for the hooks an agent starts without XDG_RUNTIME_DIR
    return folder


def holder(folder: Path | None = None) -> dict[str, Any] | None:
    """The running service's pid and version from its lock file in the runtime folder (or in
    ``folder``); None when nobody holds it, or when the folder or the file is not this user's own."""
    import fcntl

    if client.runtime_problem() if folder is None else client.private_folder_problem(folder):
        return None
    path = lock_path(folder)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_uid != os.getuid():
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: read what its holder wrote
            data = os.pread(fd, 4096, 0)
            try:
                found = json.loads(data)
            except ValueError:  # it is being written right now
                found = {}
            return found if isinstance(found, dict) else {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def ping(timeout: float = 5.0) -> dict[str, Any] | None:
    """The running service's ping answer (pid, version, ready, vaults), None when none answers."""
    try:
        reply = client.call("ping", timeout=timeout)
    except VaultError:  # it runs but is too busy to say so: as good as not answering yet
        return None
    return reply.get("result") if reply and reply.get("ok") else None


def version_key(version: str) -> tuple:
    """A version as comparable parts ("0.10.1" > "0.9")."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in version.replace("-", ".").split("."))


def outdated(service_version: str) -> bool:
    """Whether this client is newer than a service of ``service_version`` (it then replaces it;
    an older client never stops a newer service)."""
    return version_key(__version__) > version_key(str(service_version))


def replace_older(info: dict[str, Any] | None) -> dict[str, Any] | None:
    """The client's one version check: a running service (its ping answer) of an older version
    than this client is stopped (None is returned: start this one's); a newer one, of another
    install, is left alone and kept (its calls then refuse this client, which works in its own
    process). Every client path asks here (``ensure``, ``vaultmem watch``)."""
    if info is not None and outdated(info.get("version", "0")):
        stop()
        return None
    return info


def spawn(reap: bool = True) -> int:
    """Start a service detached from this process (its own session, no terminal, output to the
    log file); returns its pid. The new service exits at once if another holds the lock.
    ``reap``: a thread waits for it (a long-lived caller leaves no zombie; not at exit)."""
    import subprocess
    import threading

    log = log_path()
    log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        if log.stat().st_size > LOG_KEEP:
            os.replace(log, log.with_name(LOG_NAME + ".1"))
    except FileNotFoundError:
        pass
    with open(log, "ab") as out:
        os.chmod(log, 0o600)
        proc = subprocess.Popen([sys.executable, "-m", "vaultmem", "service", "run"], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
                                cwd="/")  # fmt: skip
    if reap:
        threading.Thread(target=proc.wait, daemon=True).start()
    return proc.pid


def ensure(wait: bool, say: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """The service's ping answer, starting a service when none runs (or replacing one of an older
    version). ``wait``: until it is ready (model loaded, up to WAIT_READY s), saying so once
    through ``say``; else return at once (None when it is not answering yet): the service is then
    started when this process exits, so its start-up does not compete with the answer this
    process gives meanwhile (on two cores it would nearly double that answer's time)."""
    problem = client.runtime_problem()
    if problem:  # at once, once per process; the caller works without the service
        client.warn_once(blocked_message(problem), str(client.runtime_dir()))
        return None
    info = replace_older(ping())
    if info is None and holder() is None:
        if not wait:
            _spawn_at_exit()
            return None
        spawn()
    if not wait:
        return info
    deadline, said, spawned_at = time.monotonic() + WAIT_READY, False, time.monotonic()
    while time.monotonic() < deadline:
        info = ping()
        if info is not None and info.get("ready"):
            return info
        if info is None and holder() is None and time.monotonic() - spawned_at > START_GRACE:
            return None  # it did not start (see the log)
        if say is not None and not said:
            say("starting the memory service (loading the model; later calls are fast)")
            said = True
        time.sleep(0.05)
    return ping()


def _spawn_at_exit() -> None:
    import atexit

    global _AT_EXIT
    if not _AT_EXIT:
        _AT_EXIT = True
        atexit.register(spawn, reap=False)


_AT_EXIT = False


def stop(timeout: float | None = None) -> int | None:
    """Ask the running service to exit and wait until it has; the pid stopped (None: none ran).
    One that does not exit in ``timeout`` seconds (default: VAULTMEM_STOP_GRACE, else 15; each
    step's wait at most 5 s) is sent SIGTERM, then SIGKILL, but only when
    it is this user's service of this install (``is_service``). A service of this user and
    install that a process with another environment started in another runtime folder (an
    agent's hook without ``XDG_RUNTIME_DIR``) is stopped too."""
    check_folder()
    timeout = timeout or environment.VAULTMEM_STOP_GRACE.get() or 15.0
    stopped = None
    for folder in client.candidate_dirs():
        pid = _stop_in(folder, timeout)
        stopped = stopped or pid
    return stopped


def _stop_in(folder: Path, timeout: float) -> int | None:
    import signal

    held = holder(folder)
    if held is None:
        return None
    pid = held.get("pid")
    step = min(5.0, timeout)
    try:
        client.send(
            folder / client.service_socket().name, {"op": "stop", "args": {}, "version": __version__}, step
        )
    except VaultError:  # too busy to answer: the signals below
        pass
    deadline = time.monotonic() + timeout
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            _signal(pid, sig, folder)
        while time.monotonic() < deadline:
            if holder(folder) is None:
                return pid
            time.sleep(0.05)
        deadline = time.monotonic() + step
    raise VaultError(f"the memory service (pid {pid}) did not stop")


def _signal(pid: Any, sig: int, folder: Path | None = None) -> None:
    """Send ``sig`` to the lock holder ``pid`` once it is shown to be this user's service."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1 or not is_service(pid, folder):
        raise VaultError(f"{lock_path(folder)} names pid {pid}, which is not this user's memory service; "
                         "not signalling it")  # fmt: skip
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def is_service(pid: int, folder: Path | None = None) -> bool:
    """Whether ``pid`` is this user's memory service of this install: the process listening on
    the service socket (peer credentials), or (Linux, a service still starting) a process of
    this user whose command line is ``vaultmem service run`` and that has the lock file open."""
    if client.service_peer(folder=folder) == (pid, os.getuid()):
        return True
    proc = Path(f"/proc/{pid}")
    try:
        if proc.stat().st_uid != os.getuid():
            return False
        argv = [a.decode(errors="replace") for a in (proc / "cmdline").read_bytes().split(b"\0")]
        if not _service_command(argv):
            return False
        lock = os.path.realpath(lock_path(folder))
        return any(os.path.realpath(fd.path) == lock for fd in os.scandir(proc / "fd"))
    except OSError:
        return False


def _service_command(argv: list[str]) -> bool:
    """``... vaultmem service run ...`` (the console script or ``python -m vaultmem``)."""
    for i, arg in enumerate(argv[:-2]):
        if Path(arg).name == "vaultmem" and argv[i + 1 : i + 3] == ["service", "run"]:
            return True
    return False
