"""`vaultmem` as its console script runs it, with the small test embedder instead of the model:
the end-to-end hook tests run the real CLI in a subprocess through this file (and a detached
`hook end` re-runs this same file)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import HashEmbedder

import vaultmem.vault

vaultmem.vault.make_embedder = lambda *a, **k: HashEmbedder()

from vaultmem.cli.main import main  # noqa: E402

main()
