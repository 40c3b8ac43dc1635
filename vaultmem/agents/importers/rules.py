"""``vaultmem import --from rules PATH...``: instruction files as active memories, one per rule,
linked to the project's anchor and marked with their file (``source: rules:<project>/<file>``).

A person wrote these rules, so they are ``active``, not candidates. Importing a file again
compares it with what its last import wrote: an unchanged rule is left alone, a changed rule
(the closest old rule of that file, by title) is superseded by the new text, a new rule is
added, and a rule gone from the file is archived. Every file is parsed before anything is
written, so a bad file stops the import with nothing written.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.errors import BadInput
from ..capture import redact_for_memory, redact_title_for_memory
from ..instructions import InstructionFile, Rule, find_files, read
from ..summary import clip, rule_title
from .base import Importer, Progress, project_anchor

if TYPE_CHECKING:  # pragma: no cover
    from ...index.manifest import Record
    from ...vault import Vault

SIMILAR = 0.6  # an old rule this close (difflib ratio of titles) to a new one is its earlier wording


def gather(paths: list[str], project: str | None) -> list[InstructionFile]:
    """Every instruction file named or found in a named folder, parsed (BadInput on the first bad one)."""
    root = Path(os.path.abspath(os.path.expanduser(project))) if project else None
    files: list[tuple[Path, Path | None]] = []
    for given in paths:
        p = Path(os.path.expanduser(given))
        if p.is_dir():
            found = find_files(p)
            if not found:
                raise BadInput(f"{p}: no instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursor/rules, "
                               ".github/copilot-instructions.md) in this folder; nothing was imported")  # fmt: skip
            files += [(f, p.resolve()) for f in found]
        elif p.is_file():
            files.append((p, None))
        else:
            raise BadInput(f"{p}: no such file or folder; nothing was imported")
    if not files:
        raise BadInput("--from rules needs the instruction files (or project folders) to import")
    return [read(f, root or base) for f, base in files]


def source_of(f: InstructionFile) -> str:
    return f"rules:{f.root.name}/{f.rel}"


def _title(rule: Rule) -> str:
    return redact_title_for_memory(rule_title(rule.text))


def _body(rule: Rule, f: InstructionFile) -> str:
    where = f"`{f.rel}`" + (f", section “{rule.section}”" if rule.section else "")
    scope = "; ".join(f"{k}: {v}" for k, v in f.scope.items() if k != "description")
    return f"{rule.text}\n\nFrom {where} of {f.root.name}" + (f" (applies to {scope})" if scope else "") + "."


def _existing(vault: Vault, source: str) -> dict[str, Record]:
    return {
        r.title.casefold(): r for r in vault.records().values() if r.source == source and r.status == "active"
    }


def plan_file(vault: Vault, f: InstructionFile) -> dict[str, list]:
    """What importing ``f`` changes: unchanged rules, new ones, (old record, new rule) updates,
    and old records gone from the file."""
    old = _existing(vault, source_of(f))
    plan: dict[str, list] = {"unchanged": [], "added": [], "updated": [], "retired": []}
    fresh: list[Rule] = []
    seen: set[str] = set()
    for rule in f.rules:
        title = _title(rule).casefold()
        if title in seen:
            continue
        seen.add(title)
        if title in old:
            plan["unchanged"].append(old[title])
        else:
            fresh.append(rule)
    left = {k: r for k, r in old.items() if k not in seen}
    for rule in fresh:
        title = _title(rule).casefold()
        match = max(left, key=lambda k: difflib.SequenceMatcher(None, k, title).ratio(), default=None)
        if match is not None and difflib.SequenceMatcher(None, match, title).ratio() >= SIMILAR:
            plan["updated"].append((left.pop(match), rule))
        else:
            plan["added"].append(rule)
    plan["retired"] = list(left.values())
    return plan


def _write(vault: Vault, f: InstructionFile, rule: Rule, anchor: str | None) -> dict[str, Any]:
    title, body = _title(rule), redact_for_memory(_body(rule, f))
    return vault.remember(rule.type, title, body, source=source_of(f), anchor=anchor,
                          tags=["imported-rule"], origin=str(f.path), scope="project", supersede=False)  # fmt: skip


def import_rules(
    vault: Vault, paths: list[str], project: str | None = None, dry_run: bool = False
) -> dict[str, Any]:
    """Import instruction files (see the module's text); returns what was added, updated,
    retired and left unchanged, per file."""
    files = gather(paths, project)
    out: dict[str, Any] = {"source": "rules", "dry_run": dry_run, "files": [], "added": 0, "updated": 0,
                           "retired": 0, "unchanged": 0, "duplicates": 0}  # fmt: skip
    for f in files:
        plan = plan_file(vault, f)
        anchor = project_anchor(vault, str(f.root))
        row: dict[str, Any] = {"file": str(f.path), "source": source_of(f), "anchor": anchor, "scope": f.scope,
                               "added": [], "updated": [], "retired": [], "unchanged": len(plan["unchanged"])}  # fmt: skip
        for rule in plan["added"]:
            row["added"].append(_apply_add(vault, f, rule, anchor, dry_run, out))
        for old, rule in plan["updated"]:
            row["updated"].append(_apply_update(vault, f, old, rule, anchor, dry_run))
        for old in plan["retired"]:
            if not dry_run:
                vault.edit(old.path, sets=["status=archived"])
            row["retired"].append({"id": old.key, "title": old.title})
        for key in ("added", "updated", "retired"):
            out[key] += len(row[key])
        out["unchanged"] += row["unchanged"]
        out["files"].append(row)
    return out


def _apply_add(vault: Vault, f: InstructionFile, rule: Rule, anchor: str | None, dry_run: bool,
               out: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    row = {"type": rule.type, "title": _title(rule), "text": clip(redact_for_memory(rule.text), 200)}
    if dry_run:
        return row
    result = _write(vault, f, rule, anchor)
    if result.get("duplicate_of"):
        out["duplicates"] += 1
    return {**row, "id": result["id"], "path": result["path"], "duplicate_of": result.get("duplicate_of")}


def _apply_update(vault: Vault, f: InstructionFile, old: Record, rule: Rule, anchor: str | None,
                  dry_run: bool) -> dict[str, Any]:  # fmt: skip
    row = {"old": {"id": old.key, "title": old.title}, "type": rule.type, "title": _title(rule)}
    if dry_run:
        return row
    result = _write(vault, f, rule, anchor)
    if not result.get("duplicate_of") and old.key not in {s["id"] for s in result["superseded"]}:
        vault.supersede(old.key, result["id"])
    return {**row, "id": result["id"], "path": result["path"]}


class Rules(Importer):
    """Instruction files as active rules (see the module's text)."""

    name, what, takes_since = "rules", "instruction", False

    def into(self, vault: Vault, paths: list[str], *, project: str | None, since: str | None, dry_run: bool,
             progress: Progress | None) -> dict[str, Any]:  # fmt: skip
        result = import_rules(vault, paths or ["."], project, dry_run)
        if progress:
            progress(len(result["files"]), len(result["files"]))
        return result

    def lines(self, r: dict[str, Any]) -> list[str]:
        lines = []
        for f in r["files"]:
            lines.append(f"{f['file']}: {len(f['added'])} new, {len(f['updated'])} updated, {len(f['retired'])} retired, "
                         f"{f['unchanged']} unchanged rule(s) (anchor: {f['anchor'] or 'none'})")  # fmt: skip
            lines += [f"  + ({a['type']}) {a['title']}" for a in f["added"]]
            lines += [f"  ~ {u['old']['title']} -> {u['title']}" for u in f["updated"]]
            lines += [f"  - {x['title']}" for x in f["retired"]]
        if not (r["added"] or r["updated"] or r["retired"]):
            lines.append("nothing new: every rule is already in the vault")
        return lines
