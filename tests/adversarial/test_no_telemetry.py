"""A real recall contacts nobody and writes nothing outside the vault, the cache and the config folders.

onnxruntime >= 1.29 starts Microsoft's 1DS telemetry while its native module is imported (a device id and
an event queue under ~/.cache/Microsoft/DeveloperTools/.onnxruntime, a session file $TMPDIR/.ses, uploads
to mobile.events.data.microsoft.com about 9 s later) unless ORT_DISABLE_TELEMETRY is set before that
import. It also switches itself off when CI=true (or another CI variable) is set, which is how CI runs
this suite: so these tests run vaultmem in a user's environment, with the CI variables removed.
Research: the onnxruntime source (telemetry_1ds.cc, telemetry_environment.h) and its Privacy.md.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# onnxruntime's own off-switches (telemetry_environment.h): a test that kept any of them would pass
# whether or not vaultmem sets ORT_DISABLE_TELEMETRY itself
ORT_SWITCHES = ("CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "JENKINS_URL",
                "CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR", "BITBUCKET_BUILD_NUMBER",
                "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI", "ORT_RUNNING_UNIT_TESTS", "ORT_DISABLE_TELEMETRY")  # fmt: skip
VAULTMEM = [sys.executable, "-m", "vaultmem"]
LINGER = float(os.environ.get("VAULTMEM_TELEMETRY_LINGER", "0"))  # >= 12 also sees the upload attempt itself


def user_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment: a fresh HOME and TMPDIR, no XDG folders, no CI or onnxruntime switch."""
    env = {k: v for k, v in os.environ.items() if k not in ORT_SWITCHES and not k.startswith("XDG_")}
    env.pop("HF_HUB_OFFLINE", None)  # vaultmem sets what it needs itself
    for name in ("home", "tmp"):
        (tmp_path / name).mkdir()
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"), PYTHONDONTWRITEBYTECODE="1")
    return env


def make_vault(tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "vault"
    subprocess.run([*VAULTMEM, "init", str(root)], env=env, check=True, capture_output=True, timeout=60)
    for i, title in enumerate(("Alpha", "Beta", "Gamma")):
        (root / f"{title}.md").write_text(
            f"---\nid: note{i}aa\ntitle: {title}\n---\n# {title}\n\nText {i}.\n"
        )
    return root


def recall_cmd(vault: Path) -> list[str]:
    if not LINGER:
        return [*VAULTMEM, "recall", "alpha", "--vault", str(vault), "--mode", "vector", "-k", "1"]
    code = ("import time\nfrom vaultmem.index.embed import FastEmbedder, DEFAULT_MODEL\n"
            f"FastEmbedder(DEFAULT_MODEL).embed(['alpha']); time.sleep({LINGER})")  # fmt: skip
    return [sys.executable, "-c", code]


@pytest.mark.model  # a vaultmem subprocess loads the real embedding model
def test_recall_leaves_no_onnxruntime_telemetry_files(tmp_path):
    env = user_env(tmp_path)
    out = subprocess.run(
        recall_cmd(make_vault(tmp_path, env)), env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "home" / ".cache" / "Microsoft").exists()  # deviceid, onnxruntime.db (event queue)
    assert not (tmp_path / "tmp" / ".ses").exists()  # the 1DS SDK's session file


# strace -y prints each fd with what it is: 3</path> or 3<socket:[123]>
WRITE = re.compile(r'(?:openat|open|creat)\((?:AT_FDCWD|\d+)(?:<([^>]*)>)?, "([^"]+)", ([A-Z_|]+)[^=]*= \d')
MADE = re.compile(r'(?:mkdir|mkdirat|rename|renameat2?|link|linkat|symlink|symlinkat)\(.*"([^"]+)"[^"]*= 0$')
CONNECT = re.compile(r'connect\(\d+(?:<[^>]*>)?, \{sa_family=(AF_\w+)(?:, sun_path="([^"]*)")?')
TRACED = "connect,sendto,sendmsg,sendmmsg,openat,open,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat"


def _require_strace() -> None:
    if not shutil.which("strace"):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("the network test must run in CI: strace is missing (.ci/run installs it)")
        pytest.skip("needs strace (apt-get install strace)")


def traced_effects(log: Path, vault: Path) -> tuple[list[str], set[str]]:
    """(socket calls other than the vault's own unix socket, paths written or created) of an strace log."""
    sockets, written = [], set()
    for line in log.read_text().splitlines():
        if m := CONNECT.search(line):
            if m.group(1) != "AF_UNIX" or not (m.group(2) or "").startswith(
                str(vault)
            ):  # the watcher's socket
                sockets.append(line)
        elif re.search(r"send(?:to|msg|mmsg)\(.*sin6?_port", line):
            sockets.append(line)
        elif (m := WRITE.search(line)) and re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND", m.group(3)):
            written.add(m.group(2) if m.group(2).startswith("/") else f"{m.group(1)}/{m.group(2)}")
        elif m := MADE.search(line):
            written.add(m.group(1))
    return sockets, written


@pytest.mark.model
def test_recall_opens_no_network_socket_and_writes_only_its_own_folders(tmp_path):
    _require_strace()
    env = user_env(tmp_path)
    vault = make_vault(tmp_path, env)
    log = tmp_path / "strace.log"
    cmd = ["strace", "-f", "-y", "-qq", "-e", f"trace={TRACED}", "-o", str(log), *recall_cmd(vault)]
    if os.geteuid() == 0 and shutil.which("unshare"):
        cmd = ["unshare", "--net", *cmd]  # no network at all in here: a regression cannot reach anyone
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    home = tmp_path / "home"
    cache = os.environ.get("VAULTMEM_CACHE") or str(home / ".cache" / "vaultmem")
    state = str(home / ".local" / "state" / "vaultmem")  # this user's own: the key that signs its indexes
    allowed = (
        str(vault),
        cache,
        str(home / ".config" / "vaultmem"),
        state,
        "/dev/null",
        "/dev/tty",
    )  # not TMPDIR
    sockets, written = traced_effects(log, vault)
    assert sockets == [], "\n".join(sockets[:10])
    made_on_the_way = {
        str(parent) for root in allowed for parent in Path(root).parents
    }  # mkdir -p of the cache
    assert sorted(p for p in written if not p.startswith(allowed) and p not in made_on_the_way) == []
