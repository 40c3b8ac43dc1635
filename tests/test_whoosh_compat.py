"""whoosh-reloaded internals that vaultmem relies on (vaultmem/whoosh_compat.py).

These fail loudly when an upgrade of whoosh changes what the compat module reads or patches:
re-check each use there (and the BM25 tests) before raising SUPPORTED.
"""

from __future__ import annotations

import importlib.metadata as md

import numpy as np
import pytest
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.filedb.structfile import BufferFile, StructFile
from whoosh.matching.wrappers import FilterMatcher

from vaultmem.index import whoosh_compat
from vaultmem.index.bm25 import BM25Index, Doc


def _index(tmp_path, n: int = 700, deleted: range = range(0, 700, 7)) -> BM25Index:
    """An index whose common term spans several posting blocks, with deletions not merged."""
    ix = BM25Index(tmp_path / "bm25")
    docs = [Doc(f"n{i}.md", str(i), f"Note {i}", "", "", "common " * (1 + i % 5) + f"w{i % 3}", "fact", "active")
            for i in range(n)]  # fmt: skip
    ix.apply(docs, [])
    ix.apply([], [f"n{i}.md" for i in deleted])
    return ix


def _public_postings(matcher) -> tuple[list[int], list[float]]:
    ids, weights = [], []
    while matcher.is_active():
        ids.append(matcher.id())
        weights.append(matcher.weight())
        matcher.next()
    return ids, weights


def test_whoosh_is_the_version_the_compat_module_was_written_for():
    version = md.version("whoosh-reloaded")
    assert whoosh_compat.IS_SUPPORTED, f"whoosh-reloaded {version}: re-check vaultmem/whoosh_compat.py"
    assert tuple(int(p) for p in version.split(".")[:2]) == whoosh_compat.SUPPORTED


def test_the_private_names_read_are_there():
    for name in ("_read_ids", "_read_weights", "_next_block", "is_active"):
        assert callable(getattr(W3LeafMatcher, name, None)), f"W3LeafMatcher.{name} is gone"
    assert callable(StructFile.close)
    assert hasattr(whoosh_compat, "_lenfield") and whoosh_compat.LENGTHS_COLUMN is not None
    assert BufferFile.close is whoosh_compat.close_buffer_file, "the close fix is not applied"


def test_block_reads_equal_the_public_per_posting_reads(tmp_path):
    """Block reads return whole blocks, deleted documents included (the caller masks them):
    once masked they must equal what whoosh's own filtered matcher yields one by one."""
    ix = _index(tmp_path)
    with ix._index().searcher() as s:
        reader = s.reader()
        matcher = reader.postings("content", "common")
        assert isinstance(matcher, FilterMatcher) and isinstance(matcher.child, W3LeafMatcher)
        ids, tf = whoosh_compat.postings(matcher)
        assert ids.tolist() == list(range(700))  # several blocks (128 postings each), all read
        live = ~np.isin(ids, list(whoosh_compat.deleted_docs(reader)))
        public_ids, public_tf = _public_postings(reader.postings("content", "common"))
        assert len(public_ids) == 600
        assert ids[live].tolist() == public_ids and tf[live].tolist() == pytest.approx(public_tf)


def test_field_lengths_read_as_a_column_equal_the_per_document_reads(tmp_path):
    ix = _index(tmp_path)
    with ix._index().searcher() as s:
        reader = s.reader()
        for field in ("content", "props"):
            column = whoosh_compat.field_lengths(reader, field)
            assert column == [
                reader.doc_field_length(i, field, 0) or 0 for i in range(reader.doc_count_all())
            ]
        assert any(whoosh_compat.field_lengths(reader, "content"))


def test_segment_identity_and_deletions(tmp_path):
    ix = _index(tmp_path)
    with ix._index().searcher() as s:
        reader = s.reader()
        assert isinstance(whoosh_compat.segment_id(reader), str)
        assert whoosh_compat.deleted_docs(reader) == frozenset(range(0, 700, 7))
    empty = BM25Index(tmp_path / "empty")
    with empty._index().searcher() as s:  # no segments: whoosh gives an EmptyReader
        assert whoosh_compat.segment_id(s.reader()) is None
        assert whoosh_compat.deleted_docs(s.reader()) == frozenset()


def test_closing_a_buffer_file_releases_its_view():
    view = memoryview(bytearray(b"segment bytes"))
    f = BufferFile(view)
    f.close()
    assert f.is_closed
    with pytest.raises(ValueError, match="released"):
        view.tobytes()
