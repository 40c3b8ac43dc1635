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
  are read by ``safe_load``, an unpickler that builds only plain data and whoosh's two segment
  classes, each name bound to its object (``ALLOWED``: a pickle naming anything else, such as
  ``os.system`` or a dotted ``operator.methodcaller`` through a whoosh module, is refused), and
  whose segments must name files of their own folder; behind the signed record of the files
  vaultmem wrote (``ownfiles``). ``tests/test_whoosh_compat.py`` tries every name the installed
  whoosh's modules hold.
- ``written`` names the files one commit wrote (its table of contents and its new segment's
  files): only those are signed, never a file someone dropped into the folder meanwhile.

All of it is written against whoosh-reloaded 2.7.x (``SUPPORTED``). On another version the
close fix is not applied and postings are read through the public per-posting interface
(same results, slower); ``tests/test_whoosh_compat.py`` fails loudly so that someone looks.
"""

from __future__ import annotations

import _codecs
import collections
import io
import pickle
import re

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


# Exactly what vaultmem's indexes pickle (whoosh 2.7, W3 codec: the table of contents' list of
# segments, stored fields, deletions), each name bound to the object it must be: nothing is looked
# up by a name a file gives (a dotted name such as ``whoosh.idsets`` + ``operator.methodcaller``
# reached a callable that called anything), and no function but ``_codecs.encode`` (bytes).
ALLOWED: dict[tuple[str, str], object] = {
    **{
        ("builtins", t.__name__): t
        for t in (int, float, complex, str, bytes, bytearray, bool, list, tuple, dict, set, frozenset)
    },  # fmt: skip
    ("collections", "defaultdict"): collections.defaultdict,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("_codecs", "encode"): _codecs.encode,
    ("whoosh.codec.whoosh3", "W3Codec"): whoosh.codec.whoosh3.W3Codec,
    ("whoosh.codec.whoosh3", "W3Segment"): whoosh.codec.whoosh3.W3Segment,
}
_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


class SafeUnpickler(pickle.Unpickler):
    """Builds plain data and whoosh's two segment classes (``ALLOWED``); refuses any other name."""

    def find_class(self, module: str, name: str) -> object:
        found = ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"an index file names {module}.{name}: not vaultmem's, not loaded")
        return found


def _checked(obj: object, depth: int = 0) -> object:
    """``obj`` when every segment in it names plain files of its own folder (an index name and a
    segment id of letters and digits, a W3 codec, counts and deletions that are numbers)."""
    if depth > 8:
        raise pickle.UnpicklingError("an index file nests too deep: not vaultmem's, not loaded")
    if isinstance(obj, whoosh.codec.whoosh3.W3Segment):
        state = vars(obj)
        ok = (_NAME.fullmatch(str(state.get("indexname"))) and _NAME.fullmatch(str(state.get("segid")))
              and type(state.get("_codec")) is whoosh.codec.whoosh3.W3Codec and type(state.get("_doccount")) is int
              and (state.get("_deleted") is None or all(type(d) is int for d in state["_deleted"])))  # fmt: skip
        if not ok:
            raise pickle.UnpicklingError("an index file names a segment that is not vaultmem's: not loaded")
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            _checked(item, depth + 1)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            _checked(key, depth + 1)
            _checked(value, depth + 1)
    return obj


def safe_load(file) -> object:
    return _checked(SafeUnpickler(file).load())


def safe_loads(data: bytes) -> object:
    return _checked(SafeUnpickler(io.BytesIO(data)).load())


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


def written(writer, folder: str) -> set[str]:
    """The files a committed ``SegmentWriter`` wrote in ``folder``: its table of contents and the
    files of the segment it made (a merge's too: merged documents go into that segment)."""
    import os

    names = {f"_{writer.indexname}_{writer.generation}.toc"}
    segment = getattr(writer, "newsegment", None)
    if segment is not None:
        prefix = f"{segment.segment_id()}."
        names |= {n for n in os.listdir(folder) if n.startswith(prefix)}
    return names
