"""The ``vaultmem`` console entry point.

``vaultmem hook prompt``, which an agent runs before every prompt, is answered here without
importing typer and click (about a quarter of its wall time); ``recall`` (``quick``) and
``show``, ``list``, ``stats``, ``edit``, ``resolve``, ``reopen``, ``wake`` (``fast``) are too,
through a ready memory service; every other command, and any of these with arguments their
small parsers do not know (``--help``), goes to the typer app in ``app.py``.
"""

from __future__ import annotations

import sys

FAST = {"show", "list", "stats", "edit", "resolve", "reopen", "wake"}  # cli/fast.py's commands


def prompt_args(argv: list[str]) -> tuple[str | None, int, str | None] | None:
    """(--vault, --budget, --agent) of `hook prompt`, or None when the full parser is needed."""
    from ..agents.hook_io import PROMPT_BUDGET

    vault, budget, agent = None, PROMPT_BUDGET, None
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name not in ("--vault", "-V", "--budget", "--agent"):  # -h, --help and anything else: typer
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            value, i = argv[i + 1], i + 1
        if name == "--budget":
            if not value.isdigit():
                return None
            budget = int(value)
        elif name == "--agent":
            agent = value
        else:
            vault = value
        i += 1
    return vault, budget, agent


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from .. import __version__

        print(f"vaultmem {__version__}")
        return
    if argv[:2] == ["hook", "prompt"]:
        parsed = prompt_args(argv[2:])
        if parsed is not None:
            from ..agents.hook_io import hook_output, prompt

            sys.exit(hook_output(lambda: prompt(*parsed)))
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
