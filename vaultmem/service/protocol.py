"""The memory service's operations, declared once (light: stdlib only).

Each operation has a name, its arguments with their wire types (JSON: str, int, float, bool,
list, dict, or None where optional), what it returns, and where it runs against a vault: not
at all (``none``), under the vault's reader side (``read``: the watcher's batches wait), or its
writer side (``write``). The server dispatches through this table only (one version check:
a client of another version is refused all but the ``any_version`` operations), and the
client's ``api.Session`` sends nothing that is not declared here.

Wire form: one JSON object per line each way; a request ``{"op", "args", "version"}`` gets
``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "...", "code": N}`` (``code``
"version", with the server's ``version``, for a client of another version). A request of an
operation declared ``stream`` with ``"stream": true`` gets ``{"progress": {...}}`` lines first
(a long ``reindex``: phase, done, total, seconds_left; an ``import``: phase, done, total), then
its reply. A request line holds at most ``MAX_REQUEST`` bytes. An operation declared ``here``
(``import``) runs in the caller's process even when the service runs: the service goes on
answering and indexes the files as they land.

Each operation has one handler (``ops.HANDLERS``), which the service runs over its socket and a
session working in its own process runs directly (``host.LocalHost``): the same code either way.
``doctor``, ``hook_start``, ``hook_end``, ``hook_precompact`` and ``import`` (``--from``) run
checks, hooks and importers of the layers above the service (``doctor``, ``agents``): whoever
runs a host hands them over (``tasks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.errors import BadInput

NONE, READ, WRITE = "none", "read", "write"
MAX_REQUEST = 1 << 20  # bytes of one request line
Roots = dict  # vault name -> root path (several vaults are searched as one)


@dataclass(frozen=True)
class Op:
    """One operation: ``args`` required (name -> JSON type), ``optional`` (name -> (type,
    default)); ``result`` says what comes back."""

    name: str
    args: dict[str, type | tuple[type, ...]]
    result: str
    gate: str = READ
    optional: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # name -> (JSON type(s), default)
    any_version: bool = False
    stream: bool = False  # it reports progress: its handler takes ``emit``, sent as lines before the reply
    # a session runs it in its own process even when the service serves the vault: a bulk write of
    # minutes there would hold the vault's writer side, and every recall and hook wait behind it
    here: bool = False

    def check(self, args: Any) -> dict[str, Any]:
        """The arguments with defaults filled in; BadInput naming the first wrong one."""
        if not isinstance(args, dict):
            raise BadInput(f"{self.name}: the arguments must be an object")
        unknown = set(args) - set(self.args) - set(self.optional)
        if unknown:
            raise BadInput(f"{self.name}: unknown argument {sorted(unknown)[0]!r}")
        out: dict[str, Any] = {}
        for name, kind in self.args.items():
            if name not in args:
                raise BadInput(f"{self.name}: missing argument {name!r}")
            out[name] = _typed(self.name, name, args[name], kind)
        for name, (kind, default) in self.optional.items():
            value = args.get(name)
            out[name] = default if value is None else _typed(self.name, name, value, kind)
        return out

    def bind(self, args: Any, emit: Any = None) -> dict[str, Any]:
        """The checked arguments a handler takes: an operation declared ``stream`` also gets
        ``emit`` (its progress events; a caller that asked for none: dropped)."""
        checked = self.check(args)
        if self.stream:
            checked["emit"] = emit or _dropped
        return checked


def _dropped(event: dict[str, Any]) -> None:
    """A progress event no caller asked for."""


def _typed(op: str, name: str, value: Any, kind: type | tuple[type, ...]) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise BadInput(f"{op}: {name} must be {' or '.join(k.__name__ for k in kinds)}")
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kinds):
        raise BadInput(f"{op}: {name} must be {' or '.join(k.__name__ for k in kinds)}")
    return value


BRANCH: dict[str, tuple[Any, Any]] = {
    "cwd": (str, "/"),
    "branch": (str, None),
    "all_branches": (bool, False),
}  # code branch scope
FIELDS: dict[str, tuple[Any, Any]] = {
    "fields": (dict, {})
}  # the operation's own keyword arguments (``Vault``'s)
SERVED: dict[str, tuple[Any, Any]] = {
    "served": (bool, False)
}  # a read that needs no index: only of a vault the service already serves (else refused: ``ops.NotServed``)
REF: dict[str, type | tuple[type, ...]] = {"root": str, "ref": str}
DECLARED = (
    Op("ping", {}, "pid, version, ready, started, calls, idle_exit, log, vaults", NONE, any_version=True),
    Op("stop", {}, "pid", NONE, any_version=True),
    Op("open", {"roots": list}, "the roots served", NONE, optional={"sync_every": (float, None)}),
    Op("recall", {"roots": Roots, "query": str}, "hits (Hit.as_dict), degraded, skipped (path -> reason)",
       optional={"explain": (bool, False), "options": (dict, {}), "wait": (bool, True), "project": (str, None),
                 **BRANCH}),
    Op("wake", {"roots": Roots}, "the [MEMORY] block: text, tokens, budget, ids, sections",
       optional={"anchor": (str, None), "task": (str, None), "profile": (str, "default"), "budget": (int, 2000),
                 **BRANCH}),
    Op("remember", {"root": str, "type": str, "title": str}, "the note written (id, path, ...)", WRITE,
       optional={"content": (str, None), **FIELDS}),
    Op("edit", REF, "path, changed", WRITE, optional=FIELDS),
    Op("write_note", {"root": str, "path": str, "content": str}, "id, path, version, created", WRITE,
       optional={"expected_version": (str, None), "overwrite": (bool, False)}),
    Op("delete", REF, "path, trashed_to", WRITE),
    Op("sleep", {"root": str, "summary": str}, "summary, handoff, superseded", WRITE, optional=FIELDS),
    Op("checkpoint", {"root": str, "text": str}, "id, path, line", WRITE, optional=FIELDS),
    Op("shown", {"root": str, "ids": list, "via": str}, "nothing", READ),
    Op("status", {"root": str}, "watcher status and index status", NONE, optional={"drift": (bool, True)}),
    Op("reindex", {"root": str}, "the index summary", NONE, optional={"rebuild": (bool, False)}, stream=True),
    Op("sync", {"root": str, "paths": list}, "the index summary of those paths", WRITE),
    Op("notes", {"root": str, "paths": list}, "those of the paths that are notes (the vault's ignore rules)"),
    Op("show", REF, "the note: path, id, metadata, text, links, backlinks", optional=SERVED),
    Op("list", {"roots": Roots}, "rows (newest first), skipped (path -> reason)",
       optional={"limit": (int, None), "filters": (dict, {}), **SERVED}),
    Op("graph", {"root": str, "query": str}, "the link graph query's answer (``graphview.QUERIES``: links, "
       "backlinks, neighbours, path, orphans, unresolved, anchors, export; the web view's data, note and summary)",
       optional={"note": (str, None), "other": (str, None), "depth": (int, None), "format": (str, "json"),
                 "cap": (int, None), "indexed": (bool, False), **SERVED}),
    Op("stats", {"root": str}, "counts by type, status and importance, dates, disk use", optional=SERVED),
    Op("overview", {"root": str}, "the memory state: counts by type and status, by month, candidates, "
       "recently changed notes, daily counts (today's recorded first)", optional={"days": (int, 365), **SERVED}),
    Op("usage", {"root": str, "ids": list}, "each memory's usage (count, last_access, useful, ratings, "
       "last_rating); ids never used left out"),
    Op("history", REF, "key, versions (oldest first, each with its valid days and state)"),
    Op("export", {"root": str}, "every note's exact text (the JSON backup), skipped"),
    Op("resolve", REF, "action, changed, id, title", WRITE),
    Op("reopen", REF, "action, changed, id, title", WRITE),
    Op("confirm", REF, "action, changed, id, title", WRITE),
    Op("resolve_source", {"root": str, "source": str}, "[action, changed, id, title] of each", WRITE),
    Op("supersede", {"root": str, "old": str, "new": str}, "action, changed, id, title", WRITE),
    Op("maintain", {"root": str, "cwd": str}, "actions, agents_md, done, undo, said (its warnings)", WRITE,
       optional={"apply": (bool, False), "days": (int, None)}),
    Op("agents_md", {"root": str, "file": str}, "the section written (export --to agents-md), undo, said", WRITE,
       optional={"anchor": (str, None), "dry_run": (bool, False)}),
    Op("refresh_agents_md", {"root": str, "event": str}, "files (refreshed), said", WRITE),
    Op("batches", {"root": str}, "the recorded undo batches, newest first", optional={"kind": (str, None)}),
    Op("undo_plan", {"root": str, "batch": str}, "id, outside (the files outside the vault it names, each "
       "with whether undo may change it)", optional={"kind": (str, None)}),
    Op("import", {"root": str}, "a backup restored (imported, skipped_existing, paths, usage_rows), or with "
       "source the importer's report; undo (its batch)", WRITE,
       optional={"source": (str, None), "paths": (list, []), "text": (str, None), "project": (str, None),
                 "since": (str, None), "dry_run": (bool, False)}, stream=True, here=True),
    Op("undo", {"root": str, "batch": str}, "id, removed, restored, skipped", WRITE, optional={"kind": (str, None)}),
    Op("trash", {"root": str}, "the notes in .trash/, newest first"),
    Op("restore", REF, "path, restored_to, id", WRITE, optional={"to": (str, None)}),
    Op("rate", {"root": str, "ratings": list}, "rated, unknown", optional={"source": (str, None)}),
    Op("gap", {"root": str, "text": str}, "nothing", optional={"query": (str, None), "source": (str, None)}),
    Op("gaps", {"root": str}, "the gaps reported, most frequent first"),
    Op("doctor", {"root": str}, "the health report (``doctor.Report.as_dict``) but the hooks' findings, "
       "which the client reads (its home, its hook log); changes (with ``fix``)",
       optional={"fix": (bool, False), **SERVED}),
    Op("hook_start", {"root": str, "payload": dict, "cwd": str}, "SessionStart's answer (Claude Code's shape)",
       optional={"anchor": (str, None), "budget": (int, 2000)}),
    Op("hook_end", {"root": str, "payload": dict, "cwd": str}, "summary, candidates, known", WRITE,
       optional={"anchor": (str, None)}),
    Op("hook_precompact", {"root": str, "payload": dict, "cwd": str}, "checkpoint (or nothing)", WRITE,
       optional={"anchor": (str, None)}),
)  # fmt: skip
OPS: dict[str, Op] = {op.name: op for op in DECLARED}
