"""The subject key, validity and dates of a note, as the index stores them (pure).

``dates`` are the days a note names: its ``date`` field, dates written in its title or first
line, and full dates written in its body ("on 8 May 2023", "2023-05-08", "May 8, 2023").
Together with ``created``/``updated`` and ``valid_from``/``valid_until`` they are what a time
expression in a query is matched against (``timefilter``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from .note import split_frontmatter
from .timeexpr import extract_dates

MAX_KEY = 200


def _iso(value: Any) -> str | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value).strip()
    return text or None


def subject_key(meta: dict) -> str | None:
    """The frontmatter ``key`` (a subject key such as ``deploy-target``), normalised: case and
    surrounding blanks do not matter."""
    value = meta.get("key")
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    text = " ".join(str(value).split()).casefold()
    return text[:MAX_KEY] or None


def fields(meta: dict, title: str, body: str) -> dict[str, Any]:
    """``subject``, ``valid_from``, ``valid_until`` and ``dates`` of a note."""
    days = set(extract_dates(f"{title}\n{body}"))
    own = _iso(meta.get("date"))
    if own:
        try:
            days.add(dt.date.fromisoformat(own[:10]))
        except ValueError:
            pass
    return {
        "subject": subject_key(meta),
        "valid_from": _iso(meta.get("valid_from")),
        "valid_until": _iso(meta.get("valid_until")),
        "dates": tuple(d.isoformat() for d in sorted(days)),
    }


def note_scope(text: str) -> tuple[str | None, str | None]:
    """(branch, repo) of a note, read by line from its frontmatter (cheap: recall filters hits)."""
    fm, _, _, _ = split_frontmatter(text)
    if not fm:
        return None, None
    found: dict[str, str] = {}
    for key in ("branch", "repo"):
        m = re.search(rf"^{key}:[ \t]*['\"]?(.*?)['\"]?[ \t]*$", fm, re.M)
        if m and m.group(1):
            found[key] = m.group(1)
    return found.get("branch"), found.get("repo")
