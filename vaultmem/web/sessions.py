"""Browser sessions of the web view: what its login cookie holds instead of the access token.

Browsers send a cookie for 127.0.0.1 to every port there, so the cookie must be worth little
elsewhere: it holds a random session id that only this web view process knows (kept in memory,
never written), named for the view's port (``vaultmem_session_8770``, so two views never share
or overwrite each other's), HttpOnly and SameSite=Strict. A session ends ``ttl`` seconds after
its login, when the server stops, or when the web token is replaced (``serve --new-token``): it
is valid only under the token it was opened with.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core import auth

COOKIE_PREFIX = "vaultmem_session_"
SESSION_TTL = 12 * 3600  # seconds a browser stays logged in after it used its login link


def cookie_name(port: int) -> str:
    return f"{COOKIE_PREFIX}{port}"


def port_of(scope: auth.Scope) -> int:
    """The port the request came in on (the ASGI ``server`` of the listening socket)."""
    server = scope.get("server") or (None, 0)
    return int(server[1] or 0)


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


class Sessions:
    """Session ids of one web view, each with its expiry and the token it was opened under."""

    def __init__(self, ttl: float = SESSION_TTL, clock: Callable[[], float] = time.monotonic):
        self.ttl, self.clock = ttl, clock
        self._open: dict[bytes, tuple[float, bytes]] = {}  # sha256(id) -> (expiry, sha256(token))
        self._lock = threading.Lock()

    def open(self, token: str) -> str:
        """A new session id, valid for ``ttl`` seconds while the token stays ``token``."""
        sid = secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock:
            self._open = {k: v for k, v in self._open.items() if v[0] > now}  # forget the expired
            self._open[_digest(sid)] = (now + self.ttl, _digest(token))
        return sid

    def valid(self, sid: str | None, token: str) -> bool:
        if not sid:
            return False
        with self._lock:
            found = self._open.get(_digest(sid))
        return (
            found is not None and found[0] > self.clock() and secrets.compare_digest(found[1], _digest(token))
        )

    def set_cookie(self, sid: str, port: int) -> bytes:
        """The ``Set-Cookie`` value for ``sid`` on the view at ``port``."""
        return (f"{cookie_name(port)}={sid}; Max-Age={int(self.ttl)}; HttpOnly; SameSite=Strict; "
                "Path=/").encode()  # fmt: skip

    def of(self, scope: auth.Scope) -> str | None:
        """The session id a request carries for this view's port."""
        return auth.cookie(scope.get("headers", []), cookie_name(port_of(scope)))

    def allows(self, scope: auth.Scope, expected: auth.Expected) -> bool:
        return self.valid(self.of(scope), auth.expected_now(expected))


class WebGate(auth.TokenGate):
    """The token gate of the web view: the bearer token, or a live session of this view."""

    def __init__(self, app: Any, expected: auth.Expected, sessions: Sessions):
        super().__init__(app, expected)
        self.sessions = sessions

    def allows(self, scope: auth.Scope) -> bool:
        return super().allows(scope) or self.sessions.allows(scope, self.expected)
