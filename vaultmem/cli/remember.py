"""`vaultmem remember`, which agents run after recall most: its own module, so that through the
memory service it builds only its own command (like ``recall``), not the other ~40."""

from __future__ import annotations

import inspect
import shlex
import sys
from typing import Annotated, Any

import typer

from .. import api
from ..core.errors import BadInput
from ..core.fence import printable
from ..memory.fields import FIELDS
from ..recall.params import Param, with_params
from .common import AgentOpt, Command, JsonOpt, VaultOpt, app, echo_json, err


def _option(f: Param) -> Any:
    """The typer option of a declared remember field (typer reads ``importance`` as text)."""
    kind = str | None if f.name == "importance" else f.type
    return Annotated[kind, typer.Option(*f.cli_flags, help=f.help)]


_FRONT = [
    inspect.Parameter(
        "type",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Annotated[
            str, typer.Argument(help="Memory type: decision, fact, lesson, gotcha, bug_fix, ...")
        ],
    ),
    inspect.Parameter(
        "title",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Annotated[str, typer.Argument(help="Title (also the file name).")],
    ),
    inspect.Parameter(
        "content",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[str | None, typer.Argument(help="Body text; '-' reads standard input.")],
    ),
]


class Once(Command):
    """``remember``: an option that takes one value given twice is refused (click keeps the last
    one silently: ``--anchor A --anchor B`` dropped A)."""

    def parse_args(self, ctx, args):
        if ctx.resilient_parsing:  # completing a word: nothing to refuse
            return super().parse_args(ctx, args)
        single = {o: p for p in self.params if getattr(p, "is_flag", True) is False and not p.multiple
                  for o in p.opts if o.startswith("-")}  # fmt: skip
        given: dict[str, list[str]] = {}
        for arg in args[: args.index("--") if "--" in args else len(args)]:
            flag = arg.split("=", 1)[0]
            if flag in single:
                given.setdefault(single[flag].name or flag, []).append(flag)
        for name, flags in given.items():
            if len(flags) > 1:
                hint = "; a memory has one anchor: link other notes with --link" if name == "anchor" else ""
                ctx.fail(f"{flags[0]} given {len(flags)} times: it takes one value{hint}")
        return super().parse_args(ctx, args)


_BACK = [
    inspect.Parameter("vault", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=VaultOpt),
    inspect.Parameter("agent", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=AgentOpt),
    inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=JsonOpt),
]  # fmt: skip


@app.command(cls=Once)
@with_params(_option, _FRONT, _BACK, params=FIELDS)
def remember(type: str, title: str, content: str | None, vault: str | None, agent: str | None, as_json: bool,
             **fields: Any) -> None:  # fmt: skip
    """Store a new memory as a markdown note from its type's template. Prints what it
    superseded (same --key, named by --supersedes, retracted in so many words, or given a new
    value in the same title: "CI now runs on ubuntu-22.04") and the possible updates it left alone: recall shows those as "may be outdated by" the new one;
    supersede them yourself if they are.

    Example: vaultmem remember decision "Use SQLite for the cache" "Because ..." --tag cache --anchor "Project: MyApp"
    """
    if content == "-":
        content = sys.stdin.read()
    if content is not None and not content.strip():
        raise BadInput("the memory's text is empty: give it text (or leave it out for the type's template)")
    result = api.Session([vault] if vault else [], agent).remember(type, title, content, **fields)
    if as_json:
        echo_json(result)
        return
    if result["duplicate_of"]:
        added = f"; added tags {', '.join(result['tags_added'])}" if result.get("tags_added") else ""
        typer.echo(printable(f"already remembered as {result['id']}  {result['path']}{added}"))
        if result.get("text_added"):
            typer.echo(f"added to it: {' '.join(result['text_added'])}")
        return
    for warning in result.get("warnings", []):
        err(warning)
    if result["created_anchor"]:
        typer.echo(f"created anchor {result['created_anchor']}")
    typer.echo(printable(f"{result['id']}  {result['path']}"))
    for old in result["superseded"]:
        how = (
            f"similarity {old['similarity']}" if old.get("similarity") is not None else old.get("reason", "")
        )
        how = f"same key {old['key']}" if old.get("key") else "named" if old.get("named") else how
        action = "archived" if old.get("action") == "archive" else "superseded"
        typer.echo(printable(f"{action} {old['id']}  {old['title']}  ({how})"))
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
    single.command(cls=Once, context_settings={"help_option_names": ["-h", "--help"]})(remember)
    single(args=argv, prog_name="vaultmem remember")
