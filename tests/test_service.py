"""The memory service end to end: the real CLI in subprocesses, a private HOME and runtime folder,
the small hash embedder in every process (``service_site/sitecustomize.py``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import HashEmbedder, environ, wait_for, write

pytestmark = pytest.mark.integration  # the CLI in subprocesses

HERE = Path(__file__).resolve().parent
EXE = shutil.which("vaultmem", path=str(Path(sys.executable).parent))
SITE = HERE / "service_site"
QUERY = "how do we lease jobs with advisory locks?"


class Cli:
    """Runs `vaultmem` with the service turned on, in this test's private home."""

    def __init__(self, home: Path, model_log: Path):
        self.env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_NO_SERVICE"}
        self.env["PYTHONPATH"] = os.pathsep.join([str(SITE), str(HERE.parent)])
        self.env["VAULTMEM_TEST_MODEL_DELAY"] = "0"
        self.env["VAULTMEM_TEST_MODEL_LOG"] = str(model_log)
        self.home, self.model_log = home, model_log
        self.thread: Any = None

    def serve_here(self) -> int:
        """Start the real memory service in a thread of this test (``service_thread``: the same
        handlers, watchers and socket as `vaultmem service run`, no process) where this home's
        clients find it; its pid (this process's)."""
        from service_thread import ServiceThread

        from vaultmem.service import client

        with environ({k: v for k, v in self.env.items() if k != "VAULTMEM_NO_SERVICE"}):
            self.thread = ServiceThread(client.runtime_dir(), HashEmbedder())
        return os.getpid()

    def __call__(self, *args: str, input: str | None = None, env: dict | None = None, timeout: float = 120,
                 check: bool = True) -> subprocess.CompletedProcess:  # fmt: skip
        done = subprocess.run([EXE, *args], input=input, capture_output=True, text=True, timeout=timeout,
                              env={**self.env, **(env or {})})  # fmt: skip
        if check:
            assert done.returncode == 0, done.stderr
        return done

    def status(self) -> dict:
        return json.loads(self("service", "status", "--json").stdout)

    def holder(self) -> dict | None:
        """The lock holder (pid, version) as a client of this home sees it (asked in this process,
        in the clients' environment: it reads the lock file)."""
        from vaultmem.service import control

        with environ(self.env):
            return control.holder()

    def log(self) -> str:
        path = Path(self.env["XDG_STATE_HOME"]) / "vaultmem" / "service.log"
        return path.read_text() if path.exists() else ""

    def loaders(self) -> list[int]:
        """Pids of the processes that loaded the (fake) model."""
        return [int(x) for x in self.model_log.read_text().split()] if self.model_log.exists() else []


@pytest.fixture
def cli(tmp_path):
    c = Cli(Path(os.environ["HOME"]), tmp_path / "model-loads")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "vaultmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[service]\nidle_exit = 30\n")  # a late starter the teardown missed does not linger
    yield c
    from vaultmem.core.errors import VaultError
    from vaultmem.service import control

    with environ(c.env):  # `vaultmem service stop`, in this process
        try:
            control.stop(timeout=60)
        except VaultError:
            pass
        held = control.holder()
    if c.thread is not None:
        c.thread.stop()
    elif held and held.get("pid"):  # a test that failed half-way: never leave a process behind
        os.kill(held["pid"], signal.SIGKILL)


@pytest.fixture
def vault(demo_copy, cli):
    """The demo copy, indexed as `vaultmem index` indexes it without the service (in this
    process, with the hash embedder every process of these tests uses: no model load counted)."""
    from typer.testing import CliRunner

    from vaultmem.cli.app import app

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("vaultmem.vault.make_embedder", lambda *a, **k: HashEmbedder())
        done = CliRunner().invoke(app, ["index", "--vault", str(demo_copy)])
    assert done.exit_code == 0, done.output
    return demo_copy


def hook_payload(cwd: Path, session: str = "s1") -> str:
    return json.dumps({"prompt": QUERY, "session_id": session, "cwd": str(cwd)})


def context(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


# ---------------------------------------------------------------- starting on first use


def test_the_first_recall_starts_the_service_and_every_later_call_uses_it(cli, vault):
    first = cli("recall", QUERY, "--vault", str(vault), "-k", "3")
    assert "starting the memory service" in first.stderr and "advisory locks" in first.stdout.lower()
    info = cli.status()
    assert info["running"] and info["ready"] and info["vaults"] == [str(vault.resolve())]
    assert os.getsid(info["pid"]) == info["pid"] != os.getsid(0)  # detached: a session of its own
    again = cli("recall", QUERY, "--vault", str(vault), "-k", "3")
    assert again.stderr == "" and again.stdout == first.stdout
    made = cli("remember", "fact", "Quokkas guard the harbour", "Every quokka in the harbour has a job.",
               "--vault", str(vault))  # fmt: skip
    assert "facts/Quokkas guard the harbour.md" in made.stdout
    cli("edit", "Quokkas guard the harbour", "--add-tag", "quokka", "--vault", str(vault))
    wake = cli("wake", "--vault", str(vault), "--budget", "300")
    assert wake.stdout.startswith("[MEMORY ")
    assert cli.status()["calls"] >= 5
    assert cli.loaders() == [info["pid"]]  # only the service loaded the model
    found = cli("recall", "quokka harbour job", "--vault", str(vault), "--json")
    assert json.loads(found.stdout)["results"][0]["title"] == "Quokkas guard the harbour"
    status = cli("status", "--vault", str(vault)).stdout
    assert f"memory service: running, pid {info['pid']}" in status and "log: " in status
    assert "memory service" in cli.log() and "serving" in cli.log()


def test_the_readmes_first_recall_on_a_never_opened_folder_goes_through_the_service(cli, demo_copy):
    """Before: a fresh clone's `vaultmem recall ... --vault vaults/demo` (no .vaultmem/ yet) started
    the service, which refused the folder ("no vault at ...", exit 2); in process it is a vault."""
    assert not (demo_copy / ".vaultmem").exists()
    first = cli("recall", QUERY, "--vault", str(demo_copy), "-k", "3", check=False)
    assert first.returncode == 0, first.stderr
    assert "advisory locks" in first.stdout.lower()
    assert cli.status()["vaults"] == [str(demo_copy.resolve())]
    assert cli("recall", QUERY, "--vault", str(demo_copy / "nope"), check=False).returncode != 0


def test_session_hooks_sleep_and_checkpoint_write_through_the_service(service_thread, demo_copy, monkeypatch):
    """On the in-process service (``service_thread``): no process is started, and nothing here
    can load a model (the test's guard refuses it), so every call went to the service."""
    import io

    from vaultmem import api
    from vaultmem.agents import hook_io

    data = HERE / "data" / "hooks"
    for hook, name in (("start", "session_start.json"), ("end", "session_end.json")):
        payload = (data / name).read_text().replace("TRANSCRIPT", str(data / "coding_session.jsonl"))
        monkeypatch.setattr("sys.stdin", io.StringIO(payload))
        done = hook_io.HOOKS[hook](
            str(demo_copy), **({"as_json": True, "wait": True} if hook == "end" else {})
        )
    assert "The refund test for JPY bookings fails" in (demo_copy / done["summary"]["path"]).read_text()
    from typer.testing import CliRunner

    from vaultmem.cli.hooks import hook_app

    payload = (
        (data / "pre_compact.json").read_text().replace("TRANSCRIPT", str(data / "coding_session.jsonl"))
    )
    compacted = CliRunner().invoke(hook_app, ["pre-compact", "--vault", str(demo_copy)], input=payload)
    assert compacted.exit_code == 0, compacted.output
    with api.Session([str(demo_copy)]) as session:
        session.checkpoint("otters counted on pier 4")
        slept = session.sleep("Counted otters.", "count herons")
        assert session.backend == api.SERVICE
    assert (demo_copy / slept["handoff"]["path"]).exists()
    assert service_thread.service.calls >= 5


def hook_logged(vault: Path) -> list[str]:
    import sqlite3

    db = sqlite3.connect(str(vault / ".vaultmem-usage" / "usage.db"))
    try:
        return sorted(r[0] for r in db.execute("SELECT key FROM retrievals WHERE via = 'hook'"))
    finally:
        db.close()


@pytest.mark.parametrize("served", [True, False])
def test_the_memories_a_prompt_hook_shows_are_logged_once_with_or_without_the_service(cli, vault, served):
    """The ids a prompt hook shows are logged as retrievals ("hook"): by the service while it runs
    (the hook then leaves the usage store alone), else by the hook's own process."""
    env = {} if served else {"VAULTMEM_NO_SERVICE": "1"}
    if served:
        cli.serve_here()  # the service in a thread of this test: its logging is under test, not its process

    def prompt() -> list[str]:
        out = context(cli("hook", "prompt", "--vault", str(vault), input=hook_payload(vault), env=env).stdout)
        return [line.split("]")[0].split("[")[1] for line in out.splitlines() if line.startswith("- [")]

    first = prompt()
    assert first and hook_logged(vault) == sorted(first)
    again = prompt()  # the same session: only memories it was not shown yet
    assert not set(again) & set(first) and hook_logged(vault) == sorted(first + again)
    assert (cli.status()["calls"] >= 2) if served else cli.holder() is None


def test_several_vaults_are_recalled_in_one_ranking_by_the_service(service_thread, demo_copy, empty_vault):
    """On the in-process service (``service_thread``): no process started."""
    from vaultmem import api

    write(
        empty_vault,
        "facts/Harbour cranes.md",
        "# Harbour cranes\n\nThe advisory locks of the harbour cranes.\n",
    )
    with api.Session([str(demo_copy), str(empty_vault)]) as session:

        def hybrid() -> list[dict] | None:  # keywords answer first while the vectors fill in (issue 45)
            found = session.recall("advisory locks of the harbour cranes", k=5)
            return None if session.degraded else found

        hits = wait_for(hybrid, what="the hybrid answer")
        assert session.backend == api.SERVICE
    assert {h["vault"] for h in hits} == {demo_copy.name, empty_vault.name}
    assert sorted(map(str, service_thread.service.entries)) == sorted(
        [str(demo_copy.resolve()), str(empty_vault.resolve())]
    )


def test_a_hook_answers_at_once_while_the_service_warms_up(cli, vault):
    slow = {"VAULTMEM_TEST_MODEL_DELAY": "6"}
    cli.env.update(slow)
    started = time.monotonic()
    first = cli("hook", "prompt", "--vault", str(vault), input=hook_payload(vault))
    took = time.monotonic() - started
    assert took < 5, took  # did not wait for the 6 s model load
    assert "keyword search only while its service starts" in context(first.stdout)
    assert "advisory locks" in context(first.stdout).lower()
    wait_for(lambda: cli.holder(), what="the service it started")
    warming = cli("hook", "prompt", "--vault", str(vault), input=hook_payload(vault, "s2"))
    assert "keyword search only" in context(warming.stdout)  # answered by the service, without the model
    wait_for(lambda: cli.status().get("ready"), timeout=60, what="the model")
    warm = cli("hook", "prompt", "--vault", str(vault), input=hook_payload(vault, "s3"))
    assert "Memories for this prompt" in context(warm.stdout) and "keyword search only" not in context(
        warm.stdout
    )
    assert cli.loaders() == [cli.status()["pid"]]


def test_recall_no_wait_answers_from_keywords_and_says_so(cli, vault):
    done = cli(
        "recall", QUERY, "--vault", str(vault), "--no-wait", "--json", env={"VAULTMEM_TEST_MODEL_DELAY": "5"}
    )
    out = json.loads(done.stdout)
    assert out["degraded"] == "bm25" and out["results"] and cli.loaders() == []
    text = cli("recall", QUERY, "--vault", str(vault), "--no-wait", env={"VAULTMEM_TEST_MODEL_DELAY": "5"})
    assert "keywords only: the memory service is starting" in text.stderr
    wait_for(lambda: cli.holder(), what="the service they started as they exited")  # so the teardown stops it
    # each call may have started one; a late one gives way to the holder at once, unless the
    # teardown stopped the holder first (then it took the lock and outlived the test, under load)
    wait_for(lambda: len(service_runs(cli)) <= 1, timeout=60, what="a second service start to give way")


def service_runs(cli: Cli) -> list:
    """The `vaultmem service run` processes of this test's home."""
    import leaks

    home = f"HOME={cli.env['HOME']}"
    return [p for p in leaks.processes() if "service run" in p.cmdline and home in p.environ]


# ---------------------------------------------------------------- its life


def test_it_exits_when_idle(cli, vault):
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "vaultmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[service]\nidle_exit = 1\n")
    cli("recall", QUERY, "--vault", str(vault))
    pid = cli.holder()["pid"]
    wait_for(lambda: cli.holder() is None, timeout=30, what="the idle exit")
    assert "idle_exit" in cli.log()
    wait_for(lambda: not running(pid), timeout=30, what="the process to end")


def running(pid: int) -> bool:
    """Whether a process runs (a zombie nobody reaped has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_stop_start_restart_and_status(cli, vault):
    assert cli("service", "stop").stdout.strip() == "no memory service runs"
    assert "not running" in cli("service", "status").stdout
    started = cli("service", "start")
    pid = cli.status()["pid"]
    assert f"pid {pid}" in started.stdout
    assert cli("service", "start").stdout == started.stdout  # one is enough
    cli("service", "restart")
    new = cli.status()["pid"]
    assert new != pid
    assert cli("service", "stop").stdout.strip() == f"stopped the memory service (pid {new})"
    assert cli.holder() is None and not cli.status()["running"]


def test_service_install_prints_then_writes_a_login_unit(cli):
    printed = cli("service", "install").stdout
    assert "service run --idle-exit 0" in printed and "nothing written" in printed
    written = cli("service", "install", "--write").stdout
    unit = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / "vaultmem.service"
    assert str(unit) in written and "ExecStart=" in unit.read_text()
    assert "already up to date" in cli("service", "install", "--write").stdout


@pytest.mark.parametrize("how", ["env", "config"])
def test_turned_off_everything_stays_in_process(cli, vault, how):
    env = {"VAULTMEM_NO_SERVICE": "1"} if how == "env" else {}
    if how == "config":
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "vaultmem" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("[service]\nenabled = false\n")
    done = cli("recall", QUERY, "--vault", str(vault), env=env)
    assert "advisory locks" in done.stdout.lower() and "starting" not in done.stderr
    hook = cli("hook", "prompt", "--vault", str(vault), input=hook_payload(vault), env=env)
    assert "Memories for this prompt" in context(hook.stdout)
    assert cli.holder() is None and not list(
        (Path(os.environ["XDG_RUNTIME_DIR"]) / f"vaultmem-{os.getuid()}").glob("service-*.sock")
    )
    assert "not running" in cli("status", "--vault", str(vault), env=env).stdout


# ---------------------------------------------------------------- safety


def test_two_simultaneous_starters_end_with_one_service(cli, vault):
    procs = [subprocess.Popen([EXE, "recall", QUERY, "--vault", str(vault), "--json"], env=cli.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]  # fmt: skip
    runs = [subprocess.Popen([EXE, "service", "run"], env=cli.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True) for _ in range(2)]  # fmt: skip
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 and json.loads(out)["results"] for p, (out, _) in zip(procs, outs))
    info = cli.status()
    assert info["running"] and info["pid"] == cli.holder()["pid"]
    cli("service", "stop")
    outputs = [p.communicate(timeout=60)[0] for p in runs]
    assert all(p.returncode == 0 for p in runs)
    started = cli.log().count(" started (pid ") + sum(out.count(" started (pid ") for out in outputs)
    assert started == 1  # every other starter found the lock taken and left


def test_a_killed_service_is_replaced_by_the_next_call_and_nothing_is_lost(cli, vault):
    cli("service", "start")
    pid = cli.holder()["pid"]
    words = ["otters", "herons", "pelicans", "walruses", "puffins", "narwhals"]  # killed after 3 of them
    titles = [f"Kill test {w}" for w in words]
    results: list[subprocess.CompletedProcess] = []

    def write_all() -> None:
        for title in titles:
            animal = title.split()[-1]
            results.append(cli("remember", "fact", title, f"{animal} {animal} live on pier {len(results)}.",
                               "--vault", str(vault), check=False))  # fmt: skip

    writer = threading.Thread(target=write_all)
    writer.start()
    wait_for(lambda: len(results) >= 3, what="some writes")
    os.kill(pid, signal.SIGKILL)  # mid-write: no cleanup, socket and lock file left behind
    writer.join(timeout=300)
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    new = cli.holder()["pid"]
    assert new != pid
    files = {p.stem for p in (vault / "facts").glob("Kill test *.md")}
    assert files == set(titles)  # each written once (a retried write finds its own note a duplicate)
    wait_for(
        lambda: json.loads(cli("status", "--vault", str(vault), "--json").stdout)["in_sync"], what="in sync"
    )
    for title in titles:
        hits = json.loads(cli("recall", title.split()[-1], "--vault", str(vault), "-k", "3", "--json").stdout)
        assert title in [h["title"] for h in hits["results"]]


def test_an_older_service_is_replaced_and_a_newer_one_is_left_alone(cli, vault):
    cli("service", "start", env={"VAULTMEM_TEST_VERSION": "0.0.9"})
    old = cli.status()
    assert old["version"] == "0.0.9"
    cli("recall", QUERY, "--vault", str(vault))  # this client is 0.1.0
    new = cli.status()
    assert new["version"] == "0.1.0" and new["pid"] != old["pid"]
    older_client = cli("recall", QUERY, "--vault", str(vault), env={"VAULTMEM_TEST_VERSION": "0.0.9"})
    assert "advisory locks" in older_client.stdout.lower()  # answered in its own process
    assert cli.status()["pid"] == new["pid"]


def test_a_vault_deleted_under_the_service_is_dropped(cli, vault, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(vault, other)
    cli("recall", QUERY, "--vault", str(vault))
    cli("recall", QUERY, "--vault", str(other))
    assert len(cli.status()["vaults"]) == 2
    moved = tmp_path / "moved-away"
    vault.rename(moved)
    wait_for(lambda: cli.status()["vaults"] == [str(other.resolve())], timeout=30, what="the vault dropped")
    assert "dropped" in cli.log()
    gone = cli("recall", QUERY, "--vault", str(vault), check=False)
    assert gone.returncode != 0 and gone.stderr.startswith("vaultmem: ") and "Traceback" not in gone.stderr
    assert "advisory locks" in cli("recall", QUERY, "--vault", str(other)).stdout.lower()
    moved.rename(vault)  # back again: served again on the next call
    assert "advisory locks" in cli("recall", QUERY, "--vault", str(vault)).stdout.lower()


def test_the_service_socket_and_lock_are_private(cli, vault):
    cli.serve_here()  # the service's own code makes them, in a thread of this test
    folder = Path(os.environ["XDG_RUNTIME_DIR"]) / f"vaultmem-{os.getuid()}"
    assert (folder.stat().st_mode & 0o777) == 0o700
    (sock,), (lock,) = folder.glob("service-*.sock"), folder.glob("service-*.lock")
    assert sock.stat().st_mode & 0o077 == 0 and lock.stat().st_mode & 0o077 == 0


# ---------------------------------------------------------------- the fast paths stay light

LIGHT = """
import sys, io
sys.argv = ['vaultmem', *{argv!r}]
sys.stdin = io.StringIO({stdin!r})
from vaultmem.cli.main import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('whoosh', 'numpy', 'fastembed', 'networkx', 'yaml', 'typer', 'click') or m in ('vaultmem.vault', 'vaultmem.cli.app'))
print('HEAVY', heavy, file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv", [["recall", QUERY, "--vault", "VAULT"], ["hook", "prompt", "--vault", "VAULT"]]
)
def test_recall_and_the_prompt_hook_through_the_service_load_no_heavy_module(cli, vault, argv):
    cli.serve_here()  # the client's process is under test; the service runs in a thread of this test
    argv = [str(vault) if a == "VAULT" else a for a in argv]
    code = LIGHT.format(argv=argv, stdin=hook_payload(vault))
    env = {k: v for k, v in cli.env.items() if not k.startswith("VAULTMEM_TEST_")}  # no fake-model patch here
    env["PYTHONPATH"] = str(HERE.parent)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "advisory" in done.stdout.lower()
    heavy = eval(done.stderr.strip().splitlines()[-1].removeprefix("HEAVY "))
    assert heavy == []  # not even typer and click: a ready service answers before they are needed


def test_a_prompt_hook_that_starts_the_service_answers_without_numpy_networkx_or_the_model(cli, vault):
    """Issue 26: <= 300 ms when the hook has to start the service. Importing the pipeline (numpy,
    networkx) alone took about that; the keyword answer needs neither (recall.keywords)."""
    code = LIGHT.format(argv=["hook", "prompt", "--vault", str(vault)], stdin=hook_payload(vault))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli.env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "keyword search only while its service starts" in context(done.stdout)
    assert "advisory locks" in context(done.stdout).lower()
    heavy = eval(done.stderr.strip().splitlines()[-1].removeprefix("HEAVY "))
    assert not [m for m in heavy if m.split(".")[0] in ("numpy", "networkx", "fastembed", "typer", "click")
                or m == "vaultmem.vault"], heavy  # fmt: skip
    wait_for(lambda: cli.holder(), what="the service it started as it exited")  # so the teardown stops it
    assert cli.loaders() == [] or cli.loaders() == [
        cli.holder()["pid"]
    ]  # the model loads in the service only


@pytest.mark.parametrize("args", [["-k", "3", "--explain", "--no-adaptive"], ["--json", "--type", "decision", "--no-adaptive"],
                                  ["--no-adaptive", "-t", "gotcha", "--mode=bm25", "--vault", "VAULT"]])  # fmt: skip
def test_recall_without_typer_answers_exactly_as_the_typer_command(cli, vault, args):
    cli.serve_here()  # the clients are under test; the service runs in a thread of this test
    argv = [
        QUERY,
        *(str(vault) if a == "VAULT" else a for a in args),
        *(["--vault", str(vault)] if "VAULT" not in args else []),
    ]
    quick = cli("recall", *argv)
    code = f"from vaultmem.cli.recall import run_recall; run_recall({argv!r})"
    typed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli.env, timeout=120
    )
    assert typed.returncode == 0, typed.stderr
    assert quick.stdout == typed.stdout and quick.stderr == typed.stderr and quick.stdout


# ---------------------------------------------------------------- long-running front ends


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_server_goes_through_the_service_and_loads_no_model(cli, vault):
    from mcp import Client, StdioServerParameters

    cli.serve_here()  # in a thread of this test: any model load logged is the MCP server's own
    params = StdioServerParameters(command=EXE, args=["mcp", "--vault", str(vault)], env=cli.env)
    async with Client(params, read_timeout_seconds=120) as agent:
        found = await agent.call_tool("recall", {"query": QUERY, "k": 3})
        assert not found.is_error and "advisory locks" in found.content[0].text.lower()
        made = await agent.call_tool("remember", {"type": "fact", "title": "Herons nest on pier 9",
                                                  "content": "The herons of pier 9 nest in March."})  # fmt: skip
        assert not made.is_error, made.content[0].text
        woke = await agent.call_tool("wake", {"budget": 300})
        assert woke.content[0].text.startswith("[MEMORY ")
        info = cli.status()
    assert info["running"] and info["calls"] >= 3
    assert cli.loaders() == []  # the MCP server loaded no model of its own
    assert (vault / "facts" / "Herons nest on pier 9.md").exists()


def test_the_web_view_searches_through_the_service(cli, vault):
    import re
    import urllib.parse
    import urllib.request

    cli.serve_here()  # in a thread of this test: any model load logged is the view's own
    proc = subprocess.Popen([EXE, "serve", "--vault", str(vault), "--port", "0"], env=cli.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        url = re.search(r"on (http://\S+)", proc.stderr.readline()).group(1)
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        browser.open(url, timeout=60).read()  # the token sets the session cookie
        page = browser.open(url.split("?")[0] + "?q=" + urllib.parse.quote(QUERY), timeout=60).read().decode()
        assert "Use Postgres advisory locks for job leasing" in page
        info = cli.status()
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert info["vaults"] == [str(vault.resolve())] and info["calls"] >= 1
    assert cli.loaders() == []  # the view loaded no model of its own


def test_two_installs_serve_one_vault_each_with_its_own_index(cli, vault, tmp_path):
    """Two HOMEs (two installs, two keys, two services) on one vault. Before (issue 48): each set
    the other's index aside as "not written by this user's vaultmem" and rebuilt it in turn; the
    second's recall found nothing and its remember took minutes. Now each keeps its own index
    (``.vaultmem/index/<key id>/``): both answer, each sees the other's writes, nothing is set aside."""
    from conftest import _runtime_dir

    home2 = tmp_path / "home2"
    other = {"HOME": str(home2), "XDG_CONFIG_HOME": str(home2 / ".config"), "XDG_STATE_HOME": str(home2 / ".state"),
             "XDG_CACHE_HOME": str(home2 / ".cache"), "XDG_RUNTIME_DIR": str(_runtime_dir(home2))}  # fmt: skip
    Path(other["XDG_RUNTIME_DIR"]).mkdir(parents=True, exist_ok=True, mode=0o700)
    (home2 / ".config" / "vaultmem").mkdir(parents=True)
    (home2 / ".config" / "vaultmem" / "config.toml").write_text("[service]\nidle_exit = 30\n")
    v = ["--vault", str(vault)]
    try:
        assert "advisory locks" in cli("recall", QUERY, *v).stdout.lower()
        assert "advisory locks" in cli("recall", QUERY, *v, env=other).stdout.lower()
        cli("remember", "fact", "Herons nest on pier 9", "The herons of pier 9 nest in March.", *v, env=other)
        assert "Herons nest on pier 9" in cli("recall", "herons pier nest", *v, env=other).stdout
        wait_for(lambda: "Herons nest on pier 9" in cli("recall", "herons pier nest", *v).stdout,
                 what="the first install's watcher indexing the second's note")  # fmt: skip
        cli("remember", "fact", "Cranes lift at dawn", "The harbour cranes lift containers at dawn.", *v)
        assert "Cranes lift at dawn" in cli("recall", "harbour cranes dawn", *v).stdout
        wait_for(lambda: "Cranes lift at dawn" in cli("recall", "harbour cranes dawn", *v, env=other).stdout,
                 what="the second install's watcher indexing the first's note")  # fmt: skip
    finally:
        cli("service", "stop", env=other, check=False, timeout=60)
    index = vault / ".vaultmem" / "index"
    assert not [p for p in index.rglob("*.foreign")], list(index.rglob("*"))
    log2 = (home2 / ".state" / "vaultmem" / "service.log").read_text()
    assert "set aside" not in cli.log() + log2 and "read-only" not in cli.log() + log2, cli.log() + log2
    assert len([p for p in index.iterdir() if p.is_dir()]) == 2  # one folder per install
