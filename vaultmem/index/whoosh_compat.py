"""Where vaultmem leans on whoosh-reloaded's internals, in one place.

- ``BufferFile.close`` is replaced (on import) by one that releases its view of the segment's
  mmap, so that a closed reader's segment files are unmapped at once.
- ``postings`` reads a posting list a block at a time through ``W3LeafMatcher``'s private
  block buffers (BM25 scoring reads whole posting lists; per posting is several times slower).
- ``field_lengths`` reads a field's per-document lengths as one column (``LENGTHS_COLUMN``)
  rather than one ``doc_field_length`` call per document (a fifth of the time).
- ``segment_id`` and ``deleted_docs`` read a segment reader's identity and deletions, which
  an ``EmptyReader`` (an index without segments) does not have.
- whoosh keeps its tables of contents, segment directories and stored fields as pickles: they
  are read by ``safe_load``, an unpickler that builds only plain data and whoosh's own codec
  classes (a pickle naming anything else, such as ``os.system``, is refused), behind the signed
  record of the files vaultmem wrote (``ownfiles``).

All of it is written against whoosh-reloaded 2.7.x (``SUPPORTED``). On another version the
close fix is not applied and postings are read through the public per-posting interface
(same results, slower); ``tests/test_whoosh_compat.py`` fails loudly so that someone looks.
"""

from __future__ import annotations

import io
import pickle

import whoosh
import whoosh.codec.whoosh3
import whoosh.columns
import whoosh.filedb.structfile
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3LeafMatcher, _lenfield
from whoosh.filedb.structfile import BufferFile, StructFile
from whoosh.matching.wrappers import FilterMatcher
from whoosh.util.numeric import byte_to_length

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

SUPPORTED = (2, 7)
IS_SUPPORTED = tuple(whoosh.__version__[:2]) == SUPPORTED


def close_buffer_file(self) -> None:
    """``BufferFile.close`` that also releases the file's view of the segment's mmap.

    whoosh reads a compound segment through memoryviews of one mmap, but closing such a file
    kept its view, so closing the segment then failed quietly (BufferError) and the mapping
    lived on until a full garbage collection reached the reader's reference cycles. A watcher
    committing every few seconds held tens of MB of dead, often deleted, segment files that
    way (benchmarks/README.md, soak). Releasing the view lets the mmap close with the reader.
    """
    StructFile.close(self)
    buf, self._buf = getattr(self, "_buf", None), None
    if isinstance(buf, memoryview):
        try:
            buf.release()
        except BufferError:  # a view of the view is still alive: dropping our reference must do
            pass


if IS_SUPPORTED:
    BufferFile.close = close_buffer_file


# what an index's pickles may name: plain data, and classes of whoosh's codec and column modules
PLAIN = {("builtins", n) for n in ("int", "float", "complex", "str", "bytes", "bytearray", "bool", "list",
                                   "tuple", "dict", "set", "frozenset")} | {
    ("collections", "defaultdict"), ("collections", "OrderedDict"), ("_codecs", "encode"),
    ("copyreg", "_reconstructor"), ("array", "array"), ("array", "_array_reconstructor"),
}  # fmt: skip
WHOOSH_MODULES = ("whoosh.codec.", "whoosh.columns", "whoosh.idsets", "whoosh.fields", "whoosh.formats")


class SafeUnpickler(pickle.Unpickler):
    """Builds plain data and instances of whoosh's codec classes; refuses any other global."""

    def find_class(self, module: str, name: str):
        if (module, name) in PLAIN:
            return super().find_class(module, name)
        if module.startswith(WHOOSH_MODULES):
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"an index file names {module}.{name}: not vaultmem's, not loaded")


def safe_load(file) -> object:
    return SafeUnpickler(file).load()


def safe_loads(data: bytes) -> object:
    return SafeUnpickler(io.BytesIO(data)).load()


# every place whoosh 2.7 unpickles what it reads from an index folder (the schema's pickle is
# never read: vaultmem passes its own schema)
whoosh.filedb.structfile.load_pickle = safe_load
whoosh.codec.whoosh3.loads = safe_loads
whoosh.columns.loads = safe_loads


def postings(matcher) -> tuple[np.ndarray, np.ndarray]:
    """(doc numbers, term frequencies) of a posting list, read a block at a time."""
    import numpy as np  # here: the warm-up answer (``posting_lists``) runs without numpy

    ids, weights = posting_lists(matcher)
    return np.asarray(ids, dtype=np.int64), np.asarray(weights, dtype=np.float64)


def posting_lists(matcher) -> tuple[list[int], list[float]]:
    """``postings`` as plain lists."""
    if isinstance(matcher, FilterMatcher):
        matcher = matcher.child  # deleted documents are masked by the caller
    ids: list = []
    weights: list = []
    if IS_SUPPORTED and isinstance(matcher, W3LeafMatcher):
        while matcher.is_active():
            matcher._read_ids()
            matcher._read_weights()
            ids.extend(matcher._ids)
            weights.extend(matcher._weights)
            matcher._next_block()
    else:  # any other matcher: the public, per-posting interface
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
    return ids, weights


LENGTHS = [byte_to_length(b) if b else 0 for b in range(256)]  # whoosh stores a length as one byte


def field_lengths(reader, field: str) -> list[int]:
    """Every document's length in ``field`` (0 where it has none), as ``doc_field_length`` gives it."""
    n = reader.doc_count_all()
    perdoc = getattr(reader, "_perdoc", None)
    if IS_SUPPORTED and perdoc is not None and hasattr(perdoc, "_cached_reader"):
        column = perdoc._cached_reader(_lenfield(field), LENGTHS_COLUMN)
        return [0] * n if column is None else [LENGTHS[b] for b in column]
    return [reader.doc_field_length(i, field, 0) or 0 for i in range(n)]


def segment_id(reader) -> str | None:
    """The id of a leaf reader's segment; None for a reader without one (``EmptyReader``)."""
    segment = reader.segment() if hasattr(reader, "segment") else None
    return segment.segment_id() if segment is not None else None


def deleted_docs(reader) -> frozenset[int]:
    """Document numbers deleted in a leaf reader's segment (not yet merged away)."""
    return getattr(reader, "deleted_docs_set", None) or frozenset()
