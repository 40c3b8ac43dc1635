"""The text analyzer BM25 uses: English stemming, plus character bigrams for CJK runs.

Scripts written without spaces (Chinese, Japanese kana/kanji, Korean Hangul runs) are
split into overlapping character bigrams so that any two-character word matches; a
single CJK character is kept as a unigram.
"""

from __future__ import annotations

import re

from whoosh.analysis import (
    Filter,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StopFilter,
)

CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f"
TOKEN_RE = re.compile(rf"[{CJK}]+|[^\W_{CJK}]+", re.UNICODE)
CJK_RUN_RE = re.compile(rf"^[{CJK}]+$")


class CJKBigramFilter(Filter):
    """Replace each CJK run token with its character bigrams (or the single character)."""

    def __call__(self, tokens):
        for t in tokens:
            text = t.text
            if not CJK_RUN_RE.match(text) or len(text) == 1:
                yield t
                continue
            start = t.startchar if t.chars else 0
            for i in range(len(text) - 1):
                t.text = text[i : i + 2]
                if t.chars:
                    t.startchar, t.endchar = start + i, start + i + 2
                yield t


class CJKSafeStemFilter(StemFilter):
    """Porter stemming that leaves CJK bigrams alone."""

    def __call__(self, tokens):
        stem = self._stem
        for t in tokens:
            if not t.stopped and not CJK_RUN_RE.match(t.text):
                t.text = stem(t.text)
            yield t


def analyzer():
    """Tokenize, lowercase, drop stop words, bigram CJK runs, stem English."""
    return (
        RegexTokenizer(TOKEN_RE)
        | LowercaseFilter()
        | StopFilter(minsize=1)
        | CJKBigramFilter()
        | CJKSafeStemFilter(cachesize=50000)
    )
