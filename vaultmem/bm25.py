"""The BM25 index (whoosh-reloaded): one document per note, keyed by path.

Only the indexer writes it. Queries are built from analyzed terms (no query syntax, so
user text can never be a parse error) and only the top candidates are collected.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from whoosh import index as windex
from whoosh import query as wq
from whoosh.fields import ID, KEYWORD, TEXT, Schema
from whoosh.scoring import BM25F

from .analysis import analyzer

FIELD_BOOSTS = {"title": 2.0, "aliases": 1.5, "tags": 1.5, "body": 1.0}


def schema() -> Schema:
    ana = analyzer()
    return Schema(
        path=ID(stored=True, unique=True),
        hash=ID(stored=True),
        title=TEXT(analyzer=ana, field_boost=FIELD_BOOSTS["title"]),
        aliases=TEXT(analyzer=ana, field_boost=FIELD_BOOSTS["aliases"]),
        tags=KEYWORD(lowercase=True, commas=True, scorable=True, field_boost=FIELD_BOOSTS["tags"]),
        body=TEXT(analyzer=ana),
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


class BM25Index:
    """A whoosh index in ``folder``; created on first use."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._ix = None
        self._searcher = None
        self._analyzer = analyzer()

    def _index(self):
        if self._ix is None:
            if windex.exists_in(str(self.folder)):
                self._ix = windex.open_dir(str(self.folder))
            else:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._ix = windex.create_in(str(self.folder), schema())
        return self._ix

    def clear(self) -> None:
        """Delete the index from disk (a rebuild starts from nothing)."""
        self.close()
        self._ix = None
        shutil.rmtree(self.folder, ignore_errors=True)

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
                    path=d.path, hash=d.hash, title=d.title, aliases=d.aliases, tags=d.tags,
                    body=d.body, type=d.type, status=d.status,
                )  # fmt: skip
        except BaseException:
            writer.cancel()
            raise
        writer.commit(merge=len(upserts) + len(deletes) < 1000)
        self.close()

    def _fresh_searcher(self):
        if self._searcher is None:
            self._searcher = self._index().searcher(weighting=BM25F())
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
        clauses = [wq.Term(f, t) for t in terms for f in ("title", "aliases", "body")]
        clauses += [wq.Term("tags", w.lower()) for w in text.replace(",", " ").split()]
        return wq.Or(clauses)

    def search(self, text: str, limit: int = 100, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """Top ``limit`` (path, score) pairs, best first; ``allowed`` restricts to those paths."""
        q = self.query(text)
        if q is None:
            return []
        searcher = self._fresh_searcher()
        flt = None
        if allowed is not None:
            if not allowed:
                return []
            flt = wq.Or([wq.Term("path", p) for p in allowed])
        results = searcher.search(q, limit=limit, filter=flt)
        return [(hit["path"], float(hit.score)) for hit in results]

    def count(self) -> int:
        return self._index().doc_count()
