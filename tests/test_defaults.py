"""Each default is written once, in config.DEFAULTS; everything else reads it from there."""

from __future__ import annotations

import dataclasses
import re
import tomllib

from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core import config
from vaultmem.core.config import CONFIG_TEXT, DEFAULTS
from vaultmem.index import embed
from vaultmem.recall import options as recall
from vaultmem.recall.adaptive import Weights


def _pairs(d: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for k, v in d.items():
        out.update(_pairs(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def test_the_config_file_init_writes_shows_the_defaults_commented_out(tmp_path):
    """Every value is shown, commented out: a vault follows later versions' defaults."""
    assert _pairs(tomllib.loads(CONFIG_TEXT)) == {}
    keys = re.findall(r"(?m)^[a-z_]+ = .*$", config.SHOWN)
    assert keys and all(f"\n# {line}\n" in CONFIG_TEXT for line in keys)
    shown = _pairs(tomllib.loads(config.SHOWN))
    assert len(shown) >= 15
    assert shown == {k: v for k, v in _pairs(DEFAULTS).items() if k in shown}
    target = tmp_path / "v"
    assert CliRunner().invoke(app, ["init", str(target)]).exit_code == 0
    assert (target / ".vaultmem.toml").read_text(encoding="utf-8") == CONFIG_TEXT
    assert config.load(target) == DEFAULTS


def test_the_formula_in_the_config_comment_follows_the_defaults():
    a = DEFAULTS["adaptive"]
    assert f"usefulness * {a['usefulness']:.2f} + recency * {a['recency']:.2f}" in CONFIG_TEXT


def test_adaptive_weights_are_the_config_defaults():
    fields = {f.name: f.default for f in dataclasses.fields(Weights)}
    assert fields == DEFAULTS["adaptive"]


def test_recall_options_and_the_embedder_use_the_config_defaults():
    opt, rc = recall.Options(), DEFAULTS["recall"]
    assert (opt.k, opt.depth, opt.bm25_weight, opt.candidates, opt.graph_decay, opt.graph_seeds) == (
        rc["k"],
        rc["anchor_depth"],
        rc["bm25_weight"],
        rc["candidates"],
        rc["graph_decay"],
        rc["graph_seeds"],
    )
    assert (embed.DEFAULT_MODEL, embed.DEFAULT_BATCH) == (
        DEFAULTS["embedding"]["model"],
        DEFAULTS["embedding"]["batch_size"],
    )


def test_every_embedding_default_is_read():
    from vaultmem.index import indexer

    assert set(DEFAULTS["embedding"]) == {
        "model",
        "batch_size",
        "max_chunks",
        "context",  # read by Vault._sync_contexts (tests/test_recall_contextual.py)
    }  # chunk size follows the model's window
    assert indexer.MAX_CHUNKS == DEFAULTS["embedding"]["max_chunks"]
