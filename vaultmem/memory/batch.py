"""The rhythm of a bulk write (an import of thousands of notes): ``paced`` hands out the items
to write and, every ``EVERY`` of them and after the last, calls the vault's ``flush`` (the
files made durable at once, the undo record saved, the notes indexed in one sync; see
``Vault.batch(bulk=True)``), then reports the items done. What it reports is on disk: a run
killed after a report loses none of it, and its re-run skips it (the importers know an
imported item by the ``source`` in its note's frontmatter).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from ..core import environment

EVERY = 250  # items between checkpoints: one index commit and one os.sync per this many notes

T = TypeVar("T")


class Flushing(Protocol):
    def flush(self) -> int: ...


def paced(vault: Flushing, items: Sequence[T], progress: Callable[[int, int], None] | None = None,
          every: int | None = None) -> Iterator[T]:  # fmt: skip
    """Each of ``items`` in turn, with a checkpoint (``vault.flush``) after every ``every`` items
    (default: VAULTMEM_BULK_EVERY, else ``EVERY``) and after the last; ``progress(done, total)``
    after each checkpoint."""
    every = every or environment.VAULTMEM_BULK_EVERY.get() or EVERY
    total = len(items)
    for i, item in enumerate(items, 1):
        yield item
        if i % every == 0 or i == total:
            vault.flush()
            if progress:
                progress(i, total)
