"""docs/cli.md, made from the typer app itself so the reference cannot drift from `--help`.

    python tests/cli_reference.py > docs/cli.md

`tests/test_docs.py` fails when the file differs from what this prints.
"""

from __future__ import annotations

import click
import typer

HEADER = """# Command reference

Made from the commands themselves (`python tests/cli_reference.py > docs/cli.md`; a test fails
when it drifts). `vaultmem COMMAND --help` says the same.
"""


def _commands(command: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    """Every leaf command under ``command`` with its words, in name order."""
    if not isinstance(command, click.Group):
        return [(path, command)]
    found: list[tuple[list[str], click.Command]] = []
    for name in sorted(command.commands):
        sub = command.commands[name]
        if not sub.hidden:
            found += _commands(sub, [*path, name])
    return found


def _param_line(param: click.Parameter) -> str:
    """One option or argument as a markdown list item."""
    if isinstance(param, click.Argument):
        name = f"`{param.human_readable_name}`"
    else:
        name = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    text = " ".join((getattr(param, "help", None) or "").split())
    return f"- {name}: {text}" if text else f"- {name}"


def reference() -> str:
    """The whole reference as markdown."""
    from vaultmem.cli.app import app

    root = typer.main.get_command(app)
    out = [HEADER]
    for path, command in _commands(root, []):
        out.append(f"## vaultmem {' '.join(path)}\n")
        doc = (command.help or "").strip()
        if doc:
            out.append(doc.split("\f")[0].strip() + "\n")
        params = [p for p in command.params if not getattr(p, "hidden", False) and p.name != "help"]
        if params:
            out.append("\n".join(_param_line(p) for p in params) + "\n")
    return "\n".join(out)


if __name__ == "__main__":
    print(reference(), end="")
