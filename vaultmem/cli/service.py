"""`vaultmem service ...`: the per-user memory service (start, stop, status, restart, install, run)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core import environment
from ..core.errors import BadInput
from ..service import client, control
from .common import Group, JsonOpt, app, echo_json, err

service_app = typer.Typer(cls=Group, no_args_is_help=True,
                          help="The memory service: one background process per user that keeps the model and every "
                               "vault's indexes warm. Calls start it when needed; it exits when idle.\n\n"
                               "Example: vaultmem service status      vaultmem service stop")  # fmt: skip
app.add_typer(service_app, name="service")

IdleOpt = Annotated[float | None, typer.Option("--idle-exit", help="Seconds without a call before it exits (0: never; default [service] idle_exit).")]  # fmt: skip
UNIT_NAME, AGENT_LABEL = "vaultmem.service", "dev.vaultmem.service"


def tasks() -> dict[str, Any]:
    """What the memory service runs on an open vault for ``doctor``, the hooks' operations and
    ``import --from`` (``service.protocol``): the work of the layers above it, handed over."""
    from ..agents.hooks import TASKS
    from ..api import tasks as top_tasks

    return {**top_tasks(), **TASKS, "import": import_task}


def import_task(vault: Any, source: str, paths: list[str], **options: Any) -> dict[str, Any]:
    """What the ``import`` operation runs on an open vault for ``--from SOURCE``: the importer
    (``agents.importers.import_from``; the service layer may not import ``agents``), loaded on
    its first use (not at every service start)."""
    from ..agents.importers import import_from

    return import_from(vault, source, paths, **options)


@service_app.command("run")
def run(idle_exit: IdleOpt = None) -> None:
    """Run the memory service in the foreground (what `start` runs detached; for systemd or
    launchd). Exits at once, successfully, when another one already runs.

    Example: vaultmem service run --idle-exit 0
    """
    import logging

    from ..api import is_vault, service_parts
    from ..core.registry import Registry
    from ..service.daemon import Service

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s vaultmem[%(process)d]: %(message)s"
    )
    idle = control.settings()["idle_exit"] if idle_exit is None else idle_exit
    if idle < 0:
        raise BadInput("--idle-exit must be >= 0")
    service = Service(*service_parts(), idle_exit=float(idle), tasks=tasks())
    service.handle_signals()
    if not service.run([p for p in Registry().vaults.values() if is_vault(p)]):
        err(f"a memory service already runs (pid {(control.holder() or {}).get('pid', '?')})")


@service_app.command("start")
def start() -> None:
    """Start the memory service in the background (if none runs) and wait until it is ready.

    Example: vaultmem service start
    """
    if not control.enabled():
        err(
            f"note: calls stay in their own process while {control.ENV_OFF} is set or [service] enabled = false"
        )
    control.check_folder()
    info = control.ensure(wait=True, say=err)
    if info is None:
        raise BadInput(f"the memory service did not start; see {control.log_path()}")
    typer.echo(f"memory service running, pid {info['pid']} (log: {control.log_path()})")


@service_app.command("stop")
def stop() -> None:
    """Stop the memory service (it finishes what it is doing first). The next call that needs
    it starts it again, unless it is turned off ([service] enabled = false).

    Example: vaultmem service stop
    """
    pid = control.stop()
    typer.echo(f"stopped the memory service (pid {pid})" if pid else "no memory service runs")


@service_app.command("restart")
def restart() -> None:
    """Stop the memory service and start it again (e.g. after an upgrade or a config change).

    Example: vaultmem service restart
    """
    stop()
    start()


@service_app.command("status")
def status(as_json: JsonOpt = False) -> None:
    """Whether the memory service runs: pid, version, model loaded, vaults served, calls, log.

    Example: vaultmem service status
    """
    data = describe()
    if as_json:
        echo_json(data)
        return
    for line in status_lines(data):
        typer.echo(line)


def describe() -> dict[str, Any]:
    """The service's state as `service status` and `status` show it."""
    info = control.ping()
    base = {
        "enabled": control.enabled(),
        "socket": str(client.service_socket()),
        "log": str(control.log_path()),
    }
    problem = client.runtime_problem()
    if problem:
        base["blocked"] = control.blocked_message(problem)
    if info is None:
        held = control.holder()
        return {**base, "running": held is not None, **({"pid": held.get("pid")} if held else {})}
    return {**base, "running": True, **info}


def status_lines(data: dict[str, Any]) -> list[str]:
    off = "" if data["enabled"] else f" (turned off: {control.ENV_OFF} or [service] enabled = false)"
    if data.get("blocked"):
        return [f"memory service: not running: {data['blocked']}"]
    if not data["running"]:
        return [f"memory service: not running{off}; the next call that needs it starts it" if not off
                else f"memory service: not running{off}"]  # fmt: skip
    if "version" not in data:
        return [f"memory service: pid {data.get('pid')}, starting (not answering yet){off}"]
    idle = data.get("idle_exit") or 0
    lines = [f"memory service: running, pid {data['pid']}, vaultmem {data['version']}, "
             f"{'model loaded' if data['ready'] else 'loading the model'}, {data['calls']} calls{off}",
             f"  idle exit: {'never' if not idle else f'after {idle:g} s without a call'}",
             f"  log: {data['log']}"]  # fmt: skip
    lines += [f"  serving {v}" for v in data.get("vaults", [])]
    return lines


@service_app.command("install")
def install(
    write: Annotated[bool, typer.Option("--write", help="Write the file (else it is printed).")] = False,
) -> None:
    """Print a systemd user unit (Linux) or a launchd agent (macOS) that starts the service at
    login; --write writes it. Not needed: calls start the service on their own.

    Example: vaultmem service install --write && systemctl --user enable --now vaultmem
    """
    path, text, then = unit_file()
    if not write:
        typer.echo(f"# {path}\n{text}")
        typer.echo(f"(nothing written; `vaultmem service install --write` writes {path}, then: {then})")
        return
    from ..core.store import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        typer.echo(f"{path} is already up to date; nothing written")
        return
    atomic_write(path, text)
    typer.echo(f"wrote {path}; now: {then}")
    typer.echo(f"undo: rm {shlex.quote(str(path))}")


def unit_file(platform: str | None = None) -> tuple[Path, str, str]:
    """(where, what, how to enable) of the login service for this platform (``platform``:
    ``sys.platform`` unless given)."""
    exe = shutil.which("vaultmem")
    argv = [exe] if exe else [sys.executable, "-m", "vaultmem"]
    argv += ["service", "run", "--idle-exit", "0"]
    command = shlex.join(argv)
    if (platform or sys.platform) == "darwin":
        import plistlib

        path = environment.home() / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
        log = str(control.log_path())
        agent = {"Label": AGENT_LABEL, "ProgramArguments": argv, "RunAtLoad": True,
                 "StandardOutPath": log, "StandardErrorPath": log}  # fmt: skip
        text = plistlib.dumps(agent, sort_keys=False).decode("utf-8")  # escaped: any path, any character
        return path, text, f"launchctl load {shlex.quote(str(path))}"
    config = environment.config_home()
    path = config / "systemd" / "user" / UNIT_NAME
    text = f"""[Unit]
Description=vaultmem memory service (one model, every vault warm)

[Service]
ExecStart={command}
Restart=on-failure

[Install]
WantedBy=default.target
"""
    return path, text, "systemctl --user daemon-reload && systemctl --user enable --now vaultmem"
