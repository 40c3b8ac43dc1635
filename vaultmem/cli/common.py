"""What every ``vaultmem`` command module shares: the typer app, the common options, error
rendering and output helpers.

A command module (``cli.py``, ``cli_agents.py``, ...) imports from here and registers its
commands with ``@app.command()``; ``cli.py`` imports every command module so the app is whole.
Nothing here imports a command module, so command modules never import each other.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from ..core.errors import VaultError, os_message
from ..core.fence import printable

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Session


def guarded(invoke, ctx):
    """Run a click invoke, turning vaultmem errors into one line on stderr and an exit code."""
    try:
        return invoke(ctx)
    except VaultError as e:
        err(str(e))
        ctx.exit(e.exit_code)
    except BrokenPipeError:  # `vaultmem ... | head`: the reader left; end quietly like git does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        ctx.exit(141)
    except OSError as e:  # permission denied, disk full, read-only vault, ...
        err(os_message(e))
        ctx.exit(1)
    except KeyboardInterrupt:
        err("interrupted")
        ctx.exit(130)


# words a newcomer tries for a command of another name (typer suggests the names a typo is close to)
SYNONYMS = {
    **dict.fromkeys(("web", "ui", "browse", "server"), "serve"),
    **dict.fromkeys(("search", "find", "query", "ask"), "recall"),
    **dict.fromkeys(("add", "save", "store", "new", "note"), "remember"),
    **dict.fromkeys(("rm", "del", "remove", "trash"), "delete"),
    **dict.fromkeys(("cat", "get", "view", "open", "read"), "show"),
    **dict.fromkeys(("check", "health", "fsck"), "doctor"),
    "ls": "list",
    "reindex": "index",
    "daemon": "service",
    "untrash": "restore",
    "help": "--help",
}


class Group(typer.core.TyperGroup):
    """The app: errors become one line on stderr and an exit code, never a traceback; a
    mistyped command gets a suggestion."""

    def invoke(self, ctx):
        return guarded(super().invoke, ctx)

    def resolve_command(self, ctx, args):
        meant = SYNONYMS.get(args[0]) if args and not ctx.resilient_parsing else None
        if meant and args[0] not in self.commands and (meant in self.commands or meant == "--help"):
            ctx.fail(f"No such command {args[0]!r}. Did you mean {meant!r}?")
        return super().resolve_command(ctx, args)


class Command(typer.core.TyperCommand):
    """One command run on its own (the fast path of `vaultmem recall`), with the same errors."""

    def invoke(self, ctx):
        return guarded(super().invoke, ctx)


# typer escapes "[" in "[default: ...]" for rich's HTML export whenever rich is installed, even
# with rich_markup_mode=None, and plain help then shows "\[default: ...]": we never use rich.
typer.core.HAS_RICH = False

APP_SETTINGS: dict[str, Any] = {  # the app's, and those of a sub-app run on its own (`hook`)
    "cls": Group,
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
    "context_settings": {"help_option_names": ["-h", "--help"]},
}

app = typer.Typer(
    name="vaultmem",
    help="Long-term memory for AI agents, kept as a vault of plain markdown files.",
    **{**APP_SETTINGS, "add_completion": True},  # --install-completion, --show-completion (bash, zsh, fish)
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"vaultmem {__version__}")
        raise typer.Exit()


@app.callback()
def _app_options(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print vaultmem's version and exit.")] = False,
) -> None:  # fmt: skip
    """Long-term memory for AI agents, kept as a vault of plain markdown files."""


VaultOpt = Annotated[
    str | None,
    typer.Option(
        "--vault",
        "-V",
        help="Vault folder or registered name (default: the agent's vault, $VAULTMEM_VAULT, "
        "else the nearest folder above holding .vaultmem/).",
    ),
]
VaultsOpt = Annotated[
    list[str],
    typer.Option(
        "--vault",
        "-V",
        help="Vault folder or registered name; repeat to search several at once "
        "(default for an agent: its own, the shared and the user's vault).",
    ),
]
AgentOpt = Annotated[
    str | None, typer.Option("--agent", help="Agent identity (default: $VAULTMEM_AGENT_ID).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
TypeOpt = Annotated[list[str], typer.Option("--type", "-t", help="Only this type (repeatable).")]
TagOpt = Annotated[
    list[str], typer.Option("--tag", help="Only notes with this tag (repeatable: all must match).")
]
SinceOpt = Annotated[
    str | None, typer.Option("--since", help="Updated since: 7d, 24h, 30m, 2w or a date (2026-01-01).")
]


AnchorOpt = Annotated[
    str | None, typer.Option(help="Anchor note, e.g. 'Project: MyApp' (default: $VAULTMEM_ANCHOR).")
]
SourceOpt = Annotated[
    str | None, typer.Option(help="Agent or session name (default: $VAULTMEM_SESSION, else session-<date>).")
]


def echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def agents_md_line(r: dict[str, Any], applied: bool = True) -> str:
    """One line for a file's vaultmem section (``export --to agents-md``, maintain, sync)."""
    counts = ", ".join(f"{n} {t}" for t, n in r["counts"].items())
    state = ("updated" if applied else "would update") if r["changed"] else "unchanged"
    return f"{state} {r['file']} ({counts}; anchor: {r['anchor'] or 'none'})"


def err(message: str) -> None:
    typer.echo(f"vaultmem: {printable(message, keep=chr(10))}", err=True)  # never a note's escapes


class EmbeddingBar:
    """A progress callback for reindexing that opens a bar on stderr only when a terminal is
    watching and there are at least ``minimum`` chunks to embed."""

    def __init__(self, minimum: int = 0, quiet: bool = False):
        self.minimum, self.quiet = minimum, quiet
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.quiet or total < self.minimum or not sys.stderr.isatty():
            return
        if self.bar is None:
            if done == 0:  # the first batch also loads the model (several seconds, once a process)
                print("vaultmem: loading the embedding model, then embedding "
                      f"{total} chunk{'s' if total != 1 else ''}", file=sys.stderr, flush=True)  # fmt: skip
            self.bar = typer.progressbar(length=total, label="embedding", file=sys.stderr, show_pos=True)
            self.bar.__enter__()
            self.bar.render_progress()  # shown at 0 while the model loads
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


class LineProgress:
    """Progress of a long index as lines on stderr (for ``--json`` and when no terminal
    watches; stdout keeps only the result): the first report, then at most one line every
    ``every`` seconds, and the last."""

    def __init__(self, every: float = 2.0):
        self.every = every
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not total or done and done < total and now - self.last < self.every:
            return  # nothing to embed (a sync that only read a broken note): nothing to say
        self.last = now
        print(
            f"vaultmem: indexing {done}/{total} ({100 * done // max(total, 1)}%)", file=sys.stderr, flush=True
        )

    def close(self) -> None:
        """Nothing to close (the bar's interface)."""


def summary_line(s: dict) -> str:
    return (
        f"{s['added']} added, {s['updated']} updated, {s['moved']} moved, {s['removed']} removed, "
        f"{s['unchanged']} unchanged in {s['seconds']:.2f} s"
    )


def open_session(vaults: Sequence[str] | str | None = (), agent: str | None = None, quiet: bool = False,
                 wait: bool = True, tasks: dict[str, Any] | None = None) -> Session:  # fmt: skip
    """The ``api.Session`` a command works through (every command opens its vaults this way):
    reindexing shows a progress bar and reports what it did on stderr, and so does waiting for
    the memory service to start (without ``wait``: it is started, not waited for); ``tasks``:
    the work of the layers above an operation of this command runs (``api.Session``)."""
    from ..api import Session
    from .hits import skipped_notes

    def report(summary: Any) -> None:
        for line in skipped_notes(summary.new_errors, session.told):
            err(line)
        if summary.model_changed:  # said even when quiet: every vector was made again
            old, new = summary.model_changed
            err(f"the embedding model changed ({old} -> {new}): every note was embedded again with {new}")
        if summary.changed and not quiet:
            err(f"indexed: {summary_line(summary.as_dict())}")

    refs = [vaults] if isinstance(vaults, str) else list(vaults or [])
    session = Session(refs, agent, progress=lambda: EmbeddingBar(minimum=64, quiet=quiet), on_indexed=report,
                      wait=wait, say=err, tasks=tasks)  # fmt: skip
    return session
