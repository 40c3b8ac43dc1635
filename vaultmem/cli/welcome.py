"""CLI commands for a first hour: `vaultmem demo` (a copy of the shipped demo vault),
`vaultmem completion` (the shell's completion script) and `vaultmem man` (the man page);
registered on ``cli_common.app``, which ``cli/app.py`` imports this module for."""

from __future__ import annotations

import shlex
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from .common import app

QUESTION = "why did we pick postgres advisory locks over redis for job leases?"  # README's first


@app.command()
def demo(
    dest: Annotated[Path, typer.Argument(help="A new folder for the copy.")] = Path("vaultmem-demo"),
) -> None:
    """Copy the shipped demo vault (the memory of a fictional marina-booking app) into a new
    folder, to try recall on it.

    Example: vaultmem demo && vaultmem recall "why advisory locks over redis?" --vault vaultmem-demo
    """
    from ..core import demo as shipped

    copied = shipped.copy(dest)
    where = shlex.quote(str(dest))
    typer.echo(f"copied the demo vault ({len(copied)} files) to {dest.resolve()}")
    typer.echo(f'try: vaultmem recall "{QUESTION}" --vault {where}')
    typer.echo(f"undo: rm -r {where}")


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


@app.command()
def completion(shell: Annotated[Shell, typer.Argument(help="bash, zsh or fish.")]) -> None:
    """Print the shell's completion script for vaultmem's commands and options
    (`vaultmem --install-completion` installs it for the shell you run).

    Example: vaultmem completion bash >> ~/.bashrc   |   vaultmem completion fish > ~/.config/fish/completions/vaultmem.fish
    """
    from typer.completion import get_completion_script

    typer.echo(
        get_completion_script(prog_name="vaultmem", complete_var="_VAULTMEM_COMPLETE", shell=shell.value)
    )


@app.command("man")
def man_page() -> None:
    """Print vaultmem's man page (the wheel also installs it in share/man/man1: `man vaultmem`
    works where that folder is on the manual path, as with pipx).

    Example: vaultmem man | man -l -
    """
    from .reference import manpage

    typer.echo(manpage(app), nl=False)  # every command is registered by the time one runs
