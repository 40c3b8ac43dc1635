"""Two more shapes of an update (pure): a progress note's new status, and a correction.

``status_change``: two ``progress`` memories whose titles name the same effort and differ only
in its status ("Dark mode not started" -> "Dark mode shipped", "Payments refactor: 40%" ->
"80%", "Users name migration pending" -> "... applied"). A progress note is a state: the new
one replaces the old. Never when the titles differ in any other word, or in a number that is
not a share ("Week 41 progress" -> "Week 42 progress", "Migration 0042" -> "0043": another
period or part), or when the new text hedges or adds ("next", "also").

``corrects``: the new memory says it corrects an earlier one ("Correction: ...", "Real fix for
...", "... not the index") and its title names nothing the old title does not ("Invoice rounding
bug fix" -> "Correct fix for invoice rounding", "Scraper 403 fixed with a User-Agent" -> "Real
fix for the scraper 403"): the old fix or cause was wrong. Measured by
``benchmarks/supersede_v2.py`` (issue 47).
"""

from __future__ import annotations

import re

from .slots import ADDITION, STOPWORDS, key_words, tokens

# words that only say where an effort stands
STATUS = frozenset("""pending applied done shipped started begun finished complete completed released live merged
deployed blocked unblocked stalled paused resumed waiting ready landed status progress todo wip underway planned
cancelled canceled halfway half rolled rolling out written drafted reviewed tested open closed not yet still""".split())  # fmt: skip
SHARE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*%")  # a share of the work ("40%"); other numbers name a part
CORRECTION_RE = re.compile(
    r"^\s*correction\b|\b(?:real|correct|actual|true) (?:fix|cause|reason)\b|\bnot the\b|\bwas wrong\b",
    re.IGNORECASE,
)
FIX_WORDS = frozenset("fix fixed fixes bug cause real correct actual true correction not wrong".split())
PROGRESS = "progress"


def _subject(title: str) -> tuple[set[str], set[str]]:
    """(the words naming the effort, its numbers) of a progress title."""
    words = [w for w in tokens(title) if w not in STOPWORDS or w in STATUS]
    numbers = {w for w in words if any(c.isdigit() for c in w)}
    return {w for w in words if w not in STATUS and w not in numbers}, numbers


def status_change(kind: str, old_title: str, new_title: str, new_content: str) -> bool:
    """Whether a new progress memory gives the same effort a new status (see the module)."""
    if kind != PROGRESS or ADDITION.search(f"{new_title} {new_content}"):
        return False
    (old_subject, old_numbers), (new_subject, new_numbers) = _subject(old_title), _subject(new_title)
    if not old_subject or old_subject != new_subject:
        return False
    shares = set(SHARE_RE.findall(old_title)) | set(SHARE_RE.findall(new_title))
    if (old_numbers ^ new_numbers) - shares:
        return False  # "Week 41" -> "Week 42": another period, not a new status
    return tokens(old_title) != tokens(new_title)


def corrects(old_title: str, new_title: str, new_content: str) -> bool:
    """Whether the new memory corrects the old one (see the module)."""
    if not CORRECTION_RE.search(f"{new_title}. {new_content[:200]}"):
        return False
    old, new = key_words(old_title) - FIX_WORDS, key_words(new_title) - FIX_WORDS
    return len(old & new) >= 2 and new <= old
