"""Recall's options, declared once: name, type, default, help and the config key behind the default.

Every front end builds its recall parameters from ``PARAMS``: the CLI's ``vaultmem recall``
(typer options), the MCP ``recall`` tool (pydantic fields), and ``Vault.recall`` /
``api.Session.recall`` accept exactly these keywords. A parameter with ``config`` set defaults
to that key of the vault's ``[recall]`` section (so ``k = 2`` there makes 2 the default
everywhere); the other ``[recall]`` keys tune ``options.Options`` directly. Standard library
only: the CLI's fast path imports this.
"""

from __future__ import annotations

from ..core.errors import BadInput
from ..core.memtypes import TYPES, normalize_type

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path imports this module
if TYPE_CHECKING:  # pragma: no cover
    import inspect
    from collections.abc import Callable, Iterable
    from typing import Any


class Param:
    """One recall option (a plain class: ``dataclasses`` imports ``inspect``, ~5 ms on every
    CLI call that parses recall options)."""

    __slots__ = ("name", "type", "help", "default", "config", "flags", "session", "mcp")

    def __init__(self, name: str, type: Any, help: str, default: Any = None, config: str | None = None,
                 flags: tuple[str, ...] = (), session: bool = False, mcp: bool = True):  # fmt: skip
        self.name = name  # the keyword everywhere (Vault.recall, api.Session.recall, the MCP tool)
        self.type = type
        self.help = help
        self.default = default
        self.config = config  # the [recall] key that supplies the default (then ``default`` is None)
        self.flags = flags  # the CLI's option names (default: --name-with-dashes)
        self.session = session  # decided by api.Session (code branch scope), not by the vault's ranking
        self.mcp = mcp  # offered to agents as a tool argument

    def __repr__(self) -> str:
        return f"Param({self.name!r})"

    @property
    def cli_flags(self) -> tuple[str, ...]:
        return self.flags or ("--" + self.name.replace("_", "-"),)


PARAMS: tuple[Param, ...] = (
    Param("k", int | None, "How many results (default: [recall] k of the vault's config, 10).", config="k",
          flags=("-k",)),
    Param("types", list[str], f"Only these memory types ({', '.join(TYPES)}); repeatable.", [], flags=("--type", "-t")),
    Param("tags", list[str], "Only memories with all of these tags; repeatable.", [], flags=("--tag",)),
    Param("since", str | None, "Updated since: 7d, 24h, 30m, 2w or a date (2026-01-01)."),
    Param("scope", str | None, "project or user."),
    Param("include_resolved", bool, "Also resolved, superseded and archived memories.", False),
    Param("anchor", str | None, "Search around this anchor note, e.g. 'Project: MyApp'."),
    Param("depth", int | None, "Link hops from the anchor (default: [recall] anchor_depth, 2).", config="anchor_depth"),
    Param("profile", str, "default, planning, incident or handoff.", "default"),
    Param("mode", str, "hybrid (keywords and meaning), bm25 (keywords) or vector (meaning).", "hybrid"),
    Param("adaptive", bool, "Use usage data (ratings, retrievals) in the ranking.", True,
          flags=("--adaptive/--no-adaptive",), mcp=False),
    Param("as_of", str | None, "What was true on this date (2026-09-01): notes valid then, superseded or not."),
    Param("time", str, "A time expression in the query ('last week', 'in October') boosts notes dated then "
          "(boost), keeps only them (filter), or is plain text (off).", "boost"),
    Param("now", str | None, "Resolve 'yesterday', 'last week' against this date instead of today.", mcp=False),
    Param("branch", str | None, "Memories of this code branch (default: the current and the default branch's).",
          session=True),
    Param("all_branches", bool, "Also memories scoped to other code branches.", False, session=True),
)  # fmt: skip
BY_NAME = {p.name: p for p in PARAMS}


def check_names(options: dict[str, Any]) -> None:
    """A keyword that is not a recall option is a programming error, named at once."""
    unknown = sorted(set(options) - set(BY_NAME))
    if unknown:
        raise TypeError(f"not recall options: {', '.join(unknown)}")


def check_types(types: Iterable[str], known: Iterable[str]) -> None:
    """A ``--type`` no template and no note has is refused, as ``remember`` refuses it (a typo
    would otherwise answer "no memories match")."""
    known = set(known)
    for written in types:
        if normalize_type(written) not in known:
            raise BadInput(f"--type: unknown type {written!r}; known types: {', '.join(sorted(known))}")


def resolve(
    options: dict[str, Any], config: dict[str, Any], types: Iterable[str] | None = None
) -> dict[str, Any]:
    """Every vault-level option with its value: given, else its config default, else its default.
    ``types``: the memory types the vault knows (then an unknown ``types`` option is refused)."""
    check_names(options)
    if types is not None:
        check_types(options.get("types") or (), types)
    out = {}
    for p in PARAMS:
        if p.session:
            continue
        value = options.get(p.name)
        if value is None:
            value = config[p.config] if p.config else p.default
        out[p.name] = value
    return out


def with_params(annotate: Callable[[Param], Any], before: list[inspect.Parameter], after: list[inspect.Parameter],
                keep: Callable[[Param], bool] = lambda p: True,
                params: Iterable[Param] = PARAMS) -> Callable[[Callable], Callable]:  # fmt: skip
    """Give a front end's ``fn(..., **options)`` the declared parameters (``params``: recall's,
    or another operation's declaration) as its signature, each annotated by ``annotate`` (a
    typer option, a pydantic field), between ``before`` and ``after``."""

    import inspect

    def decorate(fn: Any) -> Any:
        declared = [
            inspect.Parameter(
                p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default, annotation=annotate(p)
            )
            for p in params
            if keep(p)
        ]
        own = [q.replace(kind=inspect.Parameter.KEYWORD_ONLY) for q in before + after]
        fn.__signature__ = inspect.Signature(own[: len(before)] + declared + own[len(before) :],
                                             return_annotation=inspect.signature(fn).return_annotation)  # fmt: skip
        fn.__annotations__ = {q.name: q.annotation for q in fn.__signature__.parameters.values()}
        fn.__annotations__["return"] = fn.__signature__.return_annotation
        return fn

    return decorate
