"""CLI commands that move memory in and out: ``export`` (a JSON backup, or a project's rules into
AGENTS.md) and ``import`` (a backup, or what other tools already hold: agent histories,
instruction files, the MCP memory server's graph). The work is in ``agents/``; this parses and renders.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.errors import BadInput
from ..core.fence import printable
from .common import AnchorOpt, JsonOpt, VaultOpt, agents_md_line, app, echo_json, err, open_session

SOURCES = ("claude-code", "codex", "rules", "mcp-memory", "chatgpt", "claude-ai")
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

        data = open_session(vault).vault.export()
        for skipped in data.pop("skipped"):
            err(f"skipped {skipped['path']}: {skipped['error']}")
        typer.echo(dump_json(data))
        return
    if to not in TARGETS:
        raise BadInput(f"--to: {to!r} is not one of: {', '.join(TARGETS)}")
    from ..memory import agents_md
    from ..memory import undo as undomod

    v = open_session(vault).vault
    if keep is False:
        err(
            f"forgot {agents_md.keep(v.root, file or 'AGENTS.md', False)}: no longer refreshed on this machine"
        )
        return
    target = Path(file or "AGENTS.md").expanduser()
    with undomod.recording(v, "export", str(target.resolve())) as batch:
        batch.watch([target / "AGENTS.md" if target.is_dir() else target])
        result = agents_md.export(v, file or "AGENTS.md", anchor, dry_run)
    result["undo"] = None if batch.empty() else batch.id
    if keep and not dry_run:
        err(
            f"kept {agents_md.keep(v.root, file or 'AGENTS.md')}: maintain --apply and sync refresh it on this machine"
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
    """A progress line on standard error: redrawn in place on a terminal, one final line otherwise."""

    def __init__(self, what: str):
        self.what, self.start, self.tty, self.last = what, time.monotonic(), sys.stderr.isatty(), 0.0
        self.done, self.wrote = 0, (0, 0)

    def __call__(self, done: int, total: int) -> None:
        self.done = done
        self._show(f"reading {self.what} {done}/{total}", done == total)

    def writing(self, done: int, total: int) -> None:
        """An import's writes: ``done`` of ``total`` items written and durable (a checkpoint)."""
        self.wrote = (done, total)
        self._show(f"written {done}/{total} ({100 * done // max(total, 1)}%)", True)

    def _show(self, text: str, force: bool) -> None:
        now = time.monotonic()
        if self.tty and (now - self.last > 0.1 or force):
            self.last = now
            print(f"\r\033[Kvaultmem: {text}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty and (self.done or self.wrote[1]):
            print("", file=sys.stderr)
        wrote = f"; {self.wrote[0]} of {self.wrote[1]} written" if self.wrote[1] else ""
        print(
            f"vaultmem: {self.done} {self.what} file(s) done in {time.monotonic() - self.start:.1f} s{wrote}",
            file=sys.stderr,
        )


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
    from ..memory import undo as undomod

    paths = paths or []
    v = open_session(vault).vault
    if undo is not None:
        from .undo import report_undo

        if paths or source:
            raise BadInput("--undo takes no files and no --from (give the batch id or the source to --undo)")
        report_undo(undomod.undo(v, undomod.find(v, undo, "import")), as_json)
        return
    if source is not None and source not in SOURCES:
        raise BadInput(f"--from: {source!r} is not one of: {', '.join(SOURCES)}")
    label = source or (
        str(Path(paths[0]).expanduser().resolve()) if len(paths) == 1 and paths[0] != "-" else "-"
    )
    with undomod.recording(
        v, "import", label, resume=bool(source) and not dry_run
    ) as batch:  # a stopped one resumes
        if source is None:
            result = _restore(paths, v)
        else:
            result = _run_import(source, paths, project, since, dry_run, v)
    result["undo"] = None if batch.empty() else batch.id
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


def _run_import(source: str, paths: list[str], project: str | None, since: str | None, dry_run: bool,
                v: Any) -> dict[str, Any]:  # fmt: skip
    if source in ("rules", "mcp-memory") and since:
        raise BadInput(f"--since applies to session histories, not to --from {source}")
    if source == "mcp-memory":
        if len(paths) != 1:
            raise BadInput("--from mcp-memory takes one file (the server's memory.jsonl)")
        from ..agents.mcp_memory import import_graph

        progress = Progress("MCP memory")
        result = import_graph(v, paths[0], dry_run)
        progress(1, 1)
        progress.close()
        return result
    if source == "rules":
        from ..agents.rules_import import import_rules

        progress = Progress("instruction")
        result = import_rules(v, paths or ["."], project, dry_run)
        progress(len(result["files"]), len(result["files"]))
        progress.close()
        return result
    from ..agents.importers import import_agent

    progress = Progress(f"{source} session")
    result = import_agent(v, source, paths, project=project, since=since, dry_run=dry_run,
                          progress=progress)  # fmt: skip
    progress.close()  # an error instead is its one line
    return result


def render_import(r: dict[str, Any]) -> list[str]:
    """The human lines of an import's result."""
    would = "would write" if r["dry_run"] else "wrote"
    if r["source"] == "rules":
        lines = []
        for f in r["files"]:
            lines.append(f"{f['file']}: {len(f['added'])} new, {len(f['updated'])} updated, {len(f['retired'])} retired, "
                         f"{f['unchanged']} unchanged rule(s) (anchor: {f['anchor'] or 'none'})")  # fmt: skip
            lines += [f"  + ({a['type']}) {a['title']}" for a in f["added"]]
            lines += [f"  ~ {u['old']['title']} -> {u['title']}" for u in f["updated"]]
            lines += [f"  - {x['title']}" for x in f["retired"]]
        if not (r["added"] or r["updated"] or r["retired"]):
            lines.append("nothing new: every rule is already in the vault")
        return lines
    if r["source"] == "mcp-memory":
        lines = [f"{would} {len(r['written'])} note(s), updated {len(r['updated'])}, {r['unchanged']} unchanged "
                 f"({r['relations']} relation(s); {r['skipped_lines']} line(s) skipped)"]  # fmt: skip
        lines += [f"  + ({w['type']}) {w['title']}" for w in r["written"]]
        if not (r["written"] or r["updated"]):
            lines.append("nothing new: every entity is already in the vault")
        return lines
    lines = [f"{would} {len(r['written'])} session summary(ies) and {len(r['candidates'])} candidate rule(s) "
             f"from {r['files']} {r['source']} session file(s)"]  # fmt: skip
    lines += [f"  + {w['title']}" + (f"  -> [[{w['anchor']}]]" if w["anchor"] else "") for w in r["written"]]
    lines += [f"  ? ({c['type']}) {c['title']}" for c in r["candidates"]]
    extra = [(len(r["already_imported"]), "already imported"), (len(r["known_rules"]), "rule(s) already known"),
             (len(r["still_active"]), "still being written (left for later)"), (len(r["empty"]), "without a request"),
             (r["filtered"], "outside --project/--since"), (len(r["skipped"]), "not readable as transcripts")]  # fmt: skip
    said = [f"{n} {what}" for n, what in extra if n]
    if said:
        lines.append("; ".join(said))
    lines += [f"  skipped {s['reason']}" for s in r["skipped"][:10]]
    if r["anchors_created"]:
        lines.append(
            f"{'would create' if r['dry_run'] else 'created'} project note(s): "
            + ", ".join(r["anchors_created"])
        )
    if not r["written"] and r["already_imported"]:
        lines.append("nothing new: every session here is already in the vault")
    lines += r.get("notes", [])
    return lines


def _restore(paths: list[str], v: Any) -> dict[str, Any]:
    """``vaultmem import FILE``: restore a backup written by ``vaultmem export``."""
    if len(paths) != 1:
        raise BadInput("give the backup file to restore (or --from SOURCE to import from another tool)")
    file = paths[0]
    try:
        raw = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        data = json.loads(raw)
    except OSError as e:
        raise BadInput(f"cannot read {file}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{file} is not JSON ({e})") from None
    return v.import_(data)
