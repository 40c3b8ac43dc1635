"""The operations' handlers: one per declared operation (``protocol.OPS``), written once.

A handler takes a host and the operation's checked arguments and returns its JSON result. Two
hosts run them: the memory service (``daemon.Service``, over its socket) and this process
(``host.LocalHost``, for a session that works without the service), so a call gives the same
result, warnings and errors whichever answers it. What differs is only how a host reaches a
vault (``Host.entry``/``Host.reading``: a watched vault's pending changes applied, or the
vault reconciled with its files here), never what an operation does with it.

Filters run here, where the index is, before the top k is cut: other code branches' memories
(inside the ranking) and, for the prompt hook, other projects' (``project``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ..core import environment
from ..core.discovery import STATE_DIR
from ..core.errors import BadInput, VaultError, VaultNotFound
from ..memory import branches

Handler = Callable[["Host", dict[str, Any]], Any]
# what a call does with a vault that has no watcher (this process's) before it runs: reconcile it
# with its files, nothing (the Vault reconciles itself once, when a read needs its indexes: a read
# from the files stays cheap), or only drop this process's cached views (nothing indexed); a
# watched vault always has its watcher's changes applied first
SYNC, AS_IS, VIEWS = "sync", "as-is", "views"
MAX_WIDEN = 8  # a filtered recall asks for at most this many times k before it settles for fewer
# a vault the service is indexing behind its answers (keywords first, then the vectors; issue 45)
KEYWORDS_WAIT = 10.0  # seconds a call that waits gives its keyword index (then: what is indexed so far)
HOOK_WAIT = 3.0  # ... a session-start hook gives it
FILL_WAIT = 10.0  # seconds a recall keywords cannot answer waits for the first vectors, or the last few
SMALL_FILL = 200  # "the last few": notes left to embed


class Host(Protocol):  # pragma: no cover - a structural type
    """What a handler asks of the process that runs it (``daemon.Service``, ``host.LocalHost``)."""

    @property
    def ready(
        self,
    ) -> bool: ...  # the default model is loaded (else a recall that does not wait answers from BM25)

    keywords: bool  # recall answers from keywords only, without the model or the pipeline

    def entry(self, root: str | Path, keywords_first: bool = False, served: bool = False) -> Any: ...

    def reading(
        self, roots: dict[str, str], mode: str = SYNC, wait: float = KEYWORDS_WAIT
    ) -> AbstractContextManager[Any]: ...

    def usage(self, root: str) -> AbstractContextManager[Any]: ...

    def task(self, name: str) -> Callable[..., Any]: ...

    def keeper(self, found: Any) -> dict[str, Any] | None: ...

    def ping(self) -> dict[str, Any]: ...

    def stop(self) -> dict[str, Any]: ...

    def open(self, roots: list[str], sync_every: float | None) -> list[str]: ...


class NotServed(VaultError):
    """A read asked only of a served vault (``served``) that the service does not serve yet: the
    caller reads it itself (the service never opens, and indexes, a vault for a read that needs
    no index)."""

    code = "unserved"  # the wire's code (``server``), as "version" for a client of another version


# ---------------------------------------------------------------------- the service itself


def ping(host: Host, args: dict) -> dict[str, Any]:
    return host.ping()


def stop(host: Host, args: dict) -> dict[str, Any]:
    return host.stop()


def open_(host: Host, args: dict) -> list[str]:
    roots = args["roots"]
    if not all(isinstance(root, str) for root in roots):
        raise BadInput("open: roots must be a list of vault folders")
    for root in roots:  # never a folder that is no vault (`/` would be watched whole)
        if not (Path(root) / STATE_DIR).is_dir():
            raise VaultNotFound(f"{root} is not a vault (no {STATE_DIR}/ in it)")
    return host.open(roots, args["sync_every"])


# ---------------------------------------------------------------------- recall and wake


def recall(host: Host, args: dict) -> dict[str, Any]:
    """Hits as dicts, in one ranking over the vaults named. Without ``wait`` while the model
    loads, from BM25 and the graph only (``degraded``: "bm25"); a host working from keywords
    only answers from them (``recall.keywords``; the pipeline's BM25 mode for options they do
    not cover); a first index without vectors yet answers from BM25 (``degraded``:
    "first-index"). ``skipped``: the notes the indexes could not read."""
    options = dict(args["options"])
    wanted = options.get("mode", "hybrid")
    if host.keywords and wanted != "bm25":
        from ..recall import keywords

        if keywords.covers(options):
            return _keyword_recall(host, args, options)
        return _recall(host, args, {**options, "mode": "bm25"}, "bm25", VIEWS)
    degraded = not args["wait"] and not host.ready and wanted != "bm25"
    building = [f.watcher.indexing.as_dict() for f in _watched(host, args["roots"]) if f.watcher.catching_up]
    if not args["wait"] and wanted != "bm25" and any(building):  # its keyword index is being built:
        from ..recall import keywords  # BM25 as it is on disk, without the gate (a hook's budget)

        if keywords.covers(options):
            done = _keyword_recall(host, args, options)
            return {**done, "degraded": "first-index", "indexing": {"vectors": 0, "notes": 0, "waited": 0.0,
                                                                    "keywords": building[0]}}  # fmt: skip
    return _recall(
        host, args, {**options, "mode": "bm25"} if degraded else options, "bm25" if degraded else None
    )


def _recall(host: Host, args: dict, options: dict[str, Any], degraded: str | None,
            mode: str = SYNC) -> dict[str, Any]:  # fmt: skip
    """The ranking; a vault being indexed behind the answers answers from keywords
    ("first-index") and, when they find nothing, from the vectors embedded so far, after a
    bounded wait for the first ones or the last few ("partial-vectors"); ``indexing`` says how
    far it is."""
    roots = args["roots"]
    if not args["all_branches"]:  # other code branches' memories: left out inside the ranking
        options["shown"] = branches.shown_test(Path(args["cwd"]), args["branch"])
    entries = [host.entry(root) for root in roots.values()]
    if args["wait"]:  # a caller that waits gets the whole keyword index (a bounded wait)
        for found in entries:
            if found.watcher is not None:
                found.watcher.wait_caught_up(KEYWORDS_WAIT)
    filling = None if degraded or options.get("mode", "hybrid") == "bm25" else _filling(entries)
    hits = _ranked(host, args, options if filling is None else {**options, "mode": "bm25"}, mode)
    how, waited = degraded or ("first-index" if filling else None), 0.0
    if filling and not hits:  # keywords found nothing: the vectors embedded so far answer
        if args["wait"]:
            deadline = time.monotonic() + (environment.VAULTMEM_FILL_WAIT.get() or FILL_WAIT)
            waited = sum(_wait_vectors(found, deadline) for found in entries)
        filling = _filling(entries)
        hits, how = _ranked(host, args, options, mode), "partial-vectors" if filling else None
    keywords = next(
        (f.watcher.indexing.as_dict() for f in entries if f.watcher and f.watcher.catching_up), None
    )
    indexing = {"vectors": filling[0], "notes": filling[1], "waited": round(waited, 1),
                **({"keywords": keywords} if keywords else {})} if filling else None  # fmt: skip
    return {"hits": hits, "degraded": how, "skipped": _index_errors(host, roots),
            **({"indexing": indexing} if indexing else {})}  # fmt: skip


def _ranked(host: Host, args: dict, options: dict[str, Any], mode: str) -> list[dict[str, Any]]:
    roots, explain = args["roots"], args["explain"]
    with host.reading(roots, mode, wait=0) as reader:

        def run(k: int | None, log: bool) -> list[dict[str, Any]]:
            found = reader.recall(args["query"], **{**options, "k": k, "log": log})
            return [h.as_dict(explain or bool(args["project"])) for h in found]

        if not args[
            "project"
        ]:  # asked from a project's folder: each hit of another project, or of none, says so
            return _labels(args)(run(options.get("k"), options.get("log", True)))
        k = options.get("k") or _default_k(reader)
        hits = _widened(lambda ask: run(ask, False), k, _project_rule(args, options.get("mode") == "bm25"))
        if options.get("log", True):
            _log(host, roots, hits, "recall")
        return hits if explain else [_plain(h) for h in hits]


def _watched(host: Host, roots: dict[str, str]) -> list[Any]:
    """The entries of these vaults that a watcher keeps (the service's)."""
    return [found for found in (host.entry(root) for root in roots.values()) if found.watcher is not None]


def _filling(entries: list[Any]) -> tuple[int, int] | None:
    """(notes with vectors, notes indexed) over these vaults when some of them are being indexed
    behind the answers (keywords first, vectors filled in); None when all is in."""
    done = total = 0
    busy = False
    for found in entries:
        if found.watcher is None or found.vault.embedder.name == "none" or not found.watcher.busy_now():
            continue  # (asks nothing: a served vault's recall pays no count)
        d, t = found.vault.vector_counts()
        done, total, busy = done + d, total + t, busy or d < t or found.watcher.catching_up
    return (done, total) if busy else None


def _wait_vectors(found: Any, deadline: float) -> float:
    """Wait, until ``deadline`` at most, for vectors of a vault being filled in: its first
    ones, or all of them when few are left (SMALL_FILL notes); the seconds waited."""
    started, watcher = time.monotonic(), found.watcher
    while watcher is not None and time.monotonic() < deadline:
        done, total = found.vault.vector_counts()
        if done >= total and not watcher.catching_up or done and total - done > SMALL_FILL:
            break
        watcher.wait_filled(min(1.0, deadline - time.monotonic()))
    return time.monotonic() - started


def _keyword_recall(host: Host, args: dict, options: dict[str, Any]) -> dict[str, Any]:
    """The answer while the service warms, from what needs no model: BM25 over each vault's
    indexes as they are on disk (nothing reindexed, written or loaded but the manifest)."""
    from ..recall import keywords

    roots = {name: Path(root) for name, root in args["roots"].items()}
    if not args["all_branches"]:  # other code branches' memories: left out inside the ranking
        options = {**options, "shown": branches.shown_test(Path(args["cwd"]), args["branch"])}
    project = _project_rule(args, True) if args["project"] else _labels(args)
    k = options.get("k") or _default_k(None, roots)
    run = lambda ask: [hit for _, hit in keywords.recall_vaults(roots, args["query"], {**options, "k": ask},
                                                                 args["explain"] or bool(args["project"]))]  # fmt: skip
    hits = _widened(run, k, project)
    if options.get("log", True):
        _log(host, args["roots"], hits, "recall")
    hits = hits if args["explain"] else [_plain(h) for h in hits]
    return {"hits": hits, "degraded": "bm25", "skipped": {}}


def _widened(run: Callable[[int], list[dict[str, Any]]], k: int,
             keep: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> list[dict[str, Any]]:  # fmt: skip
    """The best ``k`` hits a filter keeps, asking the ranking for more until k are kept or it
    has no more (at most MAX_WIDEN times k), numbered as shown (1, 2, 3, never 1, 3, 4)."""
    ask = k
    while True:
        found = run(ask)
        kept = keep(found)
        if len(kept) >= k or len(found) < ask or ask >= k * MAX_WIDEN:
            break
        ask *= 2
    kept = kept[:k]
    for rank, hit in enumerate(kept, 1):
        hit["rank"] = rank
    return kept


def _keep_all(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return hits


def _project_rule(
    args: dict, keywords: bool = False
) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """The prompt hook's project rule (``projects.scope_hits``) for the caller's folder
    (``keywords``: the hits come from BM25 alone, no cosine to ask)."""
    from ..memory.projects import scope_hits

    roots = {name: Path(root) for name, root in args["roots"].items()}
    return lambda hits: scope_hits(hits, roots, args["project"], keywords)


def _labels(args: dict) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Recall from a project's folder: the hits of another project, or of none, say so
    (``projects.label_hits``)."""
    from ..memory.projects import label_hits

    roots = {name: Path(root) for name, root in args["roots"].items()}
    return lambda hits: label_hits(hits, roots, args["cwd"])


def _plain(hit: dict[str, Any]) -> dict[str, Any]:
    hit.pop("explain", None)
    return hit


def _default_k(reader: Any, roots: dict[str, Path] | None = None) -> int:
    """The first vault's ``[recall] k`` (the default of a call that names none)."""
    from ..core import config as configmod

    if reader is not None:
        first = next(iter(reader.vaults.values())) if hasattr(reader, "vaults") else reader
        return int(first.config["recall"]["k"])
    return int(configmod.load(next(iter((roots or {}).values())))["recall"]["k"])


def _log(host: Host, roots: dict[str, str], hits: list[dict[str, Any]], via: str) -> None:
    """Log the hits kept as retrieved, in each one's vault."""
    many = len(roots) > 1
    for name, root in roots.items():
        mine = [h["id"] for h in hits if not many or h.get("vault") == name]
        if mine:
            with host.usage(root) as store:
                store.log_retrievals(mine, via)


def _index_errors(host: Host, roots: dict[str, str]) -> dict[str, str]:
    """The notes of these vaults their indexes could not read (``vault:path`` for several)."""
    many = len(roots) > 1
    return {(f"{name}:{path}" if many else path): reason for name, root in roots.items()
            for path, reason in host.entry(root).vault.index_errors().items()}  # fmt: skip


def _shown_test(args: dict) -> Callable[[Path, str], bool] | None:
    return None if args["all_branches"] else branches.shown_test(Path(args["cwd"]), args["branch"])


def wake(host: Host, args: dict) -> dict[str, Any]:
    """The [MEMORY] block of the anchor given, else of the caller's folder's project (the rule
    the hooks use: ``projects.folder_anchor``)."""
    from ..memory.projects import folder_anchor

    with host.reading(args["roots"]) as reader:
        anchor = args["anchor"] or folder_anchor(reader, args["cwd"])
        return reader.wake(anchor=anchor, task=args["task"], profile=args["profile"],
                           budget=args["budget"], shown=_shown_test(args))  # fmt: skip


# ---------------------------------------------------------------------- reads of one vault


def show(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"], served=args["served"]).reading(AS_IS) as vault:
        return vault.show(vault.checked_ref(args["ref"]))


def list_(host: Host, args: dict) -> dict[str, Any]:
    """Notes matching the filters, newest first, read from the files, and the notes left out
    because they cannot be read."""
    entries = {name: host.entry(root, served=args["served"]) for name, root in args["roots"].items()}
    with host.reading(args["roots"], AS_IS) as reader:
        for found in entries.values():
            found.vault.skipped.clear()
        rows = reader.list_notes(limit=args["limit"], **args["filters"])
    many = len(entries) > 1
    skipped = {(f"{name}:{path}" if many else path): reason for name, found in entries.items()
               for path, reason in found.vault.skipped.items()}  # fmt: skip
    return {"rows": rows, "skipped": skipped}


def graph(host: Host, args: dict) -> Any:
    """One link graph query (``graphview.answer``) on the notes as the files are now."""
    from ..memory import graphview

    with host.entry(args["root"], served=args["served"]).reading(AS_IS) as vault:
        return graphview.answer(vault, args["query"], args["note"], args["other"], args["depth"], args["format"],
                                args["cap"], args["indexed"])  # fmt: skip


def overview(host: Host, args: dict) -> dict[str, Any]:
    """The memory state the web view draws (``overview.overview``)."""
    from ..memory.overview import overview as draw

    with host.entry(args["root"], served=args["served"]).reading(AS_IS) as vault:
        return draw(vault, args["days"])


def stats(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"], served=args["served"]).reading(AS_IS) as vault:
        return vault.stats()


def history(host: Host, args: dict) -> dict[str, Any]:
    """The versions of the fact a reference or subject key names (``history.chain``)."""
    from ..memory.history import chain

    with host.entry(args["root"]).reading() as vault:
        return chain(vault, vault.checked_ref(args["ref"]))


def export(host: Host, args: dict) -> dict[str, Any]:
    """Every note's exact text (``vaultmem export``'s JSON backup) and the notes it skipped."""
    with host.entry(args["root"]).reading(AS_IS) as vault:
        return vault.export()


def status(host: Host, args: dict) -> dict[str, Any]:
    """Who keeps the indexes (``by``: "service", its pid, pending changes, last error; pid None
    when each command does), notes indexed, errors and drift."""
    found = host.entry(args["root"])
    keeper = host.keeper(found) or {"pid": None, "by": None}
    done, total = found.vault.vector_counts()
    return {
        **keeper,
        **found.vault.index_status(drift=args["drift"]),
        "vectors": {"done": done, "notes": total},
    }


def doctor(host: Host, args: dict) -> dict[str, Any]:
    """The health report of a vault, read where its index is (``doctor.served_report``) but the
    hooks' findings, which the client reads (its home, its hook log); with ``fix``, the safe
    repairs first (``changes``)."""
    found = host.entry(args["root"], served=args["served"])
    keeper = host.keeper(found)
    with found.writing(AS_IS) if args["fix"] else found.reading(AS_IS) as vault:
        return host.task("doctor")(vault, keeper, fix=args["fix"])


# ---------------------------------------------------------------------- writes


def _now(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields with a fixed clock, which travels as ISO text, read back."""
    if isinstance(fields.get("now"), str):
        return {**fields, "now": datetime.fromisoformat(fields["now"])}
    return fields


def remember(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"]).writing() as vault:
        return vault.remember(args["type"], args["title"], args["content"], **_now(args["fields"]))


def edit(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"]).writing(AS_IS) as vault:
        return vault.edit(vault.checked_ref(args["ref"]), **args["fields"])


def write_note(host: Host, args: dict) -> dict[str, Any]:
    """A whole note file written (MCP ``write_note``): new, or replacing one unchanged since read."""
    with host.entry(args["root"]).writing(AS_IS) as vault:
        return vault.write_note(args["path"], args["content"], args["expected_version"], args["overwrite"])


def delete(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"]).writing(AS_IS) as vault:
        return vault.delete(vault.find(vault.checked_ref(args["ref"])).path)


def sleep(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"]).writing(AS_IS) as vault:
        return vault.sleep(args["summary"], **args["fields"])


def checkpoint(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"]).writing(AS_IS) as vault:
        return vault.checkpoint(args["text"], **args["fields"])


def _lifecycle(name: str) -> Handler:
    """resolve, reopen, confirm: one memory's status changed (``Vault.<name>``)."""

    def run(host: Host, args: dict) -> dict[str, Any]:
        with host.entry(args["root"]).writing(AS_IS) as vault:
            return getattr(vault, name)(vault.checked_ref(args["ref"]))

    run.__name__ = name
    return run


def resolve_source(host: Host, args: dict) -> list[dict[str, Any]]:
    with host.entry(args["root"]).writing(AS_IS) as vault:
        return vault.resolve_source(args["source"])


def supersede(host: Host, args: dict) -> dict[str, Any]:
    with host.entry(args["root"]).writing(AS_IS) as vault:
        return vault.supersede(vault.checked_ref(args["old"]), vault.checked_ref(args["new"]))


SAID = "vaultmem.agents_md"  # the logger whose warnings a call hands back to its caller (``said``)


@contextmanager
def _said() -> Iterator[list[str]]:
    """The warnings this call's thread logs on ``SAID`` (a file outside the vault, a rule held
    back), kept from the host's own log and handed back in the result's ``said``: the caller
    says them where it runs (``api.say``), the same through the service and in process."""
    said: list[str] = []
    me = threading.get_ident()

    class Keep(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            if record.thread != me:
                return True
            said.append(record.getMessage())
            return False

    keep, logger = Keep(), logging.getLogger(SAID)
    logger.addFilter(keep)
    try:
        yield said
    finally:
        logger.removeFilter(keep)


def maintain(host: Host, args: dict) -> dict[str, Any]:
    """The aging rules' plan, carried out with ``apply`` as one undo batch (``undo``: its id)."""
    from ..memory import undo as undomod

    code_dir = Path(args["cwd"])
    with host.entry(args["root"]).writing(AS_IS) as vault, _said() as said:
        if not args["apply"]:
            return {**vault.maintain(apply=False, days=args["days"], code_dir=code_dir), "said": said}
        with undomod.recording(vault, "maintain", "maintain") as batch:
            batch.watch(vault.agents_md_files("maintain"))
            result: dict[str, Any] = vault.maintain(apply=True, days=args["days"], code_dir=code_dir)
        return {**result, "undo": None if batch.empty() else batch.id, "said": said}


def agents_md(host: Host, args: dict) -> dict[str, Any]:
    """``export --to agents-md``: the project's rules into a file's marked section, as one undo
    batch (``undo``: its id)."""
    from ..memory import agents_md as md
    from ..memory import undo as undomod

    target = Path(args["file"])
    with host.entry(args["root"]).writing(AS_IS) as vault, _said() as said:
        with undomod.recording(vault, "export", str(target.resolve())) as batch:
            batch.watch([target / "AGENTS.md" if target.is_dir() else target])
            result: dict[str, Any] = md.export(vault, args["file"], args["anchor"], args["dry_run"])
        return {**result, "undo": None if batch.empty() else batch.id, "said": said}


def refresh_agents_md(host: Host, args: dict) -> dict[str, Any]:
    """The files the vault's ``[agents_md]`` config refreshes after ``event`` ("sync")."""
    with host.entry(args["root"]).writing(AS_IS) as vault, _said() as said:
        return {"files": vault.refresh_agents_md(args["event"]), "said": said}


def reindex(host: Host, args: dict) -> dict[str, Any]:
    """The whole vault indexed again: by its watcher in the service (keywords first, then the
    vectors, recall answering meanwhile; its progress streamed: ``emit``), else here (the
    host's ``progress``)."""
    found = host.entry(args["root"])
    if found.watcher is not None:
        return found.watcher.reindex(args["rebuild"], args.get("emit") or (lambda event: None)).as_dict()
    with found.writing(AS_IS) as vault:
        return vault.reindex(rebuild=args["rebuild"], progress=getattr(host, "progress", None)).as_dict()


def sync(host: Host, args: dict) -> dict[str, Any] | None:
    """Index the notes a client just wrote, before it returns (read-your-writes: the next call
    from any client sees them; the watcher later finds them unchanged)."""
    paths = [str(p) for p in args["paths"]]
    with host.entry(args["root"]).writing(AS_IS) as vault:
        summary = vault.sync(paths)
    return summary.as_dict() if summary is not None else None


def notes(host: Host, args: dict) -> list[str]:
    """Which of these paths are notes of the vault (its ignore rules), the others left out."""
    with host.entry(args["root"]).reading(AS_IS) as vault:
        return [str(p) for p in args["paths"] if not vault.store.rules.ignored(str(p))]


# ---------------------------------------------------------------------- import


def import_(host: Host, args: dict) -> dict[str, Any]:
    """``vaultmem import``: a backup written by ``export`` restored (``text``: its JSON, read by
    the caller from standard input; else the one file of ``paths``), or, with ``source``, what
    another tool holds, by the importer of the layer above (the ``import`` task, handed over as
    the hooks' are: ``agents.importers.import_from``, which writes in checkpoints, resumes a
    stopped import and emits its progress here). One undo batch (``undo``: its id). The caller
    resolved what the user named where the user is: every path comes absolute."""
    from ..memory import undo as undomod

    named = [p for p in [*args["paths"], args["project"]] if p is not None]
    wrong = next((p for p in named if not isinstance(p, str) or not Path(p).is_absolute()), None)
    if wrong is not None:
        raise BadInput(f"import: paths must be absolute, not {wrong!r}")
    if args["source"] is not None:
        run = host.task("import")
        with host.entry(args["root"]).writing(AS_IS) as vault:
            return run(vault, args["source"], args["paths"], project=args["project"], since=args["since"],
                       dry_run=args["dry_run"], progress=Emitted(args["emit"]))  # fmt: skip
    data, label = _backup(args["paths"], args["text"])
    with host.entry(args["root"]).writing(AS_IS) as vault, undomod.recording(vault, "import", label) as batch:
        result: dict[str, Any] = vault.import_(data)
    return {**result, "undo": None if batch.empty() else batch.id}


def _backup(paths: list[str], text: str | None) -> tuple[Any, str]:
    """(The backup's data, the undo batch's source: its file, or "-" for standard input)."""
    if text is None and len(paths) != 1:
        raise BadInput("give the backup file to restore (or --from SOURCE to import from another tool)")
    file = "-" if text is not None else paths[0]
    try:
        data = json.loads(text if text is not None else Path(file).read_text(encoding="utf-8"))
    except OSError as e:
        raise BadInput(f"cannot read {file}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{file} is not JSON ({e})") from None
    return data, file if text is not None else str(Path(file).resolve())


class Emitted:
    """An import's progress (the importers' ``(done, total)`` of the files read, then
    ``writing`` at each checkpoint) as the events of its operation (``emit``: phase, done,
    total), which the caller shows (``cli.transfer.Progress.event``) the same whichever host ran it."""

    def __init__(self, emit: Callable[[dict], None]):
        self.emit = emit

    def __call__(self, done: int, total: int) -> None:
        self.emit({"phase": "reading", "done": done, "total": total})

    def writing(self, done: int, total: int) -> None:
        self.emit({"phase": "writing", "done": done, "total": total})


# ---------------------------------------------------------------------- undo and the trash


def batches(host: Host, args: dict) -> list[dict[str, Any]]:
    from ..memory import undo as undomod

    with host.entry(args["root"]).reading(AS_IS) as vault:
        return undomod.batches(vault, args["kind"])


def undo_plan(host: Host, args: dict) -> dict[str, Any]:
    """The batch ``undo`` would take back, and the files outside the vault it names (listed
    before anything is changed)."""
    from ..memory import undo as undomod

    with host.entry(args["root"]).reading(AS_IS) as vault:
        record = undomod.find(vault, args["batch"], args["kind"])
        return {"id": record["id"], "outside": undomod.outside(vault, record)}


def undo(host: Host, args: dict) -> dict[str, Any]:
    """Take back exactly what one recorded batch (of ``kind``, when given) wrote."""
    from ..memory import undo as undomod

    with host.entry(args["root"]).writing(AS_IS) as vault:
        return undomod.undo(vault, undomod.find(vault, args["batch"], args["kind"]))


def trash(host: Host, args: dict) -> list[dict[str, Any]]:
    from ..memory import trash as trashmod

    with host.entry(args["root"]).reading(AS_IS) as vault:
        return trashmod.entries(vault)


def restore(host: Host, args: dict) -> dict[str, Any]:
    from ..memory import trash as trashmod

    with host.entry(args["root"]).writing(AS_IS) as vault:
        return trashmod.restore(vault, args["ref"], args["to"])


# ---------------------------------------------------------------------- usage: shown, ratings, gaps


def shown(host: Host, args: dict) -> None:
    """Memories a client showed (a prompt hook), logged as retrievals in the vault's usage store."""
    ids = args["ids"]
    if not all(isinstance(i, str) for i in ids):
        raise TypeError("ids must be a list of strings")
    with host.usage(args["root"]) as store:
        store.log_retrievals(ids, args["via"])


def rate(host: Host, args: dict) -> dict[str, Any]:
    """Ratings ([id, useful] pairs) of memories of one vault: ``rated`` and ``unknown``."""
    pairs = args["ratings"]
    if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], bool)
               for p in pairs):  # fmt: skip
        raise BadInput("rate: ratings must be [id, useful] pairs")
    unknown: list[dict[str, Any]] = []
    with host.entry(args["root"]).reading(AS_IS) as vault:
        checked = []
        for ref, useful in pairs:
            try:
                checked.append((vault.checked_ref(ref), useful))
            except VaultError as e:  # a path leading outside the vault
                unknown.append({"id": ref, "error": str(e)})
        done: dict[str, Any] = vault.rate(checked, args["source"])
    return {**done, "unknown": unknown + done["unknown"]}


def usage(host: Host, args: dict) -> dict[str, dict[str, Any]]:
    """The usage of memories (by key) a page shows: how often recalled, when last, ratings."""
    from dataclasses import asdict

    ids = args["ids"]
    if not all(isinstance(i, str) for i in ids):
        raise BadInput("usage: ids must be a list of strings")
    with host.usage(args["root"]) as store:
        return {key: asdict(found) for key, found in store.usage(ids).items()}


def gap(host: Host, args: dict) -> None:
    with host.entry(args["root"]).reading(AS_IS) as vault:
        vault.gap(args["text"], args["query"], args["source"])


def gaps(host: Host, args: dict) -> list[dict[str, Any]]:
    with host.entry(args["root"]).reading(AS_IS) as vault:
        return vault.gaps()


# ---------------------------------------------------------------------- the hooks' work where the index is


def hook_start(host: Host, args: dict) -> dict[str, Any]:
    """SessionStart's wake block, other branches' memories left out as wake leaves them."""
    shown_test = branches.shown_test(Path(args["cwd"]), None)
    with host.entry(args["root"]).reading(wait=HOOK_WAIT) as vault:  # a hook: in its budget
        return host.task("hook_start")(
            vault, args["payload"], args["anchor"], args["budget"], shown=shown_test
        )


def _writing_hook(name: str) -> Handler:
    """hook_end, hook_precompact: what a session leaves, written where the index is and scoped to
    the caller's code branch (``branches.scope_fields``)."""

    def run(host: Host, args: dict) -> Any:
        found = host.entry(args["root"])
        scope = branches.scope_fields(Path(args["cwd"]), found.root)
        with found.writing() as vault:
            return host.task(name)(vault, args["payload"], args["anchor"], scope=scope)

    run.__name__ = name
    return run


HANDLERS: dict[str, Handler] = {
    "ping": ping, "stop": stop, "open": open_, "recall": recall, "wake": wake, "remember": remember,
    "edit": edit, "sleep": sleep, "checkpoint": checkpoint, "shown": shown, "status": status,
    "reindex": reindex, "sync": sync, "notes": notes, "show": show, "list": list_, "graph": graph, "overview": overview,
    "usage": usage, "stats": stats,
    "resolve": _lifecycle("resolve"), "reopen": _lifecycle("reopen"), "confirm": _lifecycle("confirm"),
    "resolve_source": resolve_source, "supersede": supersede, "history": history, "write_note": write_note,
    "delete": delete, "maintain": maintain, "batches": batches, "undo_plan": undo_plan, "undo": undo, "trash": trash, "restore": restore,
    "export": export, "import": import_, "agents_md": agents_md, "refresh_agents_md": refresh_agents_md, "rate": rate, "gap": gap,
    "gaps": gaps, "doctor": doctor, "hook_start": hook_start, "hook_end": _writing_hook("hook_end"),
    "hook_precompact": _writing_hook("hook_precompact"),
}  # fmt: skip


def run(host: Host, name: str, args: Any, emit: Callable[[dict], None] | None = None) -> Any:
    """One declared operation with its arguments checked (``protocol.Op.bind``), on ``host``;
    ``emit``: the progress events of an operation declared ``stream``, as the service streams them."""
    from .protocol import OPS

    op = OPS.get(name)
    if op is None:
        raise BadInput(f"unknown request {name!r}")
    return HANDLERS[name](host, op.bind(args or {}, emit))
