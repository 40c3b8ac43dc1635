"""Who may talk to vaultmem's HTTP surfaces (the MCP HTTP server, the web view).

Anything that listens on 127.0.0.1 is reachable by every local user, so each request must carry
the user's access token in an ``Authorization: Bearer <token>`` header (agents), or (the web
view) a browser session cookie, which is not the token (``vaultmem.web.sessions``). Each surface
has its own token (``http-token`` for MCP over HTTP, ``web-token`` for the web view), generated
once per user, kept owner-only (0600 in a 0700 folder) in vaultmem's config folder, compared in
constant time, and replaced by ``new_token``. A browser logs in with a one-time code
(``Logins``), so the address it keeps in its history opens nothing.
"""

from __future__ import annotations

import hmac
import os
import secrets
import threading
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from .registry import home

TOKEN_FILE = "http-token"  # MCP over HTTP
WEB_TOKEN_FILE = "web-token"  # the web view (`vaultmem serve`)

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


def token_path(name: str = TOKEN_FILE) -> Path:
    return home() / name


def token(name: str = TOKEN_FILE) -> str:
    """The user's access token ``name``, created (owner-only) on first use."""
    return _token_at(token_path(name))


def _token_at(path: Path) -> str:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    tmp = _write_fresh(path)
    try:
        os.link(tmp, path)  # first writer wins; a racing process reads the winner's token
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read(path)


def new_token(name: str = TOKEN_FILE) -> str:
    """Replace the token ``name`` with a fresh one: whatever carried the old one is refused."""
    path = token_path(name)
    os.replace(_write_fresh(path), path)
    return _read(path)


def _write_fresh(path: Path) -> Path:
    """A fresh random token in an owner-only file beside ``path`` (the caller links or renames it)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_urlsafe(32) + "\n")
    return tmp


class TokenFile:
    """The token ``name`` as its file says now: re-read when the file changes, so a token
    replaced by another process (``vaultmem serve --new-token``) stops working here too."""

    def __init__(self, name: str):
        self.path = token_path(name)  # fixed now: the folder is the user's, whatever changes later
        self._seen: tuple[int, int] | None = None
        self._value = _token_at(self.path)
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            try:
                st = self.path.stat()
                seen = (st.st_ino, st.st_mtime_ns)
                if seen != self._seen:
                    self._value, self._seen = _read(self.path), seen
            except FileNotFoundError:
                self._value, self._seen = _token_at(self.path), None
            return self._value


class Logins:
    """One-time login codes for a browser: each opens one session, then is spent."""

    def __init__(self) -> None:
        self._codes: set[str] = set()
        self._lock = threading.Lock()

    def mint(self) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes.add(code)
        return code

    def spend(self, given: str) -> bool:
        """True once for a code ``mint`` gave (constant-time comparison), False ever after."""
        with self._lock:
            hit = next((c for c in self._codes if matches(given, c)), None)
            self._codes.discard(hit)  # type: ignore[arg-type]
            return hit is not None


def _read(path: Path) -> str:
    value = path.read_text(encoding="ascii").strip()
    if not value:
        raise FileNotFoundError(path)
    return value


def matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented token with the expected one."""
    return given is not None and given != "" and hmac.compare_digest(given.encode(), expected.encode())


def presented(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token a request carries in its bearer header (a cookie never carries the token)."""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, rest = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer":
                return rest.strip()
    return None


def cookie(headers: list[tuple[bytes, bytes]], name: str) -> str | None:
    """The value of the cookie ``name`` a request carries (None without one)."""
    for key, value in headers:
        if key.lower() == b"cookie":
            try:
                morsel = SimpleCookie(value.decode("latin-1")).get(name)
            except Exception:  # a malformed Cookie header carries no session
                continue
            if morsel is not None:
                return morsel.value
    return None


Expected = str | Callable[[], str]  # the token, or what says it now (a ``TokenFile``)


def expected_now(expected: Expected) -> str:
    return expected if isinstance(expected, str) else expected()


def allowed(scope: Scope, expected: Expected) -> bool:
    """Whether the request ``scope`` carries the expected token."""
    return matches(presented(scope.get("headers", [])), expected_now(expected))


class TokenGate:
    """ASGI middleware: HTTP and websocket requests without the token get 401 and nothing else."""

    def __init__(self, app: ASGIApp, expected: Expected):
        self.app, self.expected = app, expected

    def allows(self, scope: Scope) -> bool:
        return allowed(scope, self.expected)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and not self.allows(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            body = b"vaultmem: missing or wrong access token\n"
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer"),
                                    (b"content-length", str(len(body)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)
