"""CLI commands about time (`vaultmem history`), registered on the app."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from ..core.fence import printable
from .common import JsonOpt, VaultOpt, app, echo_json


@app.command()
def history(
    ref: Annotated[
        str, typer.Argument(help="Id, title or path of a memory, or a subject key (deploy-target).")
    ],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The versions of a fact, oldest first, with the days each was valid: the notes with the
    same subject key and the notes linked by supersedes / superseded_by.

    Example: vaultmem history deploy-target
    """
    data = api.Session([vault] if vault else []).history(ref)
    if as_json:
        echo_json(data)
        return
    typer.echo(printable(f"history of {data['key'] or ref}: {len(data['versions'])} version(s)"))
    for item in data["versions"]:
        span = f"{item['valid_from'] or '?'} .. {item['valid_until'] or 'now'}"
        typer.echo(printable(f"  {span:<26} {item['state']:<10} {item['id']}  {item['title']}"))
