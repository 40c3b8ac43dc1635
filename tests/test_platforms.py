"""Every platform-specific call has a fallback, each tested here by simulating the call missing
(issue 38): the socket peer's uid (SO_PEERCRED on Linux; LOCAL_PEERCRED or getpeereid on macOS
and the BSDs; neither: the peer is not trusted), the launchd agent (plistlib, any path), the
atomic swap (renameat2, Linux only: os.replace elsewhere)."""

from __future__ import annotations

import ctypes
import errno
import os
import plistlib
import shlex
import socket
import struct
import threading
from pathlib import Path

import pytest

from vaultmem.core import renameat
from vaultmem.core import store as storemod
from vaultmem.service import client


def test_peer_uid_reads_so_peercred_where_there_is_one():
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert client.peer_uid(a) == os.getuid()


def test_without_so_peercred_and_getpeereid_the_peer_is_not_trusted(monkeypatch, tmp_path, capsys):
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)  # macOS and the BSDs have none
    monkeypatch.setattr(client, "_getpeereid", lambda sock: None)  # nor this system
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert client.peer_uid(a) == client.UNKNOWN_PEER != os.getuid()
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    path = folder / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            if conn.recv(1 << 16):  # the waker below sends nothing
                conn.sendall(b'{"ok": true, "result": "FAKE"}\n')

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        assert client.send(path, {"op": "ping", "args": {}}, 5) is None  # never talks to it
    finally:  # wake the accept before closing the socket under it (was: EBADF in the thread)
        with socket.socket(socket.AF_UNIX) as waker:
            waker.connect(str(path))
        thread.join(timeout=30)
        server.close()
    assert "cannot tell which user runs the process serving" in capsys.readouterr().err


def test_getpeereid_answers_where_the_c_library_has_it(monkeypatch):
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)

    class Libc:
        @staticmethod
        def getpeereid(fd, uid, gid):
            ctypes.cast(uid, ctypes.POINTER(ctypes.c_uint32)).contents.value = 501
            return 0

    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: Libc())
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert client.peer_uid(a) == 501


def test_local_peercred_is_read_on_macos(monkeypatch):
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
    monkeypatch.setattr(client.sys, "platform", "darwin")
    xucred = struct.pack("IIh", 0, 502, 1) + bytes(80)

    class Sock:
        def getsockopt(self, level, option, size):
            assert (level, option) == (client.SOL_LOCAL, client.LOCAL_PEERCRED)
            return xucred[:size]

    assert client.peer_uid(Sock()) == 502  # type: ignore[arg-type]


def test_the_launchd_agent_is_a_plist_for_any_path(monkeypatch, tmp_path):
    from vaultmem.cli import service

    home = tmp_path / "Jo & <Sam>'s home"
    monkeypatch.setenv("HOME", str(home))
    exe = str(tmp_path / "my tools & more" / "vaultmem")
    monkeypatch.setattr(service.shutil, "which", lambda name: exe)
    path, text, then = service.unit_file("darwin")
    agent = plistlib.loads(text.encode())  # was: '&' and '<' unescaped, and the path split at spaces
    assert agent["ProgramArguments"] == [exe, "service", "run", "--idle-exit", "0"]
    assert agent["RunAtLoad"] is True and agent["Label"] == service.AGENT_LABEL
    assert path == home / "Library" / "LaunchAgents" / f"{service.AGENT_LABEL}.plist"
    assert shlex.split(then) == ["launchctl", "load", str(path)]
    _, unit, _ = service.unit_file("linux")
    start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    assert shlex.split(start.removeprefix("ExecStart=")) == [exe, "service", "run", "--idle-exit", "0"]


def test_without_renameat2_a_guarded_rewrite_falls_back_to_replace(monkeypatch, tmp_path):
    monkeypatch.setattr(renameat, "_FN", [None])  # another OS, or no renameat2 in its C library
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    assert renameat.exchange(tmp_path / "a", tmp_path / "b") is False
    store = storemod.Store(tmp_path)
    store.create("Note.md", "# Note\n\nold\n")
    old, new = store.update("Note.md", lambda text: text.replace("old", "new"))
    assert (tmp_path / "Note.md").read_text() == new == "# Note\n\nnew\n" != old


@pytest.mark.parametrize("code", [errno.ENOSYS, errno.EINVAL, errno.EXDEV, errno.EOPNOTSUPP])
def test_a_file_system_without_the_exchange_says_so_and_the_caller_falls_back(monkeypatch, tmp_path, code):
    def refuses(*args):
        ctypes.set_errno(code)
        return -1

    monkeypatch.setattr(renameat, "_FN", [refuses])
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    assert renameat.exchange(tmp_path / "a", tmp_path / "b") is False
    assert Path(tmp_path / "a").read_text() == "a"
