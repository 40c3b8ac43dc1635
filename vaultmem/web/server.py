"""`vaultmem serve`: the web view on 127.0.0.1 with uvicorn, announced by a one-time login link."""

from __future__ import annotations

import socket
import webbrowser
from collections.abc import Callable
from pathlib import Path

from ..core import auth
from ..index.embed import Embedder

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free one); a taken port is a clear error."""
    from ..core.errors import VaultError

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as e:
        sock.close()
        raise VaultError(f"cannot listen on {HOST}:{port} ({e.strerror}); pick another --port") from None
    sock.listen(128)
    return sock


def run(root: Path, port: int = 8770, open_browser: bool = False, poll: float = 2.0,
        announce: Callable[[str], None] = print, embedder: Embedder | None = None, new_token: bool = False) -> None:  # fmt: skip
    """Serve the vault at ``root`` until interrupted (``new_token``: replace the web view's token
    first, which logs every browser out and refuses the old token, here and in running servers)."""
    import uvicorn

    from .app import LOGIN, make_app
    from .state import ViewState

    sock = bind(port)
    if new_token:
        auth.new_token(auth.WEB_TOKEN_FILE)
        announce(
            f"new web view token in {auth.token_path(auth.WEB_TOKEN_FILE)}: the old one and its sessions are refused"
        )
    state = ViewState(root, embedder)
    logins = auth.Logins()
    url = f"http://{HOST}:{sock.getsockname()[1]}/?{LOGIN}={logins.mint()}"
    announce(f"serving {root} on {url}")
    announce("the link logs one browser in, once (do not share it); Ctrl-C stops")
    if open_browser:
        webbrowser.open(url)
    app = make_app(state, auth.TokenFile(auth.WEB_TOKEN_FILE), poll, logins)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        state.close()
