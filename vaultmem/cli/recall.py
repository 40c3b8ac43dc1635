"""`vaultmem recall`, the command agents run most: kept in its own module so that its fast
path (``run_recall``, called by the console entry before anything else is imported) loads
neither the other ~40 commands nor the modules they need."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from ..core.fence import strip_escapes
from ..recall.params import Param, with_params
from .common import (
    AgentOpt,
    Command,
    JsonOpt,
    VaultsOpt,
    app,
    echo_json,
    err,
    open_session,
)


def _option(p: Param) -> Any:
    """The typer option of a declared recall parameter."""
    return Annotated[p.type, typer.Option(*p.cli_flags, help=p.help)]


_FRONT = [inspect.Parameter("query", inspect.Parameter.KEYWORD_ONLY,
                            annotation=Annotated[str, typer.Argument(help="What you want to remember, in your own words.")])]
_BACK = [
    inspect.Parameter("explain", inspect.Parameter.KEYWORD_ONLY, default=False,
                      annotation=Annotated[bool, typer.Option("--explain", help="Show the parts of each score.")]),
    inspect.Parameter("no_wait", inspect.Parameter.KEYWORD_ONLY, default=False,
                      annotation=Annotated[bool, typer.Option("--no-wait", help="When the memory service is not running "
                                           "yet: start it and answer at once from keywords and links only (BM25 and the "
                                           "graph, no model) instead of waiting for it.")]),
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
    if as_json:
        echo_json({"query": query, "mode": options["mode"], "profile": options["profile"], "results": hits,
                   **({"degraded": memory.degraded} if memory.degraded else {})})  # fmt: skip
        return
    if memory.degraded:
        err("keywords and links only: the memory service is starting (the next recall uses the model)")
    if not hits:
        err("no memories match")
    for h in hits:
        _print_hit(h, explain)


def _highlight(text: str, words: list[str]) -> str:
    import re

    if not words:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
    return pattern.sub(lambda m: typer.style(m.group(0), bold=True, fg="yellow"), text)


def _print_hit(h: dict, explain: bool) -> None:
    h = {**h, **{k: strip_escapes(str(h[k])) for k in ("title", "id", "path", "snippet", "via") if h.get(k)}}
    head = typer.style(f"{h['rank']:>2}. {h['title']}", bold=True)
    state = f"  {h['status']}" if h.get("status") not in (None, "active") else ""
    typer.echo(f"{head}  [{h['type'] or '-'}]{state}  {max(h['score'], 0.0):.3f}" + (f"  ({h['via']})" if h.get("via") else ""))
    where = f"{h['vault']}:" if h.get("vault") else ""
    typer.echo(typer.style(f"    {where}{h['id']}  {where}{h['path']}", dim=True))
    if h.get("outdated_by"):
        typer.echo("    may be outdated by " + ", ".join(f"[[{t}]]" for t in h["outdated_by"]))
    if h["snippet"]:
        typer.echo("    " + _highlight(h["snippet"], h["highlights"]))
    if explain:
        e = h["explain"]
        typer.echo(
            f"    = (bm25 {e['bm25']:.3f} [raw {e['bm25_raw']:.2f}] + vector {e['vector']:.3f} [cos {e['vector_raw']:.3f}]"
            + (f" + length {e['length']:.3f}" if "length" in e else "")
            + f" + context {e.get('context', 0.0):.3f}{' via ' + str(e['context_via']) if e.get('context_via') else ''}"
            f" + graph {e['graph']:.3f}{' via ' + str(e['graph_via']) if e.get('graph_via') else ''}"
            f" + anchor {e['anchor']:.3f}) x profile {e['profile']:.2f} x importance {e['importance']:.2f}"
            f" x adaptive blend {e['blend']:.3f}"
        )
        if "adaptive" in e:
            typer.echo(
                f"      adaptive {e['adaptive']:.3f} from usefulness {e['usefulness']:.2f}, recency {e['recency']:.2f},"
                f" frequency {e['frequency']:.2f} (weights in [adaptive] of the vault config)"
            )
        if "time_range" in e:
            typer.echo(f"      + time {e.get('time', 0.0):.3f}: dates {e['time_range']}")
        if "first_round_rank" in e:
            came = f"rank {e['first_round_rank']} in the first round" if e["first_round_rank"] else "not in the first round"
            typer.echo(f"      + subject {e.get('subject', 0.0):.3f} (second round; {came}){': ' + e['subject_via'] if e.get('subject_via') else ''}")
        if "as_of" in e:
            typer.echo(f"      valid on {e['as_of']}")


def run_recall(argv: list[str]) -> None:
    """Run `vaultmem recall ARGV` as a command of its own (no other command is built)."""
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    single.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})(recall)
    single(args=argv, prog_name="vaultmem recall")
