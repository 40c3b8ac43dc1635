"""CLI commands for git sync (`vaultmem sync`, `vaultmem merge-driver`), registered on the app."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import api
from ..core.errors import BadInput
from ..core.fence import printable
from .common import JsonOpt, VaultOpt, agents_md_line, app, echo_json, err

if TYPE_CHECKING:  # pragma: no cover
    from ..sync.git import SyncReport


def index_after_sync(root: Path, report: SyncReport) -> None:
    """Index what the pull brought, so it is recallable at once (a running service does it
    itself; local edits are indexed as before, by the service or the next command), and keep
    only notes in the report of what came in."""
    if not report.touched and not report.incoming:
        return  # nothing came in: skip loading the indexes (and numpy, networkx, whoosh)
    with api.Session([str(root)]) as session:
        notes = set(
            session.call("notes", {"root": str(root), "paths": [p for _, p in report.incoming]}, start=False)
        )
        report.incoming = [(c, p) for c, p in report.incoming if p in notes]
        if not report.touched:
            return
        summary = session.call("sync", {"root": str(root), "paths": sorted(report.touched)}, start=False)
    if summary and (summary["added"] or summary["updated"] or summary["moved"] or summary["removed"]):
        err(
            f"indexed: {summary['added']} added, {summary['updated']} updated, {summary['moved']} moved, "
            f"{summary['removed']} removed"
        )


def print_report(report: SyncReport, as_json: bool, refreshed: list[dict] | None = None) -> None:
    """The sync's report; ``refreshed``: the AGENTS.md files ([agents_md] config) it refreshed."""
    refreshed = refreshed or []
    if as_json:
        echo_json({**report.as_dict(), "agents_md": refreshed})
        return
    for note in report.notes:
        err(printable(note))  # remote paths in it never drive the terminal
    for path, kinds in report.withheld.items():
        err(
            f"not committed: {printable(path)} holds a secret ({', '.join(kinds)}); remove it, or run vaultmem sync "
            "--allow-secrets to commit it on purpose"
        )
    if report.committed:
        typer.echo(f"committed {report.committed}: {report.message.splitlines()[0]}")
    words = {"A": "added", "M": "changed", "D": "removed", "R": "renamed", "C": "copied", "T": "changed"}
    for change, path in report.incoming:
        typer.echo(f"in: {words.get(change, change)} {printable(path)}")
    for path in report.conflicts:
        typer.echo(f"conflict kept both versions: {printable(path)} (status: conflict; edit it to settle)")
    if report.pushed:
        typer.echo("pushed")
    changed = [f for f in refreshed if f["changed"]]
    for f in changed:
        typer.echo(f"agents-md {agents_md_line(f)}")
    if not (report.committed or report.incoming or report.pushed or changed):
        typer.echo("up to date")


@app.command()
def sync(
    vault: VaultOpt = None,
    message: Annotated[
        str | None,
        typer.Option("--message", "-m", help="Commit message (a list of the changed memories is added)."),
    ] = None,
    no_push: Annotated[bool, typer.Option("--no-push", help="Commit and pull, but do not push.")] = False,
    setup: Annotated[
        bool,
        typer.Option(
            "--setup", help="Register the note merge driver (.gitattributes, repo git config) first."
        ),
    ] = False,
    allow_secrets: Annotated[
        bool,
        typer.Option(
            "--allow-secrets",
            help="Commit notes holding a secret (API key, token, password) on purpose; without it they are left out and named.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Share the vault through git: commit changed notes (the message lists the memories added,
    changed, resolved, superseded), fetch, merge aside (notes merged key by key), bring the
    files over one by one (a file changed meanwhile is merged, never overwritten), push, and
    print what came in. Never checks out or commits .vaultmem/; never force-pushes; a sync
    killed at any moment loses nothing and the next one finishes.

    Example: vaultmem sync      vaultmem sync -m "after the planning session" --no-push
    """
    from ..sync.git import setup as setup_driver
    from ..sync.git import sync as run_sync

    root = api.vault_root(vault)
    if setup:
        for item in setup_driver(root):
            err(f"set up {item}")
    report = run_sync(root, message=message, push=not no_push, interactive=sys.stdin.isatty(),
                      allow_secrets=allow_secrets)  # fmt: skip
    index_after_sync(root, report)
    try:
        refreshed, problem = api.refresh_agents_md(root, "sync"), None
    except BadInput as e:  # the sync itself is done: report it, then the one-line error
        refreshed, problem = [], e
    print_report(report, as_json, refreshed)
    if problem:
        raise problem
    if report.withheld:
        raise typer.Exit(1)


@app.command("merge-driver", hidden=True)
def merge_driver(
    base: Annotated[str, typer.Argument(help="%O: the common ancestor's version.")],
    ours: Annotated[str, typer.Argument(help="%A: this side's version; the result is written here.")],
    theirs: Annotated[str, typer.Argument(help="%B: the other side's version.")],
    path: Annotated[str | None, typer.Argument(help="%P: the note's path in the repository.")] = None,
) -> None:
    """The git merge driver for notes (git calls it; registered by `vaultmem sync --setup`).

    Example (git config): merge.vaultmem.driver = vaultmem merge-driver %O %A %B %P
    """
    from ..core.mergedriver import main

    code = main([base, ours, theirs, *([path] if path else [])])
    raise typer.Exit(code)
