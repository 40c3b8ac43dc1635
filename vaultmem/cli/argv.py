"""The one argument parser of the typer-free paths (``quick``: recall, ``fast``: show, list, ...,
doctor, ``main``: the hooks): it takes only what it knows for certain (the flags given, the
arguments counted) and gives up (None) on anything else, which the typer command then parses
(--help, an unknown option, a value of the wrong kind). Light: stdlib only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every call)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    Flags = dict[str, tuple[Any, ...]]  # flag -> (option name, kind[, the value a bare boolean flag sets])


def parse(argv: list[str], flags: Flags, count: int) -> tuple[list[str], dict[str, Any]] | None:
    """(``count`` arguments, the options given) of ``argv``; kinds: bool (a bare flag), int, str,
    list (repeatable). None when anything is not certain."""
    args: list[str] = []
    opts: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-") or arg == "-":
            args.append(arg)
            i += 1
            continue
        name, eq, value = arg.partition("=")
        if name not in flags:
            return None
        key, kind, *const = flags[name]
        if kind == "bool":
            if eq:
                return None
            opts[key] = const[0] if const else True
        else:
            if not eq:
                if i + 1 >= len(argv):
                    return None
                value, i = argv[i + 1], i + 1
            if kind == "int" and not value.isdigit():
                return None
            item: Any = int(value) if kind == "int" else value
            if kind == "list":
                opts.setdefault(key, []).append(item)
            else:
                opts[key] = item
        i += 1
    return (args, opts) if len(args) == count else None
