"""The command reference, made from the typer app itself so it cannot drift from ``--help``:
as markdown (``docs/cli.md``) and as a man page (``vaultmem man``; ``docs/vaultmem.1``, which
the wheel installs in ``share/man/man1``)."""

from __future__ import annotations

from typing import Any

import typer
import typer.core

HEADER = """# Command reference

Made from the commands themselves (`python tests/cli_reference.py > docs/cli.md`; a test fails
when it drifts). `vaultmem COMMAND --help` says the same, and so does `man vaultmem` (or
`vaultmem man`).
"""

MAN_TAIL = """\
.SH SHELL COMPLETION
.B vaultmem \\-\\-install\\-completion
adds completion of commands and options to your shell (bash, zsh or fish);
.B vaultmem \\-\\-show\\-completion
prints the script instead.
.SH ENVIRONMENT
.B VAULTMEM_VAULT
names the vault (else the nearest folder above holding .vaultmem/);
.B VAULTMEM_NO_SERVICE=1
runs every command in its own process. Every variable: docs/environment.md.
.SH EXIT STATUS
0 on success; errors are one line on standard error with a non\\-zero exit code.
.SH SEE ALSO
https://github.com/vaultmem/vaultmem
"""


def commands(app: typer.Typer) -> list[tuple[list[str], Any]]:
    """Every visible leaf command of the app with its words, in name order."""
    return _leaves(typer.main.get_command(app), [])


def _leaves(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    if not isinstance(command, typer.core.TyperGroup):
        return [(path, command)]
    found: list[tuple[list[str], Any]] = []
    for name in sorted(command.commands):
        sub = command.commands[name]
        if not sub.hidden:
            found += _leaves(sub, [*path, name])
    return found


def _params(command: Any) -> list[Any]:
    return [p for p in command.params if not getattr(p, "hidden", False) and p.name != "help"]


def _names(param: Any) -> list[str]:
    """An argument's metavar, or an option's flags."""
    if isinstance(param, typer.core.TyperArgument):
        return [param.human_readable_name]
    return [*param.opts, *param.secondary_opts]


def _help(param: Any) -> str:
    return " ".join((getattr(param, "help", None) or "").split())


def _doc(command: Any) -> str:
    return (command.help or "").split("\f")[0].strip()


def markdown(app: typer.Typer) -> str:
    """The whole reference of ``app`` (``cli.app.app``, every command registered) as markdown
    (``docs/cli.md``)."""
    out = [HEADER]
    for path, command in commands(app):
        out.append(f"## vaultmem {' '.join(path)}\n")
        if doc := _doc(command):
            out.append(doc + "\n")
        lines = []
        for p in _params(command):
            name = ", ".join(f"`{n}`" for n in _names(p))
            lines.append(f"- {name}: {_help(p)}" if _help(p) else f"- {name}")
        if lines:
            out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _roff(text: str) -> str:
    """Text as roff: backslashes and dashes escaped, no line taken for a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.splitlines())


def manpage(app: typer.Typer) -> str:
    """The whole reference of ``app`` as a man page (section 1)."""
    from .. import __version__

    out = [
        f'.TH VAULTMEM 1 "" "vaultmem {__version__}" "User Commands"',
        ".SH NAME",
        "vaultmem \\- long\\-term memory for AI agents, kept as a vault of plain markdown files",
        ".SH SYNOPSIS",
        ".B vaultmem",
        "COMMAND [OPTIONS] [ARGS]...",
        ".SH DESCRIPTION",
        "Every command has \\fB\\-\\-help\\fR with an example. The commands:",
        ".SH COMMANDS",
    ]
    for path, command in commands(app):
        out.append(f'.SS "vaultmem {" ".join(path)}"')
        if doc := _doc(command):
            out += [_roff(doc), ".PP"]
        for p in _params(command):
            out += [".TP", "\\fB" + _roff(", ".join(_names(p))) + "\\fR"]
            if _help(p):
                out.append(_roff(_help(p)))
    return "\n".join(out) + "\n" + MAN_TAIL
