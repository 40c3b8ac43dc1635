"""`vaultmem serve`: the web view on 127.0.0.1 with uvicorn, announced by a URL carrying the token."""

from __future__ import annotations

import socket
import webbrowser
from pathlib import Path
from typing import Callable

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
        announce: Callable[[str], None] = print, embedder: Embedder | None = None) -> None:  # fmt: skip
    """Serve the vault at ``root`` until interrupted."""
    import uvicorn

    from .app import make_app
    from .state import ViewState

    sock = bind(port)
    state = ViewState(root, embedder)
    token = auth.token()
    url = f"http://{HOST}:{sock.getsockname()[1]}/?token={token}"
    announce(f"serving {root} on {url}")
    announce("the link carries your access token: do not share it; Ctrl-C stops")
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(make_app(state, token, poll), log_level="warning", lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        state.close()
