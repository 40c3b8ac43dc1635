"""Talking to a running ``vaultmem watch`` over its unix socket (light: stdlib only).

Protocol: one JSON object per line each way; a request ``{"op": ..., "args": {...}}`` gets
``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "...", "code": N}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
from pathlib import Path

from .discovery import STATE_DIR

SOCKET_NAME = "vaultmem.sock"
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes on Linux


def socket_path(root: Path) -> Path:
    """``<vault>/.vaultmem/vaultmem.sock``, or a private runtime folder when that is too long."""
    path = root / STATE_DIR / SOCKET_NAME
    if len(os.fsencode(str(path))) <= MAX_SOCKET_PATH:
        return path
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"vaultmem-{os.getuid()}"
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return base / f"{digest}.sock"


def request(root: Path, op: str, args: dict | None = None, timeout: float = 60.0) -> dict | None:
    """Send one request to the vault's watcher; None when no watcher answers."""
    path = socket_path(root)
    if not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        sock.sendall(json.dumps({"op": op, "args": args or {}}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    except (FileNotFoundError, ConnectionRefusedError, socket.timeout, OSError):
        return None
    finally:
        sock.close()
    try:
        return json.loads(data)
    except ValueError:
        return None
