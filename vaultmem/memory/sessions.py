"""End of a session (``sleep``) and checkpoints during one (``checkpoint``).

A session is named by its source (``--source``, else ``$VAULTMEM_SESSION``, else
``session-<date>``). ``checkpoint`` appends a timestamped line to that session's handoff
note (creating it); ``sleep`` writes a ``session_summary`` linked to the anchor and, with
next steps, finishes the session's handoff. Older handoffs of the anchor are superseded by
the new one and the aging rules keep session summaries bounded.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import environment, ownkey
from ..core.discovery import STATE_DIR, private_dir
from ..core.errors import BadInput
from ..core.filters import now_utc
from ..core.lock import named_lock
from ..core.secrets import Scrubber
from ..core.store import atomic_write
from ..core.titles import title_words
from . import ops
from .lifecycle import link_to, mark_superseded

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState


def session_name(source: str | None) -> str:
    return source or environment.VAULTMEM_SESSION.get() or f"session-{now_utc().date().isoformat()}"


ANCHORS_FILE = "session-anchors.json"  # in .vaultmem/: the anchor each recent session woke with
ANCHORS_KIND = "vaultmem session anchors"  # what this install's signature of the record says it is
KEEP_SESSIONS = 100


def _anchors_path(vault: VaultState) -> Path:
    return vault.root / STATE_DIR / ANCHORS_FILE


def _recorded(vault: VaultState) -> dict[str, list[str]]:
    """session -> [anchor, date of the wake], oldest first: the record this install wrote and
    signed (one a copied or pulled vault brings, or anyone else wrote, picks no anchor)."""
    data = ownkey.sealed_file(ANCHORS_KIND, _anchors_path(vault), limit=1 << 20)
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
    }


def record_anchor(vault: VaultState, anchor: str | None, source: str | None = None) -> None:
    """Remember the anchor a session woke with, so its checkpoint and sleep default to it."""
    if not anchor:
        return
    data = _recorded(vault)
    data.pop(session_name(source), None)
    data[session_name(source)] = [anchor, now_utc().date().isoformat()]
    private_dir(_anchors_path(vault).parent)
    atomic_write(
        _anchors_path(vault),
        ownkey.seal(ANCHORS_KIND, dict(list(data.items())[-KEEP_SESSIONS:]), indent=1) + "\n",
    )


def _anchor(anchor: str | None, vault: VaultState | None = None, session: str | None = None) -> str | None:
    """The anchor a session writes under (see ``_guess``)."""
    return _guess(anchor, vault, session)[0]


def _guess(anchor: str | None, vault: VaultState | None = None,
           session: str | None = None) -> tuple[str | None, str | None]:  # fmt: skip
    """(the anchor a session writes under, how it was guessed: None when given): given, else
    $VAULTMEM_ANCHOR, else the one the session woke with, else the vault's only project note."""
    chosen = anchor or environment.VAULTMEM_ANCHOR.get()
    if chosen or vault is None:
        return chosen, None if anchor else "$VAULTMEM_ANCHOR" if chosen else None
    recorded = _recorded(vault)
    if session in recorded:
        return recorded[session][0], "the anchor this session woke with"
    today = [a for a, day in recorded.values() if day == now_utc().date().isoformat()]
    if today:  # a hook's wake and sleep may name the session differently: today's last wake
        return today[-1], "today's last wake"
    projects = [r for r in vault.catalog().values() if r.type == "project" and r.status == "active"]
    return (projects[0].title, "the vault's only project") if len(projects) == 1 else (None, None)


def session_anchor(vault: VaultState, anchor: str | None, source: str | None = None) -> str | None:
    """The anchor a session's notes link to (see ``_anchor``)."""
    return _anchor(anchor, vault, session_name(source))


def _session_lock(vault: VaultState, session: str) -> contextlib.AbstractContextManager[None]:
    """The lock one session's handoff is found or created under (across processes)."""
    return named_lock(vault.root / STATE_DIR / "locks", f"session {session}")


def _handoff_of(vault: VaultState, session: str) -> Record | None:
    handoffs = [
        r
        for r in vault.catalog().values()
        if r.type == "handoff" and r.source == session and r.status == "active"
    ]
    return max(handoffs, key=lambda r: (r.created, r.path), default=None)


def _append(vault: VaultState, rec: Record, heading: str, lines: list[str]) -> None:
    """Append lines under a ``## heading`` of a note (adding the heading if missing), under
    the note's lock (concurrent checkpoints of one session all land)."""
    block = "\n".join(lines)

    def append(text: str) -> str:
        m = re.search(rf"^## {re.escape(heading)}\s*$", text, re.M)
        if not m:
            return f"{text.rstrip()}\n\n## {heading}\n{block}\n"
        nxt = re.search(r"^#{1,2} ", text[m.end() :], re.M)
        at = m.end() + nxt.start() if nxt else len(text)
        head = text[:at].rstrip("\n")
        return f"{head}\n{block}\n" + (f"\n{text[at:]}" if nxt else "")

    vault.store.update(rec.path, append)


def _new_handoff(vault: VaultState, session: str, anchor: str | None, body: str,
                 extra: dict[str, Any] | None = None) -> Record:  # fmt: skip
    stamp = now_utc().strftime("%Y-%m-%d %H%M")
    result = ops.remember(vault, "handoff", f"Handoff {stamp} {session}", body, source=session, anchor=anchor,
                          tags=["handoff"], extra=extra)  # fmt: skip
    return vault.find(result["path"], vault.catalog())


def checkpoint(vault: VaultState, text: str, source: str | None = None, anchor: str | None = None,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Append a timestamped line to the current session's handoff note (``extra``: more
    frontmatter for a new handoff, e.g. the branch scope)."""
    clean = Scrubber()  # an agent's text: no private span, no secret
    text, source = clean.text(text) or "", clean.title(source)
    if not text.strip():
        raise BadInput("a checkpoint needs some text")
    session = session_name(source)
    anchor, guessed = _guess(anchor, vault, session)
    line = f"- {now_utc().strftime('%H:%M')} {' '.join(text.split())}"
    with _session_lock(vault, session):  # two first checkpoints at once: one handoff
        rec = _handoff_of(vault, session)
        created = rec is None
        if rec is None:
            rec = _new_handoff(
                vault, session, anchor, f"Work in progress in {session}.\n\n## Checkpoints\n{line}", extra
            )
        else:
            _append(vault, rec, "Checkpoints", [line])
    vault.sync_paths([rec.path])
    said = {"anchor": anchor, "anchor_guessed": guessed} if created and guessed else {}  # a guess is said
    return {"id": rec.key, "path": rec.path, "session": session, "line": line, "created": created, **said,
            **({"redacted": clean.kinds} if clean.kinds else {})}  # fmt: skip


def sleep(vault: VaultState, summary: str, next_steps: str | None = None, source: str | None = None,
          anchor: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Write the session summary (and finish the handoff when there are next steps); ``extra``:
    more frontmatter for the notes it creates (e.g. the branch scope)."""
    clean = Scrubber()  # an agent's text: no private span, no secret
    summary, next_steps, source = clean.text(summary) or "", clean.text(next_steps), clean.title(source)
    if not summary.strip():
        raise BadInput("--summary is required: what was done in this session?")
    session = session_name(source)
    anchor = _anchor(anchor, vault, session)
    stamp = now_utc().strftime("%Y-%m-%d %H%M")
    first = title_words(summary, 10)  # a whole clause, fit for a file name: no ";", "/" or quotes
    result = ops.remember(vault, "session_summary", f"Session {stamp} {first}", summary, source=session, anchor=anchor,
                           extra=extra)  # fmt: skip
    out: dict[str, Any] = {"session": session, "summary": result, "handoff": None, "superseded": [],
                           **({"redacted": clean.kinds} if clean.kinds else {})}  # fmt: skip
    if next_steps and next_steps.strip():
        steps = [f"- {s.strip()}" for s in re.split(r"\n|;", next_steps) if s.strip()]
        moved: str | None = None
        with _session_lock(vault, session):
            rec = _handoff_of(vault, session)
            created = rec is None
            if rec is None:
                body = (
                    f"Handoff from {session}; summary in {link_to(result['path'], (), result['title'])}.\n\n## Next steps\n"
                    + "\n".join(steps)
                )
                rec = _new_handoff(vault, session, anchor, body, extra)
            else:
                _append(vault, rec, "Next steps", steps)
                moved = _same_anchor(vault, rec, result["path"])
        out["handoff"] = {"id": rec.key, "path": rec.path, "created": created,
                          **({"anchor_was": moved} if moved is not None else {})}  # fmt: skip
        out["superseded"] = _retire_old_handoffs(vault, rec, anchor)
        vault.sync_paths([rec.path])
    return out


def _same_anchor(vault: VaultState, handoff: Record, summary: str) -> str | None:
    """Put the session's handoff (begun by a checkpoint, maybe under a guessed anchor) under the
    anchor of its session summary; returns its anchor before ("" for none) when it changed."""
    from .lifecycle import change

    before = vault.store.read(handoff.path).meta.get("anchor")
    after = vault.store.read(summary).meta.get("anchor")
    if not after or after == before:
        return None
    change(vault, handoff, {"anchor": after})
    return str(before or "")


def _retire_old_handoffs(vault: VaultState, current: Record, anchor: str | None) -> list[str]:
    """Older active handoffs of the same anchor (or of no anchor) are superseded by ``current``."""
    records = vault.catalog()
    target = None
    if anchor:
        target = vault.find(anchor, records).path
    old, paths = [], [current.path]
    for rec in records.values():
        if rec.type != "handoff" or rec.status != "active" or rec.path == current.path:
            continue
        links = {t for t, _ in rec.links}
        linked = bool(target) and any(
            vault.graph().graph["resolver"].resolve(t, rec.path) == target for t in links
        )
        if linked or (not anchor and not links):
            mark_superseded(vault, rec, current)
            old.append(rec.key)
            paths.append(rec.path)
    vault.sync_paths(paths)
    return old
