"""docs/cli.md and docs/vaultmem.1, made from the typer app itself (``vaultmem.cli.reference``)
so the reference cannot drift from `--help`:

    python tests/cli_reference.py > docs/cli.md
    python tests/cli_reference.py --man > docs/vaultmem.1

`tests/test_docs.py` fails when either file differs from what this prints.
"""

from __future__ import annotations

import sys

from vaultmem.cli.app import app
from vaultmem.cli.reference import manpage, markdown


def reference() -> str:
    """The whole reference as markdown."""
    return markdown(app)


if __name__ == "__main__":
    print(manpage(app) if sys.argv[1:] == ["--man"] else markdown(app), end="")
