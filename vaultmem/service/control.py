"""Finding, starting and stopping the per-user memory service (light: stdlib only).

One service per user: it holds an exclusive ``flock`` on ``service.lock`` in the user's private
runtime folder for its whole life (a second one started at the same moment finds the lock
taken and exits), and writes its pid and version there. Clients start it detached (a new
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

from ..core.errors import BadInput, VaultError
from ..core.registry import home
from ..core.version import VERSION as __version__
from . import client

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every client call imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

ENV_OFF = "VAULTMEM_NO_SERVICE"
DEFAULTS: dict[str, Any] = {"enabled": True, "idle_exit": 1800}
LOCK_NAME, LOG_NAME = "service.lock", "service.log"
LOG_KEEP = 1 << 20  # a log larger than this is moved to service.log.1 when a service starts
WAIT_READY = 60.0  # seconds a caller that waits gives a starting service to load the model
START_GRACE = 5.0  # seconds a just-spawned service has to take its lock before it counts as failed


def config_file() -> Path:
    return home() / "config.toml"


def settings() -> dict[str, Any]:
    """``[service]`` of the user's config file over the defaults (a bad value: BadInput)."""
    path = config_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return dict(DEFAULTS)
    except OSError as e:
        raise VaultError(f"{path}: {e.strerror}") from None
    import tomllib

    try:
        section = tomllib.loads(text).get("service", {})
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"{path}: {e}") from None
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
    if os.environ.get(ENV_OFF, "").strip() not in ("", "0"):
        return False
    return bool(settings()["enabled"])


def state_dir() -> Path:
    """The user's state folder for vaultmem (the service log): ``$XDG_STATE_HOME/vaultmem``,
    else ``~/.local/state/vaultmem``; ``~/Library/Logs/vaultmem`` on macOS."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Logs" / "vaultmem"
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "vaultmem"


def log_path() -> Path:
    return state_dir() / LOG_NAME


def lock_path() -> Path:
    return client.runtime_dir() / LOCK_NAME


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
        raise VaultError(f"cannot use the service folder: {problem}; remove it or set XDG_RUNTIME_DIR")
    return folder


def holder() -> dict[str, Any] | None:
    """The running service's pid and version from its lock file (None when nobody holds it)."""
    import fcntl

    path = lock_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
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
    info = ping()
    if info is not None and outdated(info.get("version", "0")):
        stop()
        info = None
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


def stop(timeout: float = 15.0) -> int | None:
    """Ask the running service to exit and wait until it has; the pid stopped (None: none ran).
    One that does not exit in ``timeout`` seconds is sent SIGTERM, then SIGKILL."""
    import signal

    held = holder()
    if held is None:
        return None
    pid = held.get("pid")
    try:
        client.call("stop", timeout=5)
    except VaultError:  # too busy to answer: the signals below
        pass
    deadline = time.monotonic() + timeout
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None and isinstance(pid, int):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        while time.monotonic() < deadline:
            if holder() is None:
                return pid
            time.sleep(0.05)
        deadline = time.monotonic() + 5
    raise VaultError(f"the memory service (pid {pid}) did not stop")
