"""Several vaults at once: one ranking over personal, shared and user vaults.

Each vault keeps its own indexes; recall runs in each (with one shared embedding model,
so a process loads it once) and the hits are fused into one ranking by score, each
marked with the vault it came from. Recall follows links only inside each vault; only the
combined graph (``MultiVault.graph``) resolves links across vaults, written
``[[vault-name:Note]]`` (an unqualified link resolves in the note's own vault first, then in
the others).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx

from .core.discovery import STATE_DIR
from .core.errors import BadInput, VaultError
from .core.filters import EPOCH, now_utc, parse_time
from .core.registry import Registry, identity
from .index.embed import Embedder
from .index.graph import DANGLING
from .memory.context import SECTIONS, Line, Shown, collect, estimate_tokens, fit, render
from .recall.fusion import moments
from .recall.hit import Hit
from .recall.pipeline import raw_scores
from .recall.standard import pooled
from .vault import Vault


class MultiVault:
    """Named vaults searched together."""

    def __init__(self, vaults: dict[str, Vault]):
        if not vaults:
            raise BadInput("no vaults to search")
        self.vaults = vaults

    @classmethod
    def open(cls, named: dict[str, Path], embedder: Embedder | None = None) -> MultiVault:
        """Open vaults sharing one embedder (the first vault's, unless one is given)."""
        opened: dict[str, Vault] = {}
        for name, path in named.items():
            v = Vault(path, embedder=embedder)
            embedder = embedder or v.embedder
            opened[name] = v
        return cls(opened)

    @classmethod
    def for_agent(
        cls, agent: str, registry: Registry | None = None, embedder: Embedder | None = None
    ) -> MultiVault:
        """An agent's personal, shared and user vaults (those that exist)."""
        allowed = identity(agent, registry).allowed()
        return cls.open({n: p for n, p in allowed.items() if (p / STATE_DIR).is_dir()}, embedder)

    def close(self) -> None:
        for v in self.vaults.values():
            v.close()

    def recall(self, query: str, k: int | None = None, **options: Any) -> list[Hit]:
        """Recall in every vault with the same scoring, fused into one ranking by score.

        BM25 and vector scores are standardised over all the vaults' notes together, so a
        score means the same in each vault; ties go to the vault listed first.
        """
        log = options.pop("log", True)
        if k is None:  # the first vault's default, as for the rest of its settings
            k = int(next(iter(self.vaults.values())).config["recall"]["k"])
        stats = self._pooled_stats(query, options.get("mode", "hybrid"))
        known = (
            set().union(*(v.memory_types() for v in self.vaults.values())) if options.get("types") else None
        )
        hits: list[tuple[float, int, Hit]] = []
        for order, (name, vault) in enumerate(self.vaults.items()):
            for hit in vault.recall(
                query, k, stats=stats, log=False, snippets=False, types_known=known, **options
            ):
                hit.vault = name
                hits.append((hit.score, order, hit))
        ranked = [h for _, _, h in sorted(hits, key=lambda x: (-x[0], x[1], x[2].rank))][:k]
        for rank, hit in enumerate(ranked, start=1):  # snippets and the log only for what is kept
            hit.rank = rank
            self.vaults[hit.vault].add_snippet(hit, query)  # type: ignore[index]
        if log:
            for name, vault in self.vaults.items():
                mine = [h.id for h in ranked if h.vault == name]
                if mine:
                    vault.usage.log_retrievals(mine, "recall")
        return ranked

    def _pooled_stats(self, query: str, mode: str) -> tuple | None:
        if mode == "none":
            return None
        b_parts, v_parts = [], []
        for vault in self.vaults.values():
            mode_here = "bm25" if vault.embedder.name == "none" and mode != "vector" else mode
            qwords = bool(vault.config["recall"]["question_words"])  # as its ranking scores the query
            bm25, vec, _ = raw_scores(vault.sources(), query, mode_here, qwords)
            b_parts.append(moments(bm25))
            v_parts.append(moments(vec))
        return pooled(b_parts), pooled(v_parts)

    def list_notes(self, limit: int | None = 20, **filters: Any) -> list[dict[str, Any]]:
        """Notes of every vault matching the filters, newest first, with their vault."""
        rows = []
        for name, vault in self.vaults.items():
            rows += [{**row, "vault": name} for row in vault.list_notes(limit=None, **filters)]
        rows.sort(key=lambda r: (parse_time(r["updated"]) or EPOCH, r["vault"], r["path"]), reverse=True)
        return rows[:limit] if limit else rows

    def wake(self, anchor: str | None = None, task: str | None = None, profile: str = "default",
             budget: int = 2000, shown: Shown | None = None) -> dict[str, Any]:  # fmt: skip
        """One [MEMORY] block from all vaults; ids are written ``vault:id`` (``shown``: see
        ``context.collect``)."""
        lines: list[Line] = []
        for name, vault in self.vaults.items():
            has_anchor = anchor is None or vault.graph().graph["resolver"].resolve(anchor) is not None
            for line in collect(vault, anchor if has_anchor else None, task, profile, shown):
                if has_anchor or line.section in ("User Preferences", "Relevant to Current Task"):
                    line.id = f"{name}:{line.id}"
                    lines.append(line)
        lines.sort(key=lambda ln: SECTIONS.index(ln.section))
        header = f"# Memory{' for ' + anchor if anchor else ''} (vaultmem: {', '.join(self.vaults)}; {now_utc().date()})"
        kept = fit(lines, budget, header)
        text = render(kept, header)
        ids = list(dict.fromkeys(ln.id for ln in kept))
        for name, vault in self.vaults.items():
            mine = [i.split(":", 1)[1] for i in ids if i.startswith(name + ":")]
            if mine:
                vault.usage.log_retrievals(mine, "wake")
        return {"text": text, "tokens": estimate_tokens(text), "budget": budget, "ids": ids}

    def graph(self) -> nx.DiGraph:
        """All vaults' notes in one graph (nodes ``vault:path``), cross-vault links resolved."""
        g = nx.DiGraph()
        resolvers = {name: v.graph().graph["resolver"] for name, v in self.vaults.items()}
        for name, vault in self.vaults.items():
            for path, rec in vault.records().items():
                g.add_node(f"{name}:{path}", vault=name, title=rec.title, type=rec.type, dangling=False)
        for name, vault in self.vaults.items():
            for path, rec in vault.records().items():
                for target, kind in rec.links:
                    dest = self._resolve(target, name, path, resolvers)
                    if dest is None:
                        dest = DANGLING + target.strip().lower()
                        g.add_node(dest, title=target.strip(), dangling=True)
                    elif dest not in g:  # a vault's attachment (image, pdf, ...): not a note
                        g.add_node(dest, title=dest.rsplit("/", 1)[-1], dangling=True, attachment=True)
                    g.add_edge(f"{name}:{path}", dest, kind=kind)
        return g

    def _resolve(self, target: str, own: str, source: str, resolvers: dict) -> str | None:
        prefix, sep, rest = target.partition(":")
        if sep and prefix.strip().lower() in resolvers and rest.strip():
            name = prefix.strip().lower()
            found = resolvers[name].resolve(rest.strip(), source if name == own else "")
            return f"{name}:{found}" if found else None
        for name in [own] + [n for n in resolvers if n != own]:
            found = resolvers[name].resolve(target, source if name == own else "")
            if found:
                return f"{name}:{found}"
        return None

    def find(self, ref: str) -> tuple[str, Any]:
        """A note by ``vault:id`` (or an id/title/path found in exactly one vault)."""
        prefix, sep, rest = ref.partition(":")
        if sep and prefix in self.vaults:
            return prefix, self.vaults[prefix].find(rest)
        found = []
        for name, vault in self.vaults.items():
            try:
                found.append((name, vault.find(ref)))
            except VaultError:  # not in this vault
                continue
        if len(found) != 1:
            raise BadInput(
                f"{ref!r} names {'no note' if not found else 'notes in several vaults'}; use vault:id"
            )
        return found[0]
