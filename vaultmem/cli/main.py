"""The ``vaultmem`` console entry point.

``vaultmem hook prompt|start|stop|end``, which an agent runs at every prompt and session, is
answered here without importing typer and click (``agents/hook_io.py`` runs them; the memory
service answers what needs the indexes); ``recall`` (``quick``) and ``show``, ``list``,
``stats``, ``edit``, ``resolve``, ``reopen``, ``wake``, ``doctor`` (``fast``) are too, through a
ready memory service; every other command, and any of these with arguments the one small
parser (``argv``) does not know (``--help``), goes to the typer app in ``app.py``.
"""

from __future__ import annotations

import sys

FAST = {"show", "list", "stats", "edit", "resolve", "reopen", "wake", "doctor"}  # cli/fast.py's commands


VAULT = {"--vault": ("vault", "str"), "-V": ("vault", "str"), "--agent": ("agent", "str")}
ANCHOR = {"--anchor": ("anchor", "str"), "--budget": ("budget", "int")}
# `hook HOOK`'s options, as cli/hooks.py's typer commands declare them (hook_io.HOOKS runs each)
HOOKS = {
    "prompt": {**VAULT, "--budget": ("budget", "int")},
    "start": {**VAULT, **ANCHOR},
    "stop": VAULT,
    "end": {
        **VAULT,
        "--anchor": ("anchor", "str"),
        "--json": ("as_json", "bool"),
        "--wait": ("wait", "bool"),
    },
}


def hook(argv: list[str]) -> None:
    """`vaultmem hook HOOK ...` without typer (every agent runs these at each prompt and
    session); returns when the typer command must parse the arguments (--help, ...)."""
    from .argv import parse

    parsed = parse(argv[1:], HOOKS[argv[0]], 0) if argv and argv[0] in HOOKS else None
    if parsed is None:
        return
    from ..agents.hook_io import HOOKS as RUN
    from ..agents.hook_io import begin, hook_output

    opts = parsed[1]
    run = begin(argv[0], opts.get("agent"), opts.get("vault"))
    sys.exit(hook_output(lambda: RUN[argv[0]](**opts), run))


def main() -> None:
    try:
        try:
            _main()
        finally:  # what is still buffered (stdout to a pipe) is written here, where a reader that left is caught
            sys.stdout.flush()
    except BrokenPipeError:  # `vaultmem recall ... | head -1`: the reader left; end quietly like git does
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        sys.exit(141)
    except Exception as e:  # a failure nobody foresaw (a bug): one line, as the memory service says it
        from ..core import environment
        from ..core.errors import INTERNAL, internal_error

        if environment.VAULTMEM_DEBUG.get():
            raise
        sys.stderr.write(f"vaultmem: {internal_error(e)}\n")
        sys.exit(INTERNAL)


def _main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from .. import __version__

        print(f"vaultmem {__version__}")
        return
    if argv[:1] == ["hook"]:
        hook(argv[1:])
    if argv[:1] == ["recall"]:  # the main job: through a ready service without typer, else its own command
        from .quick import run

        if run(argv[1:]):
            return
        from .recall import run_recall

        run_recall(argv[1:])
        return
    if argv[:1] == ["remember"]:  # the other one agents run most
        from .remember import run_remember

        run_remember(argv[1:])
        return
    if argv[:1] and argv[0] in FAST:  # through a ready service without typer, else the typer command
        from .fast import run as fast

        if fast(argv):
            return
    from .app import main as full

    full()
