"""This install's key for vouching for what its vaultmem wrote into a vault's state folders: the
index files (``index.ownfiles``), the manifest, undo batches, the provenance record, the session
anchors (``seal``/``unseal``: a JSON record with its signature).

32 random bytes in the user's state folder (``$XDG_STATE_HOME/vaultmem/index.key``, else
``~/.local/state/vaultmem``; ``~/Library/Application Support/vaultmem`` on macOS), created on
first use, owner-only (0600). It never enters a vault, so a record in ``.vaultmem/`` or
``.vaultmem-usage/`` that a teammate, another local user, a pulled commit or a copied folder
brings cannot carry a valid signature: it is never read as this user's. ``key_id`` names this
install's own files where two installs (two HOMEs) share a vault, so neither sets the other's aside.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

from . import environment
from .errors import VaultError

KEY_NAME = "index.key"
KEY_BYTES = 32
_cache: dict[Path, bytes] = {}


def key_path() -> Path:
    if sys.platform == "darwin":
        base = environment.home() / "Library" / "Application Support"
    else:
        base = environment.state_home()
    return base / "vaultmem" / KEY_NAME


def _read(path: Path) -> bytes | None:
    """The key at ``path``, or None when there is none; refused unless it is this user's own
    regular file (a symlink is not followed); tightened to 0600 when it is open to others."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise VaultError(f"{path}: vaultmem's key cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise VaultError(f"{path}: not a file of this user's; remove it (vaultmem makes a new key)")
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise VaultError(f"{path}: not a vaultmem key; remove it (vaultmem makes a new key)")
    return data


def _create(path: Path) -> None:
    """Write a new key, unless another process made one first (hard link: never replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{KEY_NAME}.{os.getpid()}.{threading.get_ident()}.tmp")  # one per thread too
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, os.urandom(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def key() -> bytes:
    """This user's key (created on first use)."""
    path = key_path()
    if path not in _cache:
        found = _read(path)
        if found is None:
            _create(path)
            found = _read(path)
        assert found is not None
        _cache[path] = found
    return _cache[path]


def sign(data: bytes) -> str:
    """HMAC-SHA256 of ``data`` under this user's key, as hex."""
    return hmac.new(key(), data, hashlib.sha256).hexdigest()


def signed(data: bytes, mac: object) -> bool:
    """Whether ``mac`` is this user's signature of ``data``."""
    return isinstance(mac, str) and hmac.compare_digest(sign(data), mac)


def key_id() -> str:
    """A short name of this install's key (not a secret: it names files, never vouches)."""
    return hashlib.sha256(b"vaultmem key id\0" + key()).hexdigest()[:12]


def _canonical(kind: str, data: Any) -> bytes:
    return (
        kind.encode()
        + b"\0"
        + json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    )


def seal(kind: str, data: Any, **json_args: Any) -> str:
    """``data`` (plain JSON) as a record signed by this install for the purpose ``kind`` (a
    record of one kind is never accepted as another's)."""
    return json.dumps({"v": 1, "kind": kind, "data": data, "mac": sign(_canonical(kind, data))}, **json_args)


def unseal(kind: str, text: str | bytes) -> Any:
    """The data of a record ``seal(kind, ...)`` wrote with this install's key, else None (not
    JSON, another kind, unsigned, signed by another key, or changed since)."""
    try:
        record = json.loads(text)
        if not isinstance(record, dict) or record.get("v") != 1 or record.get("kind") != kind:
            return None
        data = record.get("data")
        return data if signed(_canonical(kind, data), record.get("mac")) else None
    except (ValueError, RecursionError, TypeError):
        return None


def sealed_file(kind: str, path: Path, limit: int = 64 << 20) -> Any:
    """``unseal`` of a file: None when it is missing, not a regular file of this user's (a
    symlink is not followed), larger than ``limit``, or not sealed by this install."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return unseal(kind, f.read())
    except OSError:
        return None
    finally:
        os.close(fd)
