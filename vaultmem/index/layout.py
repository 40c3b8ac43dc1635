"""Where a vault's derived indexes live, and the version of what they hold."""

from __future__ import annotations

from pathlib import Path

from ..core.store import STATE_DIR
from .bm25 import SCHEMA_VERSION as BM25_VERSION
from .manifest import SCHEMA_VERSION as MANIFEST_VERSION

INDEX_DIR = "index"
# Bump when the on-disk layout or what is indexed changes: older indexes are rebuilt on open.
INDEX_VERSION = f"m{MANIFEST_VERSION}.b{BM25_VERSION}"


def index_dir(root: Path) -> Path:
    """The folder of a vault's indexes (manifest, BM25)."""
    return root / STATE_DIR / INDEX_DIR


def index_version(title_from: str) -> str:
    """The version an index of notes titled by ``title_from`` records (titles are indexed: a
    new setting re-indexes)."""
    return f"{INDEX_VERSION}.{title_from}"
