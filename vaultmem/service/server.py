"""The memory service's unix socket: one request per connection, dispatched through the one
table of operations (``protocol.OPS``) with one version check.

A unix domain socket, mode 0600 in a folder only the owner can enter, and the peer's uid
checked (``SO_PEERCRED``), so only the user can ask. Requests are served on threads; each
handler enters the vault it works on itself (reader or writer side, as its operation declares).

Listener limits: a backlog of ``BACKLOG`` waiting connections; at most ``max_connections()``
served at once (the rest wait in the backlog, so the server never runs out of file
descriptors); a client has ``READ_TIMEOUT`` seconds to send its request line; a client that
goes away early is logged in one line, without a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import environment
from ..core.errors import INTERNAL, BadInput, VaultError, internal_error, os_message
from ..core.version import VERSION as __version__
from .client import peer_uid, private_folder_problem, send
from .protocol import MAX_REQUEST, OPS

Handler = Callable[[dict], Any]
BACKLOG = 256  # connections waiting to be accepted (the kernel caps it at somaxconn)
READ_TIMEOUT = 5.0  # seconds a client has to send its request (and to take its reply)
log = logging.getLogger("vaultmem.service")


def max_connections() -> int:
    """Connections served at once: 64, fewer under a low open-files limit (a quarter of it)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 64 if soft == resource.RLIM_INFINITY else max(4, min(64, soft // 4))


class VersionMismatch(VaultError):
    """A client of another vaultmem version asked (the reply names this server's version)."""


def read_timeout() -> float:
    """READ_TIMEOUT, or VAULTMEM_READ_TIMEOUT's seconds (tests)."""
    return environment.VAULTMEM_READ_TIMEOUT.get() or READ_TIMEOUT


class _RequestHandler(socketserver.StreamRequestHandler):
    timeout = READ_TIMEOUT  # a server's own subclass takes read_timeout()

    def handle(self) -> None:
        if not peer_is_owner(self.request):
            return
        line = self.rfile.readline(MAX_REQUEST)
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
            op, args, version = req["op"], req.get("args"), req.get("version")
            emit = self._progress if req.get("stream") is True else None
        except (ValueError, KeyError, TypeError) as e:
            reply: dict[str, Any] = {"ok": False, "error": f"bad request: {e}", "code": 2}
        else:
            reply = self._answer(op, args, version, emit)
        try:
            data = json.dumps(reply, ensure_ascii=False).encode()
        except (TypeError, ValueError, UnicodeEncodeError) as e:  # nothing a client could read
            data = json.dumps({"ok": False, "error": internal_error(e), "code": INTERNAL}).encode()
        self.wfile.write(data + b"\n")

    def _answer(
        self, op: Any, args: Any, version: Any, emit: Callable[[dict], None] | None
    ) -> dict[str, Any]:
        """The reply to one request: what the handler returned, or its failure as the client
        shows it (the same line and exit code as the failure in the client's own process)."""
        try:
            return {"ok": True, "result": self.server.dispatch(op, args, version, emit)}  # type: ignore[attr-defined]
        except VersionMismatch as e:
            return {"ok": False, "error": str(e), "code": "version", "version": __version__}
        except VaultError as e:  # a refusal the client acts on ("unserved") names itself
            return {"ok": False, "error": str(e), "code": getattr(e, "code", None) or e.exit_code}
        except OSError as e:  # a read-only vault, a full disk: as a command in its own process says it
            return {"ok": False, "error": os_message(e), "code": 1}
        except Exception as e:  # a bug: keep serving; report it as the client's entry point does
            log.exception("%s failed", op)
            return {"ok": False, "error": internal_error(e), "code": INTERNAL}

    def _progress(self, event: dict) -> None:
        """One progress line of a streaming operation, before its reply."""
        self.wfile.write(json.dumps({"progress": event}).encode() + b"\n")
        self.wfile.flush()


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Threads per connection, at most ``max_connections()`` at once; quiet about clients that
    go away or stall."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, path: str, handler: type[socketserver.BaseRequestHandler]):
        self.slots = threading.BoundedSemaphore(max_connections())
        super().__init__(path, handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        if not self.slots.acquire(timeout=0.2):  # all busy: the connection waits in the backlog
            raise OSError("all connections busy")
        try:
            return super().get_request()
        except OSError:  # e.g. out of file descriptors: back off instead of spinning
            self.slots.release()
            time.sleep(0.1)
            raise

    def shutdown_request(self, request: Any) -> None:
        try:
            super().shutdown_request(request)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):  # the client went away or stalled: nothing to repair
            log.debug("a client connection ended early: %s", type(error).__name__)
            return
        super().handle_error(request, client_address)


class SocketServer:
    """Serves the declared operations (``handlers``: one per name of ``protocol.OPS``) on
    ``path``. A request from a client of another version is refused (except the operations
    declared ``any_version``) so the client can replace an outdated server."""

    def __init__(self, path: Path, handlers: dict[str, Handler]):
        missing = set(OPS) ^ set(handlers)
        if missing:
            raise ValueError(f"handlers and declared operations differ: {sorted(missing)}")
        self.path = path
        self.handlers = handlers
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def dispatch(self, name: str, args: Any, version: str | None = None,
                 emit: Callable[[dict], None] | None = None) -> Any:  # fmt: skip
        """The operation's result; ``emit`` takes the progress events of an operation declared
        ``stream`` (a client that did not ask for them gets none)."""
        op = OPS.get(name) if isinstance(name, str) else None
        if op is None:
            raise BadInput(f"unknown request {name!r}")
        if version != __version__ and not op.any_version:
            raise VersionMismatch(f"this memory service runs vaultmem {__version__}, the client {version}")
        return self.handlers[name](op.bind(args or {}, emit))

    def start(self) -> None:
        """Bind (removing a stale socket left by a dead server) and serve in a thread."""
        self._private_folder()
        if self.path.exists() or self.path.is_symlink():
            if send(self.path, {"op": "ping", "args": {}, "version": __version__}, timeout=2) is not None:
                raise VaultError(f"another process already serves {self.path}")
            self.path.unlink()
        old = os.umask(0o177)
        try:
            handler = type("_TimedHandler", (_RequestHandler,), {"timeout": read_timeout()})
            server = _Server(str(self.path), handler)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        server.dispatch = self.dispatch  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="vaultmem-socket", daemon=True)
        self._thread.start()

    def _private_folder(self) -> None:
        """The socket's folder: created 0700; refused unless it is ours and private."""
        folder = self.path.parent
        try:
            folder.mkdir(mode=0o700, parents=True)
        except FileExistsError:
            pass
        problem = private_folder_problem(folder)
        if problem:
            raise VaultError(f"cannot serve the socket: {problem}; remove it or set XDG_RUNTIME_DIR")

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def peer_is_owner(sock: socket.socket) -> bool:
    """Whether the connected peer runs as this user (SO_PEERCRED; Linux)."""
    return peer_uid(sock) == os.getuid()
