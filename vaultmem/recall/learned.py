"""The learned combination of recall's text scores (pure): a small linear ranker.

``[recall] combine = "learned"`` (not the default: see benchmarks/README.md) scores every note as the weighted sum of
features recall already has, with weights fitted offline (``benchmarks/learned/``) on the
SciFact train split and three LoCoMo dev conversations and shipped in ``learned.json``::

    bm25    = w_bm25   * standardised BM25          (fusion.standardise: z / 6)
    vector  = w_vector * standardised best-chunk cosine
    length  = w_length * (min(0, ln(file size / short_ref)) - its mean over the vault)
              (very short notes rank lower; an average note gets 0)
    context = w_context * best (bm25 + vector) among linked notes (floored at 0)

``combine = "sum"`` is the hand-set formula from before (fusion.hybrid and the same context)
exactly. Every part is reported by ``--explain`` and the score is their sum. The context part is
the ranking's (``ranking.Round``), with ``w_context`` as its weight.
"""

from __future__ import annotations

import json
import math
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.errors import BadInput

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: ``Options`` (search.py) reads this module without it

COMBINES = ("learned", "sum")
FEATURES = ("bm25", "vector", "length", "context")
DEFAULT_FILE = Path(__file__).resolve().parent.parent / "resources" / "learned.json"
FORMAT = 1
MAX_BYTES = 64 * 1024  # a weights file is a few hundred bytes; anything larger is refused unread


@dataclass(frozen=True)
class Model:
    """Weights of the linear ranker and the size (bytes) below which a note counts as short."""

    weights: dict[str, float]
    short_ref: float
    source: str = ""


def parse(data: object, where: str) -> Model:
    """A Model from a decoded weights file; BadInput naming ``where`` when it is not one."""

    def bad(why: str) -> BadInput:
        return BadInput(f"learned weights {where}: {why}")

    if not isinstance(data, dict):
        raise bad("not a JSON object")
    if data.get("format") != FORMAT:
        raise bad(f"format must be {FORMAT}")
    weights = data.get("weights")
    if not isinstance(weights, dict) or set(weights) != set(FEATURES):
        raise bad(f"weights must name exactly {', '.join(FEATURES)}")
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad(f"weight {name!r} is not a finite number")
    ref = data.get("short_ref")
    if isinstance(ref, bool) or not isinstance(ref, (int, float)) or not math.isfinite(ref) or ref <= 0:
        raise bad("short_ref must be a positive number (bytes)")
    return Model({k: float(weights[k]) for k in FEATURES}, float(ref), where)


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int) -> Model:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise ValueError(f"larger than {MAX_BYTES} bytes")
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise BadInput(
            f"learned weights {path}: cannot read ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
        ) from None
    return parse(data, path)


def load(path: str | Path | None = None) -> Model:
    """The model in ``path`` (default: the shipped ``resources/learned.json``), validated."""
    p = Path(path) if path else DEFAULT_FILE
    try:
        st = p.stat()
    except OSError as e:
        raise BadInput(f"learned weights {p}: cannot read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"learned weights {p}: not a regular file")
    return _load(str(p), st.st_mtime_ns)


def weights_file(vault_root: Path, setting: str) -> str:
    """``[recall] learned_weights`` as an absolute path ("" for the shipped weights): relative
    to the vault, and inside it once symlinks are resolved (the config travels with the notes,
    so it must not make recall read files elsewhere)."""
    if not setting:
        return ""
    root = vault_root.resolve()
    path = (root / setting).resolve()
    if path != root and root not in path.parents:
        raise BadInput(f"[recall] learned_weights: {setting!r} is outside the vault")
    return str(path)


def check_combine(value: object) -> str:
    if value not in COMBINES:
        raise BadInput(f"[recall] combine: {value!r} is not one of {', '.join(COMBINES)}")
    return str(value)


def short_prior(sizes: np.ndarray, ref: float) -> np.ndarray:
    """min(0, ln(size / ref)): 0 at ``ref`` bytes or more, negative for shorter notes."""
    import numpy as np

    return np.minimum(0.0, np.log(np.maximum(sizes, 1.0) / ref))


def centred(values: np.ndarray) -> np.ndarray:
    """Values minus their mean: an average note's part is 0, as for the standardised scores
    (so multipliers and graph shares, which act on above-average scores, keep their reach)."""
    return values - values.mean() if values.size else values


def parts(model: Model, b_std: np.ndarray, v_std: np.ndarray, sizes: np.ndarray) -> dict[str, np.ndarray]:
    """Every note's weighted bm25, vector and length parts, from the standardised BM25 and
    best-chunk scores (``fusion.standardise``) and file sizes; the context part comes from the
    neighbours' bm25 + vector with weight ``model.weights["context"]``, as with "sum"."""
    w = model.weights
    return {"bm25": w["bm25"] * b_std, "vector": w["vector"] * v_std,
            "length": w["length"] * centred(short_prior(sizes, model.short_ref))}  # fmt: skip
