"""CLI commands to look at a vault: `vaultmem doctor`, `vaultmem graph ...`, `vaultmem serve`
(registered on ``cli_common.app``; ``cli.py`` imports this module)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..api import vault_root
from ..core.errors import BadInput
from ..core.fence import printable
from .common import Group, JsonOpt, VaultOpt, app, echo_json, err, open_session
from .render import plural

# ---------------------------------------------------------------------- doctor


@app.command()
def doctor(
    vault: VaultOpt = None,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Apply the safe repairs (reindex, drop drifted entries, archive expired memories, rewrite vaultmem's own links Obsidian does not resolve, move the config out of .vaultmem/) and print each.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """One health report: unreadable notes, duplicate ids, broken links (with the closest
    title), links Obsidian does not resolve (only vaultmem finds them, by title or id), orphans, empty anchors, supersede chains that loop or end in a resolved note,
    memories that look like unrecorded updates, candidates, notes left in a merge conflict,
    expired notes, index drift, the
    watcher, disk use, and the config (still in .vaultmem/; settings that differ from the
    defaults). Exit code 1 when something needs attention.

    Example: vaultmem doctor      vaultmem doctor --fix      vaultmem doctor --json
    """
    from ..agents.hook_runs import doctor_report
    from .render import doctor_lines

    # where the index is, as `vaultmem doctor` without typer does (cli/fast.py)
    data = doctor_report(open_session(vault), fix)
    changes = data.pop("changes", [])
    for line in doctor_lines(data, as_json, changes):
        typer.echo(line)
    if data["needs_attention"]:
        raise typer.Exit(1)


# ---------------------------------------------------------------------- graph

graph_app = typer.Typer(
    cls=Group,
    help="The link graph: links, backlinks, paths, orphans, exports.\n\n"
    'Example: vaultmem graph backlinks "Project: MyApp"      vaultmem graph export --format mermaid --depth 1',
    no_args_is_help=True,
)
app.add_typer(graph_app, name="graph")

NoteArg = Annotated[str, typer.Argument(help="A note: id, title, alias, path or [[link]].")]
DepthOpt = Annotated[
    int, typer.Option("--depth", "-d", min=0, max=10, help="Hops to follow (either direction).")
]


def _ask(vault: str | None, query: str, **args: Any) -> Any:
    """One link graph query (the ``graph`` operation, where the index is): read like ``list``,
    nothing indexed and no model loaded."""
    return open_session(vault).graph(query, **args)


def _rows(items: list[dict], extra: str | None = None) -> None:
    """A row per note: title, path and its ``extra`` field (a list, or a count named by it)."""
    for it in items:
        value = it[extra] if extra else None
        if isinstance(value, list):
            tail = f"  [{', '.join(value)}]"
        elif extra:
            tail = f"  ({plural(it[extra], extra.rstrip('s'))})"
        else:
            tail = ""
        where = it["path"] or "missing note"
        typer.echo(printable(f"{it['title']}  ({where}){tail}"))
    if not items:
        typer.echo("(none)")


def _note_rows(vault: str | None, query: str, extra: str | None, as_json: bool, **args: Any) -> None:
    """Print a query's notes: JSON, or a row per note with its ``extra`` field."""
    items = _ask(vault, query, **args)
    echo_json(items) if as_json else _rows(items, extra)


@graph_app.command("links")
def graph_links(note: NoteArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """What a note links to (missing targets included), with the kind of each link.

    Example: vaultmem graph links "Use Postgres advisory locks for job leasing"
    """
    _note_rows(vault, "links", "kinds", as_json, note=note)


@graph_app.command("backlinks")
def graph_backlinks(note: NoteArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Notes that link to a note.

    Example: vaultmem graph backlinks "Project: Tidewater"
    """
    _note_rows(vault, "backlinks", "kinds", as_json, note=note)


@graph_app.command("neighbours")
def graph_neighbours(
    note: NoteArg, depth: DepthOpt = 1, vault: VaultOpt = None, as_json: JsonOpt = False
) -> None:
    """Notes within --depth hops of a note, following links either way, nearest first.

    Example: vaultmem graph neighbours "Project: Tidewater" --depth 2
    """
    _note_rows(vault, "neighbours", "hops", as_json, note=note, depth=depth)


@graph_app.command("path")
def graph_path(a: NoteArg, b: NoteArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """The shortest chain of links between two notes (either direction). Each hop says which
    way its link goes: "->" the note above links to this one, "<-" this one links to the note
    above (a backlink), "<->" both. Exit 1 if none.

    Example: vaultmem graph path "Use Redis locks for job leasing" "Project: Tidewater"
    """
    found = _ask(vault, "path", note=a, other=b)
    if as_json:
        echo_json(found)
    elif found["path"]:
        for arrow, it in zip(["", *(f"{a} " for a in found["directions"])], found["path"]):
            typer.echo(printable(f"{arrow}{it['title']}  ({it['path']})"))
    else:
        err("no chain of links joins these notes")
    if not found["path"]:
        raise typer.Exit(1)


@graph_app.command("orphans")
def graph_orphans(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Notes with no links in or out.

    Example: vaultmem graph orphans
    """
    _note_rows(vault, "orphans", None, as_json)


@graph_app.command("unresolved")
def graph_unresolved(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Links to notes that do not exist, and links Obsidian does not resolve (vaultmem finds
    their note by its title or id; Obsidian by file name), with the notes that hold them.

    Example: vaultmem graph unresolved
    """
    items = _ask(vault, "unresolved")
    if as_json:
        echo_json(items)
        return
    for it in items:
        why = "  (not resolved in Obsidian: no such file name)" if it.get("obsidian_only") else ""
        typer.echo(printable(f"[[{it['target']}]]  <- {', '.join(it['from'])}{why}"))
    if not items:
        typer.echo("(none)")


@graph_app.command("anchors")
def graph_anchors(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Anchor notes (type project, or tagged anchor) with how many notes link to or from each.

    Example: vaultmem graph anchors
    """
    _note_rows(vault, "anchors", "members", as_json)


@graph_app.command("export")
def graph_export(
    fmt: Annotated[str, typer.Option("--format", "-f", help="json, graphml, dot or mermaid.")] = "json",
    anchor: Annotated[str | None, typer.Option("--anchor", help="Only this note's neighbourhood.")] = None,
    depth: DepthOpt = 2,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The link graph (or an anchor's neighbourhood) as JSON, GraphML, DOT or Mermaid; the
    Mermaid block pastes into a markdown note.

    Example: vaultmem graph export --format mermaid --anchor "Project: Tidewater" --depth 1
    """
    fmt = fmt.lower()
    if as_json and fmt != "json":
        raise BadInput(f"--json asks for JSON but --format asks for {fmt}; pass one of them")
    typer.echo(_ask(vault, "export", note=anchor, depth=depth, format=fmt)["text"], nl=False)


# ---------------------------------------------------------------------- serve


@app.command()
def serve(
    vault: VaultOpt = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free port).")] = 8770,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
    poll: Annotated[
        float,
        typer.Option(help="Seconds between checks for changes (file events, index writes of a watcher)."),
    ] = 2.0,
    new_token: Annotated[
        bool,
        typer.Option(
            "--new-token",
            help="Replace the web view's access token first: browsers log in again; the old token is refused, also by servers already running.",
        ),
    ] = False,
) -> None:
    """A local web view of the vault on 127.0.0.1: search, notes, the graph and the memory
    state. Prints a one-time login link (opening it sets a session cookie and drops the code
    from the address); requests without the web view's token are refused (its own token, not
    MCP's). Writes only lifecycle actions.

    Example: vaultmem serve --open      vaultmem serve --new-token
    """
    from ..web.server import run

    run(vault_root(vault), port=port, open_browser=open_browser, poll=poll, announce=err, new_token=new_token)
