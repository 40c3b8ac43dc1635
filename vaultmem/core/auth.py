"""Who may talk to vaultmem's HTTP surfaces (the MCP HTTP server, the web view).

Anything that listens on 127.0.0.1 is reachable by every local user, so each request must carry
the user's access token: an ``Authorization: Bearer <token>`` header (agents) or the session
cookie a browser got on its first visit. The token is generated once per user, kept owner-only
(0600 in a 0700 folder) in vaultmem's config folder, and compared in constant time.
"""

from __future__ import annotations

import hmac
import os
import secrets
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any, Awaitable, Callable

from .registry import home

TOKEN_FILE = "http-token"
COOKIE = "vaultmem_session"

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


def token_path() -> Path:
    return home() / TOKEN_FILE


def token() -> str:
    """The user's access token, created (owner-only) on first use."""
    path = token_path()
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    fresh = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{TOKEN_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(fresh + "\n")
    try:
        os.link(tmp, path)  # first writer wins; a racing process reads the winner's token
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> str:
    value = path.read_text(encoding="ascii").strip()
    if not value:
        raise FileNotFoundError(path)
    return value


def matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented token with the expected one."""
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def presented(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token a request carries: a bearer header, else the session cookie."""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, rest = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer":
                return rest.strip()
    for name, value in headers:
        if name.lower() == b"cookie":
            morsel = SimpleCookie(value.decode("latin-1")).get(COOKIE)
            if morsel is not None:
                return morsel.value
    return None


class TokenGate:
    """ASGI middleware: HTTP and websocket requests without the token get 401 and nothing else."""

    def __init__(self, app: ASGIApp, expected: str):
        self.app, self.expected = app, expected

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and not matches(presented(scope.get("headers", [])), self.expected):
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
