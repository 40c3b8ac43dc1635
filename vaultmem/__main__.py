"""``python -m vaultmem``: the same command line as the ``vaultmem`` script."""

from .cli import main

main()
