"""Everything a recall call can ask for (``Options``), built once from the call's declared
parameters (``params.py``) and the vault's ``[recall]`` and ``[adaptive]`` config: what
``search.search`` ranks by, whichever reader it reads through."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.config import DEFAULTS
from ..core.errors import BadInput
from ..core.filters import Filters
from . import learned
from .adaptive import Weights
from .standard import Stats

MODES = ("hybrid", "bm25", "vector")
PROFILES: dict[str, dict[str, float]] = {
    "default": {},
    "planning": {"decision": 1.4, "architecture": 1.4, "project": 1.3, "tech_context": 1.3,
                 "trade_off": 1.2, "pattern": 1.1, "commitment": 1.1},
    "incident": {"gotcha": 1.5, "bug_fix": 1.5, "lesson": 1.4, "discovery": 1.2, "pattern": 1.1},
    "handoff": {"handoff": 1.6, "progress": 1.5, "session_summary": 1.4, "commitment": 1.2},
}  # fmt: skip
RECENT_TYPES = {"handoff": ("handoff", "progress", "session_summary")}
TIME_MODES = ("boost", "filter", "off")
TIME_BOOST = DEFAULTS["recall"][
    "time_boost"
]  # added to the raw score of a note dated in a query's time range


@dataclass
class Options:
    """Everything a recall call can ask for."""

    k: int = DEFAULTS["recall"]["k"]
    filters: Filters = field(default_factory=Filters)
    anchor: str | None = None
    depth: int = DEFAULTS["recall"]["anchor_depth"]
    profile: str = "default"
    mode: str = "hybrid"
    bm25_weight: float = DEFAULTS["recall"]["bm25_weight"]
    context_weight: float = DEFAULTS["recall"]["context_weight"]  # neighbour context (ranking.Round)
    question_words: bool = DEFAULTS["recall"]["question_words"]  # True: BM25 scores question words too
    subject: bool = DEFAULTS["recall"][
        "subject"
    ]  # a question about a speaker gets a second round (subject.py)
    session_weight: float = DEFAULTS["recall"]["session_weight"]  # a session's best notes (spread.py)
    date_arithmetic: bool = DEFAULTS["recall"]["date_arithmetic"]  # "the week before X" (datemath.py)
    turn_weight: float = DEFAULTS["recall"][
        "turn_weight"
    ]  # a conversation turn that tells, not asks (turns.py)
    context_vectors: bool = DEFAULTS["recall"]["context_vectors"]  # contextual vectors (contextual.py)
    feedback_weight: float = DEFAULTS["recall"][
        "feedback_weight"
    ]  # list questions' third round (feedback.py)
    feedback_part: float = DEFAULTS["recall"]["feedback_part"]
    candidates: int = DEFAULTS["recall"]["candidates"]
    combine: str = DEFAULTS["recall"]["combine"]  # "learned" (learned.py) or "sum" (the hand-set formula)
    learned_weights: str = DEFAULTS["recall"]["learned_weights"]  # "": the shipped weights
    graph_decay: float = DEFAULTS["recall"]["graph_decay"]
    graph_seeds: int = DEFAULTS["recall"]["graph_seeds"]
    adaptive: bool = True
    weights: Weights = field(default_factory=Weights)
    stats: tuple[Stats, Stats] | None = None  # (BM25, vector) statistics pooled over vaults searched together
    snippets: bool = True  # off when a caller builds them only for the hits it keeps
    now: dt.datetime | None = None  # what "today" is for time expressions (None: the clock)
    time_mode: str = "boost"  # a time expression in the query boosts or filters; "off": plain text
    time_boost: float = TIME_BOOST
    as_of: dt.date | None = None  # only notes valid on that day, superseded or not
    shown: Callable[[str], bool] | None = (
        None  # a path test the hits must pass (other code branches' memories)
    )

    @classmethod
    def build(cls, call: dict[str, Any], config: dict[str, Any], root: Any, **extra: Any) -> Options:
        """The options of one call: ``call`` holds every declared recall parameter (``params.resolve``),
        the vault's ``[recall]`` section tunes the rest, ``extra`` sets fields no caller declares."""
        rc = config["recall"]
        tuned = {key: type(getattr(cls, key))(value) for key, value in rc.items() if key in _TUNED}
        tuned["learned_weights"] = learned.weights_file(root, str(rc["learned_weights"]))
        filters = Filters.build(call["types"], call["tags"], since=call["since"], scope=call["scope"],
                                include_hidden=call["include_resolved"])  # fmt: skip
        now = as_of = None
        if call["now"] or call["as_of"]:  # timefilter's imports (time expressions) only when asked
            from .timefilter import parse_day, parse_now

            now, as_of = parse_now(call["now"]), parse_day(call["as_of"], "--as-of")
        return cls(
            **tuned, k=call["k"], filters=filters, anchor=call["anchor"], depth=call["depth"], profile=call["profile"],
            mode=call["mode"], adaptive=call["adaptive"], weights=Weights.from_config(config["adaptive"]),
            now=now, time_mode=call["time"], as_of=as_of, **extra,
        )  # fmt: skip

    def check(self) -> None:
        if self.mode not in MODES:
            raise BadInput(f"--mode: {self.mode!r} is not one of {', '.join(MODES)}")
        if self.profile not in PROFILES:
            raise BadInput(f"--profile: {self.profile!r} is not one of {', '.join(PROFILES)}")
        if self.k < 1:
            raise BadInput("-k must be at least 1")
        if self.depth < 0:
            raise BadInput("--depth must be 0 or more")
        if self.time_mode not in TIME_MODES:
            raise BadInput(f"--time: {self.time_mode!r} is not one of {', '.join(TIME_MODES)}")
        learned.check_combine(self.combine)


# the [recall] keys that tune Options directly (k and anchor_depth are call parameters' defaults: params.py)
_TUNED = {f.name for f in dataclasses.fields(Options)} & set(DEFAULTS["recall"]) - {"k", "learned_weights"}
