"""Routing for every front end (CLI, MCP server, agent hooks, web view): one place for each decision.

A front end parses its input, opens a ``Session`` and renders what it returns. The session
decides what another front end would otherwise decide again:

- which vault(s) a call goes to: the vaults named (registered names or paths), else the
  agent's (its personal, the shared and the user's vault), else discovery (``find_vault``);
- where its calls run, decided once (``Session.backend``): the per-user memory service
  (started on first use, detached; ``vaultmem watch`` is the same service in the foreground),
  this process (``VAULTMEM_NO_SERVICE=1``, ``[service] enabled = false``, or a service that
  does not start), or, for a caller that must not wait while the service starts, keywords
  only (BM25 over the indexes as they are);
- where a write lands (``shared``, scope ``user``, else the caller's own vault);
- when the indexes are brought in line with the files before a read (``Vault.sync``);
- which code branch scopes memory: the git state of the caller's working directory (``cwd``,
  e.g. a hook payload's) decides what recall and wake show and what every write carries.

    from vaultmem.api import Session
    with Session(["~/memory"]) as s:
        hits = s.recall("why advisory locks?", k=5)      # dicts, as every front end renders them

Light to import: whoosh, numpy and fastembed load only when a vault is opened in this
process, so a recall answered by the service stays fast.
"""

from __future__ import annotations

import threading
from pathlib import Path

from .core.discovery import STATE_DIR, find_vault
from .core.errors import BadInput, VaultError, VaultNotFound
from .core.registry import SHARED, USER, Registry, agent_id, identity
from .core.version import VERSION
from .service import client, control

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every client call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Sequence
    from typing import Any

    from .index.embed import Embedder
    from .index.indexer import Progress, Summary
    from .multi import MultiVault
    from .vault import Vault

SINGLE = "vault"  # the name of the one vault of a session that is not an agent's
SERVICE, PROCESS, KEYWORDS = "service", "process", "keywords"  # where a session's calls run


def is_vault(path: Path) -> bool:
    return (path / STATE_DIR).is_dir()


def vault_root(ref: str | None = None, agent: str | None = None) -> Path:
    """The vault a single-vault call works on: ``ref`` (name or path), else the agent's
    personal vault, else discovery ($VAULTMEM_VAULT, then walking up to .vaultmem/)."""
    if ref:
        return find_vault(Registry().resolve(ref))
    agent = agent_id(agent)
    if agent:
        return find_vault(identity(agent).personal)
    return find_vault(None)


def refresh_agents_md(root: Path, event: str) -> list[dict[str, Any]]:
    """After ``event`` ("sync"): refresh the files the vault's ``[agents_md]`` config names for
    it (``Vault.refresh_agents_md``); the vault is not even opened when it names none."""
    from .core.config import load
    from .memory.agents_md import wanted

    if not wanted(load(root)["agents_md"], event, root):
        return []
    with Session([str(root)]) as session:
        return session.vault.refresh_agents_md(event)


def selection(refs: Sequence[str] = (), agent: str | None = None) -> dict[str, Path]:
    """The named vaults a call may read: several refs by registry name, an agent's vaults that
    exist (without refs), else the one vault of ``vault_root``."""
    agent = agent_id(agent)
    if len(refs) > 1:
        reg = Registry()
        return {reg.name_of(p): p for p in (reg.resolve(r) for r in refs)}
    if not refs and agent:
        ident = identity(agent)
        if not is_vault(ident.personal):  # say so, instead of searching only the others (or nothing)
            raise VaultNotFound(f"no vault for agent {agent!r} at {ident.personal}: make it with "
                                f"`vaultmem init {ident.personal}` or register one: `vaultmem vault add {agent} PATH`")  # fmt: skip
        return {n: p for n, p in ident.allowed().items() if is_vault(p)}
    return {SINGLE: vault_root(refs[0] if refs else None)}


def write_root(ref: str | None, agent: str | None, shared: bool = False, scope: str | None = None) -> Path:
    """Where a new memory goes: the vault named (``shared``/``scope`` then ignored), else with
    ``shared`` the shared vault, with scope ``user`` the user's own vault (for an agent, or
    when one is registered), else the agent's or discovered vault. A shared or user vault
    that is not a vault yet is made one."""
    if ref or not (shared or scope == USER):
        return vault_root(ref, agent)
    agent = agent_id(agent)
    if agent:
        ident = identity(agent)
        if shared and ident.shared is None:
            raise BadInput(
                "no shared vault: register one (`vaultmem vault add shared PATH`) or set VAULTMEM_TEAM_DIR"
            )
        target = ident.shared if shared else ident.user
    else:
        reg = Registry()
        name = SHARED if shared else USER
        if name not in reg.vaults:
            if shared:
                raise BadInput(
                    "no shared vault: register one (`vaultmem vault add shared PATH`) or use --agent"
                )
            return vault_root(None)
        target = reg.vaults[name]
    if not is_vault(target):  # type: ignore[arg-type]
        from .core.scaffold import init_vault

        init_vault(target)  # type: ignore[arg-type]
    return target  # type: ignore[return-value]


class RemoteError(VaultError):
    """The memory service refused or failed a request (its message and exit code)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.exit_code = code


def service_parts() -> tuple[Callable[[Path, Any], Vault], Callable[[dict[str, Vault]], MultiVault]]:
    """What the memory service is handed to serve vaults (it imports no facade): a Vault of a
    root with the service's embedder for it, and a MultiVault of open vaults by name."""
    from .multi import MultiVault
    from .vault import Vault

    return (lambda root, embedder: Vault(root, embedder)), MultiVault


def sync_served(entry: Any, every: float) -> None:
    """One git sync of a vault the memory service watches (``watch --sync-every``; handed to the
    service, which imports no sync), then what ``vaultmem sync`` does after one: the
    ``[agents_md]`` refresh (the watcher indexes what the pull brought)."""
    from .memory.agents_md import wanted
    from .sync.git import sync_watched

    if sync_watched(entry.watcher) is None:
        return
    with entry.reading() as vault:
        if wanted(vault.config["agents_md"], "sync", vault.root):
            vault.refresh_agents_md("sync")


def service_call(
    op: str,
    args: dict[str, Any],
    *,
    start: bool = True,
    wait: bool = True,
    say: Callable[[str], None] | None = None,
    timeout: float = 600.0,
    on_progress: Callable[[dict], None] | None = None,
) -> tuple[Any, bool]:
    """A request answered by the memory service: (result, True), or (None, False) when it is off
    or not answering. ``start``: start one when none runs (or replace one of an older version);
    ``wait``: then wait until it is ready (``say`` tells the user once), else return at once.
    ``timeout``: the longest it waits for a line of the answer (``client.NoAnswer``);
    ``on_progress``: the progress events of a streaming operation (``reindex``)."""
    if not control.enabled():
        return None, False
    reply = client.call(op, args, timeout, on_progress)
    if reply is not None and reply.get("code") == "version":
        if not (start and control.outdated(reply.get("version", "0"))):
            return None, False  # a newer service: this older client works in its own process
        reply = None
    if reply is None:
        if not start or control.ensure(wait, say) is None:
            return None, False
        reply = client.call(op, args, timeout, on_progress)
        if reply is None or reply.get("code") == "version":
            return None, False
    if not reply.get("ok"):
        raise RemoteError(reply.get("error") or "the memory service failed", reply.get("code", 1))
    return reply["result"], True


def keeper_status(root: Path) -> dict[str, Any] | None:
    """The memory service's status of ``root`` when it serves the vault, asked whether or not
    this client works through it (``VAULTMEM_NO_SERVICE``): status tells who keeps the indexes."""
    info = control.ping()
    if info is None or str(Path(root).resolve()) not in info.get("vaults", []):
        return None
    reply = client.call("status", {"root": str(root)})
    return reply["result"] if reply and reply.get("ok") else None


def is_vault_name(name: str) -> bool:
    """Whether a prefix names some vault (registered, or an agent folder of the team)."""
    reg = Registry()
    team = reg.team_dir()
    return name in reg.vaults or bool(team and is_vault(team / name))


class ServedVault:
    """A Vault whose ``remember`` and ``checkpoint`` go to the memory service while one runs (see
    ``Session.served``); every other attribute is the Vault's own."""

    def __init__(self, vault: Vault, session: Session):
        self._vault, self._session = vault, session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._vault, name)

    def remember(self, type: str, title: str, content: str | None = None, **fields: Any) -> dict[str, Any]:
        sent = {
            **fields,
            **({"now": fields["now"].isoformat()} if fields.get("now") is not None else {}),
        }  # JSON: a date as text
        args = {
            "root": str(self._vault.root),
            "type": type,
            "title": title,
            "content": content,
            "fields": sent,
        }
        return self._session.door("remember", args, lambda: self._vault.remember(type, title, content, **fields),
                                  start=False)  # fmt: skip

    def checkpoint(self, text: str, source: str | None = None, anchor: str | None = None,
                   extra: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        fields = {"source": source, "anchor": anchor, "extra": extra}
        args = {"root": str(self._vault.root), "text": text, "fields": fields}
        return self._session.door(
            "checkpoint", args, lambda: self._vault.checkpoint(text, **fields), start=False
        )


class Session:
    """The vault(s) one caller works with, opened on first use (nothing is opened for a call
    a running watcher answers).

    ``refs``: vault names or paths (several: searched together); ``agent``: an agent identity
    (its own vault is the default for writes, and it may read the shared and the user's
    vault, never another agent's); ``create``: make the agent's own vault if missing (a long-
    running server does). ``progress`` makes a fresh ``(done, total)`` callback for each
    reindex (a progress bar; closed after, if it has ``close``), and ``on_indexed`` hears
    each reindex's summary. ``lock`` lets a server run calls one at a time. ``cwd``: the
    working directory whose code repository scopes memory (default: this process's).

    Where its calls run is decided once (``backend``): the memory service, this process, or
    keywords only. ``wait``: when no service runs, start one and wait for it (``say`` tells the
    user), else start it and answer at once: recall then from BM25 over the indexes as they are
    (``recall.keywords``; ``degraded`` says so), everything else in this process. An
    ``embedder`` given keeps every call in this process (tests); ``backend`` given is taken as
    decided (the CLI's fast paths have just found a ready service).
    """

    def __init__(self, refs: Sequence[str] = (), agent: str | None = None, *, embedder: Embedder | None = None,
                 create: bool = False, progress: Callable[[], Progress] | None = None,
                 on_indexed: Callable[[Summary], None] | None = None, cwd: str | Path | None = None,
                 wait: bool = True, say: Callable[[str], None] | None = None,
                 backend: str | None = None, timeout: float = 600.0):  # fmt: skip
        self.cwd = Path(cwd) if cwd else None
        self.wait, self.say = wait, say
        self.timeout = timeout  # the longest a call waits for the service's answer (a hook's budget)
        self.use_service = embedder is None
        self.degraded: str | None = None  # the last recall's: "bm25" when answered without the model
        self.indexing: dict[str, Any] | None = None  # the last recall's: a vault's vectors being filled in
        self.skipped: dict[
            str, str
        ] = {}  # the last recall's: notes its vaults could not read, with the reason
        self.told: set[str] = (
            set()
        )  # the notes a front end already named as skipped (``cli.hits.skipped_notes``)
        self._backend = backend  # SERVICE, PROCESS or KEYWORDS, once decided (a fast path that pinged knows)
        self._attached: set[Path] = set()
        self.refs = [r for r in refs if r]
        self.agent = agent_id(agent) if not self.refs or len(self.refs) > 1 else None
        self.embedder = embedder
        self.progress, self.on_indexed = progress, on_indexed
        self.lock = threading.RLock()
        self._opened: dict[Path, Vault] = {}
        self._named: dict[str, Path] | None = None
        self._root: Path | None = None
        if create and self.agent:
            from .core.scaffold import init_vault

            init_vault(identity(self.agent).personal)

    # ------------------------------------------------------------------ which vaults

    @property
    def root(self) -> Path:
        """The caller's own vault: the one named, the agent's personal vault, else discovered."""
        if self._root is None:
            self._root = (
                vault_root(None, self.agent)
                if self.agent
                else vault_root(self.refs[0] if self.refs else None)
            )
        return self._root

    @property
    def named(self) -> dict[str, Path]:
        """Every vault this session may read, by name (the caller's own first)."""
        if self._named is None:
            found = selection(self.refs, self.agent)
            if self.agent and not self.refs and not found:
                raise BadInput("no vaults to search")
            self._named = found
        return self._named

    def open(self, root: Path) -> Vault:
        """The open ``Vault`` of a root (one per root; every vault shares one embedding model)."""
        from .vault import Vault

        root = Path(root).resolve()
        if root not in self._opened:
            vault = Vault(root, self.embedder)
            self.embedder = self.embedder or vault.embedder
            self._opened[root] = vault
        return self._opened[root]

    @property
    def vault(self) -> Vault:
        """The caller's own vault, open."""
        return self.open(self.root)

    @property
    def vaults(self) -> dict[str, Vault]:
        """Every vault this session may read, open, by name."""
        return {name: self.open(path) for name, path in self.named.items()}

    def only(self) -> Vault:
        """The first (for a single-vault session, the only) vault it may read, open."""
        return self.open(next(iter(self.named.values())))

    def pick_root(self, ref: str) -> tuple[Path, str]:
        """The root of the vault a ``vault:id`` reference names (default: the caller's own) and
        the rest, without opening the vault."""
        prefix, sep, rest = ref.partition(":")
        if sep and rest and prefix in self.named:
            return Path(self.named[prefix]).resolve(), rest.strip()
        if sep and rest and prefix and " " not in prefix and self.agent and is_vault_name(prefix):
            raise BadInput(f"vault {prefix!r} is not available to agent {self.agent!r} "
                           f"(only {', '.join(self.named)})")  # fmt: skip
        return Path(self.root).resolve(), ref.strip()

    def pick(self, ref: str) -> tuple[Vault, str]:
        """The vault a ``vault:id`` reference names (default: the caller's own) and the rest;
        a path-like reference must stay inside that vault."""
        root, ref = self.pick_root(ref)
        vault = self.open(root)
        return vault, vault.checked_ref(ref)

    # ------------------------------------------------------------------ freshness

    def fresh(self, vault: Vault | None = None) -> Vault:
        """A vault with its indexes current: reconciled here (cheap when nothing changed), or,
        while a watcher maintains them, with this process's cached views dropped."""
        vault = vault or self.vault
        self.attach(vault.root)
        bar = self.progress() if self.progress else None
        try:
            summary = vault.sync(progress=bar)
        finally:
            if bar is not None and hasattr(bar, "close"):
                bar.close()
        if summary is not None and self.on_indexed:
            self.on_indexed(summary)
        return vault

    def attach(self, root: Path) -> None:
        """Let a running memory service watch ``root`` (then it indexes changes, and this process
        only reads); nothing when none runs."""
        if self.use_service and root not in self._attached:
            self._attached.add(root)
            self.door("open", {"roots": [str(root)]}, lambda: None, start=False)

    def warm(self, model: bool = True) -> bool:
        """Get ready before the first call (a long-running front end at its start): the memory
        service started and watching this session's vaults (then this process loads no model and
        writes no index); else, with ``model``, the indexes reconciled and the model loaded here.
        True when the service serves them."""
        roots = [str(p) for p in self.named.values()]
        # the service opens only vaults: a folder never init-ed is opened on its first call
        if (
            all(is_vault(Path(p)) for p in roots)
            and self.door("open", {"roots": roots}, lambda: None) is not None
        ):
            self._attached.update(Path(p).resolve() for p in roots)
            return True
        if model:
            with self.lock:
                self.fresh()
                self.vault.embedder.embed(["warm up"])
        return False

    # ------------------------------------------------------------------ the one door

    @property
    def backend(self) -> str:
        """Where this session's calls run (decided on the first call, then kept): ``service``,
        ``process``, or ``keywords`` (a caller that does not wait while the service starts:
        recall from BM25 over the indexes as they are, everything else in this process)."""
        return self._pick(start=True)

    def _pick(self, start: bool) -> str:
        """Decide the backend; a call that may not start a service (``start`` False) decides
        only when one runs, and otherwise runs in this process, leaving the choice open."""
        if self._backend is not None:
            return self._backend
        if not self.use_service or not control.enabled():
            self._backend = PROCESS
            return PROCESS
        info = control.ping()
        if info is not None and info.get("version") == VERSION:
            self._backend = SERVICE
        elif not start:
            return PROCESS
        elif info is not None and not control.outdated(info.get("version", "0")):
            self._backend = PROCESS  # a newer service (another install): this client works alone
        elif control.ensure(self.wait, self.say) is not None:
            self._backend = SERVICE
        else:  # not started (see its log), or starting while this caller does not wait
            self._backend = PROCESS if self.wait else KEYWORDS
        return self._backend

    def serves(self, *roots: Path | str) -> bool:
        """Whether the memory service, as this session's backend, already serves these vaults: a
        read from the files alone (show, list, stats) goes to it only then, never making it open
        (and index) a vault for a read that needs no index."""
        if self._pick(start=False) != SERVICE:
            return False
        info = control.ping()
        served = set(info.get("vaults", [])) if info else set()
        return all(str(Path(r).resolve()) in served for r in roots)

    def door(self, op: str, args: dict[str, Any], local: Callable[[], Any], start: bool = True,
             on_progress: Callable[[dict], None] | None = None) -> Any:  # fmt: skip
        """One declared operation (``service.protocol``): answered by the memory service when it
        is this session's backend, else ``local()`` in this process."""
        if self._pick(start) == SERVICE:
            result, done = service_call(op, args, start=start, wait=self.wait, say=self.say,
                                        timeout=self.timeout, on_progress=on_progress)  # fmt: skip
            if done:
                return result
            if start:  # the service went away and did not come back: this process from now on
                self._backend = PROCESS
        return local()

    def multi(self) -> MultiVault | None:
        """Every vault of the session searched together, each fresh (None for a single vault)."""
        if len(self.named) < 2:
            return None
        from .multi import MultiVault

        return MultiVault({name: self.fresh(v) for name, v in self.vaults.items()})

    def reader(self) -> Vault | MultiVault:
        """What a read that needs the indexes (wake) works on, fresh."""
        return self.multi() or self.fresh(self.only())

    # ------------------------------------------------------------------ calls

    def recall(self, query: str, explain: bool = False, *, branch: str | None = None, all_branches: bool = False,
               **options: Any) -> list[dict[str, Any]]:  # fmt: skip
        """Hits as dicts, from every vault of the session in one ranking (``options``:
        ``Vault.recall``'s). Memories scoped to a code branch other than the current or the
        default branch of the working directory's repository are left out where the index is
        (so k hits still come back) unless ``branch`` names theirs or ``all_branches`` (see
        ``branches``). ``degraded`` and ``skipped`` say how it was answered."""
        self.degraded, self.skipped, self.indexing = None, {}, None
        if self.backend == KEYWORDS and options.get("mode", "hybrid") != "bm25":
            from .memory import branches

            hits = self._recall_without_model(query, explain, options)
            kept = hits if all_branches else branches.filter_hits(hits, self.named, self.shown(branch))
            for rank, hit in enumerate(kept, 1):  # numbered as shown: 1, 2, 3, never 1, 3, 4
                hit["rank"] = rank
            return kept
        args = {"roots": {name: str(path) for name, path in self.named.items()}, "query": query,
                "explain": explain, "options": options, "wait": self.wait, "cwd": str(self.cwd or Path.cwd()),
                "branch": branch, "all_branches": all_branches}  # fmt: skip
        shown = None if all_branches else self.shown(branch)
        done = self.door(
            "recall", args, lambda: self._recall_here(query, explain, {**options, "shown": shown})
        )
        self.degraded, self.skipped, self.indexing = done["degraded"], done["skipped"], done.get("indexing")
        return done["hits"]

    def _recall_here(self, query: str, explain: bool, options: dict[str, Any]) -> dict[str, Any]:
        """Recall in this process, in the service's answer form."""
        reader = self.multi() or self.fresh(self.only())
        hits = [h.as_dict(explain) for h in reader.recall(query, **options)]
        many = len(self.named) > 1
        skipped = {(f"{name}:{path}" if many else path): reason for name, vault in self.vaults.items()
                   for path, reason in vault.index_errors().items()}  # fmt: skip
        return {"hits": hits, "degraded": None, "skipped": skipped}

    def _recall_without_model(
        self, query: str, explain: bool, options: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The answer while the service warms up, from what needs no model: BM25 over each
        vault's indexes as they are on disk (``recall.keywords``: nothing is reindexed, and
        neither the model nor the pipeline is loaded); the pipeline's BM25 mode in this process
        for a call asking for more than keywords can honour. ``degraded`` says so."""
        from .recall import keywords

        self.degraded = "bm25"
        if not keywords.covers(options):
            return self._bm25_in_process(query, explain, options)
        kept = keywords.recall_vaults(
            {name: Path(root) for name, root in self.named.items()}, query, options, explain
        )
        if options.get("log", True):
            for name, root in self.named.items():
                mine = [hit["id"] for n, hit in kept if n == name]
                if mine:
                    self.log_shown(mine, "recall", Path(root))
        return [hit for _, hit in kept]

    def _bm25_in_process(self, query: str, explain: bool, options: dict[str, Any]) -> list[dict[str, Any]]:
        """The pipeline's BM25 mode over the indexes as they are (nothing reindexed, no model)."""
        for vault in self.vaults.values():
            vault.refresh()
        reader: Any = self.only()
        if len(self.named) > 1:
            from .multi import MultiVault

            reader = MultiVault(self.vaults)
        return [h.as_dict(explain) for h in reader.recall(query, **{**options, "mode": "bm25"})]

    def wake(self, anchor: str | None = None, task: str | None = None, profile: str = "default",
             budget: int = 2000, *, branch: str | None = None, all_branches: bool = False) -> dict[str, Any]:  # fmt: skip
        """The session-start [MEMORY] block (ids ``vault:id`` across several vaults), without
        other branches' memories by the rule recall uses (``branch``, ``all_branches``: as recall's)."""
        args = {"roots": {n: str(p) for n, p in self.named.items()}, "anchor": anchor, "task": task, "profile": profile,
                "budget": budget, "cwd": str(self.cwd or Path.cwd()), "branch": branch, "all_branches": all_branches}  # fmt: skip

        def here() -> dict[str, Any]:
            shown = None if all_branches else self.shown(branch)
            return self.reader().wake(anchor=anchor, task=task, profile=profile, budget=budget, shown=shown)

        return self.door("wake", args, here)

    # ------------------------------------------------------------------ code branch scope

    def shown(self, branch: str | None = None) -> Callable[[Path, str], bool]:
        """Whether a memory (vault root, path) is shown from the working directory's code state,
        or as if on ``branch`` (``branches.shown_test``): recall's and wake's one rule."""
        from .memory import branches

        return branches.shown_test(self.cwd or Path.cwd(), branch)

    def write_scope(self, vault: Vault | Path, scope: str | None = None) -> dict[str, str]:
        """``branch``/``repo`` for a memory written to ``vault`` (or its root) from the working
        directory: set on a feature branch of a code repository (``branches.scope_fields``), never
        on a user-scope memory (a person's preference follows them, not a branch). Every write
        path asks here."""
        from .memory.branches import scope_fields

        root = vault if isinstance(vault, Path) else vault.root
        return {} if scope == USER else scope_fields(self.cwd or Path.cwd(), root)

    def list_notes(self, limit: int | None = 20, **filters: Any) -> list[dict[str, Any]]:
        """Notes matching the filters, newest first (read from the files: no reindex needed);
        ``skipped``: the notes left out because they cannot be read."""
        args = {"roots": {n: str(p) for n, p in self.named.items()}, "limit": limit, "filters": filters}

        def here() -> dict[str, Any]:
            reader: Any = self.only()
            if len(self.named) > 1:
                from .multi import MultiVault

                reader = MultiVault(self.vaults)
            return {"rows": reader.list_notes(limit=limit, **filters), "skipped": self.skips()}

        done = self.door("list", args, here, start=False) if self.serves(*self.named.values()) else here()
        self.skipped = done["skipped"]
        return done["rows"]

    def show(self, ref: str) -> dict[str, Any]:
        """A note by reference (``vault:id``; ``Vault.show``)."""
        root, rest = self.pick_root(ref)
        if not self.serves(root):
            return self.pick(ref)[0].show(rest)
        return self.door(
            "show", {"root": str(root), "ref": rest}, lambda: self.pick(ref)[0].show(rest), start=False
        )

    def stats(self) -> dict[str, Any]:
        """The caller's own vault's counts (``Vault.stats``)."""
        if not self.serves(self.root):
            return self.vault.stats()
        return self.door("stats", {"root": str(self.root)}, lambda: self.vault.stats(), start=False)

    def skips(self) -> dict[str, str]:
        """Notes the vaults read so far left out because they cannot be read, with the reason
        (``vault:path`` keys when several vaults are read)."""
        many = len(self._opened) > 1
        return {(f"{self.named_of(v)}:{p}" if many else p): r
                for v in self._opened.values() for p, r in v.skipped.items()}  # fmt: skip

    def named_of(self, vault: Vault) -> str:
        return next((n for n, p in self.named.items() if Path(p).resolve() == vault.root), str(vault.root))

    def remember(self, type: str, title: str, content: str | None = None, *, shared: bool = False,
                 scope: str | None = None, **fields: Any) -> dict[str, Any]:  # fmt: skip
        """Store a new memory where it belongs (``fields``: ``Vault.remember``'s). Written on a
        feature branch of a code repository, it is scoped to that branch (``branches``)."""
        ref = self.refs[0] if len(self.refs) == 1 else None
        root = Path(write_root(ref, self.agent, shared, scope)).resolve()
        extra = {**self.write_scope(root, scope), **fields.pop("extra", {})}
        args = {"root": str(root), "type": type, "title": title, "content": content,
                "fields": {"scope": scope, "extra": extra, **fields}}  # fmt: skip

        def here() -> dict[str, Any]:
            return self.fresh(self.open(root)).remember(
                type, title, content, scope=scope, extra=extra, **fields
            )

        return self.door("remember", args, here)

    def edit(self, ref: str, **fields: Any) -> dict[str, Any]:
        """Change the note a reference names (``vault:id``, default: the caller's own vault;
        ``fields``: ``Vault.edit``'s), through the memory service while one runs."""
        root, rest = self.pick_root(ref)
        return self.door("edit", {"root": str(root), "ref": rest, "fields": fields},
                         lambda: self.pick(ref)[0].edit(rest, **fields))  # fmt: skip

    def sleep(self, summary: str, next_steps: str | None = None, source: str | None = None,
              anchor: str | None = None) -> dict[str, Any]:  # fmt: skip
        """End a session in the caller's own vault (``Vault.sleep``), scoped like ``remember``."""
        fields = {
            "next_steps": next_steps,
            "source": source,
            "anchor": anchor,
            "extra": self.write_scope(self.root),
        }
        return self.door("sleep", {"root": str(self.root), "summary": summary, "fields": fields},
                         lambda: self.vault.sleep(summary, **fields))  # fmt: skip

    def checkpoint(self, text: str, source: str | None = None, anchor: str | None = None) -> dict[str, Any]:
        """A line in this session's handoff note (``Vault.checkpoint``); a new handoff is scoped
        like ``remember``."""
        fields = {"source": source, "anchor": anchor, "extra": self.write_scope(self.root)}
        return self.door("checkpoint", {"root": str(self.root), "text": text, "fields": fields},
                         lambda: self.vault.checkpoint(text, **fields))  # fmt: skip

    def served(self, vault: Vault) -> Vault:
        """``vault`` with its ``remember`` (the write that needs the model: duplicate and update
        checks) answered by the memory service while one runs (a hook's summary and candidates)."""
        return ServedVault(vault, self)  # type: ignore[return-value]

    # ------------------------------------------------------------------ a memory by reference (``vault:id``)

    def resolve(self, ref: str) -> dict[str, Any]:
        root, rest = self.pick_root(ref)
        return self.door("resolve", {"root": str(root), "ref": rest}, lambda: self.pick(ref)[0].resolve(rest),
                         start=False)  # fmt: skip

    def reopen(self, ref: str) -> dict[str, Any]:
        root, rest = self.pick_root(ref)
        return self.door("reopen", {"root": str(root), "ref": rest}, lambda: self.pick(ref)[0].reopen(rest),
                         start=False)  # fmt: skip

    def supersede(self, old: str, new: str) -> dict[str, Any]:
        """OLD replaced by NEW; both must be in one vault."""
        vault, old = self.pick(old)
        other, new = self.pick(new)
        if other is not vault:
            raise BadInput("a memory can only supersede another in the same vault")
        return vault.supersede(old, new)

    def rate(
        self, ratings: Sequence[tuple[str, bool]], source: str | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Ratings of memories in any of the session's vaults (``vault:id``): every memory found
        is rated (``rated``); a reference that names none, or a vault this caller may not use, is
        listed in ``unknown`` with the reason (``Vault.rate``: one bad id does not cost the others)."""
        by_vault: dict[int, tuple[Vault, list[tuple[str, bool]], dict[str, str]]] = {}
        unknown: list[dict[str, Any]] = []
        for ref, useful in ratings:
            try:
                vault, rest = self.pick(ref)
            except VaultError as e:  # a vault this caller may not use, a path leading outside
                unknown.append({"id": ref, "error": str(e)})
                continue
            group = by_vault.setdefault(id(vault), (vault, [], {}))
            group[1].append((rest, useful))
            group[2][rest] = ref  # unknown ones are named as the caller wrote them
        rated: list[dict[str, Any]] = []
        for vault, mine, written in by_vault.values():
            done = vault.rate(mine, source)
            rated += done["rated"]
            unknown += [{**u, "id": written.get(u["id"], u["id"])} for u in done["unknown"]]
        return {"rated": rated, "unknown": unknown}

    def log_shown(self, ids: Sequence[str], via: str, root: Path | None = None) -> None:
        """Log memories of ``root`` (default: the caller's own vault) as retrieved by ``via``
        (memories a hook showed): by the memory service while it runs, whose usage store stays
        open (a prompt hook then neither imports nor opens it, nor syncs its file), else here."""
        root = Path(root or self.root)

        def here() -> None:
            from .index.usage import UsageStore

            store = UsageStore.of(root)
            try:
                store.log_retrievals(ids, via)
            finally:
                store.close()

        self.door("shown", {"root": str(root), "ids": list(ids), "via": via}, here, start=False)

    def history(self, ref: str) -> dict[str, Any]:
        """The versions of the fact ``ref`` names (``history.chain``), in the vault a
        ``vault:`` prefix names (default: the caller's own)."""
        from .memory.history import chain

        vault, ref = self.pick(ref)
        return chain(self.fresh(vault), ref)

    def status(self) -> dict[str, Any]:
        """Who keeps the indexes (``by``: "service", with its pid, pending changes and last
        error; pid None when each command does), notes indexed, errors and drift."""

        def here() -> dict[str, Any]:
            return keeper_status(self.root) or {"pid": None, "by": None, **self.vault.index_status()}

        return self.door("status", {"root": str(self.root)}, here, start=False)

    def reindex(self, rebuild: bool = False, progress: Progress | None = None) -> tuple[dict[str, Any], bool]:
        """Bring the indexes in line with the files: by the memory service when it runs, else
        here. Returns (the summary as a dict, whether the service did it)."""
        here: list[bool] = []

        def local() -> dict[str, Any]:
            here.append(True)
            return self.vault.reindex(rebuild=rebuild, progress=progress).as_dict()

        done = self.door("reindex", {"root": str(self.root), "rebuild": rebuild}, local, start=False,
                         on_progress=getattr(progress, "event", None))  # fmt: skip
        return done, not here

    def close(self) -> None:
        for vault in self._opened.values():
            vault.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
