"""A headless-browser harness for the web view (tests and benchmarks/web_graph.py): Debian's
Chromium driven by selenium through its chromedriver at an explicit path (nothing downloaded),
and the web app served by uvicorn in a thread on a free 127.0.0.1 port."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900")  # fmt: skip


def missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} not found (apt-get install -y chromium chromium-driver)"
    return None


def open_browser(log_dir: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument("--user-data-dir=" + tempfile.mkdtemp(dir=log_dir))
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


class Server:
    """The web view's app served by uvicorn in a thread on a free 127.0.0.1 port."""

    def __init__(self, root: Path, embedder, poll: float = 0.3):
        import uvicorn

        from vaultmem.core import auth
        from vaultmem.web.app import make_app
        from vaultmem.web.server import bind
        from vaultmem.web.state import ViewState

        self.state = ViewState(root, embedder)
        self.token = auth.token(auth.WEB_TOKEN_FILE)
        self.logins = auth.Logins()
        self.sock = bind(0)
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        app = make_app(self.state, auth.TokenFile(auth.WEB_TOKEN_FILE), poll, self.logins)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.time() + 30
        while not self.server.started and time.time() < deadline:
            time.sleep(0.05)

    def login_url(self, path: str = "/") -> str:
        """A one-time link that logs a browser in (as the one `vaultmem serve` prints)."""
        return f"{self.base}{path}{'&' if '?' in path else '?'}login={self.logins.mint()}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.state.close()


class OtherSite:
    """Another web server on another 127.0.0.1 port (a page that frames the view, a host of
    remote images): serves ``pages`` (path -> (content type, bytes)) and counts every request."""

    def __init__(self, pages: dict[str, tuple[str, bytes]]):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        site = self
        self.hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits.append(self.path)
                kind, body = pages.get(self.path.split("?")[0], ("text/plain", b"nothing here"))
                self.send_response(200 if self.path.split("?")[0] in pages else 404)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
