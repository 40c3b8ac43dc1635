"""Escapes: nothing vaultmem writes or follows leaves the vault; its state is owner-only.

Tests run as root here, so "another user" is simulated with uid 65534 (nobody): a folder is
chown'ed to it (root still sees the owner change), and a fake watcher binds its socket as root
then setuid()s to it before listen(), so SO_PEERCRED reports 65534. Both need root (skipped
otherwise).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from .adversarial_helpers import run

pytestmark = pytest.mark.integration  # the CLI in subprocesses


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_delete_refuses_a_trash_symlinked_out_of_the_vault(small_vault, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (small_vault / ".trash").symlink_to(outside)
    result = run("delete", "note0aa", "--force", "--vault", str(small_vault))
    assert (
        result.returncode != 0
        and result.stderr.startswith("vaultmem: ")
        and "outside the vault" in result.stderr
    )
    assert list(outside.iterdir()) == [] and (small_vault / "Alpha.md").exists()


def test_delete_refuses_a_trash_subfolder_symlinked_out(small_vault, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (small_vault / "sub").mkdir()
    (small_vault / "sub" / "Delta.md").write_text("---\nid: delta111\ntitle: Delta\n---\nDelta.\n")
    (small_vault / ".trash").mkdir()
    (small_vault / ".trash" / "sub").symlink_to(outside)
    result = run("delete", "delta111", "--force", "--vault", str(small_vault))
    assert result.returncode != 0 and "outside the vault" in result.stderr
    assert list(outside.iterdir()) == [] and (small_vault / "sub" / "Delta.md").exists()


def test_delete_into_a_real_trash_still_works(small_vault):
    result = run("delete", "note0aa", "--force", "--vault", str(small_vault))
    assert result.returncode == 0, result.stderr
    assert (small_vault / ".trash" / "Alpha.md").exists() and not (small_vault / "Alpha.md").exists()


def test_state_folder_and_its_files_are_owner_only(tmp_path):
    root = tmp_path / "v"
    assert run("init", str(root)).returncode == 0
    (root / "Note.md").write_text("---\ntitle: Note\n---\nSome text.\n")
    assert run("index", "--vault", str(root)).returncode == 0
    assert run("recall", "text", "--vault", str(root)).returncode == 0  # logs the query's retrievals
    assert (root / ".vaultmem-usage" / "usage.db").is_file()
    for state in (root / ".vaultmem", root / ".vaultmem-usage"):
        assert _mode(state) == 0o700
        for path in state.rglob("*"):
            if path.is_dir():
                assert _mode(path) == 0o700, path
            elif path.name.startswith(("usage.db", "manifest.db")):
                assert _mode(path) == 0o600, path


def test_an_existing_open_state_folder_is_tightened(small_vault):
    os.chmod(small_vault / ".vaultmem", 0o755)
    assert run("index", "--vault", str(small_vault)).returncode == 0
    assert _mode(small_vault / ".vaultmem") == 0o700


def test_a_state_folder_symlinked_elsewhere_is_refused(small_vault, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (small_vault / ".vaultmem").rename(elsewhere)
    (small_vault / ".vaultmem").symlink_to(elsewhere)
    result = run("index", "--vault", str(small_vault))
    assert result.returncode != 0 and "symlink" in result.stderr and "Traceback" not in result.stderr
    assert not (elsewhere / "index").exists()


# ---------------------------------------------------------------- the watcher's socket
# "Another user" is uid 65534 (nobody): the fake server binds as root, then setuid()s to it
# before listen(), so SO_PEERCRED reports 65534; folders are chown'ed to 65534 to simulate
# a folder another user created first. Both need root (skipped otherwise).

from .adversarial_helpers import cli_env, fake_watcher  # noqa: E402

NOBODY = 65534
needs_root = pytest.mark.skipif(os.getuid() != 0, reason="simulating another user needs root")


def _long_vault(tmp_path):
    from vaultmem.core.scaffold import init_vault
    from vaultmem.service.client import MAX_SOCKET_PATH

    root = tmp_path / ("v" * (MAX_SOCKET_PATH - len(str(tmp_path)) + 5))
    init_vault(root)
    (root / "Real.md").write_text(
        "---\nid: real0001\ntitle: Real note\n---\nThe real answer about caching.\n"
    )
    return root


def _planted_runtime_folder(tmp_path, socket_tmp, mode: int):
    """A long-path vault, a CLI environment without XDG_RUNTIME_DIR, and the shared-temp
    folder its socket would go to, created first by another user (uid 65534) with ``mode``
    (the temp and state folders short enough for a socket, whatever the basetemp's length:
    else the socket would go to the machine-wide /tmp/vaultmem-UID, and no spare would fit)."""
    from vaultmem.service.client import LONGEST_NAME

    root = _long_vault(tmp_path)
    short = socket_tmp(len(f"/state/vaultmem/run-{os.getuid()}") + LONGEST_NAME)
    tmp = short / "tmp"
    tmp.mkdir(mode=0o777)
    env = cli_env(TMPDIR=str(tmp), XDG_STATE_HOME=str(short / "state"))
    env.pop("XDG_RUNTIME_DIR", None)
    planted = tmp / f"vaultmem-{os.getuid()}"  # where the socket goes without XDG_RUNTIME_DIR
    planted.mkdir(mode=mode)
    planted.chmod(mode)
    os.chown(planted, NOBODY, NOBODY)
    return root, env, planted


@needs_root
def test_recall_ignores_a_socket_folder_another_user_created_first(tmp_path, socket_tmp):
    root, env, planted = _planted_runtime_folder(tmp_path, socket_tmp, 0o777)
    from vaultmem.service.client import service_socket

    env.pop("VAULTMEM_NO_SERVICE", None)  # the client looks for the memory service there
    sock = planted / service_socket().name
    server = fake_watcher(sock, NOBODY)
    try:
        result = run("recall", "caching", "--vault", str(root), env=env)
        assert "FAKE ANSWER" not in result.stdout, result.stdout
        assert result.returncode == 0 and "Real note" in result.stdout
        assert "owned by uid 65534" in result.stderr
    finally:
        server.kill()
        server.wait()
        run("service", "stop", env=env)  # the one the client started in the spare folder (was left running)


@needs_root
def test_recall_ignores_a_server_running_as_another_user(small_vault):
    from vaultmem.service.client import service_socket
    from vaultmem.service.control import private_runtime_dir

    sock = private_runtime_dir() / service_socket().name
    server = fake_watcher(sock, NOBODY)
    env = cli_env()
    env.pop("VAULTMEM_NO_SERVICE", None)  # the client asks the memory service's socket
    try:
        result = run("recall", "Alpha", "--vault", str(small_vault), env=env)
        assert "FAKE ANSWER" not in result.stdout and "runs as uid 65534" in result.stderr, result
    finally:
        server.kill()
        server.wait()
        run("service", "stop", env=env)  # the one the client started instead


@needs_root
def test_watch_never_serves_from_a_folder_it_does_not_own(tmp_path, socket_tmp):
    """It serves from the spare folder in the user's state folder instead (issue 39 High 3)."""
    from .adversarial_helpers import start, wait_for

    root, env, planted = _planted_runtime_folder(tmp_path, socket_tmp, 0o700)
    (root / ".vaultmem.toml").write_text('[embedding]\nmodel = "none"\n')  # BM25 only: no model
    spare = Path(env["XDG_STATE_HOME"]) / "vaultmem" / f"run-{os.getuid()}"
    proc = start("watch", "--vault", str(root), env=env)
    try:
        wait_for(lambda: list(spare.glob("*.sock")) or proc.poll() is not None, timeout=60, what="the socket")
        assert proc.poll() is None and list(spare.glob("*.sock")) and not list(planted.iterdir())
        assert _mode(spare) == 0o700
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "owned by uid 65534" in err, err


# ---------------------------------------------------------------- the MCP HTTP server
# Any local user can connect to 127.0.0.1: the access token is what tells the owner apart.


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_http(root, home, *extra):
    from helpers import wait_listening

    from .adversarial_helpers import start

    port = _free_port()
    proc = start(
        "mcp",
        "--vault",
        str(root),
        "--http",
        "--port",
        str(port),
        *extra,
        env=cli_env(VAULTMEM_HOME=str(home)),
    )
    wait_listening(port, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def _post(url: str, token: str | None):
    import json
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()  # fmt: skip
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_mcp_http_refuses_requests_without_the_access_token(small_vault, tmp_path):
    home = tmp_path / "home"
    proc, url = _serve_http(small_vault, home)
    try:
        token = (home / "http-token").read_text().strip()
        assert _mode(home / "http-token") == 0o600
        assert _post(url, None) == 401
        assert _post(url, "not-the-token") == 401
        assert _post(url, token) == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_mcp_http_without_token_only_when_asked_and_says_so(small_vault, tmp_path):
    proc, url = _serve_http(small_vault, tmp_path / "home", "--no-token")
    try:
        assert _post(url, None) == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "NO access token" in err


def test_setup_http_writes_the_token_into_an_owner_only_agent_config(small_vault, tmp_path):
    import json

    home, cfg = tmp_path / "home", tmp_path / "mcp.json"
    cfg.write_text(
        json.dumps(
            {"mcpServers": {"vaultmem": {"command": "vaultmem", "args": ["mcp"]}, "other": {"command": "x"}}}
        )
    )
    cfg.chmod(0o644)
    env = cli_env(VAULTMEM_HOME=str(home))
    result = run(
        "setup", "claude", "--http", "--write", "--config", str(cfg), "--vault", str(small_vault), env=env
    )
    assert result.returncode == 0, result.stderr
    token = (home / "http-token").read_text().strip()
    assert token in result.stdout  # printed for agents set up by hand
    servers = json.loads(cfg.read_text())["mcpServers"]
    assert servers["vaultmem"] == {
        "type": "http",
        "url": "http://127.0.0.1:8765/mcp",
        "headers": {"Authorization": f"Bearer {token}"},
    }
    assert servers["other"] == {"command": "x"} and _mode(cfg) == 0o600


def test_a_sync_never_writes_through_a_symlink_in_the_vault(empty_vault, tmp_path):
    """Bringing a pulled note into the files writes a regular file: a symlink at the note's path
    (e.g. planted by a hostile remote earlier) is replaced, and its target outside is untouched."""
    from vaultmem.sync import worktree
    from vaultmem.sync.git import Git, init_git

    init_git(empty_vault)
    git = Git(empty_vault)
    (empty_vault / "Link.md").write_text("base\n", encoding="utf-8")
    git.run("add", "Link.md")
    git.run("commit", "-qm", "base")
    old = git.text("rev-parse", "HEAD")
    (empty_vault / "Link.md").write_text("base\nmerged text\n", encoding="utf-8")
    git.run("commit", "-qam", "new")
    new = git.text("rev-parse", "HEAD")
    outside = tmp_path / "outside.md"
    outside.write_text("not the vault's\n", encoding="utf-8")
    (empty_vault / "Link.md").unlink()
    (empty_vault / "Link.md").symlink_to(outside)
    worktree.move(git, empty_vault, old, new)
    assert outside.read_text(encoding="utf-8") == "not the vault's\n"
    assert not (empty_vault / "Link.md").is_symlink()
    assert (empty_vault / "Link.md").read_text(encoding="utf-8") == "base\nmerged text\n"


def test_a_vault_folder_init_makes_is_owner_only(tmp_path):
    """`vaultmem init NEW` makes NEW 0700 whatever the umask; an existing folder keeps its mode."""
    import stat

    from typer.testing import CliRunner

    from vaultmem.cli.app import app

    assert CliRunner().invoke(app, ["init", str(tmp_path / "new")]).exit_code == 0
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    (tmp_path / "mine").mkdir(mode=0o755)
    (tmp_path / "mine").chmod(0o755)
    assert CliRunner().invoke(app, ["init", str(tmp_path / "mine")]).exit_code == 0
    assert stat.S_IMODE((tmp_path / "mine").stat().st_mode) == 0o755
