"""Talking to the memory service over a unix socket (light: stdlib only).

The per-user service (``vaultmem watch`` is the same service in the foreground) listens on
``service.sock`` in the user's private runtime folder (``runtime_dir``). The operations and
their wire form are declared in ``protocol``.

Trust: the client talks only to a socket in a folder owned by this user with mode 0700
(nobody else can have created it there), and only to a server running as this user
(``SO_PEERCRED``). Anything else is treated as "no watcher" (with a warning on stderr).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
from pathlib import Path

from ..core.errors import VaultError
from ..core.version import VERSION as __version__

SERVICE_SOCKET = "service.sock"
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes on Linux


def runtime_dir() -> Path:
    """This user's private runtime folder: ``$XDG_RUNTIME_DIR/vaultmem-UID``, else the temp
    folder's (also when the runtime folder's path is too long for a socket in it)."""
    for base in (os.environ.get("XDG_RUNTIME_DIR"), None):
        if base is None:  # here, not at the top: tempfile costs ~5 ms of every client call
            import tempfile

            base = tempfile.gettempdir()
        if base:
            folder = Path(base) / f"vaultmem-{os.getuid()}"
            if len(os.fsencode(str(folder))) + 20 <= MAX_SOCKET_PATH:
                return folder
    return Path("/tmp") / f"vaultmem-{os.getuid()}"


def service_socket() -> Path:
    """Where the per-user memory service listens."""
    return runtime_dir() / SERVICE_SOCKET


def private_folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot hold this user's socket (None when it can): it must be a real
    folder (no symlink) owned by this user that nobody else can enter (mode 0700)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return f"{folder} does not exist"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    if st.st_uid != os.getuid():
        return f"{folder} is owned by uid {st.st_uid}, not by you"
    if st.st_mode & 0o077:
        return f"{folder} is open to other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a unix socket (SO_PEERCRED; Linux)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _warn(message: str) -> None:
    print(f"vaultmem: warning: {message}; not using it", file=sys.stderr)


def call(op: str, args: dict | None = None, timeout: float = 600.0) -> dict | None:
    """Send one request to the memory service; None when none (trusted) answers. The request
    carries this client's version: a service of another version refuses it (``code`` "version")."""
    return send(service_socket(), {"op": op, "args": args or {}, "version": __version__}, timeout)


def send(path: Path, message: dict, timeout: float) -> dict | None:
    """One JSON request on a unix socket and its reply; None when no trusted server answers."""
    if not os.path.lexists(path):
        return None
    problem = private_folder_problem(path.parent)
    if problem:
        _warn(f"the socket {path}: {problem}")
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        if peer_uid(sock) != os.getuid():
            _warn(f"the process serving {path} runs as uid {peer_uid(sock)}, not as you")
            return None
        sock.sendall(json.dumps(message).encode() + b"\n")
        parts: list[bytes] = []
        while not parts or not parts[-1].endswith(b"\n"):
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            parts.append(chunk)
        data = b"".join(parts)
    except TimeoutError:  # it runs but did not answer: asking again (or elsewhere) could do the work twice
        raise VaultError(f"no answer from {path} within {timeout:g} s") from None
    except OSError:  # nobody listens, or the server went away mid-request (killed): no answer
        return None
    finally:
        sock.close()
    try:
        return json.loads(data)
    except ValueError:
        return None
