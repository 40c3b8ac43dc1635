"""A fake model server on 127.0.0.1 that speaks each agent's provider API.

Every conversation goes the same way (``providers.Script``; by default: the first answer to a
conversation with tools is one tool call, ``ls`` in the project, every later answer plain text). Each request body is kept
(``FakeModel.requests``) so a test can assert what the model was sent."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agents_e2e import providers

REPLY = "The webhook handler is idempotent on the Stripe event id. Done."


@dataclass
class Request:
    """One call the agent made: its path, body (parsed JSON or None) and arrival time."""

    method: str
    path: str
    body: Any
    at: float
    headers: dict[str, str] = field(default_factory=dict)


class FakeModel:
    """The server: ``with FakeModel() as fm: fm.url ...``; ``fm.requests`` after the run."""

    def __init__(self, script: providers.Script = providers.DEFAULT) -> None:
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"model": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        commands = tuple(c.replace("{url}", self.url) for c in script.commands)  # its own /fix.sh
        self.script = providers.Script(commands, script.text)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, req: Request) -> None:
        with self._lock:
            self.requests.append(req)

    def bodies(self, path_part: str) -> list[Any]:
        """The JSON bodies of the requests whose path contains ``path_part``."""
        with self._lock:
            return [r.body for r in self.requests if path_part in r.path and r.body is not None]


class _Handler(BaseHTTPRequestHandler):
    model: FakeModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = _read_chunked(self.rfile)
        if self.headers.get("Content-Encoding", "").lower() == "zstd":
            return {"_undecoded": "zstd", "_size": len(raw)}
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _handle(self) -> None:
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH") else None
        self.model.record(
            Request(
                self.command, self.path, body, time.time(), {k.lower(): v for k, v in self.headers.items()}
            )
        )
        try:
            status, ctype, chunks = providers.answer(self.command, self.path, body, self.model.script)
        except Exception as e:  # a shape the fake does not know: a clear error, not a dropped socket
            status, ctype, chunks = 500, "application/json", [json.dumps({"error": {"message": repr(e)}})]
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if ctype.startswith("text/event-stream"):
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in chunks:
                data = chunk.encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            data = "".join(chunks).encode()
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


def _read_chunked(stream: Any) -> bytes:
    out = b""
    while True:
        size = int(stream.readline().strip().split(b";")[0] or b"0", 16)
        if size == 0:
            stream.readline()
            return out
        out += stream.read(size)
        stream.readline()
