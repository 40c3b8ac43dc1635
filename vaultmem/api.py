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

import json
import os
import threading
from pathlib import Path

from .core.discovery import STATE_DIR, find_vault
from .core.errors import BadInput, VaultError, VaultNotFound
from .core.registry import SHARED, USER, Registry, agent_id, identity
from .service import client, control

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of every client call)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Sequence
    from typing import Any

    from .index.embed import Embedder
    from .index.indexer import Progress, Summary
    from .multi import MultiVault
    from .service.host import LocalHost
    from .vault import Vault

UNSERVED = "unserved"  # the service's refusal of a read of a vault it does not serve (``ops.NotServed``)
SINGLE = "vault"  # the name of the one vault of a session that is not an agent's
SERVICE, PROCESS, KEYWORDS = "service", "process", "keywords"  # where a session's calls run


def tasks() -> dict[str, Callable[..., Any]]:
    """What the ``doctor`` operation runs on an open vault (``doctor.served_report``), handed to
    a host (the memory service, or a session's own process) with the hooks' (``agents.hooks.TASKS``)."""
    from .doctor import served_report

    return {"doctor": served_report}


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
    it (the ``refresh_agents_md`` operation); nothing is called when it names none."""
    from .core.config import load
    from .memory.agents_md import wanted

    if not wanted(load(root)["agents_md"], event, root):
        return []
    with Session([str(root)]) as session:
        done = session.call("refresh_agents_md", {"root": str(root), "event": event}, start=False)
    return say(done)["files"]


def tell_config(root: Path) -> None:
    """Name, once a process, what of a vault's config file vaultmem does not know (here, where
    the caller is: the same through the memory service and in process). A config that cannot
    be read is the call's own error."""
    from .core import config as configmod

    try:
        path = configmod.config_path(Path(root))
        configmod.tell_unknown(path, configmod.read_toml(path))
    except VaultError:
        pass


def say(result: dict[str, Any]) -> dict[str, Any]:
    """An operation's result without its ``said``: the warnings the call logged where it ran,
    logged here again (the same place in process and through the service: ``ops._said``)."""
    import logging

    from .service.ops import SAID

    for line in result.pop("said", None) or []:
        logging.getLogger(SAID).warning("%s", line)
    return result


def selection(refs: Sequence[str] = (), agent: str | None = None) -> dict[str, Path]:
    """The named vaults a call may read: several refs by registry name, an agent's vaults that
    exist (without refs), else the one vault of ``vault_root``."""
    agent = agent_id(agent)
    if len(refs) > 1:
        reg = Registry()
        # each as one named alone: a folder named by path is made a vault here (``find_vault``)
        return {reg.name_of(p): p for p in (find_vault(reg.resolve(r)) for r in refs)}
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


def is_vault_name(name: str) -> bool:
    """Whether a prefix names some vault (registered, or an agent folder of the team)."""
    reg = Registry()
    team = reg.team_dir()
    return name in reg.vaults or bool(team and is_vault(team / name))


def _answer(op: str, args: dict[str, Any], timeout: float = 600.0,
            on_progress: Callable[[dict], None] | None = None) -> dict[str, Any] | None:  # fmt: skip
    """The memory service's reply to one request; None when none of this version answered (none
    runs, it went away, or it refused a client of another version: ``ensure`` settles that).
    ``timeout``: the longest silence (``client.NoAnswer``); ``on_progress``: a streaming
    operation's progress events (``reindex``)."""
    reply = client.call(op, args, timeout, on_progress)
    return None if reply is None or reply.get("code") == "version" else reply


def ask(op: str, args: dict[str, Any]) -> tuple[bool, Any]:
    """One request to the running memory service, whether or not a session works through it
    (``vaultmem watch`` following it): (True, its result), or (False, None) when none of this
    version answers; RemoteError when it refuses or fails."""
    reply = _answer(op, args)
    if reply is None:
        return False, None
    if not reply.get("ok"):
        raise RemoteError(reply.get("error") or "the memory service failed", reply.get("code", 1))
    return True, reply["result"]


def _multi(named: dict[str, Vault]) -> MultiVault:
    """Several open vaults as one (imported when a call reads several: the keyword answer loads no facade)."""
    from .multi import MultiVault

    return MultiVault(named)


def _absolute(path: str) -> str:
    """A path the user named (``~`` and this process's folder resolved), for a host elsewhere."""
    return os.path.abspath(os.path.expanduser(path))


def _wire(value: Any) -> Any:
    """``value`` as it comes out of the wire (JSON): what this process's answer gives too."""
    return json.loads(json.dumps(value, ensure_ascii=False))


class NoService(VaultError):
    """A session that works only through the service (``backend`` given as ``service``: a fast
    path) found none of its version answering; the caller then takes its full path."""


class Session:
    """The vault(s) one caller works with, and the one door its calls go through.

    ``refs``: vault names or paths (several: searched together); ``agent``: an agent identity
    (its own vault is the default for writes, and it may read the shared and the user's
    vault, never another agent's); ``create``: make the agent's own vault if missing (a long-
    running server does). ``progress`` makes a fresh ``(done, total)`` callback for each
    reindex in this process (a progress bar; closed after, if it has ``close``), and
    ``on_indexed`` hears each reindex's summary. ``lock`` lets a server run calls one at a
    time. ``cwd``: the working directory whose code repository scopes memory (default: this
    process's). ``tasks``: the work of the layers above that an operation runs on an open vault
    in this process (``doctor``, the hooks'; ``api.tasks`` and ``agents.hooks.TASKS``).

    Every operation (``service.protocol``) goes through ``call``: to the memory service, or to
    this process's host of the same handlers (``service.host.LocalHost``). Where the calls run
    is decided by the first call that may start the service, then kept (``backend``): the
    service (that call's own reply answers the version question), this process
    (``VAULTMEM_NO_SERVICE=1``, ``[service] enabled = false``, a newer service of another
    install, a service that does not start), or keywords (``wait`` False: the service is
    started, not waited for; recall answers from BM25 over the indexes as they are meanwhile,
    everything else runs here). An ``embedder`` given keeps every call in this process (tests);
    ``backend="service"`` takes only the service (a fast path: ``NoService`` when none answers).
    """

    def __init__(self, refs: Sequence[str] = (), agent: str | None = None, *, embedder: Embedder | None = None,
                 create: bool = False, progress: Callable[[], Progress] | None = None,
                 on_indexed: Callable[[Summary], None] | None = None, cwd: str | Path | None = None,
                 wait: bool = True, say: Callable[[str], None] | None = None,
                 backend: str | None = None, tasks: dict[str, Callable[..., Any]] | None = None,
                 timeout: float = 600.0):  # fmt: skip
        self.cwd = Path(cwd) if cwd else None
        self.wait, self.say = wait, say
        self.use_service = embedder is None
        self.degraded: str | None = None  # the last recall's: "bm25" when answered without the model
        self.indexing: dict[str, Any] | None = None  # the last recall's: a vault being indexed behind it
        self.timeout = timeout  # the longest a call waits for the service's answer (a hook's budget)
        self.skipped: dict[str, str] = {}  # the last recall's or list's: notes its vaults could not read
        self.told: set[str] = set()  # the notes a front end already named as skipped (``cli.hits``)
        self.only_service = backend == SERVICE
        self._backend = PROCESS if backend == PROCESS else None  # SERVICE, PROCESS or KEYWORDS once decided
        self._enabled: bool | None = None  # [service] enabled, read once a session
        self._attached: set[Path] = set()
        self.refs = [r for r in refs if r]
        self.agent = agent_id(agent) if not self.refs or len(self.refs) > 1 else None
        self.embedder = embedder
        self.progress, self.on_indexed = progress, on_indexed
        self.tasks = tasks or {}
        self.lock = threading.RLock()
        self._opened: dict[Path, Vault] = {}
        self._named: dict[str, Path] | None = None
        self._root: Path | None = None
        self._host: LocalHost | None = None
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
            tell_config(self._root)
        return self._root

    @property
    def named(self) -> dict[str, Path]:
        """Every vault this session may read, by name (the caller's own first)."""
        if self._named is None:
            found = selection(self.refs, self.agent)
            if self.agent and not self.refs and not found:
                raise BadInput("no vaults to search")
            for path in found.values():
                tell_config(path)
            self._named = found
        return self._named

    def roots(self) -> dict[str, str]:
        """The vaults a read goes to, by name, as the operations take them."""
        return {name: str(path) for name, path in self.named.items()}

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

    # ------------------------------------------------------------------ a Vault in this process
    # Only for what runs here on purpose (the web view noticing change, tests): every front end
    # call goes through an operation (``call``).

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
        """The caller's own vault, open in this process."""
        return self.open(self.root)

    @property
    def vaults(self) -> dict[str, Vault]:
        """Every vault this session may read, open in this process, by name."""
        return {name: self.open(path) for name, path in self.named.items()}

    def pick(self, ref: str) -> tuple[Vault, str]:
        """The vault a ``vault:id`` reference names, open in this process, and the rest (a
        path-like reference must stay inside that vault)."""
        root, ref = self.pick_root(ref)
        vault = self.open(root)
        return vault, vault.checked_ref(ref)

    def fresh(self, vault: Vault | None = None) -> Vault:
        """A vault with its indexes current: reconciled here (cheap when nothing changed), or,
        while the memory service keeps them, with this process's cached views dropped."""
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
            self._remote("open", {"roots": [str(root)]}, start=False)

    def warm(self, model: bool = True) -> bool:
        """Get ready before the first call (a long-running front end at its start): the memory
        service started and watching this session's vaults (then this process loads no model and
        writes no index); else, with ``model``, the indexes reconciled and the model loaded here.
        True when the service serves them."""
        roots = [str(p) for p in self.named.values()]
        # the service opens only vaults: a folder never init-ed is opened on its first call
        if all(is_vault(Path(p)) for p in roots) and self._remote("open", {"roots": roots}, start=True)[0]:
            self._attached.update(Path(p).resolve() for p in roots)
            return True
        if model:
            with self.lock:
                self.fresh()
                self.vault.embedder.embed(["warm up"])
        return False

    # ------------------------------------------------------------------ the one door

    @property
    def backend(self) -> str | None:
        """Where this session's calls run: ``service``, ``process`` or ``keywords``; None until
        a call that may start the service has decided it."""
        return self._backend

    def call(self, op: str, args: dict[str, Any], start: bool = True,
             on_progress: Callable[[dict], None] | None = None) -> Any:  # fmt: skip
        """One declared operation (``service.protocol``) through the door: answered by the memory
        service when it is (or becomes: ``start``) this session's backend, else by the same
        handler in this process. A call that may not start the service (``start`` False) goes
        to it only when one runs, and otherwise leaves the choice open; one declared ``here``
        (``import``) runs in this process whatever the backend. ``on_progress``: the
        progress events of an operation declared ``stream``, from either."""
        from .service.protocol import OPS

        args = _wire(args)
        here = OPS[op].here
        answered, result = (False, None) if here else self._remote(op, args, start, on_progress)
        if answered:
            return result
        if self.only_service and self._backend != SERVICE and not here:
            raise NoService(f"no memory service of this version answered {op!r}")
        host = self.host
        host.keywords = self._backend == KEYWORDS
        with self.lock:
            return _wire(host.run(op, args, on_progress))

    def _remote(self, op: str, args: dict[str, Any], start: bool,
                on_progress: Callable[[dict], None] | None = None) -> tuple[bool, Any]:  # fmt: skip
        """(True, its result) when the memory service answered ``op``; (False, None) when this
        process must. The first reply decides the backend; a version refusal is settled by
        ``control.ensure`` (an older service replaced, a newer one left alone)."""
        if self._backend in (PROCESS, KEYWORDS) or not self.use_service:
            return False, None
        if self._enabled is None:
            self._enabled = control.enabled()
        if not self._enabled:
            self._backend = PROCESS
            return False, None
        reply = _answer(op, args, self.timeout, on_progress)
        if reply is None:
            if not start or self.only_service:
                return False, None
            if control.ensure(self.wait, self.say) is None:
                self._backend = PROCESS if self.wait else KEYWORDS
                return False, None
            reply = _answer(op, args, self.timeout, on_progress)
            if reply is None:  # a newer service, or one that went away again: this process from now on
                self._backend = PROCESS
                return False, None
        self._backend = SERVICE
        if reply.get("code") == UNSERVED:  # a read the service leaves to this process (``served``)
            return False, None
        if not reply.get("ok"):
            raise RemoteError(reply.get("error") or "the memory service failed", reply.get("code", 1))
        return True, reply["result"]

    @property
    def host(self) -> LocalHost:
        """The operations' host in this process (made on the first call that runs here)."""
        if self._host is None:
            from .service.host import LocalHost

            self._host = LocalHost(self.open, _multi, fresh=self.fresh, tasks={**tasks(), **self.tasks})
        return self._host

    # ------------------------------------------------------------------ recall and wake

    def _branch_args(self, branch: str | None, all_branches: bool) -> dict[str, Any]:
        return {"cwd": str(self.cwd or Path.cwd()), "branch": branch, "all_branches": all_branches}

    def recall(self, query: str, explain: bool = False, *, branch: str | None = None, all_branches: bool = False,
               project: str | None = None, **options: Any) -> list[dict[str, Any]]:  # fmt: skip
        """Hits as dicts, from every vault of the session in one ranking (``options``:
        ``Vault.recall``'s). Memories scoped to a code branch other than the current or the
        default branch of the working directory's repository are left out where the index is
        (so k hits still come back) unless ``branch`` names theirs or ``all_branches`` (see
        ``branches``); ``project``: a working folder whose project keeps out other projects'
        memories by the prompt hook's rule (``projects.scope_hits``), also before the cut. ``degraded`` and ``skipped`` say how it was answered."""
        args = {"roots": self.roots(), "query": query, "explain": explain, "options": options, "wait": self.wait,
                "project": project, **self._branch_args(branch, all_branches)}  # fmt: skip
        done = self.call("recall", args)
        self.degraded, self.skipped, self.indexing = done["degraded"], done["skipped"], done.get("indexing")
        return done["hits"]

    def wake(self, anchor: str | None = None, task: str | None = None, profile: str = "default",
             budget: int = 2000, *, branch: str | None = None, all_branches: bool = False) -> dict[str, Any]:  # fmt: skip
        """The session-start [MEMORY] block (ids ``vault:id`` across several vaults), without
        other branches' memories by the rule recall uses (``branch``, ``all_branches``: as recall's)."""
        args = {"roots": self.roots(), "anchor": anchor, "task": task, "profile": profile, "budget": budget,
                **self._branch_args(branch, all_branches)}  # fmt: skip
        return self.call("wake", args)

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

    # ------------------------------------------------------------------ reads

    def list_notes(self, limit: int | None = 20, **filters: Any) -> list[dict[str, Any]]:
        """Notes matching the filters, newest first (read from the files: no reindex needed);
        ``skipped``: the notes left out because they cannot be read."""
        args = {"roots": self.roots(), "limit": limit, "filters": filters, "served": True}
        done = self.call("list", args, start=False)
        self.skipped = done["skipped"]
        return done["rows"]

    def show(self, ref: str) -> dict[str, Any]:
        """A note by reference (``vault:id``; ``Vault.show``)."""
        root, rest = self.pick_root(ref)
        return self.call("show", {"root": str(root), "ref": rest, "served": True}, start=False)

    def graph(self, query: str, note: str | None = None, other: str | None = None, depth: int | None = None,
              format: str = "json", cap: int | None = None, indexed: bool = False) -> Any:  # fmt: skip
        """A link graph query on the caller's own vault's notes as the files are now
        (``graphview.answer``: nothing indexed, no model loaded), or with ``indexed`` as its
        indexes hold them (a front end that keeps them current: the web view)."""
        args = {"root": str(self.root), "query": query, "note": note, "other": other, "depth": depth,
                "format": format, "cap": cap, "indexed": indexed, "served": True}  # fmt: skip
        return self.call("graph", args, start=False)

    def overview(self, days: int = 365) -> dict[str, Any]:
        """The caller's own vault's memory state (``overview.overview``: the web view's state page)."""
        return self.call("overview", {"root": str(self.root), "days": days, "served": True}, start=False)

    def usage(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The usage of memories of the caller's own vault, by key (those never used left out)."""
        return self.call("usage", {"root": str(self.root), "ids": list(ids)}, start=False)

    def stats(self) -> dict[str, Any]:
        """The caller's own vault's counts (``Vault.stats``)."""
        return self.call("stats", {"root": str(self.root), "served": True}, start=False)

    def history(self, ref: str) -> dict[str, Any]:
        """The versions of the fact ``ref`` names (``history.chain``), in the vault a
        ``vault:`` prefix names (default: the caller's own)."""
        root, rest = self.pick_root(ref)
        return self.call("history", {"root": str(root), "ref": rest}, start=False)

    def status(self, drift: bool = True) -> dict[str, Any]:
        """Who keeps the indexes (``by``: "service", with its pid, pending changes and last
        error; pid None when each command does), notes indexed, errors and drift."""
        return self.call("status", {"root": str(self.root), "drift": drift}, start=False)

    def doctor(self, fix: bool = False) -> dict[str, Any]:
        """The health report of the caller's own vault where its index is, but the hooks'
        findings (``agents.hook_runs.doctor_report`` adds them); ``fix``: the safe repairs first."""
        return self.call("doctor", {"root": str(self.root), "fix": fix, "served": not fix}, start=False)

    def export(self) -> dict[str, Any]:
        """Every note of the caller's own vault (the JSON backup) and the files it skipped."""
        return self.call("export", {"root": str(self.root)}, start=False)

    # ------------------------------------------------------------------ writes

    def remember(self, type: str, title: str, content: str | None = None, *, shared: bool = False,
                 scope: str | None = None, **fields: Any) -> dict[str, Any]:  # fmt: skip
        """Store a new memory where it belongs (``fields``: ``Vault.remember``'s). Written on a
        feature branch of a code repository, it is scoped to that branch (``branches``)."""
        ref = self.refs[0] if len(self.refs) == 1 else None
        root = Path(write_root(ref, self.agent, shared, scope)).resolve()
        extra = {**self.write_scope(root, scope), **fields.pop("extra", {})}
        if fields.get("now") is not None:  # JSON: a date as text
            fields["now"] = fields["now"].isoformat()
        fields.setdefault("cwd", str(self.cwd or Path.cwd()))  # its project, when no anchor is given
        args = {"root": str(root), "type": type, "title": title, "content": content,
                "fields": {"scope": scope, "extra": extra, **fields}}  # fmt: skip
        return self.call("remember", args)

    def _on(self, op: str, ref: str, start: bool = True, **args: Any) -> Any:
        """``op`` on the note a reference names (``vault:id``, default: the caller's own vault)."""
        root, rest = self.pick_root(ref)
        return self.call(op, {"root": str(root), "ref": rest, **args}, start=start)

    def edit(self, ref: str, **fields: Any) -> dict[str, Any]:
        """Change the note a reference names (``fields``: ``Vault.edit``'s)."""
        return self._on("edit", ref, fields=fields)

    def delete(self, ref: str) -> dict[str, Any]:
        """Move the note a reference names to the vault's .trash/."""
        return self._on("delete", ref, start=False)

    def write_note(self, path: str, content: str, expected_version: str | None = None,
                   overwrite: bool = False) -> dict[str, Any]:  # fmt: skip
        """A whole note file in the caller's own vault (``Vault.write_note``)."""
        args = {"root": str(self.root), "path": path, "content": content, "expected_version": expected_version,
                "overwrite": overwrite}  # fmt: skip
        return self.call("write_note", args)

    def sleep(self, summary: str, next_steps: str | None = None, source: str | None = None,
              anchor: str | None = None) -> dict[str, Any]:  # fmt: skip
        """End a session in the caller's own vault (``Vault.sleep``), scoped like ``remember``."""
        fields = {"next_steps": next_steps, "source": source, "anchor": anchor,
                  "extra": self.write_scope(self.root)}  # fmt: skip
        return self.call("sleep", {"root": str(self.root), "summary": summary, "fields": fields})

    def checkpoint(self, text: str, source: str | None = None, anchor: str | None = None) -> dict[str, Any]:
        """A line in this session's handoff note (``Vault.checkpoint``); a new handoff is scoped
        like ``remember``."""
        fields = {"source": source, "anchor": anchor, "extra": self.write_scope(self.root)}
        return self.call("checkpoint", {"root": str(self.root), "text": text, "fields": fields})

    def resolve(self, ref: str) -> dict[str, Any]:
        return self._on("resolve", ref, start=False)

    def reopen(self, ref: str) -> dict[str, Any]:
        return self._on("reopen", ref, start=False)

    def confirm(self, ref: str) -> dict[str, Any]:
        return self._on("confirm", ref, start=False)

    def resolve_source(self, source: str) -> list[dict[str, Any]]:
        """Resolve every active memory of the caller's own vault written by ``source``."""
        return self.call("resolve_source", {"root": str(self.root), "source": source}, start=False)

    def supersede(self, old: str, new: str) -> dict[str, Any]:
        """OLD replaced by NEW; both must be in one vault."""
        root, old = self.pick_root(old)
        other, new = self.pick_root(new)
        if other != root:
            raise BadInput("a memory can only supersede another in the same vault")
        return self.call("supersede", {"root": str(root), "old": old, "new": new}, start=False)

    def maintain(self, apply: bool = False, days: int | None = None) -> dict[str, Any]:
        """The aging rules' plan for the caller's own vault (carried out with ``apply``, as one
        undo batch); the working directory's code repository decides its branches' memories."""
        args = {"root": str(self.root), "cwd": str(self.cwd or Path.cwd()), "apply": apply, "days": days}
        return say(self.call("maintain", args, start=False))

    def agents_md(self, file: str, anchor: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        """``export --to agents-md``: the project's rules into ``file``'s marked section."""
        shown = Path(os.path.expanduser(file))
        shown = shown / "AGENTS.md" if shown.is_dir() else shown
        args = {"root": str(self.root), "file": str(shown.absolute()), "anchor": anchor, "dry_run": dry_run}
        done: dict[str, Any] = say(self.call("agents_md", args, start=False))
        return {**done, "file": str(shown)}  # as the caller named it

    def reindex(self, rebuild: bool = False, progress: Progress | None = None) -> tuple[dict[str, Any], bool]:
        """Bring the indexes in line with the files: by the memory service when it runs, else
        here. Returns (the summary as a dict, whether the service did it)."""
        args = _wire({"root": str(self.root), "rebuild": rebuild})
        answered, done = self._remote(
            "reindex", args, start=False, on_progress=getattr(progress, "event", None)
        )
        if answered:
            return done, True
        host = self.host
        host.progress = progress
        try:
            return self.call("reindex", args, start=False), False
        finally:
            host.progress = None

    def import_(self, source: str | None = None, paths: Sequence[str] = (), *, text: str | None = None,
                project: str | None = None, since: str | None = None, dry_run: bool = False,
                on_progress: Callable[[dict], None] | None = None) -> dict[str, Any]:  # fmt: skip
        """``vaultmem import`` into the caller's own vault, as one undo batch: a backup restored
        (``text``: its JSON, which the caller read from standard input; else the one file of
        ``paths``), or, with ``source``, what another tool holds (``paths``: what to read, the
        source's own place resolved by the caller when none is named). What the user named is
        resolved here, where the user is: the memory service runs in another folder, so every
        path (and ``project``) goes absolute. ``on_progress``: its progress events."""
        args = {"root": str(self.root), "source": source, "paths": [_absolute(p) for p in paths], "text": text,
                "project": _absolute(project) if project else None, "since": since, "dry_run": dry_run}  # fmt: skip
        return self.call("import", args, start=False, on_progress=on_progress)

    # ------------------------------------------------------------------ undo and the trash

    def batches(self, kind: str | None = None) -> list[dict[str, Any]]:
        return self.call("batches", {"root": str(self.root), "kind": kind}, start=False)

    def undo_plan(self, batch: str, kind: str | None = None) -> dict[str, Any]:
        return self.call("undo_plan", {"root": str(self.root), "batch": batch, "kind": kind}, start=False)

    def undo(self, batch: str, kind: str | None = None) -> dict[str, Any]:
        return self.call("undo", {"root": str(self.root), "batch": batch, "kind": kind}, start=False)

    def trash(self) -> list[dict[str, Any]]:
        return self.call("trash", {"root": str(self.root)}, start=False)

    def restore(self, ref: str, to: str | None = None) -> dict[str, Any]:
        return self.call("restore", {"root": str(self.root), "ref": ref, "to": to}, start=False)

    # ------------------------------------------------------------------ usage: ratings, gaps, shown

    def rate(
        self, ratings: Sequence[tuple[str, bool]], source: str | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Ratings of memories in any of the session's vaults (``vault:id``): every memory found
        is rated (``rated``); a reference that names none, or a vault this caller may not use, is
        listed in ``unknown`` with the reason (one bad id does not cost the others)."""
        by_root: dict[Path, tuple[list[list[Any]], dict[str, str]]] = {}
        unknown: list[dict[str, Any]] = []
        for ref, useful in ratings:
            try:
                root, rest = self.pick_root(ref)
            except VaultError as e:  # a vault this caller may not use
                unknown.append({"id": ref, "error": str(e)})
                continue
            group = by_root.setdefault(root, ([], {}))
            group[0].append([rest, useful])
            group[1][rest] = ref  # unknown ones are named as the caller wrote them
        rated: list[dict[str, Any]] = []
        for root, (mine, written) in by_root.items():
            done = self.call("rate", {"root": str(root), "ratings": mine, "source": source}, start=False)
            rated += done["rated"]
            unknown += [{**u, "id": written.get(u["id"], u["id"])} for u in done["unknown"]]
        return {"rated": rated, "unknown": unknown}

    def gap(self, text: str, query: str | None = None, source: str | None = None) -> None:
        """Record a knowledge gap in the caller's own vault."""
        self.call(
            "gap", {"root": str(self.root), "text": text, "query": query, "source": source}, start=False
        )

    def gaps(self) -> list[dict[str, Any]]:
        return self.call("gaps", {"root": str(self.root)}, start=False)

    def log_shown(self, ids: Sequence[str], via: str, root: Path | None = None) -> None:
        """Log memories of ``root`` (default: the caller's own vault) as retrieved by ``via``
        (memories a hook showed): by the memory service while it runs, whose usage store stays
        open (a prompt hook then neither imports nor opens it), else here."""
        self.call("shown", {"root": str(Path(root or self.root)), "ids": list(ids), "via": via}, start=False)

    # ------------------------------------------------------------------ the hooks' work where the index is

    def hook(self, name: str, payload: dict[str, Any], anchor: str | None, start: bool = True,
             **more: Any) -> Any:  # fmt: skip
        """``hook_start``, ``hook_end`` or ``hook_precompact`` for this session's vault: the payload
        with its transcript's path made absolute (the service runs elsewhere), the anchor and the
        working directory (its code branch scopes what is shown and written)."""
        path = payload.get("transcript_path")
        sent = {**payload, "transcript_path": os.path.abspath(path)} if path else payload
        args = {"root": str(self.root), "payload": sent, "anchor": anchor, "cwd": str(self.cwd or Path.cwd()),
                **more}  # fmt: skip
        return self.call(name, args, start=start)

    def close(self) -> None:
        for vault in self._opened.values():
            vault.close()
        self._opened.clear()
        if self._host is not None:
            self._host.close()  # its entries held those vaults

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
