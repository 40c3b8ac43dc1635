"""Memory lifecycle: resolve, supersede, reopen, auto-supersede and duplicate detection.

Every transition is a guarded, atomic frontmatter change: only ``status``,
``superseded_by``, ``supersedes``, ``valid_until`` and ``valid_from`` are written, every other
byte of the file stays.

Auto-supersede on ``remember``: a memory with the same subject ``key``, type and scope as
active older ones replaces them, whatever their source; without a key, ``updates.judge``
decides from several signals, and the pairs it is unsure about are returned as possible updates.
"""

from __future__ import annotations

import datetime as dt
import itertools
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core import updates
from ..core.links import link_target
from ..core.mergedriver import CONFLICT
from ..core.note import file_stem, parse, set_fields
from ..core.titles import folded
from ..index.chunking import chunk, plain_text
from ..index.embed import similarity
from ..recall.timefilter import day
from . import projects

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState


def memory_text(title: str, content: str, max_tokens: int = 256) -> str:
    """The text the index embeds for a note written by ``remember`` (its first chunk, for an
    embedder with a window of ``max_tokens``)."""
    return chunk(title, plain_text(f"{content.strip()}\n"), max_tokens)[0]


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def link_to(path: str, others: Iterable[str] = (), title: str | None = None) -> str:
    """A wiki-link to a note by its file name (how Obsidian resolves and writes links); by its
    path (``[[folder/Name]]``) when another note in ``others`` has the same file name, so the
    link cannot resolve to the wrong one. ``title``: shown as the label when the file name
    differs from it (``[[Project - MyApp|Project: MyApp]]``)."""
    stem = file_stem(path)
    if any(o != path and _fold(file_stem(o)) == _fold(stem) for o in others):
        target = path[:-3] if path.lower().endswith(".md") else path
    else:
        target = stem
    label = " ".join(title.replace("|", " ").replace("]", " ").replace("[", " ").split()) if title else ""
    return f"[[{target}|{label}]]" if label and label != target else f"[[{target}]]"


def change(vault: VaultState, rec: Record, updates: dict[str, Any], remove: tuple[str, ...] = (),
           unchanged: bool = False) -> bool:  # fmt: skip
    """A guarded, atomic frontmatter change of one note; True if the file changed. With
    ``unchanged``, refused (Conflict) if the file is no longer the text ``rec`` was read from."""
    expected = rec.hash if unchanged and rec.hash else None
    if updates.get("status", CONFLICT) != CONFLICT:  # a new status settles a merge conflict
        remove = (*remove, "status_before_conflict")
    old, new = vault.store.update(rec.path, lambda text: set_fields(text, updates, remove), expected)
    return new != old


def _as_indexed(vault: VaultState, rec: Record) -> bool:
    """Whether a note's file is still the text its record was indexed from."""
    from ..core.errors import VaultError
    from ..core.note import content_hash

    try:
        return content_hash(vault.store.read_text(rec.path)) == rec.hash
    except (OSError, VaultError):
        return False


def _result(rec: Record, action: str, changed: bool, **extra: Any) -> dict[str, Any]:
    return {
        "id": rec.key,
        "path": rec.path,
        "title": rec.title,
        "action": action,
        "changed": changed,
        **extra,
    }


def resolve(vault: VaultState, ref: str) -> dict[str, Any]:
    """Mark a memory resolved (done, fixed, no longer relevant)."""
    rec = vault.find(ref)
    changed = change(vault, rec, {"status": "resolved"})
    vault.sync_paths([rec.path])
    return _result(rec, "resolved", changed)


def resolve_source(vault: VaultState, source: str) -> list[dict[str, Any]]:
    """Resolve every active memory written by one agent or session."""
    done = []
    for rec in vault.catalog().values():
        if rec.source == source and rec.status == "active":
            done.append(_result(rec, "resolved", change(vault, rec, {"status": "resolved"})))
    vault.sync_paths([d["path"] for d in done])
    return done


def reopen(vault: VaultState, ref: str) -> dict[str, Any]:
    """Make a resolved, superseded or archived memory active again (a superseded one loses
    its ``valid_until``, and the note that superseded it its ``supersedes`` link to it)."""
    rec = vault.find(ref)
    # a superseded memory is current again: its end of validity (set by supersede) goes too
    remove = ("superseded_by", "valid_until") if rec.status == "superseded" else ("superseded_by",)
    withdrawn = (
        _withdraw_declarations(vault, rec) if rec.status == "superseded" else []
    )  # first: see memory.rules
    changed = change(vault, rec, {"status": "active"}, remove=remove)
    vault.sync_paths([rec.path, *withdrawn])
    return _result(rec, "reopened", changed, was=rec.status, was_superseded_by=rec.superseded_by)


def _withdraw_declarations(vault: VaultState, rec: Record) -> list[str]:
    """Take ``rec`` out of the ``supersedes:`` of the notes that name it (else the rule of
    ``memory.rules`` would supersede it again); the paths changed."""
    graph = vault.graph()
    if rec.path not in graph:
        return []
    resolver = graph.graph["resolver"]
    out = []
    for path in [
        p for p in graph.predecessors(rec.path) if "supersedes" in graph.edges[p, rec.path]["kinds"]
    ]:

        def drop(text: str, path: str = path) -> str:
            value = parse(text, path).meta.get("supersedes")
            items = [value] if isinstance(value, str) else list(value or [])
            keep = [
                v
                for v in items
                if not (isinstance(v, str) and resolver.resolve(link_target(v) or "", path) == rec.path)
            ]
            if len(keep) == len(items):
                return text
            return set_fields(text, {"supersedes": keep[0] if len(keep) == 1 else keep} if keep else {},
                              () if keep else ("supersedes",))  # fmt: skip

        old, new = vault.store.update(path, drop)
        if new != old:
            out.append(path)
    return out


def confirm(vault: VaultState, ref: str) -> dict[str, Any]:
    """Make a ``candidate`` memory (a rule captured from a session) active, and vouch for a note
    written elsewhere (a teammate's or synced one, ``core.provenance``): it is trusted from now on."""
    from ..core import provenance

    rec = vault.find(ref)
    vouched = provenance.confirm(vault.root, rec.path)
    if rec.status != "candidate":
        if vouched:
            return _result(rec, "confirmed", False)
        from ..core.errors import BadInput

        raise BadInput(
            f"{rec.key} is {rec.status}, not a candidate nor an unconfirmed synced note; nothing to confirm"
        )
    changed = change(vault, rec, {"status": "active"})
    vault.sync_paths([rec.path])
    return _result(rec, "confirmed", changed)


def mark_superseded(vault: VaultState, old: Record, new: Record, paths: Iterable[str] | None = None) -> bool:
    """Write both sides of a supersession: ``superseded_by`` on old, ``supersedes`` on new.

    ``paths``: every note path of the vault (listed when not given), to tell apart notes
    sharing a file name."""
    if old.path == new.path:
        from ..core.errors import BadInput

        raise BadInput("a memory cannot supersede itself")
    paths = vault.store.list_paths() if paths is None else list(paths)
    to_new, to_old = link_to(new.path, paths, new.title), link_to(old.path, paths, old.title)
    since = _day(start_of(new))
    ending = {"valid_until": since} if since and not old.valid_until else {}
    changed = change(vault, old, {"status": "superseded", "superseded_by": to_new, **ending})
    note = vault.store.read(new.path)
    current = note.meta.get("supersedes")
    links = [current] if isinstance(current, str) else list(current or [])
    starting = {"valid_from": since} if since and not new.valid_from else {}
    if link_target(to_old) not in {link_target(v) for v in links if isinstance(v, str)}:
        value = [*links, to_old]  # always a list: one property type across notes (Obsidian)
        changed |= change(vault, new, {"supersedes": value, **starting})
    elif starting:
        changed |= change(vault, new, starting)
    return changed


def _day(iso: str | None) -> dt.date | None:
    """A day as a date, so the frontmatter shows it unquoted (``valid_until: 2026-11-22``)."""
    return dt.date.fromisoformat(iso) if iso else None


def start_of(rec: Record) -> str | None:
    """The day a memory became true: its ``valid_from``, else the day it was created."""
    when = day(rec.valid_from) or day(rec.created)
    return when.isoformat() if when else None


def _refuse_loop(old: Record, new: Record, records: dict[str, Record]) -> None:
    """BadInput when ``new`` is already (through its ``superseded_by`` chain) replaced by
    ``old``: superseding ``old`` by it would take both out of recall."""
    from ..core.errors import BadInput
    from ..core.links import NoteKeys, Resolver

    resolver = Resolver(NoteKeys(r.path, r.title, r.aliases, r.id) for r in records.values())
    seen, current = {new.path}, new
    while current.superseded_by:
        nxt = resolver.resolve(current.superseded_by, current.path)
        if nxt == old.path:
            raise BadInput(f"{new.key} is already superseded by {old.key}; superseding {old.key} by it would make "
                           f"a loop (reopen {new.key} first if it is current again)")  # fmt: skip
        if nxt is None or nxt in seen or nxt not in records:
            return
        seen.add(nxt)
        current = records[nxt]


def supersede(vault: VaultState, old_ref: str, new_ref: str) -> dict[str, Any]:
    """Mark OLD as replaced by NEW."""
    records = vault.catalog()
    old, new = vault.find(old_ref, records), vault.find(new_ref, records)
    _refuse_loop(old, new, records)
    changed = mark_superseded(vault, old, new)
    vault.sync_paths([old.path, new.path])
    return _result(old, "superseded", changed, by=new.key)


# ---------------------------------------------------------------- on remember


def similar_active(vault: VaultState, type_: str, text: str, limit: int,
                   branch: tuple[str | None, str | None] | None = None) -> list[tuple[Record, float]]:  # fmt: skip
    """The ``limit`` active memories of a type most similar to ``text`` (cosine), best first;
    with ``branch``, only those in that branch scope (see ``branch_scope``)."""
    if vault.embedder.name == "none":
        return []
    records = vault.records()
    universe, index = vault.universe()
    if not universe:
        return []
    qvec = vault.embedder.embed([text])[0]
    scores = similarity(vault.embedder, vault.vectors().aligned_scores(qvec, index, len(universe)))
    pool = [(records[p], float(scores[i])) for i, p in enumerate(universe)
            if records[p].type == type_ and records[p].status == "active"]  # fmt: skip
    pool.sort(key=lambda x: -x[1])
    if branch is None:
        return pool[:limit]
    return list(
        itertools.islice(((r, c) for r, c in pool if branch_scope(vault, r.path) == branch), limit)
    )  # read lazily


def branch_scope(vault: VaultState, path: str) -> tuple[str | None, str | None]:
    """A note's branch scope: (``branch``, ``repo``) of its frontmatter; (None, None), the
    default branch, for a note without ``branch`` (or one that cannot be read)."""
    from ..core.notedates import note_scope

    try:
        branch, repo = note_scope(vault.store.read_text(path))
    except (OSError, UnicodeDecodeError):
        return None, None
    return (branch, repo) if branch else (None, None)


def same_key(vault: VaultState, type_: str, key: str | None, scope: str | None, exclude: str | None = None,
             branch: tuple[str | None, str | None] = (None, None)) -> list[Record]:  # fmt: skip
    """The active memories of a type, scope and branch scope with the subject ``key`` (oldest first)."""
    from ..core.notedates import subject_key

    wanted = subject_key({"key": key}) if key else None
    if not wanted:
        return []
    scope = scope or "project"
    found = [r for r in vault.records().values() if r.subject == wanted and r.type == type_
             and r.scope == scope and r.status == "active" and r.path != exclude
             and branch_scope(vault, r.path) == branch]  # fmt: skip
    return sorted(found, key=lambda r: (r.created, r.path))


def check_new(vault: VaultState, type_: str, title: str, content: str, context: list[str],
              source: str | None, anchor: str | None = None, *,
              branch: tuple[str | None, str | None] = (None, None)) -> tuple[Record | None, list, list]:  # fmt: skip
    """(an existing duplicate or None, active memories the new one supersedes, likely
    updates it does not supersede on its own), each with its cosine similarity. Only notes
    in the same ``branch`` scope count."""
    cfg = vault.config["lifecycle"]
    text = memory_text(
        title, content, getattr(vault.embedder, "max_tokens", 256)
    )  # chunked as the indexer does
    # the same text, as remember writes it or without the heading (a body merely ending
    # with the new text is a different memory)
    same = {folded(plain_text(f"# {title}\n\n{content.strip()}\n")), folded(plain_text(content))}
    scope = projects.Scope(vault)
    mine = scope.of_anchor(anchor)

    def ours(rec: Record) -> bool:  # the project rule: never a memory of another project
        return rec.scope == "user" or projects.same_project(scope.of(rec.path), mine)

    def updatable(rec: Record) -> bool:  # nor, for a new memory of no project, one of a project
        theirs = scope.of(rec.path)  # (that project's block would say "may be outdated by" it)
        return rec.scope == "user" or theirs is None or theirs == mine

    for rec in vault.titled(title):  # exact duplicate, also when vectors are off
        if rec.type == type_ and rec.status == "active":
            if (folded(plain_text(vault.body(rec.path))) in same and branch_scope(vault, rec.path) == branch
                    and ours(rec)):  # fmt: skip
                return rec, [], []
    similar = [(r, c) for r, c in similar_active(vault, type_, text, int(cfg["supersede_candidates"]), branch=branch)
               if ours(r)]  # fmt: skip
    if similar and similar[0][1] >= float(cfg["duplicate"]):
        return similar[0][0], [], []
    similar = [(r, c) for r, c in similar if updatable(r)]
    new = updates.Memory(title, content, type_, tuple(context), _anchors(anchor))
    replace, possible = [], []
    for rec, cos in similar:
        verdict = updates.judge(_memory(vault, rec), new, cos, _thresholds(cfg))
        if verdict.decision == "auto" and not (source and rec.source == source):
            replace.append((rec, cos))
        elif verdict.decision != "no":
            possible.append((rec, cos))
    return None, replace, possible


def _anchors(anchor: str | None) -> tuple[str, ...]:
    """The anchor as compared with older memories' (``projects.project_key``: either link form)."""
    target = link_target(anchor) if anchor else None
    key = projects.project_key(target)
    return (key,) if key else ()


def _memory(vault: VaultState, rec: Record) -> updates.Memory:
    body = plain_text(vault.body(rec.path))
    anchors = tuple(k for t, kind in rec.links if kind == "frontmatter" and (k := projects.project_key(t)))
    return updates.Memory(rec.title, body, rec.type, rec.context, anchors, rec.created)


def _thresholds(cfg: dict) -> updates.Thresholds:
    """The thresholds of ``updates`` (a vault's ``[lifecycle]`` may set ``supersede_retract_cosine``,
    ``supersede_slot_cosine``, ``supersede_title_overlap`` and ``possible_update``; similarity
    alone never supersedes)."""
    base = updates.Thresholds()
    return updates.Thresholds(
        auto_cosine=float(cfg.get("supersede_retract_cosine", base.auto_cosine)),
        slot_cosine=float(cfg.get("supersede_slot_cosine", base.slot_cosine)),
        title=float(cfg.get("supersede_title_overlap", base.title)),
        possible_cosine=float(cfg.get("possible_update", base.possible_cosine)),
        body=base.body,
    )


def supersede_old(vault: VaultState, old: Record, new: Record, every: list[str]) -> dict[str, Any] | None:
    """Mark ``old`` superseded by ``new`` (``valid_until`` from the day ``new`` became true),
    changing only the old note; None if either changed meanwhile (left for the next batch):
    ``new``'s file must still say what its record says (a checkout that restored both notes,
    read half before and half after it, never marks the restored old note superseded)."""
    from ..core.errors import Conflict

    if new.hash and not _as_indexed(vault, new):
        return None
    fields: dict[str, Any] = {"status": "superseded", "superseded_by": link_to(new.path, every, new.title)}
    since = _day(start_of(new))
    if since and not old.valid_until:
        fields["valid_until"] = since
    try:
        changed = change(vault, old, fields, unchanged=True)  # as indexed: never undo a later edit
    except Conflict:
        return None
    return _result(old, "superseded", changed, by=new.key)
