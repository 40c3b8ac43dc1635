"""CLI commands that move memory in and out: ``export`` (a JSON backup, or a project's rules into
AGENTS.md) and ``import`` (a backup, or what other tools already hold: agent histories,
instruction files, the MCP memory server's graph). The work is in ``agents/`` (the importers in
``agents/importers/``), run by the ``import`` operation wherever the session's calls run (the
memory service, or this process: ``cli.service.import_task`` hands it over); this parses,
resolves what the user named where the user is (paths, standard input) and renders, progress too.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any

import typer

from ..core.errors import BadInput
from ..core.fence import printable
from .common import AnchorOpt, JsonOpt, VaultOpt, agents_md_line, app, echo_json, err, open_session

TARGETS = ("agents-md",)
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="List what would be written; write nothing.")]


@app.command()
def export(
    file: Annotated[
        str | None,
        typer.Argument(
            help="With --to agents-md: the file to write (default: ./AGENTS.md; CLAUDE.md works the same)."
        ),
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="agents-md: the project's confirmed preferences, lessons and key decisions into a marked section of AGENTS.md.",
        ),
    ] = None,
    anchor: AnchorOpt = None,
    dry_run: DryRunOpt = False,
    keep: Annotated[
        bool | None,
        typer.Option(
            "--keep/--forget",
            help="With --to agents-md: refresh this file on maintain/sync on this "
            "machine from now on (kept in your config folder, never synced); --forget stops it.",
        ),
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write every note (exact text) as JSON to standard output; or, with --to agents-md, the
    project's rules into the section between <!-- vaultmem:begin --> and <!-- vaultmem:end -->
    of AGENTS.md (the rest of the file untouched; running it again changes nothing).
    --keep: maintain --apply and sync refresh it on this machine from now on.

    Example: vaultmem export > backup.json      vaultmem export --to agents-md AGENTS.md --anchor "Project: MyApp"
    """
    if to is None:
        if file is not None:
            raise BadInput("a file argument needs --to agents-md (the JSON backup goes to standard output)")
        from ..memory.ops import dump_json

        data = open_session(vault).export()
        for skipped in data.pop("skipped"):
            err(f"skipped {skipped['path']}: {skipped['error']}")
        typer.echo(dump_json(data))
        return
    if to not in TARGETS:
        raise BadInput(f"--to: {to!r} is not one of: {', '.join(TARGETS)}")
    from ..memory import agents_md

    session = open_session(vault)
    if keep is False:
        err(
            f"forgot {agents_md.keep(session.root, file or 'AGENTS.md', False)}: no longer refreshed on this machine"
        )
        return
    result = session.agents_md(file or "AGENTS.md", anchor, dry_run)
    if keep and not dry_run:
        err(
            f"kept {agents_md.keep(session.root, file or 'AGENTS.md')}: maintain --apply and sync refresh it on this machine"
        )
    if as_json:
        echo_json(result)
    elif dry_run:
        typer.echo(printable(result["section"], keep="\n"))
    else:
        typer.echo(agents_md_line(result))
        if result["undo"]:
            typer.echo(f"undo: vaultmem undo {result['undo']}")


class Progress:
    """An import's progress on standard error (``cli/progress.py``: a bar on a terminal, plain
    lines, JSON events with ``--json``): the files read, then the items written; a last line
    (a ``done`` event with ``--json``) says how many and how long."""

    def __init__(self, what: str, as_json: bool = False):
        from .progress import reporter

        self.what, self.start, self.as_json = what, time.monotonic(), as_json
        self.done, self.wrote = 0, (0, 0)
        names = {"reading": f"reading {what} files", "writing": "writing"}
        self.shown = reporter(
            "import", as_json, "reading", names, after=2.0
        )  # a short import: its result only

    def __call__(self, done: int, total: int) -> None:
        self.done = done
        self.shown(done, total)

    def event(self, event: dict[str, Any]) -> None:
        """A progress event of the ``import`` operation (``service.ops.Emitted``): reading, then writing."""
        (self.writing if event.get("phase") == "writing" else self)(int(event["done"]), int(event["total"]))

    def writing(self, done: int, total: int) -> None:
        """An import's writes: ``done`` of ``total`` items written and durable (a checkpoint)."""
        if self.shown.phase != "writing":
            self.shown.start("writing")
        self.wrote = (done, total)
        self.shown(done, total)

    def close(self) -> None:
        self.shown.close()
        seconds = time.monotonic() - self.start
        if self.as_json:
            print(json.dumps({"event": "done", "what": "import", "files": self.done, "written": self.wrote[0],
                              "items": self.wrote[1], "seconds": round(seconds, 1)}), file=sys.stderr)  # fmt: skip
            return
        wrote = f"; {self.wrote[0]} of {self.wrote[1]} written" if self.wrote[1] else ""
        print(f"vaultmem: {self.done} {self.what} file(s) done in {seconds:.1f} s{wrote}", file=sys.stderr)


@app.command("import")
def import_cmd(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="A file written by `vaultmem export` ('-': standard input); with --from: what to import (default: the agent's own folder, ~/.claude/projects or ~/.codex)."
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="claude-code, codex (session histories), rules (CLAUDE.md, AGENTS.md, GEMINI.md, .cursor/rules, copilot instructions) mcp-memory (the MCP memory server's memory.jsonl), chatgpt or claude-ai (an export's conversations.json).",
        ),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            help="Only sessions run in this folder (or below it); for rules, the project the files belong to.",
        ),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only sessions active since: 7d, 2w or a date (2026-01-01).")
    ] = None,
    dry_run: DryRunOpt = False,
    undo: Annotated[
        str | None,
        typer.Option(
            "--undo", help="Take back one import: its batch id, or its source (the newest import from it)."
        ),
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Restore notes from an export (notes whose id exists are skipped); or, with --from, start
    from what you already have: agent session histories become dated session summaries and
    candidate rules, instruction files active rules, the MCP memory graph notes and links.
    Running an import again adds nothing new. Each import is recorded as a dated batch:
    --undo BATCH (or --undo SOURCE) removes exactly what it wrote.

    Example: vaultmem import --from claude-code --project ~/src/shop      vaultmem import --undo claude-code
    """
    from .service import import_task

    paths = paths or []
    session = open_session(vault, tasks={"import": import_task})
    if undo is not None:
        from .undo import undo_batch

        if paths or source:
            raise BadInput("--undo takes no files and no --from (give the batch id or the source to --undo)")
        undo_batch(session, undo, "import", as_json)
        return
    if source is None:  # standard input is read here, where the user is, and sent as the backup's text
        text = _stdin() if paths == ["-"] else None
        result = session.import_(None, [] if text is not None else paths, text=text)
    else:
        result = _run_import(session, source, paths, project, since, dry_run, as_json)
    if as_json:
        echo_json(result)
        return
    lines = (
        render_import(result)
        if source
        else [f"imported {result['imported']}, skipped {result['skipped_existing']} already present"]
    )
    for line in lines:
        typer.echo(printable(line))
    if result["undo"]:
        typer.echo(f"undo: vaultmem import --undo {result['undo']}")


def _run_import(session: Any, source: str, paths: list[str], project: str | None, since: str | None,
                dry_run: bool, as_json: bool = False) -> dict[str, Any]:  # fmt: skip
    """``import --from SOURCE`` through the ``import`` operation, its progress shown here."""
    from ..agents import importers

    importer = importers.get(source)
    progress = Progress(importer.what, as_json)
    result: dict[str, Any] = session.import_(source, importer.where(paths), project=project, since=since,
                                             dry_run=dry_run, on_progress=progress.event)  # fmt: skip
    progress.close()  # an error instead is its one line
    return result


def _stdin() -> str:
    """A backup on standard input, whole."""
    try:
        return sys.stdin.read()
    except OSError as e:
        raise BadInput(f"cannot read -: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise BadInput(f"- is not JSON ({e})") from None


def render_import(r: dict[str, Any]) -> list[str]:
    """The human lines of an import's result (each importer words its own)."""
    from ..agents import importers

    return importers.get(r["source"]).lines(r)
