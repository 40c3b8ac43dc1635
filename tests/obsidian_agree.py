"""Compare vaultmem's link graph of a vault with the reference resolver (tests/obsidian_ref.py).

Both sides are reduced to the same facts: for every note vaultmem indexes, the set of
(source, what a link resolves to) where a resolved link names the file's path and an
unresolved one ``unresolved:<target>`` (case-folded). Self links (``[[#Heading]]``) are left out:
vaultmem keeps no self edges. Used by tests/test_obsidian.py and benchmarks/obsidian_bench.py.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import obsidian_ref as ref  # tests/ is on the path (pytest's rootdir conftest; obsidian_bench.py adds it)

from vaultmem.index import graph as graphmod
from vaultmem.vault import Vault


def _key(target: str | None, linkpath: str) -> str:
    return target if target is not None else "unresolved:" + ref.fold(linkpath.strip())


def reference_facts(root: Path, sources: set[str]) -> set[tuple[str, str]]:
    """The reference resolver's links from ``sources``, without self links."""
    _, edges, _ = ref.analyse(str(root))
    return {
        (e.source, _key(e.target, e.linkpath)) for e in edges if e.source in sources and e.target != e.source
    }


def vaultmem_facts(vault: Vault) -> tuple[set[tuple[str, str]], dict[str, str]]:
    """vaultmem's links of every note it reads (from the files), and the notes it could not read."""
    errors: dict[str, str] = {}
    records = vault.catalog(errors=errors)
    g = _graph(vault, records)
    resolver = g.graph["resolver"]
    facts = set()
    for rec in records.values():
        for target, _kind in rec.links:
            dest = resolver.resolve(target, rec.path)
            if dest != rec.path:
                facts.add((rec.path, _key(dest, target)))
    return facts, errors


def compare(root: Path) -> dict:
    """Agreement of vaultmem with the reference on one vault (sources: the notes vaultmem reads)."""
    vault = _vault(root)
    mine, errors = vaultmem_facts(vault)
    sources = set(vault.catalog())
    theirs = reference_facts(root, sources)
    kinds = Counter("unresolved" if d.startswith("unresolved:") else "file" for _, d in theirs)
    return {
        "notes_read": len(sources),
        "parse_errors": len(errors),
        "reference_links": len(theirs),
        "reference_resolved": kinds["file"],
        "reference_unresolved": kinds["unresolved"],
        "agree": len(mine & theirs),
        "only_vaultmem": sorted(mine - theirs),
        "only_reference": sorted(theirs - mine),
        "attachment_nodes": sum(
            1 for _, d in _graph(vault, vault.catalog()).nodes(data=True) if d.get("attachment")
        ),
    }


def _graph(vault: Vault, records: dict):
    build = getattr(vault, "build_graph", None)  # (before issue 27: graph.build of the records only)
    return build(records.values()) if build else graphmod.build(records.values())


def _vault(root: Path) -> Vault:
    from vaultmem.index.embed import NoEmbedder

    return Vault(root, embedder=NoEmbedder())
