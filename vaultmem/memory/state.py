"""What the note operations need of a vault: ``VaultState``, the interface ``ops``,
``lifecycle``, ``aging``, ``context`` and ``sessions`` are written against.

``Vault`` (vault.py) implements it and composes those modules as its methods; they never
import ``Vault``, so the facade depends on its parts and not the other way round.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from ..core.store import Store
    from ..index.embed import Embedder
    from ..index.manifest import Record
    from ..index.usage import UsageStore
    from ..index.vectors import VectorIndex
    from ..recall.hit import Hit


class VaultState(Protocol):
    """One vault's files, configuration, derived indexes and usage, as the operations read them."""

    root: Path
    config: dict[str, Any]
    store: Store
    embedder: Embedder

    @property
    def index_dir(self) -> Path: ...

    @property
    def templates_dir(self) -> Path: ...

    @property
    def usage(self) -> UsageStore: ...

    def records(self) -> dict[str, Record]:
        """Indexed metadata of every note, by path (after a sync)."""
        ...

    def catalog(self) -> dict[str, Record]:
        """Metadata of every note straight from the files (no index needed)."""
        ...

    def graph(self) -> nx.DiGraph:
        """The link graph of the indexed notes."""
        ...

    def build_graph(self, records: Iterable[Record]) -> nx.DiGraph:
        """The link graph of these notes under the vault's link settings."""
        ...

    def vectors(self) -> VectorIndex: ...

    def universe(self) -> tuple[list[str], dict[str, int]]:
        """Every indexed note in a fixed order and each one's position."""
        ...

    def body(self, path: str) -> str:
        """A note's markdown body without frontmatter ("" when unreadable)."""
        ...

    def find(self, ref: str, records: dict[str, Record] | None = None) -> Record:
        """A note by id, path, title, alias or file name."""
        ...

    def titled(self, title: str) -> list[Record]:
        """The indexed notes with this title (case and spacing aside)."""
        ...

    def note_ids(self) -> set[str]:
        """The ids of every note (a new note's id is none of them)."""
        ...

    def note_paths(self) -> list[str]:
        """Every note path (in a batch, kept by its writes instead of listed)."""
        ...

    def sync_paths(self, paths: Iterable[str]) -> None:
        """Index notes just written (a running watcher does it itself)."""
        ...

    def recall(self, query: str, k: int = 10, **options: Any) -> list[Hit]:
        """Hybrid recall over the vault."""
        ...
