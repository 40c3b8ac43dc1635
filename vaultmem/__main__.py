"""``python -m vaultmem``: the console entry itself, fast paths included."""

from .cli.main import main

main()
