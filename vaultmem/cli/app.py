"""The ``vaultmem`` command line: parses, calls the library (``api.Session``, ``Vault``), renders.

Errors are one line on stderr with a non-zero exit code, never a traceback.
Heavy modules (whoosh, numpy, fastembed) are imported only by commands that need them.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import api
from ..core import environment
from ..core.errors import BadInput, NoteNotFound
from ..core.fence import printable
from . import recall as _recall  # noqa: F401  (importing them adds their commands)
from . import remember as _remember  # noqa: F401
from . import render
from .common import (  # fmt: skip
    AgentOpt,
    AnchorOpt,
    Group,
    JsonOpt,
    SinceOpt,
    SourceOpt,
    TagOpt,
    TypeOpt,
    VaultOpt,
    VaultsOpt,
    agents_md_line,
    app,
    echo_json,
    err,
    open_session,
    summary_line,
)
from .hits import skipped_notes

# ---------------------------------------------------------------------- commands


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Folder to make a vault (default: here).")] = Path("."),
    git: Annotated[
        bool,
        typer.Option(
            "--git", help="Also make it a git repository with the note merge driver (for vaultmem sync)."
        ),
    ] = False,
    remote: Annotated[
        str | None, typer.Option("--remote", help="With --git: the remote to sync with (added as origin).")
    ] = None,
) -> None:
    """Make a folder a vault: .vaultmem/ with its config, a README for people and agents,
    and .vaultmem/ in .gitignore. Safe to run again; never overwrites a file.

    Example: vaultmem init ~/notes/agent-memory      vaultmem init --git --remote git@host:me/memory.git
    """
    from ..core.scaffold import init_vault

    if remote and not git:
        raise BadInput("--remote needs --git")
    created = init_vault(path)
    if git:
        from ..sync.git import init_git

        created += init_git(path.resolve(), remote)
    for item in created:
        typer.echo(f"created {item}")
    typer.echo(f"vault ready at {path.resolve()}" if created else f"{path.resolve()} is already a vault")
    if created:
        typer.echo("undo: delete what was created above (your notes are never touched)")


@app.command()
def show(
    ref: Annotated[str, typer.Argument(help="Id, title, alias or vault-relative path.")],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a note.

    Example: vaultmem show k7f3x9q2
    """
    data = open_session(vault).show(ref)
    for line in render.show_lines(data, as_json):
        typer.echo(line)


@app.command("list")
def list_cmd(
    type: TypeOpt = [],
    status: Annotated[
        list[str], typer.Option("--status", help="Only this status (repeatable); shows hidden ones too.")
    ] = [],
    tag: TagOpt = [],
    since: SinceOpt = None,
    importance: Annotated[
        str | None, typer.Option(help="Minimum importance: 1-10 or high/medium/low.")
    ] = None,
    scope: Annotated[str | None, typer.Option(help="project or user.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many (default 20).")] = 20,
    show_all: Annotated[bool, typer.Option("--all", help="No limit.")] = False,
    vault: VaultsOpt = [],
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List memories, newest first (active ones unless --status is given).

    Example: vaultmem list --type decision --since 30d
    """
    filters = {
        "types": type,
        "statuses": status,
        "tags": tag,
        "since": since,
        "importance": importance,
        "scope": scope,
    }
    session = api.Session(vault, agent)
    rows = session.list_notes(limit=None if show_all else limit, **filters)
    for line in skipped_notes(session.skipped, session.told):
        err(line)
    for line in render.list_lines(rows, as_json):
        typer.echo(line)
    if not rows:
        err("no memories match")


@app.command()
def edit(
    ref: Annotated[str, typer.Argument(help="Id, title or path of the note.")],
    content: Annotated[str | None, typer.Option(help="New body text ('-' reads standard input).")] = None,
    set_: Annotated[
        list[str], typer.Option("--set", help="Set a frontmatter key: key=value (repeatable).")
    ] = [],
    add_tag: Annotated[list[str], typer.Option("--add-tag", help="Add a tag (repeatable).")] = [],
    remove_tag: Annotated[list[str], typer.Option("--remove-tag", help="Remove a tag (repeatable).")] = [],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a note (guarded: refuses if the file changed meanwhile). With no flags, opens $EDITOR.

    Example: vaultmem edit k7f3x9q2 --set importance=8 --add-tag postgres --remove-tag draft
    """
    if (
        content is None
        and not set_
        and not add_tag
        and not remove_tag
        and not (sys.stdin.isatty() and sys.stdout.isatty())
    ):  # an editor on a pipe prints screens of escape codes
        raise BadInput("no terminal to open an editor in: give the change (--set, --add-tag, --remove-tag, "
                       "--content), or run it in a terminal")  # fmt: skip
    session = open_session(vault)
    if content is None and not set_ and not add_tag and not remove_tag:
        note = session.show(ref)
        editor = environment.VISUAL.get() or environment.EDITOR.get() or "vi"
        try:
            raise typer.Exit(
                subprocess.call([*editor.split(), str(session.pick_root(ref)[0] / note["path"])])
            )
        except OSError as e:
            raise BadInput(f"cannot run editor {editor!r}: {e.strerror}") from None
    if content == "-":
        content = sys.stdin.read()
    result = session.edit(
        ref, content=content, sets=set_, add_tags=add_tag, remove_tags=remove_tag, record=True
    )
    for line in render.edit_lines(result, as_json):
        typer.echo(line)


@app.command()
def delete(
    ref: Annotated[str, typer.Argument(help="Id, title or path of the note.")],
    force: Annotated[bool, typer.Option("--force", "-f", help="Do not ask for confirmation.")] = False,
    vault: VaultOpt = None,
) -> None:
    """Move a note to the vault's .trash/ folder (nothing is destroyed). Asks first: on the
    terminal, or reads the answer from a pipe (echo y | vaultmem delete ID); --force asks nothing.

    Example: vaultmem delete k7f3x9q2 --force
    """
    session = open_session(vault)
    path = session.show(ref)["path"]
    if not force and not _confirmed(f"Move {path} to .trash/?"):
        err("not deleted")
        raise typer.Exit(1)
    result = session.delete(ref)
    typer.echo(printable(f"moved {result['path']} to {result['trashed_to']}"))
    typer.echo(f"undo: vaultmem restore {shlex.quote(result['trashed_to'])}")


def _confirmed(question: str) -> bool:
    """A yes/no answer: asked on the terminal, or the first line of standard input when it is a
    pipe (as ``rm -i`` reads it); no answer at all is refused with a pointer to --force."""
    if sys.stdin.isatty():
        return typer.confirm(question)
    line = sys.stdin.readline()
    if not line:
        raise BadInput("no answer on standard input; pass --force to delete without asking")
    typer.echo(f"{question} [y/N]: {line.strip()}", err=True)  # the question and the answer it read
    return line.strip().lower() in ("y", "yes")


@app.command()
def stats(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Counts by type, status and importance, date range and disk use.

    Example: vaultmem stats --json
    """
    for line in render.stats_lines(open_session(vault).stats(), as_json):
        typer.echo(line)


@app.command()
def index(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Delete the indexes and build them from nothing.")
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring the indexes (link graph, BM25, vectors) in line with the files.

    Example: vaultmem index --rebuild
    """
    from .progress import reporter

    bar = reporter("indexing", as_json)  # a bar on a terminal, plain lines, or JSON events (--json)
    try:
        summary, by_watcher = api.Session([vault] if vault else []).reindex(rebuild, progress=bar)
    finally:
        bar.close()
    if as_json:
        echo_json(summary)
    elif by_watcher:
        typer.echo("applied by the running watcher: " + summary_line(summary))
    else:
        embedded = summary["embedded_chunks"]
        typer.echo(summary_line(summary) + (f", {embedded} chunks embedded" if embedded else ""))
        for path, (done, total) in summary.get("capped", {}).items():
            typer.echo(f"{path}: embedded {done} of its {total} chunks ([embedding] max_chunks); "
                       "keyword search covers all of its text")  # fmt: skip
    if not as_json:  # every note the indexes could not read, whoever indexed them
        state = open_session(vault).status(drift=False)
        for line in skipped_notes(state["errors"], set()):
            err(line)
        _duplicate_ids(state.get("duplicate_ids", {}))


def _duplicate_ids(found: dict[str, list[str]]) -> None:
    for key, paths in found.items():
        err(f"duplicate id {key}: {', '.join(paths)} (give each note its own id)")


@app.command()
def resolve(
    ref: Annotated[str | None, typer.Argument(help="Id, title or path of the memory.")] = None,
    source: Annotated[
        str | None, typer.Option(help="Resolve every active memory written by this agent/session.")
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Mark a memory resolved (done, fixed, no longer relevant); it leaves recall.

    Example: vaultmem resolve k7f3x9q2   |   vaultmem resolve --source claude/session-42
    """
    if ref is None and source is None:
        raise BadInput(
            "name the memory to resolve (ID, title or path), or --source AGENT to resolve what it wrote"
        )
    if ref is not None and source is not None:
        raise BadInput("give either a memory (ID) or --source, not both")
    s = open_session(vault)
    results = s.resolve_source(source) if source else [s.resolve(ref)]  # type: ignore[arg-type]
    _report(results, as_json)


@app.command()
def supersede(
    old: Annotated[str, typer.Argument(help="The memory that is out of date.")],
    new: Annotated[str, typer.Argument(help="The memory that replaces it.")],
    vault: VaultOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Mark OLD as replaced by NEW (recall then brings NEW instead of OLD); both in one vault
    (``vault:id`` names another of yours). Refused if NEW is already superseded by OLD.

    Example: vaultmem supersede k7f3x9q2 m4n5p6q7
    """
    _report([open_session(vault, agent).supersede(old, new)], as_json)


@app.command()
def reopen(
    ref: Annotated[str, typer.Argument(help="Id, title or path of the memory.")],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a resolved, superseded or archived memory active again.

    Example: vaultmem reopen k7f3x9q2
    """
    _report([open_session(vault).reopen(ref)], as_json)


def _report(results: list[dict], as_json: bool) -> None:
    for line in render.report_lines(results, as_json):
        typer.echo(line)
    if not results:
        err("nothing to change")


@app.command()
def maintain(
    apply: Annotated[
        bool, typer.Option("--apply", help="Change the files (default: only print the plan).")
    ] = False,
    days: Annotated[
        int | None,
        typer.Option(help="Archive low-importance memories not recalled for this many days (default 90)."),
    ] = None,
    undo: Annotated[
        str | None,
        typer.Option("--undo", help="Take back one --apply (its batch id; `vaultmem undo` lists them)."),
    ] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Apply the aging rules: latest progress per anchor, at most 3 session summaries per anchor,
    expired memories, low-importance memories nobody recalls. Run inside a code repository, a
    merged branch's decisions and important memories are promoted (their branch scope removed)
    and the rest archived; a branch deleted unmerged archives its task memory. Nothing is ever
    deleted.

    Example: vaultmem maintain            (prints the plan)   vaultmem maintain --apply
    """
    session = open_session(vault)
    if undo is not None:
        from .undo import report_undo

        report_undo(session.undo(undo, "maintain"), as_json)
        return
    result = session.maintain(apply, days)
    if as_json:
        echo_json(result)
        return
    for a in result["actions"]:
        typer.echo(printable(f"{a['kind']:<9} {a['id']}  {a['title']}  ({a['reason']})"))
    for f in result["agents_md"]:
        typer.echo(f"agents-md {agents_md_line(f, apply)}")
    files = sum(f["changed"] for f in result["agents_md"])
    if not result["actions"] and not files:
        typer.echo("nothing to do")
    elif not apply:
        typer.echo(f"{len(result['actions']) + files} changes planned; run with --apply to make them")
    else:
        typer.echo(f"applied {result['done'] + files} changes")
        if result.get("undo"):
            typer.echo(f"undo: vaultmem maintain --undo {result['undo']}")


@app.command()
def rate(
    ref: Annotated[str | None, typer.Argument(help="Id, title or path of the memory.")] = None,
    verdict: Annotated[str | None, typer.Argument(help="useful or not-useful.")] = None,
    batch: Annotated[
        str | None, typer.Option(help='JSON file (or - for stdin): [{"id": "...", "useful": true}, ...].')
    ] = None,
    source: Annotated[str | None, typer.Option(help="Agent or session giving the rating.")] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Say whether a recalled memory helped; useful memories rise in recall, others sink
    (counted from a memory's 3rd rating: [adaptive] min_ratings). Every memory found is
    rated; one that is not is named on stderr (exit 3).

    Example: vaultmem rate k7f3x9q2 useful   |   vaultmem rate --batch ratings.json
    """
    ratings = _parse_ratings(ref, verdict, batch)
    done = open_session(vault).rate(ratings, source)
    if as_json:
        echo_json(done)
    else:
        for r in done["rated"]:
            typer.echo(
                printable(f"rated {'useful' if r['useful'] else 'not useful'}: {r['id']}  {r['title']}")
            )
    for u in done["unknown"]:
        err(f"not rated: {u['error']}")
    if done["unknown"]:
        raise typer.Exit(NoteNotFound.exit_code)


def _parse_ratings(ref: str | None, verdict: str | None, batch: str | None) -> list[tuple[str, bool]]:
    if batch is not None:
        if ref or verdict:
            raise BadInput("give either ID VERDICT or --batch, not both")
        try:
            data = json.loads(sys.stdin.read() if batch == "-" else Path(batch).read_text(encoding="utf-8"))
        except OSError as e:
            raise BadInput(f"cannot read {batch}: {e.strerror}") from None
        except ValueError as e:
            raise BadInput(f"--batch is not JSON ({e})") from None
        if not isinstance(data, list) or not all(
            isinstance(x, dict) and "id" in x and isinstance(x.get("useful"), bool) for x in data
        ):
            raise BadInput('--batch must be a JSON list of {"id": "...", "useful": true|false}')
        return [(str(x["id"]), x["useful"]) for x in data]
    verdicts = {"useful": True, "not-useful": False, "not_useful": False, "yes": True, "no": False}
    if not ref or not verdict or verdict.lower() not in verdicts:
        raise BadInput("usage: vaultmem rate ID useful|not-useful  (or --batch FILE)")
    return [(ref, verdicts[verdict.lower()])]


@app.command()
def gap(
    text: Annotated[str, typer.Argument(help="What you needed and did not find in memory.")],
    query: Annotated[str | None, typer.Option(help="The recall query that came up short.")] = None,
    source: Annotated[str | None, typer.Option(help="Agent or session reporting it.")] = None,
    vault: VaultOpt = None,
) -> None:
    """Record a knowledge gap, so people see what memory is missing.

    Example: vaultmem gap "how to rotate the Stripe webhook secret" --query "stripe secret rotation"
    """
    open_session(vault).gap(text, query, source)
    typer.echo("recorded")


@app.command()
def gaps(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Knowledge gaps reported so far, most frequent first.

    Example: vaultmem gaps
    """
    rows = open_session(vault).gaps()
    if as_json:
        echo_json(rows)
        return
    for g in rows:
        typer.echo(
            printable(
                f"{g['count']:>3}x  {g['text']}"
                + (f"  (queries: {'; '.join(g['queries'])})" if g["queries"] else "")
            )
        )
    if not rows:
        typer.echo("no gaps reported")


@app.command()
def wake(
    anchor: AnchorOpt = None,
    task: Annotated[
        str | None, typer.Option(help="What you are about to do: adds the memories relevant to it.")
    ] = None,
    profile: Annotated[
        str, typer.Option(help="default, planning, incident or handoff (for --task).")
    ] = "default",
    budget: Annotated[int, typer.Option(help="Token budget of the block (1 token ~ 4 characters).")] = 2000,
    vault: VaultsOpt = [],
    agent: AgentOpt = None,
    branch: Annotated[
        str | None,
        typer.Option(
            "--branch", help="Memories of this code branch (default: the current and the default branch's)."
        ),
    ] = None,
    all_branches: Annotated[
        bool, typer.Option("--all-branches", help="Memories of every code branch.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print the session-start [MEMORY] block for an agent: project brief, architecture, key
    decisions, progress, last session, user preferences, gotchas, and what fits the task.
    Other code branches' memories are left out, as in recall.

    Example: vaultmem wake --anchor "Project: MyApp" --task "add refunds" --budget 1500
    """
    result = open_session(vault, agent, quiet=True).wake(anchor or environment.VAULTMEM_ANCHOR.get(), task, profile, budget,
                                                     branch=branch, all_branches=all_branches)  # fmt: skip
    if as_json:
        echo_json(result)
    else:
        typer.echo(result["text"], nl=False)


@app.command()
def sleep(
    summary: Annotated[str, typer.Option(help="What was done in this session.")],
    next_: Annotated[
        str | None,
        typer.Option("--next", help="Next steps for whoever continues (';' or newlines separate them)."),
    ] = None,
    source: SourceOpt = None,
    anchor: AnchorOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """End a session: write a session summary (and a handoff with --next) linked to the anchor.

    Example: vaultmem sleep --summary "Added refunds API" --next "write docs; deploy" --anchor "Project: MyApp"
    """
    result = api.Session([vault] if vault else []).sleep(summary, next_, source, anchor)
    if as_json:
        echo_json(result)
        return
    typer.echo(printable(f"session summary {result['summary']['id']}  {result['summary']['path']}"))
    if result["handoff"]:
        typer.echo(printable(f"handoff {result['handoff']['id']}  {result['handoff']['path']}"))
    for old in result["summary"]["superseded"]:
        typer.echo(printable(f"{old.get('action', 'superseded')} {old['id']}  {old['title']}"))
    for key in result["superseded"]:
        typer.echo(f"superseded older handoff {key}")
    handoff = result["handoff"] or {}
    if handoff.get("anchor_was") is not None:
        typer.echo(printable(f"moved handoff {handoff['id']} to this summary's anchor "
                             f"(was {handoff['anchor_was'] or 'none'})"))  # fmt: skip
    made = [result["summary"]["id"]] + ([handoff["id"]] if handoff.get("created", True) and handoff else [])
    if result["summary"].get("created_anchor"):
        typer.echo(f"created anchor {result['summary']['created_anchor']}")
        made.append(shlex.quote(result["summary"]["created_anchor"]))
    undo = [f"vaultmem delete --force {key}" for key in made]
    if handoff and not handoff.get("created", True):  # the checkpoints' handoff: never deleted by an undo
        undo.append(f"take the next steps out of {shlex.quote(handoff['path'])}")
        if handoff.get("anchor_was") is not None:
            was = handoff["anchor_was"]
            undo.append(
                f"vaultmem edit {handoff['id']} --set {shlex.quote('anchor=' + was) if was else 'anchor='}"
            )
    undo += [f"vaultmem reopen {old['id']}" for old in result["summary"]["superseded"]]
    undo += [f"vaultmem reopen {key}" for key in result["superseded"]]
    typer.echo("undo: " + "; ".join(undo))


@app.command()
def checkpoint(
    text: Annotated[str, typer.Argument(help="What to keep: progress, a finding, a decision in flight.")],
    source: SourceOpt = None,
    anchor: AnchorOpt = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append a timestamped line to this session's handoff note, so a long session loses nothing.

    Example: vaultmem checkpoint "refund endpoint done; tests failing on currency rounding"
    """
    result = api.Session([vault] if vault else []).checkpoint(text, source, anchor)
    if as_json:
        echo_json(result)
    else:
        typer.echo(printable(f"{result['id']}  {result['path']}  {result['line']}"))
        if result.get("anchor_guessed"):
            typer.echo(
                printable(f"anchor: {result['anchor']} ({result['anchor_guessed']}; --anchor names another)")
            )
        typer.echo(
            f"undo: take that line out of {shlex.quote(result['path'])} (vaultmem edit {result['id']} opens it)"
        )


@app.command()
def watch(
    vault: VaultOpt = None,
    all_vaults: Annotated[
        bool, typer.Option("--all", help="Watch every registered vault from this one process.")
    ] = False,
    agent: AgentOpt = None,
    quiet: Annotated[float, typer.Option(help="Seconds of quiet before a batch is applied.")] = 0.2,
    max_delay: Annotated[
        float, typer.Option(help="Apply a batch at most this many seconds after its first change.")
    ] = 1.0,
    sync_every: Annotated[
        str | None,
        typer.Option(
            "--sync-every", help="Also run vaultmem sync on this interval (30s, 5m, 1h); off by default."
        ),
    ] = None,
) -> None:
    """Run the memory service in the foreground for these vaults: it keeps their indexes in
    step with the files and answers every command warm. When the service already runs, this
    says so, has it serve the vaults (and sync them, with --sync-every) and follows it.

    Ctrl-C or SIGTERM stops it after applying pending changes (a followed service keeps running).
    Example: vaultmem watch --vault ~/memory      vaultmem watch --all --sync-every 5m
    """
    import logging
    import signal
    import threading

    from ..service import control

    logging.basicConfig(level=logging.INFO, format="vaultmem: %(message)s", stream=sys.stderr)
    if all_vaults:
        from ..core.registry import Registry

        roots = list(Registry().vaults.values())
        if not roots:
            raise BadInput("no registered vaults (see `vaultmem vault add NAME PATH`)")
    else:
        roots = [api.vault_root(vault, agent)]
    every = None
    if sync_every:
        from ..sync.git import parse_interval

        every = parse_interval(sync_every)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.is_set():
        info = control.replace_older(control.ping())  # an older install's service: this one takes over
        if info is not None:
            if _follow(info, roots, every, stop):
                return
        elif _serve(roots, every, quiet, max_delay, stop):
            return
        stop.wait(0.2)  # the followed service ended, or another took the lock first: look again


def _follow(info: dict, roots: list[Path], every: float | None, stop: Any) -> bool:
    """Have the running service serve ``roots`` and follow it until ``stop`` (True) or until it
    ends (False)."""
    from ..service import control

    if not api.ask("open", {"roots": [str(r) for r in roots], "sync_every": every})[0]:
        return False
    for root in roots:
        err(f"the memory service (pid {info['pid']}) serves {root}; following it (log: {control.log_path()})")
    err("Ctrl-C stops following; `vaultmem service stop` stops the service")
    while not stop.wait(1.0):
        now = control.ping()
        if now is None or now.get("pid") != info["pid"]:
            err(f"the memory service (pid {info['pid']}) stopped")
            return False
    return True


def _serve(roots: list[Path], every: float | None, quiet: float, max_delay: float, stop: Any) -> bool:
    """The memory service in this process for ``roots`` until ``stop``; False when another one
    took the service lock first (then it is followed)."""
    import threading

    from ..service.daemon import Service
    from .service import tasks

    service = Service(*api.service_parts(), idle_exit=0, quiet=quiet, max_delay=max_delay, tasks=tasks())
    service.foreground = True
    service.after_sync = api.sync_served

    def opened() -> None:  # once the model is loaded and the vaults are open
        service.opened.wait()
        for root in roots:
            err(f"watching {root} (pid {os.getpid()}: the memory service, in the foreground)")
        err("Ctrl-C stops")

    def stopped() -> None:  # ``stop`` set (Ctrl-C): the service stops
        stop.wait()
        service.stop_event.set()

    threading.Thread(target=opened, daemon=True).start()
    threading.Thread(target=stopped, daemon=True).start()
    if not service.run(roots, sync_every=every):
        return False
    err("stopped")
    return True


@app.command()
def status(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Whether the memory service and a watcher run, notes indexed, pending changes, last
    error, and drift.

    Example: vaultmem status
    """
    from .service import describe, status_lines

    data = api.Session([vault] if vault else []).status()
    service = describe()
    if as_json:
        echo_json({**data, "service": service})
        return
    for line in status_lines(service):
        typer.echo(line)
    typer.echo(f"indexed by: {_keeper(data)}")
    typer.echo(f"notes indexed: {data['notes_indexed']}")
    progress = render.indexing_line(data.get("indexing"))
    if progress:
        typer.echo(progress)
    if data.get("pid"):
        typer.echo(f"pending changes: {data['pending']}")
        typer.echo(f"last error: {data.get('last_error') or 'none'}")
    drift = ", ".join(f"{n} {k}" for k, n in data["drift"].items() if n)
    typer.echo(
        f"indexes match the files: {'yes' if data['in_sync'] else 'no (' + drift + '; run vaultmem index)'}"
    )
    for path, reason in data["errors"].items():
        typer.echo(printable(f"not indexed: {path}: {reason}"))
    for path in data.get("conflicts", []):
        typer.echo(
            printable(
                f"merge conflict: {path} (both versions kept in the note; settle it and set its status)"
            )
        )
    for key, paths in data.get("duplicate_ids", {}).items():
        typer.echo(printable(f"duplicate id {key}: {', '.join(paths)} (give each note its own id)"))
    _hook_lines(vault)


def _hook_lines(vault: str | None) -> None:
    """Whether each agent set up for the vault runs its hooks (``agents/hook_runs.py``)."""
    from ..agents.hook_runs import lines

    for line in lines(api.vault_root(vault)):
        typer.echo(printable(line))


def _keeper(data: dict) -> str:
    """Who keeps a vault's indexes, as status and doctor say it."""
    if data.get("by") == "service" and data.get("pid"):
        return f"the memory service, pid {data['pid']}"
    return "each command in its own process (the memory service does not serve this vault)"


vault_app = typer.Typer(
    cls=Group,
    help="The registry of named vaults (personal, shared, user).\n\n"
    "Example: vaultmem vault add shared ./vaults/shared      vaultmem vault list",
    no_args_is_help=True,
)
app.add_typer(vault_app, name="vault")


@vault_app.command("add")
def vault_add(
    name: Annotated[str, typer.Argument(help="Short name: an agent id, 'shared', 'user', or any other.")],
    path: Annotated[Path, typer.Argument(help="The vault folder (made a vault if it is not one).")],
    create: Annotated[bool, typer.Option("--create", help="Create the folder if it does not exist.")] = False,
) -> None:
    """Register a vault under a name.

    Example: vaultmem vault add shared ./vaults/shared   |   vaultmem vault add alice ~/memory/alice --create
    """
    from ..core.registry import Registry

    typer.echo(f"{name} -> {Registry().add(name, path, create)}")
    typer.echo(f"undo: vaultmem vault remove {shlex.quote(name)}")


@vault_app.command("list")
def vault_list(as_json: JsonOpt = False) -> None:
    """The registered vaults.

    Example: vaultmem vault list
    """
    from ..core.registry import Registry

    reg = Registry()
    if as_json:
        echo_json({n: str(p) for n, p in reg.vaults.items()})
        return
    for name, path in reg.vaults.items():
        typer.echo(f"{name:<20} {path}{'' if api.is_vault(path) else '  (missing)'}")
    if not reg.vaults:
        typer.echo(f"no vaults registered ({reg.path})")


@vault_app.command("remove")
def vault_remove(name: Annotated[str, typer.Argument(help="Registered name.")]) -> None:
    """Forget a vault; its files are never touched.

    Example: vaultmem vault remove old-agent
    """
    from ..core.registry import Registry

    kept = Registry().remove(name)
    typer.echo(f"forgot {name} (files kept at {kept})")
    typer.echo(f"undo: vaultmem vault add {shlex.quote(name)} {shlex.quote(str(kept))}")


def main() -> None:
    """The full typer app (``cli.main.main``, the console entry, answers ``recall`` and
    ``remember`` with their own commands before it gets here)."""
    if len(sys.argv) > 1 and sys.argv[1] == "hook":  # agent hooks (see cli_fast for `hook prompt`)
        from .hooks import hook_app

        hook_app(args=sys.argv[2:], prog_name="vaultmem hook")
        return
    app()


# The command modules: each registers its commands on cli_common.app when imported. A new
# group of commands goes in its own cli_<topic>.py, importing only cli_common (and the library).
from . import agents as cli_agents  # noqa: E402,F401  (mcp, setup)
from . import git as cli_git  # noqa: E402,F401  (sync, merge-driver)
from . import hooks as cli_hooks  # noqa: E402,F401  (hook ..., confirm)
from . import service as cli_service  # noqa: E402,F401  (service ...)
from . import time as cli_time  # noqa: E402,F401  (history)
from . import transfer as cli_transfer  # noqa: E402,F401  (export, import)
from . import undo as cli_undo  # noqa: E402,F401  (restore, undo)
from . import view as cli_view  # noqa: E402,F401  (doctor, graph, serve)
from . import welcome as cli_welcome  # noqa: E402,F401  (demo, completion, man)
