"""The BM25 index (whoosh-reloaded): one document per note, keyed by path.

Only the indexer writes it. Queries are built from analyzed terms (no query syntax, so
user text can never be a parse error) and only the top candidates are collected.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from whoosh import index as windex
from whoosh import query as wq
from whoosh.fields import ID, TEXT, Schema
from whoosh.reading import TermNotFound
from whoosh.scoring import BM25F

from ..core.discovery import private_dir
from ..core.errors import VaultError
from . import ownfiles
from .analysis import analyzer
from .whoosh_compat import deleted_docs, field_lengths, posting_lists, segment_id, written
from .whoosh_compat import postings as posting_arrays

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: the warm-up answer (``matches``) runs without it

SCHEMA_VERSION = "5"  # 4: property values (issue 27); 5: in a field of their own
OWN_WAIT = 2.0  # seconds a reader waits for a writer to record the files of a commit it just made
log = logging.getLogger("vaultmem.index")


B, K1 = 0.75, 1.2  # whoosh's BM25F defaults; flat on the SciFact train split (benchmarks/README.md)
# field -> weight of its score. Property values have a field of their own, so they never lengthen
# ``content`` (its length normalisation is a note's text alone); weight chosen on kepano's questions.
FIELDS = {"content": 1.0, "props": 2.0}
# Fields whose words are judged by how many notes hold them anywhere (text or properties), not by
# how rare they are among the few property blocks: a word in many notes' text and one note's
# ``description`` is no rarity (issue 37: the help vault's how-to questions).
NOTE_DF_FIELDS = frozenset({"props"})


def idf(weight: float, live_docs: int, df: int) -> float:
    """A query term's weighted inverse document frequency in one field (whoosh's BM25F)."""
    return weight * (math.log(live_docs / (df + 1)) + 1)


def term_score(idf: float, tf, length, avgdl: float):
    """BM25 of a term in a field of given ``length`` (floats, or numpy arrays of them)."""
    return idf * (tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * length / avgdl))


def _leaves(searcher):
    return searcher.leaf_searchers() if not searcher.is_atomic() else [(searcher, 0)]


def schema() -> Schema:
    """One analyzed ``content`` field (title twice, aliases, tags, body): on the SciFact train
    split this scored nDCG@10 0.692 against 0.658 for separate boosted fields, at half the
    query time (benchmarks/README.md). Other property values go to ``props``: in ``content``
    their words (ids such as ``D1:3``) changed every such note's length normalisation."""
    return Schema(
        path=ID(stored=True, unique=True, sortable=True),
        hash=ID(stored=True),
        content=TEXT(analyzer=analyzer()),
        props=TEXT(analyzer=analyzer()),
        type=ID,
        status=ID,
    )


@dataclass(frozen=True)
class Doc:
    """What BM25 indexes of one note."""

    path: str
    hash: str
    title: str
    aliases: str
    tags: str
    body: str
    type: str
    status: str
    props: str = ""  # other property values (note.property_text)

    @property
    def content(self) -> str:
        return "\n".join((self.title, self.title, self.aliases, self.tags.replace(",", " "), self.body))


class BM25Index:
    """A whoosh index in ``folder``; created on first use."""

    def __init__(self, folder: Path, on_reset: Callable[[], None] | None = None):
        self.folder = folder
        self.on_reset = on_reset  # called when files vaultmem did not write were set aside
        self._ix = None
        self._searcher = None
        self._analyzer = analyzer()
        self._segments: dict = {}  # segment key -> (lengths, live mask, paths), current segments only
        self._maps: dict = {}  # segment key -> positions in ``_maps_for``
        self._maps_for: dict | None = None  # held, not keyed by id(): a freed dict's id is reused

    def _index(self):
        """The whoosh index, opened only when every file in its folder is one vaultmem wrote
        (``ownfiles``), with vaultmem's own schema (the pickled one is never loaded); else the
        folder is set aside and a new, empty index made (``on_reset`` asks for a re-index)."""
        if self._ix is None:
            if self._has_toc() and not self._set_aside_foreign():
                self._ix = self._open()
            if self._ix is None:
                private_dir(self.folder)
                self._ix = made = windex.create_in(str(self.folder), schema())
                ownfiles.record(self.folder, {f"_{made.indexname}_0.toc"})  # a new index's one file
        return self._ix

    def _open(self):
        """The index on disk, its segments read once; None (the folder set aside) when whoosh
        cannot read it (a file torn by a crash that kept its size and times)."""
        try:
            ix = windex.open_dir(str(self.folder), schema=schema())
            ix.doc_count()  # reads the table of contents and opens every segment
            return ix
        except Exception as e:
            self._set_aside(
                sorted(p.name for p in self.folder.iterdir()), f"cannot be read: {type(e).__name__}"
            )
            return None

    def _has_toc(self) -> bool:
        return self.folder.is_dir() and any(ownfiles.TOC.match(p.name) for p in self.folder.iterdir())

    def _set_aside_foreign(self) -> bool:
        """Move the folder aside when it holds files vaultmem did not write; whether it did."""
        deadline = time.monotonic() + OWN_WAIT
        while bad := ownfiles.foreign(self.folder):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.1)  # a writer that just committed records its files right after
        if not bad:
            return False
        why = ("its record is unsigned (an older vaultmem wrote it, or it was planted)" if ownfiles.legacy(self.folder)
               else "not written by this user's vaultmem, or changed since: planted or torn")  # fmt: skip
        self._set_aside(bad, why)
        return True

    def _set_aside(self, bad: list[str], why: str) -> None:
        """Move the folder to ``<name>.foreign`` (for a look; never loaded), say so once, and ask
        for a re-index (``on_reset``)."""
        aside = self.folder.with_name(self.folder.name + ".foreign")
        shutil.rmtree(aside, ignore_errors=True)
        try:
            self.folder.rename(aside)
        except OSError as e:
            raise VaultError(f"{self.folder}: holds index files vaultmem did not write and cannot be moved "
                             f"aside ({e.strerror or e}); remove the folder (it is rebuilt)") from None  # fmt: skip
        ownfiles.record_path(self.folder).unlink(missing_ok=True)
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        log.warning("vaultmem: the keyword index %s (%s) %s: set aside in %s, rebuilt from the notes",
                    self.folder, shown, why, aside.name)  # fmt: skip
        if self.on_reset is not None:
            self.on_reset()

    def clear(self) -> None:
        """Delete the index from disk (a rebuild starts from nothing)."""
        self.close()
        self._ix = None
        shutil.rmtree(self.folder, ignore_errors=True)
        ownfiles.record_path(self.folder).unlink(missing_ok=True)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None

    def apply(self, upserts: Iterable[Doc], deletes: Iterable[str]) -> None:
        """Delete and (re)add documents in one commit."""
        upserts, deletes = list(upserts), list(deletes)
        if not upserts and not deletes:
            return
        writer = self._index().writer(limitmb=256)
        try:
            for path in deletes:
                writer.delete_by_term("path", path)
            for d in upserts:
                writer.update_document(
                    path=d.path, hash=d.hash, content=d.content, props=d.props, type=d.type, status=d.status
                )
        except BaseException:
            writer.cancel()
            raise
        writer.commit(merge=len(upserts) + len(deletes) < 1000)
        ownfiles.record(self.folder, written(writer, str(self.folder)))
        self.close()

    def _fresh_searcher(self):
        if self._searcher is not None and not self._searcher.doc_count_all():
            self.close()  # whoosh cannot refresh a searcher of an empty index (its EmptyReader has no segments)
        if self._searcher is None:
            self._searcher = self._index().searcher(weighting=BM25F(B=B, K1=K1))
        else:
            self._searcher = self._searcher.refresh()
        return self._searcher

    def documents(self) -> dict[str, str]:
        """path -> content hash of every indexed document (for crash repair checks)."""
        with self._index().searcher() as s:
            return {f["path"]: f["hash"] for f in s.all_stored_fields()}

    def terms(self, text: str) -> list[str]:
        """The analyzed terms of a query text, unique, in order."""
        return list(dict.fromkeys(t.text for t in self._analyzer(text)))

    def query(self, text: str) -> wq.Query | None:
        terms = self.terms(text)
        if not terms:
            return None
        return wq.Or([wq.Term(f, t, boost=w) for t in terms for f, w in FIELDS.items()])

    def score_all(self, text: str, index: dict[str, int], n: int) -> np.ndarray:
        """BM25 score of every note: ``out[index[path]]`` (0 where no query term occurs), the
        weighted sum of each field's BM25 (``FIELDS``), as whoosh's BM25F scores ``query``.

        The collection statistics (document count, document frequencies, average length)
        count live documents only, so an index updated incrementally (with deleted documents
        not yet merged away) scores exactly like one rebuilt from the files.
        """
        import numpy as np

        out = np.zeros(n, dtype=np.float64)
        terms = self.terms(text)
        if not terms:
            return out
        readers = [leaf.reader() for leaf, _ in _leaves(self._fresh_searcher())]
        readers = [
            r for r in readers if r.doc_count_all()
        ]  # an index without segments reads as an EmptyReader
        keys = [self._segment_key(r) for r in readers]
        self._forget_other_segments(set(keys), index)
        segments = [
            _ArraySegment(reader, *self._segment_arrays(reader, key)) for reader, key in zip(readers, keys)
        ]
        _score(segments, terms)
        for key, segment in zip(keys, segments):
            where = self._positions(key, segment.paths, index)
            hit = np.flatnonzero((segment.scores > 0) & (where >= 0))
            out[where[hit]] = segment.scores[hit]
        return out

    def _forget_other_segments(self, current: set[tuple], index: dict[str, int]) -> None:
        """Keep cached arrays only for the searcher's current segments and ``index``, so the
        caches stay as small as the index however many commits a long-running watcher makes."""
        for cache in (self._segments, self._maps):
            for key in [k for k in cache if k not in current]:
                del cache[key]
        if index is not self._maps_for:
            self._maps.clear()
            self._maps_for = index

    def _positions(self, key: tuple, paths: list[str], index: dict[str, int]) -> np.ndarray:
        """For each document of a segment (``paths``), its position in ``index`` (-1 if not there)."""
        import numpy as np

        pos = self._maps.get(key)
        if pos is None:
            pos = self._maps[key] = np.array([index.get(p, -1) for p in paths], dtype=np.int64)
        return pos

    @staticmethod
    def _segment_key(reader) -> tuple:
        """(segment id, live documents); a reader without a segment gets a key of its own that
        nothing cached can match (its id() could be a freed reader's)."""
        sid = segment_id(reader)
        return (sid if sid is not None else object(), reader.doc_count())

    def _segment_arrays(self, reader, key: tuple) -> tuple[dict[str, np.ndarray], np.ndarray, list[str]]:
        """Per-segment field lengths (field -> array), live-document mask and paths, cached under
        the segment's key (segment and deletions)."""
        import numpy as np

        cached = self._segments.get(key)
        if cached is None:
            n = reader.doc_count_all()
            lengths = {f: np.array(field_lengths(reader, f), dtype=np.float64) for f in FIELDS}
            live = np.ones(n, dtype=bool)
            for num in deleted_docs(reader):
                live[num] = False
            column = reader.column_reader("path")
            paths = [column[i] for i in range(n)]
            cached = self._segments[key] = (lengths, live, paths)
        return cached

    def matches(self, text: str) -> dict[str, float]:
        """path -> BM25 score of every live note holding a term of ``text``: ``score_all``'s
        numbers, computed without numpy (the answer given while the memory service warms up).
        It reads the index as it is on disk and never creates, repairs or sets it aside: a
        folder without an index, or holding a file vaultmem did not write, answers nothing."""
        terms = self.terms(text)
        if not terms or not self._has_toc() or ownfiles.foreign(self.folder):
            return {}
        try:
            return self._plain_matches(terms)
        except Exception as e:
            log.warning("vaultmem: the keyword index %s cannot be read (%s); no keyword answer", self.folder,
                        type(e).__name__)  # fmt: skip
            return {}

    def _plain_matches(self, terms: list[str]) -> dict[str, float]:
        with windex.open_dir(str(self.folder), schema=schema()).searcher() as searcher:
            readers = [leaf.reader() for leaf, _ in _leaves(searcher)]
            segments = [_PlainSegment(r) for r in readers if r.doc_count_all()]  # as in score_all
            _score(segments, terms)
            return {
                segment.paths[doc]: score
                for segment in segments
                for doc, score in segment.scores.items()
                if score > 0
            }

    def count(self) -> int:
        return self._index().doc_count()


def _score(segments: list, terms: list[str]) -> None:
    """Add each field's weighted BM25 of ``terms`` to every segment's scores (``_ArraySegment``:
    numpy arrays, ``_PlainSegment``: plain lists). A field's statistics are its own: document
    frequencies (for ``NOTE_DF_FIELDS``, of the notes holding a term in any field) and the
    average length over the notes that have the field (not whoosh's over all: a note's property
    block is measured against other property blocks, not against the many notes without one)."""
    live_docs = sum(segment.live_count for segment in segments)
    if not live_docs:
        return
    found = {f: [segment.postings(f, terms) for segment in segments] for f in FIELDS}
    notes_df = _notes_holding(found)
    for field, weight in FIELDS.items():
        df = notes_df if field in NOTE_DF_FIELDS else _holding(found[field])
        sizes = [segment.size(field) for segment in segments]
        having = sum(h for _, h in sizes)
        avgdl = sum(total for total, _ in sizes) / having if having else 1.0
        weights = {t: idf(weight, live_docs, df[t]) for lists in found[field] for t in lists}
        for segment, lists in zip(segments, found[field]):
            for term, (ids, tf) in lists.items():
                segment.add(field, ids, tf, weights[term], avgdl)


def _holding(found: list[dict]) -> dict[str, int]:
    """term -> live documents holding it, from one field's postings of each segment."""
    df: dict[str, int] = {}
    for segment in found:
        for term, (ids, _) in segment.items():
            df[term] = df.get(term, 0) + len(ids)
    return df


def _notes_holding(found: dict[str, list[dict]]) -> dict[str, int]:
    """term -> live documents holding it in any field (``found``: field -> postings per segment)."""
    df: dict[str, int] = {}
    for fields in zip(*found.values()):
        for term in set().union(*fields):
            held = [lists[term][0] for lists in fields if term in lists]
            df[term] = df.get(term, 0) + (len(held[0]) if len(held) == 1 else len(set().union(*held)))
    return df


class _ArraySegment:
    """A segment's live documents as numpy arrays (``score_all``): field lengths, live mask,
    paths (cached per segment: ``_segment_arrays``) and the query's scores."""

    def __init__(self, reader, lengths: dict[str, np.ndarray], live: np.ndarray, paths: list[str]):
        import numpy as np

        self.reader, self.lengths, self.live, self.paths = reader, lengths, live, paths
        self.live_count = int(live.sum())
        self.scores = np.zeros(len(paths), dtype=np.float64)

    def postings(self, field: str, terms: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """term -> (doc numbers, term frequencies) in ``field`` of the segment's live documents."""
        out = {}
        for term, (ids, tf) in _posting_lists(self.reader, field, terms, posting_arrays):
            keep = self.live[ids]
            if keep.any():
                out[term] = (ids[keep], tf[keep])
        return out

    def size(self, field: str) -> tuple[float, int]:
        """(total length of ``field`` over the live documents, how many of them have it)."""
        import numpy as np

        lengths = self.lengths[field][self.live]
        return float(lengths.sum()), int(np.count_nonzero(lengths))

    def add(self, field: str, ids: np.ndarray, tf: np.ndarray, weight: float, avgdl: float) -> None:
        """Add a term's BM25 in ``field`` (``weight``: its idf) to the documents ``ids``."""
        self.scores[ids] += term_score(weight, tf, self.lengths[field][ids], avgdl)


class _PlainSegment:
    """``_ArraySegment`` in plain lists and dicts, without numpy (``matches``)."""

    def __init__(self, reader):
        n = reader.doc_count_all()
        dead = deleted_docs(reader)
        self.reader = reader
        self.lengths = {f: [float(x) for x in field_lengths(reader, f)] for f in FIELDS}
        self.live = {i for i in range(n) if i not in dead}
        self.live_count = len(self.live)
        self.paths = reader.column_reader("path")
        self.scores: dict[int, float] = {}

    def postings(self, field: str, terms: list[str]) -> dict[str, tuple[list[int], list[float]]]:
        out = {}
        for term, (ids, tf) in _posting_lists(self.reader, field, terms, posting_lists):
            pairs = [(int(i), float(w)) for i, w in zip(ids, tf) if i in self.live]
            if pairs:
                out[term] = ([i for i, _ in pairs], [w for _, w in pairs])
        return out

    def size(self, field: str) -> tuple[float, int]:
        lengths = [self.lengths[field][i] for i in self.live]
        return sum(lengths), sum(1 for x in lengths if x)

    def add(self, field: str, ids: list[int], tf: list[float], weight: float, avgdl: float) -> None:
        lengths, scores = self.lengths[field], self.scores
        for doc, freq in zip(ids, tf):
            scores[doc] = scores.get(doc, 0.0) + term_score(weight, freq, lengths[doc], avgdl)


def _posting_lists(reader, field: str, terms: list[str], read):
    """(term, ``read``'s (doc numbers, term frequencies)) of each term the field holds."""
    for term in terms:
        try:
            matcher = reader.postings(field, term)
        except TermNotFound:
            continue
        yield term, read(matcher)
