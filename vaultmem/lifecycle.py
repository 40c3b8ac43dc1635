"""Memory lifecycle: resolve, supersede, reopen, auto-supersede and duplicate detection.

Every transition is a guarded, atomic frontmatter change: only ``status``,
``superseded_by`` and ``supersedes`` are written, every other byte of the file stays.
"""

from __future__ import annotations

import posixpath
import unicodedata
from typing import TYPE_CHECKING, Any, Iterable

from .chunking import chunk, plain_text
from .note import set_fields

if TYPE_CHECKING:  # pragma: no cover
    from .manifest import Record
    from .state import VaultState


def memory_text(title: str, content: str, max_tokens: int = 256) -> str:
    """The text the index embeds for a note written by ``remember`` (its first chunk, for an
    embedder with a window of ``max_tokens``)."""
    return chunk(title, plain_text(f"# {title}\n\n{content.strip()}\n"), max_tokens)[0]


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    return name[:-3] if name.lower().endswith(".md") else name


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def link_to(path: str, others: Iterable[str] = ()) -> str:
    """A wiki-link to a note by its file name (how Obsidian writes links); by its path
    (``[[folder/Name]]``) when another note in ``others`` has the same file name, so the
    link cannot resolve to the wrong one."""
    stem = _stem(path)
    if any(o != path and _fold(_stem(o)) == _fold(stem) for o in others):
        return f"[[{path[:-3] if path.lower().endswith('.md') else path}]]"
    return f"[[{stem}]]"


def change(vault: "VaultState", rec: "Record", updates: dict[str, Any], remove: tuple[str, ...] = ()) -> bool:
    """A guarded, atomic frontmatter change of one note; True if the file changed."""
    old, new = vault.store.update(rec.path, lambda text: set_fields(text, updates, remove))
    return new != old


def _result(rec: "Record", action: str, changed: bool, **extra: Any) -> dict[str, Any]:
    return {"id": rec.key, "path": rec.path, "title": rec.title, "action": action, "changed": changed, **extra}


def resolve(vault: "VaultState", ref: str) -> dict[str, Any]:
    """Mark a memory resolved (done, fixed, no longer relevant)."""
    rec = vault.find(ref)
    changed = change(vault, rec, {"status": "resolved"})
    vault.sync_paths([rec.path])
    return _result(rec, "resolved", changed)


def resolve_source(vault: "VaultState", source: str) -> list[dict[str, Any]]:
    """Resolve every active memory written by one agent or session."""
    done = []
    for rec in vault.catalog().values():
        if rec.source == source and rec.status == "active":
            done.append(_result(rec, "resolved", change(vault, rec, {"status": "resolved"})))
    vault.sync_paths([d["path"] for d in done])
    return done


def reopen(vault: "VaultState", ref: str) -> dict[str, Any]:
    """Make a resolved, superseded or archived memory active again."""
    rec = vault.find(ref)
    changed = change(vault, rec, {"status": "active"}, remove=("superseded_by",))
    vault.sync_paths([rec.path])
    return _result(rec, "reopened", changed)


def confirm(vault: "VaultState", ref: str) -> dict[str, Any]:
    """Make a ``candidate`` memory (a rule captured from a session) active; only candidates."""
    rec = vault.find(ref)
    if rec.status != "candidate":
        from .errors import BadInput

        raise BadInput(f"{rec.key} is {rec.status}, not a candidate; nothing to confirm")
    changed = change(vault, rec, {"status": "active"})
    vault.sync_paths([rec.path])
    return _result(rec, "confirmed", changed)


def mark_superseded(vault: "VaultState", old: "Record", new: "Record", paths: Iterable[str] | None = None) -> bool:
    """Write both sides of a supersession: ``superseded_by`` on old, ``supersedes`` on new.

    ``paths``: every note path of the vault (listed when not given), to tell apart notes
    sharing a file name."""
    if old.path == new.path:
        from .errors import BadInput

        raise BadInput("a memory cannot supersede itself")
    paths = vault.store.list_paths() if paths is None else list(paths)
    to_new, to_old = link_to(new.path, paths), link_to(old.path, paths)
    changed = change(vault, old, {"status": "superseded", "superseded_by": to_new})
    note = vault.store.read(new.path)
    current = note.meta.get("supersedes")
    links = [current] if isinstance(current, str) else list(current or [])
    if to_old not in links:
        value = to_old if not links else [*links, to_old]
        changed |= change(vault, new, {"supersedes": value})
    return changed


def supersede(vault: "VaultState", old_ref: str, new_ref: str) -> dict[str, Any]:
    """Mark OLD as replaced by NEW."""
    records = vault.catalog()
    old, new = vault.find(old_ref, records), vault.find(new_ref, records)
    changed = mark_superseded(vault, old, new)
    vault.sync_paths([old.path, new.path])
    return _result(old, "superseded", changed, by=new.key)


# ---------------------------------------------------------------- on remember


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def similar_active(vault: "VaultState", type_: str, text: str, limit: int) -> list[tuple["Record", float]]:
    """The ``limit`` active memories of a type most similar to ``text`` (cosine), best first."""
    if vault.embedder.name == "none":
        return []
    records = vault.records()
    universe, index = vault.universe()
    if not universe:
        return []
    scores = vault.vectors().aligned_scores(vault.embedder.embed([text])[0], index, len(universe))
    pool = [(records[p], float(scores[i])) for i, p in enumerate(universe)
            if records[p].type == type_ and records[p].status == "active"]  # fmt: skip
    return sorted(pool, key=lambda x: -x[1])[:limit]


def check_new(vault: "VaultState", type_: str, title: str, content: str, context: list[str],
              source: str | None) -> tuple["Record | None", list[tuple["Record", float]]]:  # fmt: skip
    """(an existing duplicate or None, active memories the new one should supersede)."""
    cfg = vault.config["lifecycle"]
    text = memory_text(title, content, getattr(vault.embedder, "max_tokens", 256))  # chunked as the indexer does
    # the same text, as remember writes it or without the heading (a body merely ending
    # with the new text is a different memory)
    same = {_normal(plain_text(f"# {title}\n\n{content.strip()}\n")), _normal(plain_text(content))}
    for rec in vault.records().values():  # exact duplicate, also when vectors are off
        if rec.type == type_ and rec.status == "active" and _normal(rec.title) == _normal(title):
            if _normal(plain_text(vault.body(rec.path))) in same:
                return rec, []
    similar = similar_active(vault, type_, text, int(cfg["supersede_candidates"]))
    if similar and similar[0][1] >= float(cfg["duplicate"]):
        return similar[0][0], []
    if type_ == "session_summary":
        return None, []
    mine = {c.lower() for c in context}
    replace = []
    for rec, cos in similar:
        if source and rec.source == source:
            continue
        shared = bool(mine & {c.lower() for c in rec.context})
        if cos >= float(cfg["supersede_shared_context" if shared else "supersede_no_context"]):
            replace.append((rec, cos))
    return None, replace
