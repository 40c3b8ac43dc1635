"""``vaultmem import --from mcp-memory FILE``: the reference MCP memory server's knowledge graph.

The file (``memory.jsonl``, legacy ``memory.json`` with the same lines) holds
``{"type":"entity","name","entityType","observations":[...]}`` and
``{"type":"relation","from","to","relationType"}`` objects, one per line. An entity becomes a
note titled by its name with its observations as bullets; each relation becomes a line
``- <relationType> [[<to>]]`` under "Relations" in its ``from`` entity's note. Lines of other
shapes are skipped and counted, as the server itself does. Importing the same file again writes
nothing; an entity whose observations or relations changed has its note's text replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import BadInput
from ..events import iter_lines, load_line
from .base import Importer, Progress

if TYPE_CHECKING:  # pragma: no cover
    from ...vault import Vault

TYPES = {"person": "relationship", "people": "relationship", "user": "relationship", "organization": "relationship",
         "project": "project", "technology": "tech_context", "tool": "tech_context", "library": "tech_context",
         "service": "tech_context", "decision": "decision", "preference": "preference", "lesson": "lesson"}  # fmt: skip
MAX_ITEMS = 1000  # observations (or relations) kept per entity
MAX_TEXT = 2000


@dataclass
class Entity:
    name: str
    kind: str
    observations: list[str] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)  # (relationType, to)

    def body(self) -> str:
        """The note's text (through ``capture.redact_for_memory``)."""
        from ..capture import redact_for_memory

        return redact_for_memory(self._body())

    def _body(self) -> str:
        lines = [f"Entity type: {self.kind or 'unknown'} (imported from the MCP memory server's graph)."]
        if self.observations:
            lines += ["", "## Observations", *(f"- {o}" for o in self.observations)]
        if self.relations:
            lines += ["", "## Relations", *(f"- {r} [[{to}]]" for r, to in self.relations)]
        return "\n".join(lines)


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    return " ".join(value.split())[:limit] if isinstance(value, str) else ""


def read_graph(path: Path) -> tuple[dict[str, Entity], int]:
    """(entities by name with their relations, lines skipped); BadInput when the file is not
    readable or holds no entity."""
    entities: dict[str, Entity] = {}
    relations: list[tuple[str, str, str]] = []
    skipped = 0
    try:
        for raw in iter_lines(path, 1 << 20):
            obj = load_line(raw) if raw else None
            if obj is None:
                skipped += bool(raw is None or raw.strip())
            elif obj.get("type") == "entity" and _text(obj.get("name"), 200).strip():
                e = entities.setdefault(
                    _text(obj["name"], 200), Entity(_text(obj["name"], 200), _text(obj.get("entityType"), 80))
                )
                obs = obj.get("observations")
                obs = obs if isinstance(obs, list) else []
                e.observations += [
                    t for t in (_text(o) for o in obs[:MAX_ITEMS]) if t and t not in e.observations
                ]
            elif obj.get("type") == "relation" and all(
                _text(obj.get(k), 200) for k in ("from", "to", "relationType")
            ):
                relations.append(
                    (_text(obj["from"], 200), _text(obj["relationType"], 80), _text(obj["to"], 200))
                )
            else:
                skipped += 1
    except OSError as e:
        raise BadInput(f"{path}: cannot be read ({e.strerror}); nothing was imported") from None
    if not entities:
        raise BadInput(f"{path}: not an MCP memory file (no entity line); nothing was imported")
    for src, kind, to in relations:
        if src in entities and (kind, to) not in entities[src].relations:
            entities[src].relations.append((kind, to))
    return entities, skipped


def import_graph(vault: Vault, file: str, dry_run: bool = False) -> dict[str, Any]:
    """Write (or, dry, list) a note per entity; see the module's text."""
    path = Path(file).expanduser()
    if not path.is_file():
        raise BadInput(f"{path}: no such file; nothing was imported")
    entities, skipped = read_graph(path)
    source = f"mcp-memory:{path.name}"
    mine = {r.title: r for r in vault.records().values() if r.source == source}
    out: dict[str, Any] = {"source": "mcp-memory", "dry_run": dry_run, "file": str(path), "written": [],
                           "updated": [], "unchanged": 0, "skipped_lines": skipped,
                           "relations": sum(len(e.relations) for e in entities.values())}  # fmt: skip
    for e in entities.values():
        type_ = TYPES.get(e.kind.lower(), "fact")
        old, body = mine.get(e.name), e.body()  # redacted once per entity
        if old is not None:
            if vault.body(old.path).strip().endswith(body.strip()):
                out["unchanged"] += 1
                continue
            if not dry_run:
                vault.edit(old.path, content=body)
            out["updated"].append({"id": old.key, "title": e.name})
            continue
        row = {
            "type": type_,
            "title": e.name,
            "observations": len(e.observations),
            "relations": len(e.relations),
        }
        if not dry_run:
            result = vault.remember(type_, e.name, body, source=source, tags=["mcp-memory"])
            row.update(id=result["id"], path=result["path"], duplicate_of=result.get("duplicate_of"))
        out["written"].append(row)
    return out


class McpMemory(Importer):
    """The MCP memory server's graph (see the module's text)."""

    name, what, takes_since = "mcp-memory", "MCP memory", False

    def into(self, vault: Vault, paths: list[str], *, project: str | None, since: str | None, dry_run: bool,
             progress: Progress | None) -> dict[str, Any]:  # fmt: skip
        if len(paths) != 1:
            raise BadInput("--from mcp-memory takes one file (the server's memory.jsonl)")
        result = import_graph(vault, paths[0], dry_run)
        if progress:
            progress(1, 1)
        return result

    def lines(self, r: dict[str, Any]) -> list[str]:
        would = "would write" if r["dry_run"] else "wrote"
        lines = [f"{would} {len(r['written'])} note(s), updated {len(r['updated'])}, {r['unchanged']} unchanged "
                 f"({r['relations']} relation(s); {r['skipped_lines']} line(s) skipped)"]  # fmt: skip
        lines += [f"  + ({w['type']}) {w['title']}" for w in r["written"]]
        if not (r["written"] or r["updated"]):
            lines.append("nothing new: every entity is already in the vault")
        return lines
