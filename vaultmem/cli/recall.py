"""`vaultmem recall`, the command agents run most: kept in its own module so that its fast
path (``run_recall``, called by the console entry before anything else is imported) loads
neither the other ~40 commands nor the modules they need."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from ..recall.params import Param, with_params
from .common import (
    AgentOpt,
    Command,
    JsonOpt,
    VaultsOpt,
    app,
    err,
    open_session,
)
from .hits import recall_output, skipped_notes


def _option(p: Param) -> Any:
    """The typer option of a declared recall parameter."""
    return Annotated[p.type, typer.Option(*p.cli_flags, help=p.help)]


_FRONT = [
    inspect.Parameter(
        "query",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Annotated[str, typer.Argument(help="What you want to remember, in your own words.")],
    )
]
_BACK = [
    inspect.Parameter("explain", inspect.Parameter.KEYWORD_ONLY, default=False,
                      annotation=Annotated[bool, typer.Option("--explain", help="Show the parts of each score.")]),
    inspect.Parameter("no_wait", inspect.Parameter.KEYWORD_ONLY, default=False,
                      annotation=Annotated[bool, typer.Option("--no-wait", help="When the memory service is not running "
                                           "yet: start it and answer at once from keywords only (BM25 over the index "
                                           "as it is, no model) instead of waiting for it.")]),
    inspect.Parameter("vault", inspect.Parameter.KEYWORD_ONLY, default=[], annotation=VaultsOpt),
    inspect.Parameter("agent", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=AgentOpt),
    inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=JsonOpt),
]  # fmt: skip


@app.command()
@with_params(_option, _FRONT, _BACK)
def recall(query: str, explain: bool, no_wait: bool, vault: list[str], agent: str | None, as_json: bool,
           **options: Any) -> None:  # fmt: skip
    """Find the memories that answer a question: keyword + semantic search, expanded along links.
    Time expressions in the query ("last week", "in October", "since the migration") are
    matched against the notes' dates (--explain shows the range).

    Example: vaultmem recall "why did we choose advisory locks?" --type decision -k 5
    """
    memory = open_session(vault, agent, quiet=as_json, wait=not no_wait)
    hits = memory.recall(query, explain, **options)
    out, notes = recall_output(
        query, options, hits, memory.degraded, explain, as_json, indexing=memory.indexing
    )
    for note in skipped_notes(memory.skipped, memory.told) + notes:
        err(note)
    for line in out:  # typer.echo drops the styles when not writing to a terminal
        typer.echo(line)


def run_recall(argv: list[str]) -> None:
    """Run `vaultmem recall ARGV` as a command of its own (no other command is built)."""
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    single.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})(recall)
    single(args=argv, prog_name="vaultmem recall")
