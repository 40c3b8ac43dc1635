"""`vaultmem show|list|stats|edit|resolve|reopen|wake|doctor` answered through a ready memory service
without typer, click or the indexes' libraries (their import is most of such a call), as
``quick`` does for recall. It takes only what it knows for certain (each command's options
below, its arguments) and only when a service of this version answers; anything else
(--help, an option it does not know, no service) goes to the typer command, which then does
everything as always. There is no ping first: the command's own call is the first request, and
a reply from a service of another version, or none, sends it to the typer command. Both print
through ``render``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

VAULT = {"--vault": ("vault", "str"), "-V": ("vault", "str")}
VAULTS = {"--vault": ("vault", "list"), "-V": ("vault", "list")}
JSON = {"--json": ("as_json", "bool")}
AGENT = {"--agent": ("agent", "str")}
# command -> (how many arguments, its options: flag -> (name, kind))
SPECS: dict[str, tuple[int, dict[str, tuple[str, str]]]] = {
    "show": (1, {**VAULT, **JSON}),
    "stats": (0, {**VAULT, **JSON}),
    "resolve": (1, {**VAULT, **JSON}),
    "reopen": (1, {**VAULT, **JSON}),
    "edit": (1, {**VAULT, **JSON, "--set": ("set_", "list"), "--add-tag": ("add_tag", "list"), "--remove-tag": ("remove_tag", "list"),
                 "--content": ("content", "str")}),
    "list": (0, {**VAULTS, **AGENT, **JSON, "--type": ("type", "list"), "-t": ("type", "list"),
                 "--status": ("status", "list"), "--tag": ("tag", "list"), "--since": ("since", "str"),
                 "--importance": ("importance", "str"), "--scope": ("scope", "str"), "--limit": ("limit", "int"),
                 "-n": ("limit", "int"), "--all": ("show_all", "bool")}),
    "doctor": (0, {**VAULT, **JSON}),  # --fix: the typer command (it writes in this process)
    "wake": (0, {**VAULTS, **AGENT, **JSON, "--anchor": ("anchor", "str"), "--task": ("task", "str"),
                 "--profile": ("profile", "str"), "--budget": ("budget", "int"), "--branch": ("branch", "str"),
                 "--all-branches": ("all_branches", "bool")}),
}  # fmt: skip


def parse(command: str, argv: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """(arguments, options) of ``COMMAND ARGV``; None when the typer command must parse it."""
    from .argv import parse as parse_argv

    count, flags = SPECS[command]
    return parse_argv(argv, flags, count)


def err(message: str) -> None:
    sys.stderr.write(f"vaultmem: {message}\n")


def run(argv: list[str]) -> bool:
    """Answer ``vaultmem ARGV`` through a running service of this version; False when the typer
    command must (no such service answered the command's first call, which was its real call)."""
    from ..api import NoService
    from ..core.errors import VaultError, os_message

    command = argv[0] if argv else ""
    if command not in SPECS:
        return False
    parsed = parse(command, argv[1:])
    if parsed is None or (command == "edit" and not _edits(parsed[1])):
        return False
    try:
        code = COMMANDS[command](*parsed)
    except NoService:
        return False
    except VaultError as e:
        err(str(e))
        sys.exit(e.exit_code)
    except BrokenPipeError:  # `vaultmem list | head -1`: the console entry ends quietly
        raise
    except OSError as e:
        err(os_message(e))
        sys.exit(1)
    if code:
        sys.exit(code)
    return True


def _edits(opts: dict[str, Any]) -> bool:
    """An edit this path can make: something to change, no body from standard input."""
    return (
        bool(opts.get("set_") or opts.get("add_tag") or opts.get("remove_tag") or opts.get("content"))
        and opts.get("content") != "-"
    )


def _session(opts: dict[str, Any]) -> Any:
    from ..api import SERVICE, Session

    vault = opts.get("vault")
    refs = vault if isinstance(vault, list) else [vault] if vault else []
    return Session(refs, opts.get("agent"), say=err, backend=SERVICE)  # only the service: else NoService


def _print(lines: list[str]) -> None:
    for line in lines:
        print(line)


def _show(args: list[str], opts: dict[str, Any]) -> int:
    from .render import show_lines

    _print(show_lines(_session(opts).show(args[0]), bool(opts.get("as_json"))))
    return 0


def _stats(args: list[str], opts: dict[str, Any]) -> int:
    from .render import stats_lines

    _print(stats_lines(_session(opts).stats(), bool(opts.get("as_json"))))
    return 0


def _resolve(args: list[str], opts: dict[str, Any]) -> int:
    from .render import report_lines

    _print(report_lines([_session(opts).resolve(args[0])], bool(opts.get("as_json"))))
    return 0


def _reopen(args: list[str], opts: dict[str, Any]) -> int:
    from .render import report_lines

    _print(report_lines([_session(opts).reopen(args[0])], bool(opts.get("as_json"))))
    return 0


def _edit(args: list[str], opts: dict[str, Any]) -> int:
    from .render import edit_lines

    result = _session(opts).edit(args[0], content=opts.get("content"), sets=opts.get("set_", []),
                                 add_tags=opts.get("add_tag", []), remove_tags=opts.get("remove_tag", []), record=True)  # fmt: skip
    _print(edit_lines(result, bool(opts.get("as_json"))))
    return 0


def _list(args: list[str], opts: dict[str, Any]) -> int:
    from .hits import skipped_notes
    from .render import list_lines

    session = _session(opts)
    filters = {"types": opts.get("type", []), "statuses": opts.get("status", []), "tags": opts.get("tag", []),
               "since": opts.get("since"), "importance": opts.get("importance"), "scope": opts.get("scope")}  # fmt: skip
    rows = session.list_notes(limit=None if opts.get("show_all") else opts.get("limit", 20), **filters)
    for line in skipped_notes(session.skipped, session.told):
        err(line)
    _print(list_lines(rows, bool(opts.get("as_json"))))
    if not rows:
        err("no memories match")
    return 0


def _wake(args: list[str], opts: dict[str, Any]) -> int:
    import json

    from ..core import environment

    session = _session(opts)
    anchor = opts.get("anchor") or environment.VAULTMEM_ANCHOR.get()
    result = session.wake(anchor, opts.get("task"), opts.get("profile", "default"), opts.get("budget", 2000),
                          branch=opts.get("branch"), all_branches=bool(opts.get("all_branches")))  # fmt: skip
    if opts.get("as_json"):
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(result["text"])
    return 0


def _doctor(args: list[str], opts: dict[str, Any]) -> int:
    from ..agents.hook_runs import doctor_report
    from .render import doctor_lines

    data = doctor_report(_session(opts))
    _print(doctor_lines(data, bool(opts.get("as_json"))))
    return 1 if data["needs_attention"] else 0


COMMANDS: dict[str, Callable[[list[str], dict[str, Any]], int]] = {
    "show": _show, "stats": _stats, "resolve": _resolve, "reopen": _reopen, "edit": _edit, "list": _list,
    "wake": _wake, "doctor": _doctor,
}  # fmt: skip
