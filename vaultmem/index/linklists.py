"""The link graph among indexed notes read from the manifest's link lists, only as far as a
ranking needs it (no networkx: the keyword answer given while the memory service warms up
reads links so; reading a whole vault's graph costs ~0.1-0.4 s at 10k notes).

Links resolve as ``graph.build`` resolves them (``core.links.Resolver``), with a resolver that
holds only the notes a target may name (a file of its name, or a title, id or alias equal to
it): the same answer as over the whole vault. Attachments are not read: a link to a file that
is not an indexed note resolves as if the file were not there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from ..core.links import LINK_EXTRAS, NoteKeys, Resolver, fold
from .manifest import Manifest, Record

UPDATE = "may_update"  # the link kind of a possible update (``memory.ops``: shown on the older note)


def outdated_titles(linkers: Iterable[str], records: Mapping[str, Record]) -> list[str]:
    """Titles of the active notes among ``linkers`` (notes naming one as a possible update,
    ``may_update:``), by path: what a hit shows as "may be outdated by"."""
    return [records[p].title for p in sorted(linkers) if p in records and records[p].status == "active"]


class Links:
    """``outs`` resolves the links of some notes; ``near`` is a note's neighbours among the
    notes resolved so far (either way); ``backlinks`` resolves every note that may link to
    one; ``updaters`` the notes naming one as a possible update. No self-links, attachments or
    dangling targets (recall walks none of them)."""

    def __init__(self, manifest: Manifest, extras: Iterable[str] = LINK_EXTRAS):
        self.cur = manifest.db.cursor()
        self.cur.row_factory = None
        self.extras = tuple(extras)
        self.paths = [row[0] for row in self.cur.execute("SELECT path FROM notes")]
        self.covered: set[str] = set()  # the target names whose notes the resolver holds
        self.keys: dict[str, NoteKeys] = {}
        self.resolver = Resolver((), (), self.extras)
        self.resolved: dict[tuple[str, str], str | None] = {}
        self.out: dict[str, set[str]] = {}
        self.into: dict[str, set[str]] = {}
        self._updaters: dict[str, set[str]] | None = None

    def outs(self, paths: Iterable[str]) -> None:
        """Resolve the links of ``paths`` (those not resolved yet)."""
        wanted = [p for p in dict.fromkeys(paths) if p not in self.out]
        found = self._link_lists(wanted)
        self._cover({target for pairs in found.values() for target, _ in pairs})
        for path in wanted:
            dests = self.out[path] = set()
            for target, _kind in found.get(path, ()):
                dest = self._resolve(target, path)
                if dest is not None and dest != path:
                    dests.add(dest)
                    self.into.setdefault(dest, set()).add(path)

    def _link_lists(self, paths: list[str]) -> dict[str, list]:
        found: dict[str, list] = {}
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            q = f"SELECT path, links FROM notes WHERE path IN ({','.join('?' * len(part))})"
            found.update((p, json.loads(t)) for p, t in self.cur.execute(q, part) if t and t != "[]")
        return found

    def _resolve(self, target: str, source: str) -> str | None:
        key = (target, source.rpartition("/")[0])  # a target resolves by the folder it is read from
        if key not in self.resolved:
            self.resolved[key] = self.resolver.resolve(target, source)
        return self.resolved[key]

    def resolve(self, target: str, source: str) -> str | None:
        """The note a link from ``source`` to ``target`` names (None: none indexed)."""
        self._cover({target})
        return self._resolve(target, source)

    def _cover(self, targets: set[str]) -> None:
        """Hold in the resolver every note some of ``targets`` may resolve to."""
        names = {_name(t) for t in targets} | {_norm(t) for t in targets}
        new = names - self.covered
        if not new:
            return
        self.covered |= new
        both = [*new, *(n + ".md" for n in new)]
        if all(n.isascii() for n in new):
            wanted = set(both)
            named = [p for p in self.paths if p.rpartition("/")[2].lower() in wanted]
            marks = ",".join("?" * len(both))
            q = f"SELECT path FROM notes WHERE lower(trim(title)) IN ({marks}) OR lower(trim(id)) IN ({marks})"
            if "alias" in self.extras:
                q += " OR (aliases IS NOT NULL AND aliases <> '[]')"
            named += [row[0] for row in self.cur.execute(q, both + both)]
        else:  # SQLite folds ASCII case only: every note
            named = list(self.paths)
        self._add_keys(p for p in named if p not in self.keys)

    def _add_keys(self, paths: Iterable[str]) -> None:
        wanted = list(dict.fromkeys(paths))
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            q = f"SELECT path, id, title, aliases FROM notes WHERE path IN ({','.join('?' * len(part))})"
            added = [NoteKeys(p, title, tuple(json.loads(aliases)) if aliases and aliases != "[]" else (), note_id)
                     for p, note_id, title, aliases in self.cur.execute(q, part)]  # fmt: skip
            self.keys.update((k.path, k) for k in added)
            self.resolver.add_notes(added)

    def backlinks(self, paths: Iterable[str]) -> None:
        """Resolve every note that may link to one of ``paths`` (its link list names the file,
        title, id or an alias: ``LIKE`` folds ASCII case only), so their ``near`` is complete."""
        paths = list(paths)
        self._add_keys(p for p in paths if p not in self.keys)
        names: set[str] = set()
        for path in paths:
            keys = self.keys[path]
            names |= {path.rsplit("/", 1)[-1].removesuffix(".md"), keys.title or "", keys.id or ""}
            names |= set(keys.aliases) if "alias" in self.extras else set()
        likes = [f"%{_escape(n)}%" for n in names if n]
        if likes:
            q = "SELECT path FROM notes WHERE " + " OR ".join(["links LIKE ? ESCAPE '\\'"] * len(likes))
            self.outs(row[0] for row in self.cur.execute(q, likes))

    def near(self, path: str) -> set[str]:
        return self.out.get(path, set()) | self.into.get(path, set())

    def updaters(self, path: str) -> set[str]:
        """The notes whose ``may_update`` names ``path`` (read once: one ``LIKE`` scan)."""
        if self._updaters is None:
            self._updaters = {}
            q = f"SELECT path, links FROM notes WHERE links LIKE '%\"{UPDATE}\"]%'"
            found = {
                p: [t for t, kind in json.loads(links) if kind == UPDATE] for p, links in self.cur.execute(q)
            }
            self._cover({t for targets in found.values() for t in targets})
            for source, targets in found.items():
                for target in targets:
                    dest = self._resolve(target, source)
                    if dest is not None and dest != source:
                        self._updaters.setdefault(dest, set()).add(source)
        return self._updaters.get(path, set())


def _name(target: str) -> str:
    """The file name a link target names (folded), as Obsidian's lookup reads it."""
    return fold(target.strip().replace("\\", "/")).rpartition("/")[2]


def _norm(target: str) -> str:
    """A target as the title, alias and id extras compare it (``links._norm``)."""
    name = fold(target.strip())
    return name[:-3] if name.endswith(".md") else name


def _escape(name: str) -> str:
    """A name as its JSON text holds it, escaped for ``LIKE``."""
    text = json.dumps(name, ensure_ascii=False)[1:-1]
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
