"""What a finished agent session leaves in the vault, with no LLM: its summary note (dated by the
session's own timestamps, linked to the project's anchor, tagged ``chat-only`` when nothing was
done in it) and, as
candidate memories unless the vault already holds them, the decisions, rules and preferences the
user stated and the failures fixed in it (``Summary.memories``). ``hook end`` and the importers of
agent histories both write through here.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from ..core.filters import parse_time
from .summary import Summary, clip, render_summary, rule_title, topic

if TYPE_CHECKING:  # pragma: no cover
    from ..vault import Vault

CHAT_ONLY = "chat-only"  # the tag of a session summary of a session where nothing was done
RULE_TYPES = ("preference", "lesson", "pattern", "gotcha", "decision", "bug_fix")
STOP_WORDS = {
    "the", "and", "for", "with", "that", "this", "are", "our", "your", "you", "use", "all", "any", "not", "but",
    "always", "never", "don't", "dont", "should", "must", "when", "from", "into", "than", "then", "them", "its",
}  # fmt: skip


def redact_for_memory(text: str) -> str:
    """Text taken from a transcript or another tool, cleaned before it is written to the vault
    (every importer and ``hook end`` pass bodies through here): ``<private>`` spans removed and
    secrets replaced by ``[REDACTED:<kind>]`` (``core/secrets.py``)."""
    from ..core.secrets import redact, strip_private

    return redact(strip_private(text))[0]


def redact_title_for_memory(title: str) -> str:
    """``redact_for_memory`` for a title (a file name): the marker becomes ``redacted-<kind>``."""
    from ..core.secrets import redact_title, strip_private

    return redact_title(strip_private(title))


def session_title(s: Summary, when: dt.datetime, label: str = "Session") -> str:
    """``Session 2026-11-20 1405 Fix the JPY refund test``: the session's own start time and the
    first words of its first request, fit for a file name."""
    first = topic(s.requests)
    return f"{label} {when.astimezone(dt.UTC).strftime('%Y-%m-%d %H%M')} {first or 'work session'}"


def write_summary(vault: Vault, s: Summary, source: str, anchor: str | None, *, shown: list[str] | None = None,
                  scope: dict[str, Any] | None = None, now: dt.datetime | None = None,
                  supersede: bool = True, age: bool = True, label: str = "Session") -> dict[str, Any]:  # fmt: skip
    """The session summary note; ``now``: when the session happened when the transcript does
    not say (its own first timestamp wins); ``supersede``, ``age``: see ``ops.remember``. A
    chat-only session (a question answered, nothing done) is tagged ``chat-only``: it is never a
    project's *Last Session* (``context.collect``)."""
    when = parse_time(s.start) or now or dt.datetime.now(dt.UTC)
    titles = {r.key: r.title for r in vault.records().values()} if s.recalled else {}  # ids shown
    title = session_title(s, when, label)
    # remember drops private spans and redacts secrets, and says which; a chat keeps what the user said
    body = render_summary(s, shown, titles=titles, said=label == "Conversation")
    return vault.remember("session_summary", title, body, source=source, anchor=anchor, extra=scope, now=when,
                          supersede=supersede, age=age, tags=[CHAT_ONLY] if s.chat_only else ())  # fmt: skip


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if len(w) > 2 and w not in STOP_WORDS}


def known_rule(vault: Vault, title: str, sentence: str) -> Any:
    """The active or candidate memory that already states this rule (its words are, nearly all,
    in that memory's title), or None."""
    words = _words(title) or _words(sentence)
    if not words:
        return None
    for rec in vault.records().values():
        if rec.type in RULE_TYPES and rec.status in ("active", "candidate"):
            theirs = _words(rec.title)
            if (
                theirs
                and len(words & theirs) >= 0.8 * len(words)
                and len(words & theirs) >= 0.6 * len(theirs)
            ):
                return rec
    return None


def propose_rule(vault: Vault, type_: str, sentence: str, source: str, scope: dict[str, Any] | None = None,
                 now: dt.datetime | None = None, where: str = "session",
                 anchor: str | None = None, who: str = "user") -> dict[str, Any]:  # fmt: skip
    """A statement of the user or the agent (``who``), or a bug fix the session shows (``who``
    "session": a title line, then its body; ``Summary.memories``) as a ``status: candidate``
    memory titled by it, the sentence in its body (user scope for the user's preferences; others
    carry the branch ``scope`` and the project's ``anchor``, so only that project's wake lists
    them); when the vault already states it, nothing is written and ``duplicate_of`` names it."""
    sentence = redact_for_memory(sentence)
    title = redact_title_for_memory(rule_title(sentence))
    known = known_rule(vault, title, sentence)
    if known is not None:
        return {"id": known.key, "path": known.path, "title": known.title, "type": known.type,
                "duplicate_of": known.key, "superseded": [], "possible_updates": []}  # fmt: skip
    confirm = "a candidate until confirmed (`vaultmem confirm ID`)."
    if who == "session":  # the title line, then what failed and what fixed it
        body = f"{sentence.partition(chr(10))[2].strip()}\n\nSeen in {where} `{source}`; {confirm}"
    else:
        body = f"> {clip(sentence, 600)}\n\nStated by the {who} in {where} `{source}`; {confirm}"
    user = type_ == "preference" and who == "user"
    return vault.remember(type_, title, body, source=source, status="candidate", scope="user" if user else None,
                          extra=None if user else scope, now=now, anchor=None if user else anchor)  # fmt: skip
