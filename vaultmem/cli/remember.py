"""`vaultmem remember`, which agents run after recall most: its own module, so that through the
memory service it builds only its own command (like ``recall``), not the other ~40."""

from __future__ import annotations

import shlex
import sys
from typing import Annotated

import typer

from .. import api
from ..core.errors import BadInput
from .common import AgentOpt, Command, JsonOpt, VaultOpt, app, echo_json


@app.command()
def remember(
    type: Annotated[str, typer.Argument(help="Memory type: decision, fact, lesson, gotcha, bug_fix, ...")],
    title: Annotated[str, typer.Argument(help="Title (also the file name).")],
    content: Annotated[str | None, typer.Argument(help="Body text; '-' reads standard input.")] = None,
    tag: Annotated[list[str], typer.Option("--tag", help="A tag to give the memory (repeatable).")] = [],
    importance: Annotated[str | None, typer.Option(help="1-10 or high/medium/low.")] = None,
    link: Annotated[list[str], typer.Option("--link", help="Link to another note (repeatable).")] = [],
    anchor: Annotated[str | None, typer.Option(help="Anchor note to link to; created if missing.")] = None,
    scope: Annotated[str | None, typer.Option(help="project (default) or user.")] = None,
    context: Annotated[
        list[str], typer.Option("--context", help="File or topic it is about (repeatable).")
    ] = [],
    source: Annotated[str | None, typer.Option(help="Agent or session writing it.")] = None,
    shared: Annotated[bool, typer.Option("--shared", help="Write to the team's shared vault.")] = False,
    key: Annotated[
        str | None,
        typer.Option(
            help="Subject key (e.g. deploy-target): replaces the active memory of the same key and type."
        ),
    ] = None,
    supersedes: Annotated[
        list[str],
        typer.Option("--supersedes", help="A memory (id, title or path) this one replaces (repeatable)."),
    ] = [],
    vault: VaultOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store a new memory as a markdown note from its type's template. Prints what it
    superseded (same --key, named by --supersedes, or retracted in so many words) and the
    possible updates it left alone: recall shows those as "may be outdated by" the new one;
    supersede them yourself if they are.

    Example: vaultmem remember decision "Use SQLite for the cache" "Because ..." --tag cache --anchor "Project: MyApp"
    """
    if content == "-":
        content = sys.stdin.read()
    if content is not None and not content.strip():
        raise BadInput("the memory's text is empty: give it text (or leave it out for the type's template)")
    result = api.Session([vault] if vault else [], agent).remember(
        type, title, content, shared=shared, scope=scope, tags=tag, importance=importance, links=link,
        anchor=anchor, context=context, source=source, key=key, supersedes=supersedes)  # fmt: skip
    if as_json:
        echo_json(result)
        return
    if result["duplicate_of"]:
        added = f"; added tags {', '.join(result['tags_added'])}" if result.get("tags_added") else ""
        typer.echo(f"already remembered as {result['id']}  {result['path']}{added}")
        if result.get("text_added"):
            typer.echo(f"added to it: {' '.join(result['text_added'])}")
        return
    if result["created_anchor"]:
        typer.echo(f"created anchor {result['created_anchor']}")
    typer.echo(f"{result['id']}  {result['path']}")
    for old in result["superseded"]:
        how = (
            f"similarity {old['similarity']}" if old.get("similarity") is not None else old.get("reason", "")
        )
        how = f"same key {old['key']}" if old.get("key") else "named" if old.get("named") else how
        action = "archived" if old.get("action") == "archive" else "superseded"
        typer.echo(f"{action} {old['id']}  {old['title']}  ({how})")
    for old in result.get("possible_updates", []):
        typer.echo(
            f"possible update of {old['id']}  {old['title']}  (similarity {old['similarity']}; it stays, "
            f"shown as may be outdated); if it is: vaultmem supersede {old['id']} {result['id']}"
        )
    undo = [f"vaultmem delete --force {result['id']}"]
    if result["created_anchor"]:
        undo.append(f"vaultmem delete --force {shlex.quote(result['created_anchor'])}")
    undo += [f"vaultmem reopen {old['id']}" for old in result["superseded"]]
    typer.echo("undo: " + "; ".join(undo))


def run_remember(argv: list[str]) -> None:
    """Run `vaultmem remember ARGV` as a command of its own (no other command is built)."""
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    single.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})(remember)
    single(args=argv, prog_name="vaultmem remember")
