"""`vaultmem doctor`: one health report of a vault, and the safe repairs (the ``doctor``
operation runs it where the index is: ``served_report``).

The report reads the files (not the indexes) for everything about notes, so it also sees what
the indexes miss; the indexes are only compared with the files (drift) and read for the vectors
the "looks like an unrecorded update" check needs. Nothing is written unless ``repair`` is called,
and ``repair`` only reconciles the indexes and archives expired memories (the same change as the
aging rules), each change returned as one line.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .core.discovery import USAGE_DIR
from .core.errors import VaultError

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from .index.manifest import Record
    from .vault import Vault

# Light to import (the checks' libraries load inside them): ``with_findings`` is the client's side
# of a doctor the memory service answers (``cli/fast.py``), which loads no numpy or networkx.

# what a finding of each check means for the exit code: "error" and "warning" need attention
SEVERITY = {
    "parse_error": "error", "duplicate_id": "error", "supersede_loop": "error", "conflict": "error",
    "index_drift": "warning",
    "broken_link": "warning", "obsidian_unresolved": "info", "stray_possible_update": "info", "empty_anchor": "warning", "supersede_ends_resolved": "warning",
    "likely_update": "warning", "candidate": "warning", "expired": "warning", "watcher": "warning",
    "orphan": "info", "secret": "error", "held": "warning", "old_config_place": "warning", "config_not_default": "info",
    "config_unknown": "warning",
    "obsidian_templates": "info",
    "exclude_hides_all": "error", "index": "error",
    "hook_killed": "warning", "hook_error": "warning", "hook_never_ran": "warning",
}  # fmt: skip
SAMPLE = 10  # paths shown per drift kind
MAX_SUGGEST = 5000  # broken link targets that get a closest-name suggestion (Suggester: bounded per target)
SKIP_UPDATE_TYPES = ("session_summary", "progress")  # expected to repeat; aging handles them


@dataclass
class Finding:
    """One problem: which check found it, where, and what to do about it."""

    check: str
    path: str | None
    message: str
    hint: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> str:
        return SEVERITY.get(self.check, "info")

    def as_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            **{k: v for k, v in asdict(self).items() if k != "check"},
        }


@dataclass
class Report:
    """Everything doctor found, plus the index, watcher and disk state."""

    vault: str
    notes: int
    findings: list[Finding]
    index: dict[str, Any]
    watcher: dict[str, Any]
    disk: dict[str, int]

    @property
    def needs_attention(self) -> bool:
        return any(f.severity in ("error", "warning") for f in self.findings)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(SEVERITY, 0)
        for f in self.findings:
            out[f.check] = out.get(f.check, 0) + 1
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """A report as ``as_dict`` gave it (the ``doctor`` operation's answer)."""
        names = {f.name for f in fields(Finding)}
        findings = [Finding(**{k: v for k, v in f.items() if k in names}) for f in data["findings"]]
        return cls(data["vault"], data["notes"], findings, data["index"], data["watcher"], data["disk"])

    def as_dict(self) -> dict[str, Any]:
        return {"vault": self.vault, "notes": self.notes, "needs_attention": self.needs_attention,
                "counts": self.counts(), "findings": [f.as_dict() for f in self.findings],
                "index": self.index, "watcher": self.watcher, "disk": self.disk}  # fmt: skip


def with_findings(report: dict[str, Any], more: list[Finding]) -> dict[str, Any]:
    """A report (``Report.as_dict``) with ``more`` findings at its end, counted."""
    counts = dict(report["counts"])
    for f in more:
        counts[f.check] = counts.get(f.check, 0) + 1
    attention = report["needs_attention"] or any(f.severity in ("error", "warning") for f in more)
    return {**report, "needs_attention": attention, "counts": counts,
            "findings": report["findings"] + [f.as_dict() for f in more]}  # fmt: skip


def served_report(vault: Vault, keeper: dict[str, Any] | None, fix: bool = False) -> dict[str, Any]:
    """The ``doctor`` operation where the index is (the memory service's or this process's
    ``tasks``): the report but the hooks' findings, which the client adds (``with_findings``);
    ``keeper``: the service's pid, pending changes and last error when it keeps the indexes;
    ``fix``: the safe repairs first, each in ``changes``."""
    watcher = None
    if keeper:
        watcher = {"state": "running", "by": "service", "pid": keeper.get("pid"),
                   "pending": keeper.get("pending"), "last_error": keeper.get("last_error")}  # fmt: skip
    report = diagnose(vault, watcher=watcher)
    changes = repair(vault, report) if fix else []
    if changes:
        report = diagnose(vault, watcher=watcher)
    return {**report.as_dict(), "changes": changes}


def diagnose(vault: Vault, today: dt.date | None = None, *, watcher: dict[str, Any] | None = None,
             more: list[Finding] | None = None) -> Report:  # fmt: skip
    """The health report of ``vault`` (reads only; ``today``: a fixed date for ``expires``;
    ``watcher``: who keeps the indexes, when the caller knows; ``more``: findings of the layers
    above, such as the hooks' (``agents.hook_runs.doctor_findings``))."""
    from .core.filters import is_expired, now_utc
    from .index import graph as graphmod

    parse_errors: dict[str, str] = {}
    records = vault.catalog(errors=parse_errors)
    g = vault.build_graph(records.values())
    findings = [Finding("parse_error", p, f"cannot be read as a note: {why}", "fix the frontmatter; the note is "
                        "left out of recall until then") for p, why in sorted(parse_errors.items())]  # fmt: skip
    findings += duplicate_ids(records)
    findings += broken_links(g, records)
    findings += obsidian_unresolved(g, records)
    findings += stray_possible_updates(g, records)
    findings += [Finding("orphan", p, "no links in or out", "link it from an anchor or related note")
                 for p in graphmod.orphans(g)]  # fmt: skip
    findings += empty_anchors(g)
    findings += supersede_chains(records, g)
    findings += likely_updates(vault, records, g)
    findings += [Finding("candidate", r.path, "candidate memory waiting for confirmation", "vaultmem confirm / resolve")
                 for r in records.values() if r.status == "candidate"]  # fmt: skip
    texts = note_texts(vault, records)  # read once for the two checks that read the files
    findings += secrets_in_notes(vault, records, texts)
    findings += held_memories(vault, records, texts)
    findings += [Finding("conflict", r.path, "merge conflict: both versions are kept in the note",
                         "edit it, keep what is right, then set its status (vaultmem reopen / resolve)")
                 for r in records.values() if r.status == "conflict"]  # fmt: skip
    today = today or now_utc().date()
    findings += [Finding("expired", r.path, f"active but expired on {r.expires}", "--fix archives it",
                         {"expires": r.expires}) for r in records.values() if r.status == "active" and is_expired(r, today)]  # fmt: skip
    index = index_state(vault, records, parse_errors)
    if index["drift_total"]:
        counts = ", ".join(f"{n} {k}" for k, n in index["drift"].items() if n)
        findings.append(Finding("index_drift", None, f"indexes differ from the files ({counts})",
                                "--fix (or vaultmem index) reconciles them", {"sample": index["sample"]}))  # fmt: skip
    findings += index_files(vault)
    findings += config_findings(vault.root) + user_config_findings()
    if vault.obsidian_templates:
        findings.append(Finding("obsidian_templates", vault.obsidian_templates + "/",
                                "Obsidian's templates folder (.obsidian/templates.json) is left out of the index",
                                "its notes are templates ({{date}} placeholders), not memories",
                                {"folder": vault.obsidian_templates}))  # fmt: skip
    findings += exclude_findings(vault)
    watcher = watcher or watcher_state(vault)
    if watcher["state"] == "not answering":
        findings.append(Finding("watcher", None, f"pid {watcher['pid']} keeps the indexes but does not answer "
                                "as this install's memory service", "another install's service, or one that hangs: "
                                "`vaultmem service status` shows this one's"))  # fmt: skip
    findings += more or []
    return Report(str(vault.root), len(records), findings, index, watcher, disk_use(vault))


# ---------------------------------------------------------------------- checks over the notes


def note_texts(vault: Vault, records: dict[str, Record]) -> dict[str, str]:
    """Each note's text (the parse and drift checks report a file that cannot be read)."""
    out = {}
    for path in sorted(records):
        try:
            out[path] = vault.store.read_text(path)
        except (OSError, VaultError):
            continue
    return out


SCANNED: dict[tuple[str, bytes], list[tuple[str, str]]] = {}  # (path, text digest) -> what the scan found
MAX_SCANNED = 200_000  # notes remembered (the memory service asks again and again: a note is scanned once)


def _secrets(path: str, text: str) -> list[tuple[str, str]]:
    """(kind, where) of each secret in a note's text or file name, remembered by its content."""
    import hashlib

    key = (path, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
    found = SCANNED.get(key)
    if found is None:
        from .core.secrets import scan

        found = [(f.kind, f"line {f.line}") for f in scan(text)] + [(f.kind, "file name") for f in scan(path)]
        if len(SCANNED) >= MAX_SCANNED:
            SCANNED.clear()
        SCANNED[key] = found
    return found


def secrets_in_notes(vault: Vault, records: dict[str, Record], texts: dict[str, str]) -> list[Finding]:
    """Notes whose text or file name holds a secret (kind and line, never the value). A person's
    file is reported, not rewritten: writes through vaultmem are redacted before they land."""
    out = []
    for path, text in texts.items():
        found = _secrets(path, text)
        if found:
            where = ", ".join(f"{kind} ({at})" for kind, at in found)
            out.append(Finding("secret", path, f"holds a secret: {where}",
                               "remove it from the file (and rotate it: it may be in git history)",
                               {"kinds": sorted({k for k, _ in found})}))  # fmt: skip
    return out


def held_memories(vault: Vault, records: dict[str, Record], texts: dict[str, str]) -> list[Finding]:
    """Memories not from this machine's person (an agent, a capture, a teammate's or synced note
    not yet confirmed) that give the agent orders: kept, never injected by the hooks or wake
    until a person rewrites, confirms or makes them their own (``fence.held``)."""
    from .core.fence import PERSON, held, provenance
    from .core.note import split_frontmatter
    from .core.provenance import Trust

    out = []
    trust = Trust(vault.root)
    for path, rec in sorted(records.items()):
        synced = trust.label(path)
        if provenance(rec.type, rec.status, rec.source, synced) == PERSON:
            continue
        if path not in texts:
            continue
        fm, body, _, _ = split_frontmatter(texts[path])  # the body as the note's parse gives it
        body = body if fm is not None else body.removeprefix("\ufeff")
        reason = held(rec.type, rec.status, rec.source, f"{rec.title}\n{body}", synced)
        if reason:
            out.append(Finding("held", path, f"not injected: it gives the agent orders ({reason!r})",
                               f"read it; delete it, rewrite it, or vouch for it: vaultmem confirm {rec.key}" if synced
                               else "read it; delete it, rewrite it, or make it yours by removing its `source:` line",
                               {"reason": reason, "source": rec.source}))  # fmt: skip
    return out


def duplicate_ids(records: dict[str, Record]) -> list[Finding]:
    by_id: dict[str, list[str]] = {}
    for r in records.values():
        if r.id:
            by_id.setdefault(r.id.lower(), []).append(r.path)
    return [Finding("duplicate_id", paths[0], f"id {key!r} is used by {len(paths)} notes: {', '.join(paths)}",
                    "give each note its own id", {"id": key, "paths": paths})
            for key, paths in sorted(by_id.items()) if len(paths) > 1]  # fmt: skip


def _names(records: dict[str, Record]) -> dict[str, str]:
    """Lower-cased file name and title -> that name as written (a link resolves by either)."""
    from .core.note import file_stem

    out: dict[str, str] = {}
    for r in records.values():
        for name in (file_stem(r.path), r.title):
            out.setdefault(name.lower(), name)
    return out


def _aliases(records: dict[str, Record]) -> dict[str, list[str]]:
    """Lower-cased alias -> file names of the notes that have it."""
    from .core.note import file_stem

    out: dict[str, list[str]] = {}
    for r in sorted(records.values(), key=lambda r: r.path):
        for alias in r.aliases:
            out.setdefault(alias.lower(), []).append(file_stem(r.path))
    return out


def _grams(text: str) -> set[str]:
    padded = f" {text} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class Suggester:
    """The closest existing name to a broken link target, in bounded time: a trigram index
    picks at most SHORTLIST names sharing the most of the target's trigrams (its rarest
    trigrams first, at most BUDGET names counted), and difflib compares the target with
    those only."""

    SHORTLIST = 10
    BUDGET = 3000

    def __init__(self, names: list[str]):
        self.names = names
        self.index: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            for g in _grams(name):
                self.index.setdefault(g, []).append(i)

    def closest(self, target: str) -> str | None:
        shared: Counter[int] = Counter()
        budget = self.BUDGET
        for g in sorted(_grams(target), key=lambda g: len(self.index.get(g, ()))):  # rarest first
            posting = self.index.get(g, ())
            if len(posting) > budget:
                break
            shared.update(posting)
            budget -= len(posting)
        shortlist = [self.names[i] for i, _ in shared.most_common(self.SHORTLIST)]
        close = difflib.get_close_matches(target, shortlist, n=1, cutoff=0.6)
        return close[0] if close else None


def broken_links(g: nx.DiGraph, records: dict[str, Record]) -> list[Finding]:
    """Links to a note that does not exist (links to attachments are not broken), each with a
    fix: ``[[Note|Alias]]`` when the target is another note's alias (Obsidian resolves no bare
    alias), else the closest existing name."""
    from .index import graph as graphmod

    names = _names(records)
    aliases = _aliases(records)
    suggester = Suggester(list(names))
    out = []
    for i, (target, sources) in enumerate(sorted(graphmod.unresolved(g).items())):
        owners = aliases.get(target.lower())
        if owners:
            suggestion: str | None = f"{owners[0]}|{target}"
            hint = f"{target!r} is an alias of {owners[0]!r}: write [[{suggestion}]]"
        else:
            close = suggester.closest(target.lower()) if i < MAX_SUGGEST else None
            suggestion = names[close] if close else None
            hint = f"did you mean [[{suggestion}]]?" if suggestion else "create the note or remove the link"
        for src in sources:
            out.append(Finding("broken_link", src, f"links to [[{target}]], which does not exist", hint,
                               {"target": target, "suggestion": suggestion}))  # fmt: skip
    return out


def obsidian_unresolved(g: nx.DiGraph, records: dict[str, Record]) -> list[Finding]:
    """Links vaultmem resolves by a title or id but Obsidian, which resolves file names, does not."""
    from .core.note import file_stem
    from .memory.relink import obsidian_unresolved as find

    resolver = g.graph["resolver"]
    out = []
    for target, sources in find(records, resolver).items():
        for src in sources:
            stem = file_stem(resolver.resolve(target, src) or target)
            out.append(Finding("obsidian_unresolved", src, f"links to [[{target}]], which Obsidian does not resolve",
                               f"write [[{stem}|{target}]]; --fix rewrites vaultmem's own links "
                               "(anchor, may_update, supersedes, superseded_by)", {"target": target}))  # fmt: skip
    return out


def stray_possible_updates(g: nx.DiGraph, records: dict[str, Record]) -> list[Finding]:
    """``may_update`` entries an older vaultmem wrote against the project rule (between anchors,
    session summaries or handoffs, or across projects)."""
    from .memory.relink import stray_updates

    return [Finding("stray_possible_update", src, f"may_update names [[{target}]], which it cannot update "
                    "(another project, or an anchor, session summary or handoff)", "--fix drops the entry",
                    {"target": target}) for src, target in stray_updates(records, g.graph["resolver"])]  # fmt: skip


def empty_anchors(g: nx.DiGraph) -> list[Finding]:
    from .index import graph as graphmod

    out = []
    for a in graphmod.anchors(g):
        members = [n for n in set(g.successors(a)) | set(g.predecessors(a)) if not g.nodes[n].get("dangling")]
        if not members:
            out.append(
                Finding(
                    "empty_anchor",
                    a,
                    "anchor with no member notes",
                    "link memories to it or drop the anchor tag",
                )
            )
    return out


def _successor(rec: Record, g: nx.DiGraph) -> str | None:
    if not rec.superseded_by:
        return None
    return g.graph["resolver"].resolve(rec.superseded_by, rec.path)


def supersede_chains(records: dict[str, Record], g: nx.DiGraph) -> list[Finding]:
    """Chains of ``superseded_by`` that loop, or whose newest note is resolved."""
    out, seen_loops = [], set()
    for start in sorted(p for p, r in records.items() if r.superseded_by):
        chain = [start]
        nxt = _successor(records[start], g)
        while nxt is not None and nxt in records and nxt not in chain:
            chain.append(nxt)
            nxt = _successor(records[nxt], g)
        if nxt in chain:
            loop = frozenset(chain[chain.index(nxt) :])
            if loop not in seen_loops:
                seen_loops.add(loop)
                out.append(Finding("supersede_loop", start, "supersede chain loops: " + " -> ".join([*chain, nxt]),
                                   "reopen one note of the loop (vaultmem reopen)", {"chain": [*chain, nxt]}))  # fmt: skip
        elif len(chain) > 1 and records[chain[-1]].status == "resolved" and chain[-2] == start:
            out.append(Finding("supersede_ends_resolved", start, f"superseded by {chain[-1]}, which is resolved",
                               "resolve this note too, or reopen it", {"chain": chain}))  # fmt: skip
    return out


def likely_updates(vault: Vault, records: dict[str, Record], g: nx.DiGraph) -> list[Finding]:
    """Active memories of one type so similar that one is probably an update of the other,
    without a supersede link between them (cosine of their first chunks, with the thresholds
    ``remember`` uses to auto-supersede)."""
    import numpy as np

    from .index.embed import similarity

    cfg = vault.config["lifecycle"]
    shared_t, plain_t = float(cfg["supersede_shared_context"]), float(cfg["supersede_no_context"])
    active = {
        p: r
        for p, r in records.items()
        if r.status == "active" and r.type and r.type not in SKIP_UPDATE_TYPES
    }
    if len(active) < 2 or not (vault.index_dir / "manifest.db").exists():
        return []
    rows, matrix = vault.manifest.vectors(vault.embedder.name, active)
    first: dict[str, int] = {}
    for i, p in enumerate(rows):
        first.setdefault(p, i)
    by_type: dict[str, list[str]] = {}
    for p in first:
        rec = active.get(p)
        if rec is not None and rec.type:
            by_type.setdefault(rec.type, []).append(p)
    out = []
    for type_, paths in sorted(by_type.items()):
        m = matrix[[first[p] for p in paths]]
        m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        for lo in range(0, len(paths), 512):
            sims = similarity(vault.embedder, m[lo : lo + 512] @ m.T)  # the thresholds' scale
            for i, j in zip(*np.nonzero(sims >= shared_t)):
                a, b = paths[lo + i], paths[j]
                if (
                    a >= b
                    or g.has_edge(a, b)
                    and _supersede_edge(g, a, b)
                    or g.has_edge(b, a)
                    and _supersede_edge(g, b, a)
                ):
                    continue
                ra, rb = active[a], active[b]
                shared = bool({c.lower() for c in ra.context} & {c.lower() for c in rb.context})
                cos = float(sims[i, j])
                if cos >= (shared_t if shared else plain_t):
                    older, newer = sorted((ra, rb), key=lambda r: (r.updated or r.created or "", r.path))
                    out.append(Finding("likely_update", older.path, f"{type_} looks updated by {newer.path} "
                                       f"(similarity {cos:.2f}) but nothing records it",
                                       f"vaultmem supersede {older.key} {newer.key}",
                                       {"newer": newer.path, "similarity": round(cos, 3)}))  # fmt: skip
    return out


def _supersede_edge(g: nx.DiGraph, a: str, b: str) -> bool:
    return bool({"superseded_by", "supersedes"} & set(g.edges[a, b].get("kinds", ())))


# ---------------------------------------------------------------------- index, watcher, disk


def config_findings(root: Path) -> list[Finding]:
    """A config still in the disposable ``.vaultmem/`` (deleting that folder would lose it), and
    each setting that differs from today's default (an older ``init`` wrote every default
    uncommented, which pins a vault to the defaults of its day)."""
    from .core.config import (
        CONFIG_FILE,
        DEFAULTS,
        LEGACY_CONFIG,
        config_path,
        read_file,
    )
    from .core.errors import BadInput

    path = config_path(root)
    out = []
    if path == root / LEGACY_CONFIG and path.exists():
        out.append(Finding("old_config_place", LEGACY_CONFIG, "the config is in .vaultmem/, which can be deleted "
                           "at any time (the indexes are rebuilt; the settings would be lost)",
                           f"--fix moves it to {CONFIG_FILE}, beside the notes"))  # fmt: skip
    try:
        data = read_file(root)
    except (OSError, BadInput):
        return out  # loading the vault reported it already
    out += unknown_findings(path.relative_to(root).as_posix(), data)
    for section, values in data.items():
        default = DEFAULTS.get(section)
        if not isinstance(values, dict) or not isinstance(default, dict) or section == "folders":
            continue
        for key, value in values.items():
            if key in default and value != default[key]:
                out.append(Finding("config_not_default", path.relative_to(root).as_posix(),
                                   f"[{section}] {key} = {value!r}; the default is {default[key]!r}",
                                   "comment the line out to follow the default", {"key": f"{section}.{key}"}))  # fmt: skip
    return out


def unknown_findings(shown: str, data: dict[str, Any], known: dict[str, Any] | None = None) -> list[Finding]:
    """Each section or key of a config file vaultmem does not know, with the nearest it knows."""
    from .core.config import unknown

    return [Finding("config_unknown", shown, f"{name}: not a setting vaultmem knows; ignored",
                    "correct or remove it", {"setting": name}) for name in unknown(data, known)]  # fmt: skip


def user_config_findings() -> list[Finding]:
    """The same for the user's ``config.toml`` (``[service]``)."""
    from .core.config import read_toml
    from .service import control

    path = control.config_file()
    try:
        data = read_toml(path)
    except (OSError, VaultError):
        return []  # every call that reads it says so
    return unknown_findings(str(path), data, {"service": control.DEFAULTS})


def exclude_findings(vault: Vault) -> list[Finding]:
    """``[vault] exclude`` patterns that hide every note (``["*"]``): recall would find nothing."""
    from .core.ignore import IgnoreRules

    patterns = list(vault.config["vault"].get("exclude", []))
    if not patterns or vault.store.list_paths():
        return []
    templates = "/" + vault.config["vault"]["templates_dir"].strip("/") + "/"
    hidden = len(IgnoreRules(vault.root, (templates,)).walk())
    if not hidden:
        return []
    return [Finding("exclude_hides_all", ".vaultmem.toml", f"[vault] exclude = {patterns!r} hides every note "
                    f"({hidden} files)", "narrow the patterns (gitignore syntax), e.g. exclude = [\"drafts/\"]",
                    {"hidden": hidden})]  # fmt: skip


def index_state(vault: Vault, records: dict[str, Record], parse_errors: dict[str, str]) -> dict[str, Any]:
    """The indexes against the files: counts of new, changed and removed notes and a sample."""
    from .index.manifest import Manifest

    path = vault.index_dir / "manifest.db"
    known: dict[str, Record] = {}
    if path.exists():
        try:
            m = Manifest(path, readonly=True)
        except VaultError:
            m = None  # not vaultmem's: every note counts as not indexed (the next index rebuilds it)
        try:
            known = m.records() if m is not None else {}
        finally:
            if m is not None:
                m.close()
    on_disk = set(records)
    new = sorted(on_disk - known.keys())
    removed = sorted(known.keys() - on_disk - parse_errors.keys())
    changed = sorted(p for p in on_disk & known.keys() if records[p].hash != known[p].hash)
    drift = {"new": len(new), "changed": len(changed), "removed": len(removed)}
    return {"notes_indexed": len(known), "files": len(on_disk) + len(parse_errors), "drift": drift,
            "drift_total": sum(drift.values()),
            "sample": {"new": new[:SAMPLE], "changed": changed[:SAMPLE], "removed": removed[:SAMPLE]}}  # fmt: skip


def index_files(vault: Vault) -> list[Finding]:
    """The keyword index's files that this user's vaultmem did not write or that changed since
    (planted, torn by a crash), every file re-hashed (``ownfiles.foreign(deep=True)``)."""
    from .index import ownfiles

    folder = vault.index_dir / "bm25"
    bad = ownfiles.foreign(folder, deep=True)
    if not bad:
        return []
    shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
    return [Finding("index", f"{folder.relative_to(vault.root).as_posix()}/",
                    f"keyword index (bm25): {len(bad)} files not written by this user's vaultmem or changed since "
                    f"(torn or planted): {shown}", "--fix (or vaultmem index --rebuild) sets it aside and rebuilds it",
                    {"files": bad})]  # fmt: skip


def watcher_state(vault: Vault) -> dict[str, Any]:
    """Who keeps this vault's indexes: the memory service (``by``: "service", asked for its
    pending changes and last error), nobody (each command indexes for itself), or a process
    holding the writer lock that does not answer as this install's service."""
    from .core.lock import WriterLock
    from .service import client, control

    holder = WriterLock(vault.lock_path).holder() if vault.lock_path.exists() else None
    if not holder or holder.get("role") != "watch":
        return {"state": "not running", "by": None, "pid": None}
    info = control.ping()
    if info is None or info.get("pid") != holder.get("pid"):
        return {"state": "not answering", "by": None, "pid": holder.get("pid")}
    out = {"state": "running", "by": "service", "pid": info["pid"], "pending": None, "last_error": None}
    try:
        reply = client.call("status", {"root": str(vault.root), "drift": False}, timeout=5.0)
    except VaultError:  # too busy to say: it runs all the same
        reply = None
    if reply and reply.get("ok"):
        out.update(pending=reply["result"].get("pending"), last_error=reply["result"].get("last_error"))
    return out


def _tree_size(path: str) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):  # does not follow symlinks
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def disk_use(vault: Vault) -> dict[str, int]:
    """Bytes used by the notes and by each part of ``.vaultmem/`` and ``.vaultmem-usage/``."""
    notes = sum(st.size for st in map(vault.store.stat, vault.store.list_paths()) if st is not None)
    out = {"notes": notes}
    for state in (vault.store.state_dir, vault.root / USAGE_DIR):
        if not state.is_dir() or state.is_symlink():
            continue
        for entry in sorted(os.scandir(state), key=lambda e: e.name):
            size = (
                _tree_size(entry.path)
                if entry.is_dir(follow_symlinks=False)
                else entry.stat(follow_symlinks=False).st_size
            )
            out[f"{state.name}/{entry.name}"] = size
    trash = vault.root / ".trash"
    if trash.is_dir():
        out[".trash"] = _tree_size(str(trash))
    out["total_state"] = sum(v for k, v in out.items() if k.startswith((".vaultmem/", f"{USAGE_DIR}/")))
    return out


# ---------------------------------------------------------------------- repairs


def repair(vault: Vault, report: Report, today: dt.date | None = None) -> list[str]:
    """Apply the safe repairs the report calls for; returns one line per change."""
    from .core.lock import WatcherRunning
    from .memory import aging

    done: list[str] = []
    if any(f.check == "old_config_place" for f in report.findings):
        from .core.config import CONFIG_FILE, LEGACY_CONFIG

        old, new = vault.root / LEGACY_CONFIG, vault.root / CONFIG_FILE
        if old.exists() and not new.exists():
            os.rename(old, new)
            done.append(f"moved {LEGACY_CONFIG} to {CONFIG_FILE}")
    rebuild = any(f.check == "index" for f in report.findings)
    if report.index["drift_total"] or rebuild:
        try:
            s = vault.reindex(rebuild=rebuild)
            done.append(
                f"reindexed: {s.added} added, {s.updated} updated, {s.moved} moved, {s.removed} dropped"
            )
        except WatcherRunning as e:
            done.append(f"not reindexed: {e} (the watcher reconciles the indexes itself)")
    if any(f.check in ("obsidian_unresolved", "stray_possible_update") for f in report.findings):
        from .memory import relink

        vault.ensure_synced()
        for a in relink.apply(vault, relink.plan(vault)):
            done.append(f"relinked {a['path']} ({a['reason']})")
    expired = [f for f in report.findings if f.check == "expired"]
    if expired:
        vault.ensure_synced()
        records = vault.records()
        actions = [aging.Action("archive", f.path, records[f.path].key, records[f.path].title,
                                f"expired on {f.data['expires']}") for f in expired if f.path in records]  # fmt: skip
        for a in aging.apply(
            vault, actions, dt.datetime.combine(today, dt.time(), dt.UTC) if today else None
        ):
            done.append(f"archived {a['path']} ({a['reason']})")
    return done
