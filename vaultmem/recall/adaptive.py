"""Adaptive scoring from usage (pure functions; weights come from the vault config).

    adaptive = 0.60 * usefulness + 0.25 * recency + 0.15 * frequency   (floor 0.35)
    blended  = raw * (0.70 + 0.30 * adaptive)

usefulness = useful / ratings, neutral 0.5 below 3 ratings (``min_ratings``: one or two votes are
noise, so "useful" twice leaves 0.5 and the third makes it 1.0); a score below neutral fades back
towards 0.5 with a 90-day half-life from the last rating. recency = 0.5 ** (days since last
access / 30), floor 0.30, where the last access is the latest of the last retrieval and the
note's own ``updated`` time (a memory just written counts as fresh). frequency =
log(count + 1) / log(51), capped at 1. Retrievals feed recency and frequency only with
``from_retrievals = true``; by default a memory's usage is its ratings and its own writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.config import DEFAULTS
from ..index.usage import Usage

DAY = 86400.0
_DEFAULT = DEFAULTS["adaptive"]  # the defaults are written once, in config.DEFAULTS


@dataclass(frozen=True)
class Weights:
    """The adaptive scoring knobs of a vault's ``[adaptive]`` config (defaults: config.DEFAULTS)."""

    usefulness: float = _DEFAULT["usefulness"]
    recency: float = _DEFAULT["recency"]
    frequency: float = _DEFAULT["frequency"]
    min_ratings: int = _DEFAULT["min_ratings"]
    negative_half_life_days: float = _DEFAULT["negative_half_life_days"]
    recency_half_life_days: float = _DEFAULT["recency_half_life_days"]
    recency_floor: float = _DEFAULT["recency_floor"]
    frequency_saturation: int = _DEFAULT["frequency_saturation"]
    floor: float = _DEFAULT["floor"]
    base: float = _DEFAULT["base"]  # blended = raw * (base + (1 - base) * adaptive)
    high_importance: int = _DEFAULT["high_importance"]
    importance_boost: float = _DEFAULT["importance_boost"]
    # being retrieved (recall/wake logs) counts as an access for recency and frequency; off by
    # default: a run of unrelated queries lifted whatever earlier queries had shown (issue 18)
    from_retrievals: bool = _DEFAULT["from_retrievals"]

    @classmethod
    def from_config(cls, cfg: dict) -> Weights:
        known = {k: v for k, v in cfg.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def usefulness(u: Usage, now: float, w: Weights = Weights()) -> float:
    if u.ratings < w.min_ratings:
        return 0.5
    value = u.useful / u.ratings
    if value < 0.5 and u.last_rating is not None:
        age = max(0.0, now - u.last_rating) / DAY
        value = 0.5 + (value - 0.5) * 0.5 ** (age / w.negative_half_life_days)
    return value


def recency(last_access: float | None, now: float, w: Weights = Weights()) -> float:
    if last_access is None:
        return w.recency_floor
    age = max(0.0, now - last_access) / DAY
    return max(w.recency_floor, 0.5 ** (age / w.recency_half_life_days))


def frequency(count: int, w: Weights = Weights()) -> float:
    return min(1.0, math.log(count + 1) / math.log(w.frequency_saturation + 1))


def adaptive(u: Usage, now: float, written: float | None = None, w: Weights = Weights()) -> dict[str, float]:
    """The parts and the adaptive score of one memory."""
    last = max(t for t in (u.last_access, written) if t is not None) if (u.last_access or written) else None
    parts = {
        "usefulness": usefulness(u, now, w),
        "recency": recency(last, now, w),
        "frequency": frequency(u.count, w),
    }
    total = (
        w.usefulness * parts["usefulness"] + w.recency * parts["recency"] + w.frequency * parts["frequency"]
    )
    parts["adaptive"] = max(w.floor, total)
    return parts


def blend_factor(adaptive_score: float, w: Weights = Weights()) -> float:
    """What a raw score is multiplied by: ``base + (1 - base) * adaptive``."""
    return w.base + (1.0 - w.base) * adaptive_score


def importance_factor(importance: int, w: Weights = Weights()) -> float:
    """High-importance memories (>= 8 by default) are lifted (x1.5 by default)."""
    return w.importance_boost if importance >= w.high_importance else 1.0


def evidence(u: Usage, w: Weights = Weights()) -> Usage:
    """The usage the score reads: without ``from_retrievals``, the ratings alone."""
    if w.from_retrievals:
        return u
    return Usage(useful=u.useful, ratings=u.ratings, last_rating=u.last_rating)
