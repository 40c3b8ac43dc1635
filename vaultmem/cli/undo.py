"""``vaultmem restore`` (a note back from .trash/) and ``vaultmem undo`` (take back what one
recorded command wrote: an import, ``maintain --apply``, an edit)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from ..core.fence import printable
from .common import JsonOpt, VaultOpt, app, echo_json, err, open_session


@app.command()
def restore(
    ref: Annotated[
        str | None,
        typer.Argument(help="The trashed note: its path, old path, id or title (none: list the trash)."),
    ] = None,
    to: Annotated[
        str | None, typer.Option("--to", help="Restore it to this path instead of where it was.")
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the notes in the vault's .trash/ with the date each was deleted, or bring one back
    to where it was (never over an existing file).

    Example: vaultmem restore      vaultmem restore k7f3x9q2      vaultmem restore "Use SQLite" --to decisions/sqlite.md
    """
    session = open_session(vault)
    if ref is None:
        rows = session.trash()
        if as_json:
            echo_json(rows)
            return
        for r in rows:
            typer.echo(printable(f"{r['trashed'][:19].replace('T', ' ')}  {r['id'] or '-':<8}  {r['title']}  "
                                     f"({r['path']} -> {r['restores_to']})"))  # fmt: skip
        if not rows:
            err("the trash is empty")
        return
    result = session.restore(ref, to)
    if as_json:
        echo_json(result)
        return
    typer.echo(printable(f"restored {result['path']} to {result['restored_to']}"))
    typer.echo(f"undo: vaultmem delete {_quote(result['id'] or result['restored_to'])}")


@app.command()
def undo(
    batch: Annotated[
        str | None, typer.Argument(help="A batch id (none: list the recorded batches, newest first).")
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Take back exactly what one recorded command wrote (an import, maintain --apply, an edit):
    notes it created go to .trash/, notes it changed get their text back; a note changed since
    is kept and named.

    Example: vaultmem undo      vaultmem undo import-20261127-171502-3f9a
    """
    session = open_session(vault)
    if batch is None:
        list_batches(session, None, as_json)
        return
    undo_batch(session, batch, None, as_json)


def undo_batch(session: Any, batch: str, kind: str | None, as_json: bool) -> None:
    """Take one batch back, each file outside the vault it names listed first."""
    plan = session.undo_plan(batch, kind)
    for f in plan["outside"]:  # before anything is changed
        err(printable(f"outside the vault: {f['path']}: " + ("put back if unchanged since" if f["allowed"] else
                          "not a file you named for this vault on this machine; left as it is")))  # fmt: skip
    report_undo(session.undo(plan["id"], kind), as_json)


def list_batches(session: Any, kind: str | None, as_json: bool) -> None:
    """The recorded batches (of ``kind``), newest first, one line each."""
    rows = session.batches(kind)
    if as_json:
        echo_json([{k: r.get(k) for k in ("id", "kind", "source", "at", "undone")} | counts(r) for r in rows])
        return
    for r in rows:
        n = counts(r)
        state = f"  (undone {_second(r['undone'])})" if r.get("undone") else ""
        typer.echo(printable(f"{r['id']}  {_second(r.get('at', ''))}  {r.get('source') or r.get('kind')}: "
                                 f"{n['created']} created, {n['changed']} changed, {n['trashed']} trashed{state}"))  # fmt: skip
    if not rows:
        err("nothing recorded to undo")


def counts(r: dict[str, Any]) -> dict[str, int]:
    return {k: len(r.get(k) or {}) for k in ("created", "changed", "trashed")} | {
        "files": len(r.get("files") or {})
    }


def report_undo(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        echo_json(result)
        return
    for r in result["removed"]:
        typer.echo(
            printable(f"removed {r['path']}" + (f" (to {r['trashed_to']})" if r["trashed_to"] else ""))
        )
    for path in result["restored"]:
        typer.echo(printable(f"restored {path}"))
    for path in result.get("folders", []):
        typer.echo(printable(f"removed the empty folder {path}/ it made"))
    for s in result["skipped"]:
        err(printable(f"kept {s['path']}: {s['reason']}"))
    typer.echo(f"undid {result['id']}: {len(result['removed'])} removed, {len(result['restored'])} restored, "
               f"{len(result['skipped'])} kept")  # fmt: skip
    if result["removed"]:
        typer.echo("the removed notes are in .trash/ (vaultmem restore brings one back)")


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _second(at: object) -> str:
    """A batch's time as the list shows it: to the second (it is kept to the microsecond)."""
    return re.sub(r"\.\d+Z$", "Z", str(at))
