"""Imported by every Python process of the service tests (this folder is first on their
PYTHONPATH): the small hash embedder instead of the real model, and the version a test asks for.

``VAULTMEM_TEST_MODEL_DELAY``: seconds the first embedding of a process waits (a model load);
``VAULTMEM_TEST_EMBED_HOLD``: ``PATH:N``: once N texts are embedded, a call of several texts
(indexing, not a query) waits while PATH exists (a big vault's first index held midway, cheaply);
``VAULTMEM_TEST_MODEL_LOG``: a file each process that "loads the model" appends its pid to;
``VAULTMEM_TEST_VERSION``: the vaultmem version this process claims (an old or new install).
The embedder module is patched when something imports it, so a light client stays light.
"""

import importlib.abc
import importlib.util
import os
import sys
import time

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

if os.environ.get("VAULTMEM_TEST_VERSION"):
    import vaultmem.core.version

    vaultmem.core.version.VERSION = os.environ["VAULTMEM_TEST_VERSION"]


def _fake_model(batch_size: int = 4):
    sys.path.insert(0, TESTS)
    from helpers import HashEmbedder

    class Loading(HashEmbedder):
        loaded = False

        def embed(self, texts):
            if not Loading.loaded:
                Loading.loaded = True
                time.sleep(float(os.environ.get("VAULTMEM_TEST_MODEL_DELAY") or 0))
                if os.environ.get("VAULTMEM_TEST_MODEL_LOG"):
                    with open(os.environ["VAULTMEM_TEST_MODEL_LOG"], "a") as f:
                        f.write(f"{os.getpid()}\n")
            hold, _, after = (os.environ.get("VAULTMEM_TEST_EMBED_HOLD") or "").rpartition(":")
            while hold and len(texts) > 1 and self.texts_embedded >= int(after) and os.path.exists(hold):
                time.sleep(0.05)
            return super().embed(texts)

    return Loading()


class _PatchEmbed(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "vaultmem.index.embed":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.make_embedder = lambda model, batch_size=4: _fake_model(batch_size)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get("VAULTMEM_TEST_MODEL_DELAY") is not None:
    sys.meta_path.insert(0, _PatchEmbed())
