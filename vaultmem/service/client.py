"""Talking to the memory service over a unix socket (light: stdlib only).

The per-user service (``vaultmem watch`` is the same service in the foreground) listens on
``service-KEY.sock`` in the user's private runtime folder (``runtime_dir``), KEY a short hash of
what tells this user's homes and installs apart (``service_key``): two HOMEs or two installs on
one account each have their own service and never use or stop the other's. The operations and
their wire form are declared in ``protocol``.

Trust: the client talks only to a socket in a folder owned by this user with mode 0700 that is
no symlink (nobody else can have created it there), and only to a server running as this user
(``peer_uid``: SO_PEERCRED, LOCAL_PEERCRED or getpeereid). Anything else is treated as "no
watcher" (with a one-line warning on stderr, once per process). A runtime folder another user
created first is replaced by a spare one in the user's state folder (``runtime_dir``).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
from collections.abc import Callable
from pathlib import Path

from ..core import environment
from ..core.errors import VaultError
from ..core.version import VERSION as __version__

MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes on Linux
LONGEST_NAME = 20  # a folder this much under MAX_SOCKET_PATH still fits "/service-<12 hex>.sock" in 107 bytes
_WARNED: set[str] = set()


class NoAnswer(VaultError):
    """The service runs but did not answer within the caller's time (a hook stays silent)."""


def service_key() -> str:
    """12 hex digits naming this user's service of this home and install: a hash of HOME,
    vaultmem's config folder, this package's folder and the Python environment running it
    (``sys.prefix``: a venv; not the interpreter's name, which may be python or python3).
    ``VAULTMEM_SERVICE_KEY`` (up to 12 letters, digits or dashes) names one on purpose: the
    tests share one service among test homes with it."""
    import hashlib
    import re

    chosen = environment.VAULTMEM_SERVICE_KEY.get() or ""
    if re.fullmatch(r"[0-9A-Za-z-]{1,12}", chosen):
        return chosen

    from ..core.registry import home

    package = Path(__file__).resolve().parent.parent
    parts = (str(environment.home()), str(home()), str(package), sys.prefix)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def runtime_dir() -> Path:
    """This user's private runtime folder: ``$XDG_RUNTIME_DIR/vaultmem-UID``, else the temp
    folder's (also when the runtime folder's path is too long for a socket in it). When that
    folder exists but is not this user's private folder (another user created it first), a
    spare one in the user's state folder replaces it, for good (``spare_dir``)."""
    shared = _shared_runtime_dir()
    spare = spare_dir()
    if spare is None:
        return shared
    if os.path.lexists(spare):
        return spare if private_folder_problem(spare) is None else shared
    problem = os.path.lexists(shared) and private_folder_problem(shared)
    if not problem:
        return shared
    try:
        spare.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        spare.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return shared
    if private_folder_problem(spare) is not None:
        return shared
    warn_once(f"not using {shared} ({problem}); the memory service uses {spare} instead", str(shared))
    return spare


def spare_dir() -> Path | None:
    """The spare runtime folder: ``run`` in vaultmem's state folder (``$XDG_STATE_HOME/vaultmem``,
    else ``~/.local/state/vaultmem``; ``~/Library/Logs/vaultmem`` on macOS); None when its path is
    too long for a socket."""
    if sys.platform == "darwin":
        state = environment.home() / "Library" / "Logs" / "vaultmem"
    else:
        state = environment.state_home() / "vaultmem"
    folder = state / f"run-{os.getuid()}"
    return folder if len(os.fsencode(str(folder))) + LONGEST_NAME <= MAX_SOCKET_PATH else None


def _shared_runtime_dir() -> Path:
    """``$XDG_RUNTIME_DIR/vaultmem-UID``, else the temp folder's."""
    for base in (environment.XDG_RUNTIME_DIR.get(), None):
        if base is None:  # asked only here: tempfile costs ~5 ms of every client call
            base = environment.temp_dir()
        if base:
            folder = Path(base) / f"vaultmem-{os.getuid()}"
            if len(os.fsencode(str(folder))) + LONGEST_NAME <= MAX_SOCKET_PATH:
                return folder
    return Path("/tmp") / f"vaultmem-{os.getuid()}"


def service_socket() -> Path:
    """Where this user's memory service of this home and install listens."""
    return runtime_dir() / f"service-{service_key()}.sock"


def runtime_problem() -> str | None:
    """Why the runtime folder cannot be used (None when it is private or not there yet: then
    whoever needs it creates it)."""
    folder = runtime_dir()
    if not os.path.lexists(folder):
        return None
    return private_folder_problem(folder)


def private_folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot hold this user's socket (None when it can): it must be a real
    folder (no symlink) owned by this user that nobody else can enter (mode 0700)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return f"{folder} does not exist"
    if stat.S_ISLNK(st.st_mode):
        return f"{folder} is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    if st.st_uid != os.getuid():
        return f"{folder} is owned by uid {st.st_uid}, not by you"
    if st.st_mode & 0o077:
        return f"{folder} is open to other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


UNKNOWN_PEER = -1  # no way to ask on this system: never this user, so the peer is not trusted
SOL_LOCAL, LOCAL_PEERCRED = 0, 1  # macOS <sys/un.h>: struct xucred {u_int version; uid_t uid; ...}


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a unix socket: ``SO_PEERCRED`` (Linux),
    ``LOCAL_PEERCRED`` (macOS), ``getpeereid`` (the BSDs, macOS); ``UNKNOWN_PEER`` where none
    answers (the peer is then not trusted, and everything runs in the calling process)."""
    for way in (_so_peercred, _local_peercred, _getpeereid):
        try:
            uid = way(sock)
        except (OSError, AttributeError, ValueError, struct.error):
            uid = None
        if uid is not None:
            return uid
    return UNKNOWN_PEER


def _so_peercred(sock: socket.socket) -> int | None:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _local_peercred(sock: socket.socket) -> int | None:
    if sys.platform != "darwin":
        return None
    creds = sock.getsockopt(SOL_LOCAL, LOCAL_PEERCRED, struct.calcsize("IIh16I") + 8)
    version, uid = struct.unpack_from("II", creds)
    return uid if version == 0 else None  # XUCRED_VERSION


def _getpeereid(sock: socket.socket) -> int | None:
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fn = getattr(libc, "getpeereid", None)
    if fn is None:  # glibc has none (Linux answers SO_PEERCRED)
        return None
    uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
    if fn(sock.fileno(), ctypes.byref(uid), ctypes.byref(gid)) != 0:
        return None
    return uid.value


def peer_credentials(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a unix socket (both from SO_PEERCRED on
    Linux; elsewhere the pid is ``UNKNOWN_PEER``): for a listening server, the process that called
    ``listen``."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is not None:
        try:
            creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
            pid, uid, _ = struct.unpack("3i", creds)
            return pid, uid
        except OSError:
            pass
    return UNKNOWN_PEER, peer_uid(sock)  # elsewhere the pid is not known: nothing is signalled by it


def service_peer(timeout: float = 2.0) -> tuple[int, int] | None:
    """(pid, uid) of the process listening on the service socket; None when none listens there
    or the folder is not private."""
    path = service_socket()
    if not os.path.lexists(path) or private_folder_problem(path.parent):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        return peer_credentials(sock)
    except OSError:
        return None
    finally:
        sock.close()


def warn_once(message: str, about: str | None = None) -> None:
    """One line on stderr, once per process for each message (or each thing it is ``about``)."""
    key = about or message
    if key not in _WARNED:
        _WARNED.add(key)
        print(f"vaultmem: warning: {message}", file=sys.stderr)


def _warn(message: str, about: str | None = None) -> None:
    warn_once(f"{message}; not using it", about)


def _reply(sock: socket.socket, on_progress: Callable[[dict], None] | None) -> bytes:
    """The reply line, after the progress lines of a streaming operation (each handed on)."""
    buf = b""
    while True:
        line, sep, rest = buf.partition(b"\n")
        if sep:
            if on_progress is not None and line.startswith(b'{"progress"'):
                on_progress(json.loads(line)["progress"])
                buf = rest
                continue
            return line
        chunk = sock.recv(1 << 16)
        if not chunk:
            return buf
        buf += chunk


def call(op: str, args: dict | None = None, timeout: float = 600.0,
         on_progress: Callable[[dict], None] | None = None) -> dict | None:  # fmt: skip
    """Send one request to the memory service; None when none (trusted) answers. The request
    carries this client's version: a service of another version refuses it (``code`` "version").
    ``on_progress``: the operation streams progress events before its reply (``timeout`` is
    then the longest silence between two lines)."""
    message = {
        "op": op,
        "args": args or {},
        "version": __version__,
        **({"stream": True} if on_progress else {}),
    }
    return send(service_socket(), message, timeout, on_progress)


def send(path: Path, message: dict, timeout: float,
         on_progress: Callable[[dict], None] | None = None) -> dict | None:  # fmt: skip
    """One JSON request on a unix socket and its reply (progress lines before it, each handed to
    ``on_progress``); None when no trusted server answers."""
    if not os.path.lexists(path):
        return None
    problem = private_folder_problem(path.parent)
    if problem:
        _warn(f"the socket {path}: {problem}", str(path.parent))
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        uid = peer_uid(sock)
        if uid != os.getuid():
            _warn(f"cannot tell which user runs the process serving {path} (this system answers neither "
                  "SO_PEERCRED nor getpeereid)" if uid == UNKNOWN_PEER else
                  f"the process serving {path} runs as uid {uid}, not as you")  # fmt: skip
            return None
        sock.sendall(json.dumps(message).encode() + b"\n")
        data = _reply(sock, on_progress)
    except TimeoutError:  # it runs but did not answer: asking again (or elsewhere) could do the work twice
        raise NoAnswer(f"no answer from {path} within {timeout:g} s") from None
    except OSError:  # nobody listens, or the server went away mid-request (killed): no answer
        return None
    finally:
        sock.close()
    try:
        return json.loads(data)
    except ValueError:
        return None
