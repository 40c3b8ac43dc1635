"""The rules that act on notes as they are indexed: explicit statements only, never similarity.

``Vault`` runs them after every index sync (``vaultmem index``, a command's own writes, a
running watcher's batches: one code path), so a vault's files and index are the same whichever
route indexed them. Two rules, for any note (hand-written or not):

- **same subject key**: of the active notes sharing a changed note's ``key``, type, scope and
  branch scope, the newest (by ``created``) supersedes the others;
- **declared**: an active note's own ``supersedes:`` names notes it replaces; those that are
  still active are superseded by it (when either side changed). ``reopen`` takes the reopened
  note out of the newer note's ``supersedes:``, so the statement no longer holds.

Only the older notes change (``status``, ``superseded_by``, ``valid_until``), through a guarded
frontmatter change that is refused if the file changed since it was indexed (then the next sync
tries again). A note that resembles another is never touched: that is a *possible update*,
which only the writer of a memory is told about (see ``lifecycle.check_new``).
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import TYPE_CHECKING, Any

from ..core.links import NoteKeys, Resolver
from .lifecycle import branch_scope, supersede_old

if TYPE_CHECKING:  # pragma: no cover
    from ..index.manifest import Record
    from .state import VaultState


def apply(vault: VaultState, changed: Iterable[str], records: dict[str, Record]) -> list[dict[str, Any]]:
    """Apply both rules for the ``changed`` paths against every indexed record; the
    supersessions written (``lifecycle._result`` dicts with ``rule``)."""
    changed = sorted(set(changed) & records.keys())
    done = [{**d, "rule": "same key"} for d in same_key(vault, changed, records)]
    gone = {d["path"] for d in done}
    done += [{**d, "rule": "supersedes"} for d in declared(vault, changed, records, gone)]
    return done


def same_key(vault: VaultState, changed: list[str], records: dict[str, Record]) -> list[dict[str, Any]]:
    """The subject-key rule: the newest active note of a key group supersedes the others."""
    if not any(records[p].subject for p in changed):
        return []
    every = list(records)
    groups: dict[tuple, list[Record]] = {}
    for rec in records.values():
        if rec.subject and rec.status == "active":
            groups.setdefault((rec.subject, rec.type or "", rec.scope), []).append(rec)
    done: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in changed:
        rec = records[path]
        if not rec.subject or rec.status != "active" or path in seen:
            continue
        scope = branch_scope(vault, path)
        group = [r for r in groups.get((rec.subject, rec.type or "", rec.scope), ())
                 if branch_scope(vault, r.path) == scope]  # fmt: skip
        group.sort(key=lambda r: (r.created or "", r.path))  # oldest first
        seen.update(r.path for r in group)
        if len(group) > 1:
            done += [d for old in group[:-1] if (d := supersede_old(vault, old, group[-1], every))]
    return done


def declared(vault: VaultState, changed: list[str], records: dict[str, Record],
             gone: Set[str] = frozenset()) -> list[dict[str, Any]]:  # fmt: skip
    """The declared rule: an active note's ``supersedes:`` targets that are active become
    superseded by it, whether the declaring note or its target is the one that changed (so
    the order in which files arrive does not matter). ``gone``: notes superseded earlier in
    this pass (they declare nothing now, so two notes naming each other never both leave recall)."""
    wanted_names = {n for p in changed for n in _names(records[p])}
    declaring = [r for r in records.values() if r.status == "active" and r.path not in gone
                 and any(kind == "supersedes" and (r.path in changed or _may_name(t, wanted_names))
                         for t, kind in r.links)]  # fmt: skip
    if not declaring:
        return []
    resolver = _resolver([t for r in declaring for t, kind in r.links if kind == "supersedes"], records)
    wanted, every, gone, done = set(changed), list(records), set(gone), []
    for new in sorted(declaring, key=lambda r: r.path):
        targets = [resolver.resolve(t, new.path) for t, kind in new.links if kind == "supersedes"]
        if new.path in gone or not (new.path in wanted or wanted.intersection(targets)):
            continue
        for old in (records.get(t) for t in dict.fromkeys(targets) if t):
            if old is None or old.path == new.path or old.status != "active" or old.path in gone:
                continue
            if (d := supersede_old(vault, old, new, every)) is not None:
                done.append(d)
                gone.add(old.path)
    return done


def _norm(name: str) -> str:
    name = name.strip().lower()
    return name[:-3] if name.endswith(".md") else name


def _names(r: Record) -> set[str]:
    """What a link may call a note: its path, file name, title, aliases and id (normalised)."""
    path = _norm(r.path)
    return {path, path.rsplit("/", 1)[-1], _norm(r.title or ""), (r.id or "").strip().lower(),
            *(_norm(a) for a in r.aliases)} - {""}  # fmt: skip


def _may_name(target: str, names: set[str]) -> bool:
    """Whether a link target could resolve to a note with one of these ``names``."""
    t = _norm(target)
    return t in names or ("/" in t and any(n.endswith("/" + t) for n in names if "/" in n))


def _resolver(targets: list[str], records: dict[str, Record]) -> Resolver:
    """A ``Resolver`` over only the notes these targets could name: it resolves them as one over
    every note would, without indexing every note's names on each sync."""
    wanted = {_norm(t) for t in targets}
    suffixes = tuple("/" + t for t in wanted if "/" in t)

    def could(r: Record) -> bool:
        path = r.path.lower()
        stem = path.rsplit("/", 1)[-1]
        if (stem[:-3] if stem.endswith(".md") else stem) in wanted or (
            r.title or ""
        ).strip().lower() in wanted:
            return True
        if (r.id or "").strip().lower() in wanted or (
            r.aliases and any(_norm(a) in wanted for a in r.aliases)
        ):
            return True
        return bool(suffixes) and (_norm(path) in wanted or _norm(path).endswith(suffixes))

    keep = [r for r in records.values() if could(r)]
    return Resolver(NoteKeys(r.path, r.title, r.aliases, r.id) for r in keep)
