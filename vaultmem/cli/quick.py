"""`vaultmem recall` answered by a running memory service without typer and click (their import
is about half of such a call). The console entry tries this first; it takes only what it knows
for certain (the options declared in ``recall.params``, the command's own, one query) and only
when a service of this version answers the recall itself. Anything else (--help, a value it does not
parse, no service) goes to the typer command, which then does everything as always.
"""

from __future__ import annotations

import sys

from ..recall.params import PARAMS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of this path)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    Parsed = tuple[str, dict[str, Any], dict[str, Any]]
OWN = {"--explain": ("explain", "bool"), "--no-wait": ("no_wait", "bool"), "--json": ("as_json", "bool"),
       "--vault": ("vault", "list"), "-V": ("vault", "list"), "--agent": ("agent", "str")}  # fmt: skip


def _kind(annotation: Any) -> str:
    return {bool: "bool", int: "int", int | None: "int", list[str]: "list"}.get(annotation, "str")


def flags() -> dict[str, tuple[str, str, Any]]:
    """Flag -> (option name, kind, the value a bare boolean flag sets)."""
    out: dict[str, tuple[str, str, Any]] = {flag: (name, kind, True) for flag, (name, kind) in OWN.items()}
    for p in PARAMS:
        for flag in p.cli_flags:
            if "/" in flag:  # --adaptive/--no-adaptive
                on, off = flag.split("/")
                out[on], out[off] = (p.name, "bool", True), (p.name, "bool", False)
            else:
                out[flag] = (p.name, _kind(p.type), True)
    return out


def parse(argv: list[str]) -> Parsed | None:
    """(query, the command's own options, the recall options) of ``recall ARGV``; None when the
    typer command must parse it (``argv.parse``)."""
    from .argv import parse as parse_argv

    parsed = parse_argv(argv, flags(), 1)
    if parsed is None:
        return None
    own = {"explain": False, "no_wait": False, "as_json": False, "vault": [], "agent": None}
    options = {p.name: list(p.default) if isinstance(p.default, list) else p.default for p in PARAMS}
    for key, value in parsed[1].items():
        (own if key in own else options)[key] = value
    return parsed[0][0], own, options


def err(message: str) -> None:
    sys.stderr.write(f"vaultmem: {message}\n")


def run(argv: list[str]) -> bool:
    """Answer `vaultmem recall ARGV` through a running service of this version; False when the
    typer command must (none answered the recall itself: there is no ping first)."""
    from ..api import NoService
    from ..core.errors import VaultError, os_message

    parsed = parse(argv)
    if parsed is None:
        return False
    query, own, options = parsed
    try:
        answer(query, own, options)
    except NoService:
        return False
    except VaultError as e:
        err(str(e))
        sys.exit(e.exit_code)
    except BrokenPipeError:  # `vaultmem recall ... | head`: the console entry ends quietly
        raise
    except OSError as e:
        err(os_message(e))
        sys.exit(1)
    return True


def answer(query: str, own: dict[str, Any], options: dict[str, Any]) -> None:
    from .. import api
    from .hits import recall_output, skipped_notes

    memory = api.Session(own["vault"], own["agent"], wait=not own["no_wait"], say=err, backend=api.SERVICE)
    hits = memory.recall(query, own["explain"], **options)
    out, notes = recall_output(query, options, hits, memory.degraded, own["explain"], own["as_json"],
                               color=sys.stdout.isatty(), indexing=memory.indexing)  # fmt: skip
    for note in skipped_notes(memory.skipped, memory.told) + notes:
        err(note)
    for line in out:
        print(line)
