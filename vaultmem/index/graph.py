"""The link graph (networkx DiGraph): notes, attachments, dangling targets and typed link edges.

Built in memory from the manifest's per-note link lists; resolution follows ``links.Resolver``
(Obsidian's rules, then vaultmem's extras). A link to an existing file that is not an indexed
note (an image, a pdf, a ``.canvas``, a template) ends at an attachment node ``attachment:<path>``;
a link to nothing at a dangling node. Neither is a note: both have ``dangling=True`` (recall and
the neighbourhood never walk through them); only dangling ones are unresolved.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from ..core.links import LINK_EXTRAS, NoteKeys, Resolver
from .linklists import UPDATE, outdated_titles
from .manifest import Record

DANGLING = "dangling:"
ATTACHMENT = "attachment:"
EXTRAS = LINK_EXTRAS  # what links resolve by when no file name matches (aliases: alias_links)


def outdated_by(g: nx.DiGraph, records: dict[str, Record], path: str) -> list[str]:
    """Titles of the active notes that name ``path`` as a possible update (``may_update:``),
    shown on the older note instead of hiding it."""
    if path not in g:
        return []
    return outdated_titles((p for p in g.predecessors(path) if UPDATE in g.edges[p, path]["kinds"]), records)


def near(g: nx.DiGraph) -> dict[str, frozenset[str]]:
    """Note -> the notes it links with either way (no self-links, attachments or dangling
    targets: what recall walks), for the notes that have any. Cached on the graph."""
    cached = g.graph.get("near")
    if cached is None:
        notes = {n for n, d in g.nodes(data=True) if not d.get("dangling")}
        found: dict[str, set[str]] = {}
        for a, b in g.edges():
            if a != b and a in notes and b in notes:
                found.setdefault(a, set()).add(b)
                found.setdefault(b, set()).add(a)
        cached = g.graph["near"] = {n: frozenset(others) for n, others in found.items()}
    return cached


def build(records: Iterable[Record], files: Iterable[str] = (), extras: Iterable[str] = EXTRAS) -> nx.DiGraph:
    """A DiGraph with a node per note (attrs: title, type, status), per linked attachment and
    per dangling target. ``files``: every file of the vault (``ignore.vault_files``)."""
    records = list(records)
    paths = {r.path for r in records}
    resolver = Resolver((NoteKeys(r.path, r.title, r.aliases, r.id) for r in records),
                        (f for f in files if f not in paths), extras)  # fmt: skip
    g = nx.DiGraph()
    g.add_nodes_from(
        (r.path, {"title": r.title, "type": r.type, "status": r.status, "tags": r.tags, "dangling": False})
        for r in records
    )  # fmt: skip
    kinds: dict[tuple[str, str], tuple[str, ...]] = {}  # edge -> link kinds, in first-seen order
    for r in records:
        for target, kind in r.links:
            dest = resolver.resolve(target, r.path)
            if dest is not None and resolver.is_attachment(dest):
                dest = ATTACHMENT + dest
                if dest not in g:
                    g.add_node(
                        dest, title=dest[len(ATTACHMENT) :].rsplit("/", 1)[-1], dangling=True, attachment=True
                    )
            elif dest is None:
                dest = DANGLING + target.strip().lower()
                if dest not in g:
                    g.add_node(dest, title=target.strip(), dangling=True)
            if dest == r.path:
                continue
            have = kinds.get((r.path, dest), ())
            if kind not in have:
                kinds[(r.path, dest)] = have + (kind,)
    g.add_edges_from((a, b, {"kinds": k}) for (a, b), k in kinds.items())
    g.graph["resolver"] = resolver
    return g


def notes(g: nx.DiGraph) -> list[str]:
    return [n for n, d in g.nodes(data=True) if not d.get("dangling")]


def backlinks(g: nx.DiGraph, path: str) -> list[str]:
    """Notes linking to ``path``."""
    return sorted(g.predecessors(path)) if path in g else []


def outlinks(g: nx.DiGraph, path: str) -> list[str]:
    """Notes (and dangling targets) ``path`` links to."""
    return sorted(g.successors(path)) if path in g else []


def anchors(g: nx.DiGraph) -> list[str]:
    """Anchor notes: type ``project`` or tagged ``anchor``."""
    return sorted(
        n for n, d in g.nodes(data=True)
        if not d.get("dangling") and (d.get("type") == "project" or "anchor" in (d.get("tags") or ()))
    )  # fmt: skip


def orphans(g: nx.DiGraph) -> list[str]:
    """Notes with no links in or out."""
    return sorted(n for n in notes(g) if g.degree(n) == 0)


def unresolved(g: nx.DiGraph) -> dict[str, list[str]]:
    """Dangling target title -> notes linking to it (attachments are not unresolved)."""
    return {
        d["title"]: sorted(g.predecessors(n))
        for n, d in g.nodes(data=True) if d.get("dangling") and not d.get("attachment")
    }  # fmt: skip


def attachments(g: nx.DiGraph) -> dict[str, list[str]]:
    """Linked attachment path -> notes linking to it."""
    return {
        n[len(ATTACHMENT) :]: sorted(g.predecessors(n)) for n, d in g.nodes(data=True) if d.get("attachment")
    }


def neighbourhood(g: nx.DiGraph, start: str, depth: int) -> dict[str, int]:
    """Notes within ``depth`` hops of ``start`` following links either way -> hop count.

    Dangling targets are not walked through.
    """
    if start not in g:
        return {}
    hops = {start: 0}
    frontier = [start]
    for d in range(1, depth + 1):
        nxt = []
        for node in frontier:
            for other in list(g.successors(node)) + list(g.predecessors(node)):
                if other not in hops and not g.nodes[other].get("dangling"):
                    hops[other] = d
                    nxt.append(other)
        frontier = nxt
    return hops
