"""Looking at the link graph: queries and exports (pure functions over ``graph.build``'s DiGraph).

``answer`` runs one of them on a vault where its index is (the ``graph`` operation: `vaultmem
graph ...` and the web view's graph page reach a vault through it). Exports: JSON (nodes +
edges), GraphML, Graphviz DOT and Mermaid (a ``flowchart`` that renders in Obsidian and on code
hosts).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any

import networkx as nx

from ..core.errors import BadInput, NoteParseError
from ..index import graph as graphmod

FORMATS = ("json", "graphml", "dot", "mermaid")


def node_info(g: nx.DiGraph, n: str) -> dict[str, Any]:
    d = g.nodes[n]
    if d.get("dangling"):
        return {"path": None, "title": d.get("title"), "dangling": True}
    return {"path": n, "title": d.get("title"), "type": d.get("type"), "status": d.get("status")}


def links(g: nx.DiGraph, path: str) -> list[dict[str, Any]]:
    """What ``path`` links to, with the kinds of link (body, frontmatter, supersedes, ...)."""
    return [{**node_info(g, n), "kinds": list(g.edges[path, n]["kinds"])} for n in graphmod.outlinks(g, path)]


def backlinks(g: nx.DiGraph, path: str) -> list[dict[str, Any]]:
    """Notes that link to ``path``."""
    return [
        {**node_info(g, n), "kinds": list(g.edges[n, path]["kinds"])} for n in graphmod.backlinks(g, path)
    ]


def neighbours(g: nx.DiGraph, path: str, depth: int) -> list[dict[str, Any]]:
    """Notes within ``depth`` hops either way, nearest first."""
    hops = graphmod.neighbourhood(g, path, depth)
    return [{**node_info(g, n), "hops": h} for n, h in sorted(hops.items(), key=lambda x: (x[1], x[0])) if h]


def notes_view(g: nx.DiGraph) -> nx.Graph:
    """The undirected graph of notes only (dangling targets do not connect notes)."""
    return nx.subgraph_view(g, filter_node=lambda n: not g.nodes[n].get("dangling")).to_undirected(
        as_view=True
    )


def path(g: nx.DiGraph, a: str, b: str) -> list[str] | None:
    """The shortest chain of links between two notes (either direction), or None."""
    try:
        return nx.shortest_path(notes_view(g), a, b)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None


def directions(g: nx.DiGraph, chain: list[str]) -> list[str]:
    """Each hop of a chain as its link goes: "->" the note before links to the next, "<-" the
    next links to it (a backlink), "<->" both."""
    out = []
    for a, b in zip(chain, chain[1:]):
        forward, back = g.has_edge(a, b), g.has_edge(b, a)
        out.append("<->" if forward and back else "->" if forward else "<-")
    return out


def select(g: nx.DiGraph, anchor: str | None = None, depth: int = 2, cap: int | None = None) -> list[str]:
    """The notes to draw or export: an anchor's neighbourhood, or every note; with ``cap``, the
    nearest (then the most linked) ``cap`` of them."""
    if anchor is not None:
        hops = graphmod.neighbourhood(g, anchor, depth)
        order = sorted(hops, key=lambda n: (hops[n], -g.degree(n), n))
    else:
        order = sorted(graphmod.notes(g), key=lambda n: (-g.degree(n), n))
    return order[:cap] if cap else order


def subgraph(g: nx.DiGraph, nodes: Iterable[str]) -> nx.DiGraph:
    """A copy of ``g`` restricted to ``nodes`` (built directly: networkx's subgraph view
    copies ten times slower at 5,000 notes)."""
    nodes = list(dict.fromkeys(nodes))
    keep = set(nodes)
    out = nx.DiGraph()
    out.add_nodes_from((n, g.nodes[n]) for n in nodes)
    out.add_edges_from((a, b, d) for a in nodes for b, d in g.adj[a].items() if b in keep)
    return out


def to_data(g: nx.DiGraph, only: Iterable[str] | None = None) -> dict[str, Any]:
    """Nodes and edges as plain JSON data (edges by node index: compact at 5,000 notes);
    ``only``: just these nodes and the edges between them (no copy of the graph is made)."""
    nodes = sorted(g.nodes if only is None else set(only))
    index = {n: i for i, n in enumerate(nodes)}
    edges = [
        [i, index[b], list(d["kinds"])]
        for i, a in enumerate(nodes)
        for b, d in sorted(g.adj[a].items())
        if b in index
    ]
    return {"nodes": [{**node_info(g, n), "id": n, "degree": g.degree(n)} for n in nodes], "edges": edges}


def to_json(g: nx.DiGraph) -> str:
    return json.dumps(to_data(g), indent=2, ensure_ascii=False)


def to_graphml(g: nx.DiGraph) -> str:
    out = nx.DiGraph()
    for n, d in g.nodes(data=True):
        out.add_node(n, title=d.get("title") or "", type=d.get("type") or "", status=d.get("status") or "",
                     tags=",".join(d.get("tags") or ()), dangling=bool(d.get("dangling")))  # fmt: skip
    for a, b, d in g.edges(data=True):
        out.add_edge(a, b, kinds=",".join(d["kinds"]))
    buf = io.BytesIO()
    nx.write_graphml(out, buf, encoding="utf-8")
    return buf.getvalue().decode("utf-8")


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def to_dot(g: nx.DiGraph) -> str:
    lines = ["digraph vaultmem {", "  node [shape=box];"]
    for n, d in sorted(g.nodes(data=True)):
        style = ", style=dashed" if d.get("dangling") else ""
        lines.append(f"  {_dot_quote(n)} [label={_dot_quote(d.get('title') or n)}{style}];")
    for a, b, d in sorted(g.edges(data=True)):
        kinds = [k for k in d["kinds"] if k != "body"]
        label = f" [label={_dot_quote(','.join(kinds))}]" if kinds else ""
        lines.append(f"  {_dot_quote(a)} -> {_dot_quote(b)}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_label(text: str) -> str:
    """A label inside ``["..."]``: quotes and markup characters become entity codes."""
    table = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "[": "#91;", "]": "#93;", "|": "#124;", "\n": " "}
    return "".join(table.get(c, c) for c in text)


def to_mermaid(g: nx.DiGraph) -> str:
    """A ``flowchart LR`` inside a ```mermaid fence, ready to paste into a note."""
    nodes = sorted(g.nodes)
    ids = {n: f"n{i}" for i, n in enumerate(nodes)}
    lines = ["```mermaid", "flowchart LR"]
    for n in nodes:
        d = g.nodes[n]
        label = _mermaid_label(d.get("title") or n)
        lines.append(f'  {ids[n]}["{label}"]' if not d.get("dangling") else f'  {ids[n]}(["{label} ?"])')
    for a, b, d in sorted(g.edges(data=True)):
        arrow = "-.->" if {"supersedes", "superseded_by"} & set(d["kinds"]) else "-->"
        lines.append(f"  {ids[a]} {arrow} {ids[b]}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def export(g: nx.DiGraph, fmt: str) -> str:
    writers = {"json": to_json, "graphml": to_graphml, "dot": to_dot, "mermaid": to_mermaid}
    return writers[fmt](g)


# ---------------------------------------------------------------------- one query on a vault


class View:
    """A vault's notes and their link graph: as the files are now (``catalog``: manifest rows
    reused where files are unchanged, nothing indexed, no model loaded), or with ``indexed`` as
    its indexes hold them (kept current by the service's watcher, or by the front end that asks:
    the web view reconciles them as files change), built once per change instead of per call."""

    def __init__(self, vault: Any, indexed: bool = False):
        self.vault = vault
        self.records = vault.records() if indexed else vault.catalog()
        self.g = vault.graph() if indexed else vault.build_graph(self.records.values())

    def path(self, ref: str) -> str:
        """The path of the note ``ref`` names (id, title, alias, path or [[link]])."""
        return str(self.vault.find(self.vault.checked_ref(ref), self.records).path)


def _around(query: Any, hops: bool = False) -> Any:
    """links, backlinks, neighbours (``hops``: within ``depth``) of the note ``note`` names."""

    def run(view: View, note: str | None, other: str | None, depth: int, fmt: str) -> Any:
        if not note:
            raise BadInput(f"graph {query.__name__}: name a note")
        return query(view.g, view.path(note), depth) if hops else query(view.g, view.path(note))

    return run


def _path(view: View, note: str | None, other: str | None, depth: int, fmt: str) -> dict[str, Any]:
    if not note or not other:
        raise BadInput("graph path: name two notes")
    g = view.g
    chain = path(g, view.path(note), view.path(other))
    items = [node_info(g, n) for n in chain or []]
    return {
        "path": items,
        "hops": len(items) - 1 if chain else None,
        "directions": directions(g, chain or []),
    }


def _orphans(view: View, *rest: Any) -> list[dict[str, Any]]:
    return [node_info(view.g, n) for n in graphmod.orphans(view.g)]


def _unresolved(view: View, *rest: Any) -> list[dict[str, Any]]:
    """Links to missing notes, then links Obsidian does not resolve (``obsidian_only``)."""
    from .relink import obsidian_unresolved

    missing = graphmod.unresolved(view.g)
    obsidian = obsidian_unresolved(view.records, view.g.graph["resolver"])
    return [{"target": t, "from": src} for t, src in sorted(missing.items())] + [
        {"target": t, "from": src, "obsidian_only": True} for t, src in obsidian.items()
    ]


def _anchors(view: View, *rest: Any) -> list[dict[str, Any]]:
    g = view.g
    return [{**node_info(g, a), "members": len(neighbours(g, a, 1))} for a in graphmod.anchors(g)]


def _export(view: View, note: str | None, other: str | None, depth: int, fmt: str) -> dict[str, Any]:
    """The graph, or ``note``'s neighbourhood within ``depth``, as ``fmt`` text."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise BadInput(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    g = view.g
    nodes = select(g, view.path(note), depth) if note else list(g.nodes)
    return {"format": fmt, "text": export(subgraph(g, nodes), fmt)}


def _data(
    view: View, note: str | None, other: str | None, depth: int, fmt: str, cap: int | None = None
) -> Any:
    """The web view's graph: nodes and edges (``to_data``) of ``note``'s neighbourhood, or of
    the whole vault, the nearest (then most linked) ``cap``; ``total`` before the cap."""
    g = view.g
    anchor = view.path(note) if note else None
    total = len(select(g, anchor, depth))
    return {**to_data(g, select(g, anchor, depth, cap)), "total": total, "anchor": anchor}


def versions(g: nx.DiGraph, records: dict, path: str, limit: int = 50) -> list[tuple[str, str, str]]:
    """The supersede chain through ``path``, oldest first: (path, title, status)."""

    def step(node: str, forward: bool) -> str | None:
        a, b = ("superseded_by", "supersedes") if forward else ("supersedes", "superseded_by")
        for s in g.successors(node):
            if a in g.edges[node, s]["kinds"] and s in records:
                return s
        for p in g.predecessors(node):
            if b in g.edges[p, node]["kinds"] and p in records:
                return p
        return None

    older: list[str] = []
    newer: list[str] = []
    seen = {path}
    for forward, out in ((False, older), (True, newer)):
        node = path
        while len(out) < limit and (found := step(node, forward)) is not None and found not in seen:
            node = found
            seen.add(node)
            out.append(node)
    chain = [*reversed(older), path, *newer]
    return [(p, records[p].title, records[p].status) for p in chain]


def _note(view: View, note: str | None, *rest: Any) -> dict[str, Any]:
    """A note page: the note at path ``note`` (its fields, exact text), its backlinks, its
    supersede chain, and where each wiki-link of its text goes (``targets``: target -> [path or
    None, whether it is an attachment])."""
    from ..core.errors import NoteNotFound
    from ..core.links import LINK_RE, parse_link

    rec = view.records.get(note or "")
    if rec is None:
        raise NoteNotFound(f"no note {note!r} in this vault")
    try:
        text = view.vault.store.read_text(rec.path)
    except OSError as e:  # gone or unreadable since it was indexed
        raise NoteParseError(rec.path, e.strerror or str(e)) from None
    resolver = view.g.graph["resolver"]
    targets: dict[str, list[Any]] = {}
    for m in LINK_RE.finditer(text):  # the grammar the index and the note page read
        link = parse_link(m.group(2), bool(m.group(1)))
        if link is not None and link.target not in targets:
            found = resolver.resolve(link.target, rec.path)
            targets[link.target] = [found, bool(found) and resolver.is_attachment(found)]
    fields = {k: getattr(rec, k) for k in ("path", "title", "type", "status", "created", "updated")}
    return {"note": {**fields, "key": rec.key}, "text": text, "backlinks": backlinks(view.g, rec.path),
            "versions": versions(view.g, view.records, rec.path), "targets": targets}  # fmt: skip


def _summary(view: View, *rest: Any) -> dict[str, Any]:
    """How many notes the graph has, and their types."""
    return {"notes": len(view.records), "types": sorted({r.type for r in view.records.values() if r.type})}


QUERIES = {
    "links": _around(links), "backlinks": _around(backlinks), "neighbours": _around(neighbours, hops=True),
    "path": _path, "orphans": _orphans, "unresolved": _unresolved, "anchors": _anchors, "export": _export,
    "data": _data, "note": _note, "summary": _summary,
}  # fmt: skip


def answer(vault: Any, query: str, note: str | None = None, other: str | None = None, depth: int | None = None,
           fmt: str = "json", cap: int | None = None, indexed: bool = False) -> Any:  # fmt: skip
    """One query of ``QUERIES`` on ``vault``'s notes (``View``: as the files are now, or with
    ``indexed`` as its indexes hold them): ``note`` (and ``other``, for ``path``) named by id,
    title, alias, path or [[link]] (``note``: by its path); ``depth`` hops (``neighbours`` 1,
    ``export`` and ``data`` 2 by default); ``cap``: ``data``'s most nodes."""
    run = QUERIES.get(query)
    if run is None:
        raise BadInput(f"graph: unknown query {query!r}; use one of {', '.join(QUERIES)}")
    if depth is not None and not 0 <= depth <= 10:
        raise BadInput("graph: depth must be between 0 and 10")
    depth = (2 if query in ("export", "data") else 1) if depth is None else depth
    view = View(vault, indexed)
    return run(view, note, other, depth, fmt, cap) if query == "data" else run(view, note, other, depth, fmt)
