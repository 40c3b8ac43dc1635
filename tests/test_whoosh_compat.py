"""whoosh-reloaded internals that vaultmem relies on (vaultmem/whoosh_compat.py).

These fail loudly when an upgrade of whoosh changes what the compat module reads or patches:
re-check each use there (and the BM25 tests) before raising SUPPORTED.
"""

from __future__ import annotations

import importlib.metadata as md

import numpy as np
import pytest
from gadgets import chain, plant_toc
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


# ------------------------------------------------------------ what an index's pickles may name (issue 48)


def _names_whoosh_offers() -> set[tuple[str, str]]:
    """Every (module, name) the installed whoosh's modules hold, and every dotted name one level
    into a module they import (``whoosh.idsets`` + ``operator.methodcaller``)."""
    import importlib
    import pkgutil
    import types

    import whoosh

    found: set[tuple[str, str]] = set()
    for info in pkgutil.walk_packages(whoosh.__path__, "whoosh."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # a module of an optional extra: nothing of it can be named
            continue
        for name in dir(module):
            found.add((info.name, name))
            value = getattr(module, name, None)
            if isinstance(value, types.ModuleType):
                found |= {(info.name, f"{name}.{inner}") for inner in dir(value)}
    return found


def test_the_unpickler_refuses_every_name_whoosh_offers_but_its_two_segment_classes():
    """Before (issue 48): any class reachable from whoosh.codec, columns, idsets, fields or
    formats was built, and a dotted name reached operator.methodcaller: a planted file ran code.
    Now only the names vaultmem's indexes hold, each bound to its object."""
    import pickle

    unpickler = whoosh_compat.SafeUnpickler(__import__("io").BytesIO(b"."))
    offered = _names_whoosh_offers()
    assert len(offered) > 5000  # the walk saw whoosh, not an empty package
    allowed = set()
    for module, name in offered:
        try:
            obj = unpickler.find_class(module, name)
        except pickle.UnpicklingError:
            continue
        allowed.add((module, name))
        assert obj is whoosh_compat.ALLOWED[(module, name)]
    assert allowed == {("whoosh.codec.whoosh3", "W3Codec"), ("whoosh.codec.whoosh3", "W3Segment")}
    for module, name in (("os", "system"), ("builtins", "eval"), ("builtins", "getattr"), ("builtins", "__import__"),
                         ("operator", "methodcaller"), ("operator", "attrgetter"), ("functools", "partial"),
                         ("copyreg", "_reconstructor"), ("subprocess", "Popen"), ("builtins", "object"),
                         ("collections", "defaultdict.__init__"), ("builtins", "dict.fromkeys")):  # fmt: skip
        with pytest.raises(pickle.UnpicklingError):
            unpickler.find_class(module, name)


def test_the_gadget_chain_of_the_issue_runs_nothing(tmp_path):
    import pickle

    marker = tmp_path / "pwned"
    with pytest.raises(pickle.UnpicklingError):
        whoosh_compat.safe_loads(chain(marker))
    assert not marker.exists()


def test_a_segment_naming_files_outside_its_folder_is_refused(tmp_path):
    import pickle

    from whoosh.codec.whoosh3 import W3Codec, W3Segment

    good = W3Segment(W3Codec(), "MAIN", 3)
    assert whoosh_compat.safe_loads(pickle.dumps([good], 2))[0].segment_id() == good.segment_id()
    for bad in ({"indexname": "../../x"}, {"segid": "a/../../b"}, {"_codec": {}}, {"_deleted": {"1"}}):
        seg = W3Segment(W3Codec(), "MAIN", 3)
        vars(seg).update(bad)
        with pytest.raises(pickle.UnpicklingError):
            whoosh_compat.safe_loads(pickle.dumps([seg], 2))


def test_a_file_dropped_into_the_folder_while_indexing_is_never_signed(tmp_path, monkeypatch):
    """Before (issue 48): the signing step after a commit signed every file in the folder, so a
    table of contents a sync client or an agent wrote there meanwhile was vouched for, and the
    next open unpickled it (the gadget chain ran). Now only the commit's own files are signed:
    the next open sets the folder aside and runs nothing."""
    from whoosh.writing import SegmentWriter

    marker, folder = tmp_path / "pwned", tmp_path / "bm25"
    index = BM25Index(folder)
    index.apply([Doc("a.md", "1", "A", "", "", "alpha", "fact", "active")], [])
    commit = SegmentWriter.commit

    def commit_and_drop(writer, *args, **kwargs):
        commit(writer, *args, **kwargs)
        plant_toc(folder, marker)  # the newest generation, the chain as its segments

    monkeypatch.setattr(SegmentWriter, "commit", commit_and_drop)
    index.apply([Doc("b.md", "2", "B", "", "", "beta", "fact", "active")], [])
    monkeypatch.setattr(SegmentWriter, "commit", commit)
    index.close()
    reopened = BM25Index(folder)
    assert sorted(reopened.documents()) == []  # set aside, a new empty index (the notes are indexed again)
    assert not marker.exists()
    assert (folder.with_name("bm25.foreign") / "_MAIN_999.toc").exists()
