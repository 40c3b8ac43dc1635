"""Recall's options are declared once (vaultmem/recall/params.py) and every front end follows it."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from typer.testing import CliRunner

from vaultmem.agents.hooks import zscores
from vaultmem.agents.mcp_server import build_server
from vaultmem.cli.app import app
from vaultmem.core.config import DEFAULTS
from vaultmem.recall.options import Options
from vaultmem.recall.params import PARAMS


def _recall_cli(vault, *args: str) -> dict:
    result = CliRunner().invoke(
        app, ["recall", "marina berth booking", "--vault", str(vault), "--json", *args]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_config_k_is_the_default_k(demo_copy, fake_model):
    """`[recall] k` was written by init and never read: k = 2 still returned 5 (issue 23)."""
    assert len(_recall_cli(demo_copy)["results"]) > 2
    (demo_copy / ".vaultmem.toml").write_text("[recall]\nk = 2\n", encoding="utf-8")
    assert len(_recall_cli(demo_copy)["results"]) == 2
    assert len(_recall_cli(demo_copy, "-k", "3")["results"]) == 3  # an explicit -k still wins


def test_every_recall_config_key_is_read():
    """Each [recall] key either tunes Options or is the default of a declared parameter."""
    fields = {f for f in Options.__dataclass_fields__}
    defaults_of = {p.config for p in PARAMS if p.config}
    assert sorted(k for k in DEFAULTS["recall"] if k not in fields and k not in defaults_of) == []


def test_the_cli_offers_every_declared_parameter():
    result = CliRunner().invoke(app, ["recall", "--help"])
    for p in PARAMS:
        assert p.cli_flags[0].split("/")[0] in result.stdout, p.name


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_tool_offers_the_declared_parameters(demo_copy, fake_embedder):
    server = build_server(demo_copy, fake_embedder)
    try:
        async with Client(server) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "recall")
            props = tool.input_schema["properties"]
            assert set(props) == {"query"} | {p.name for p in PARAMS if p.mcp}
            assert props["k"]["description"] == next(p.help for p in PARAMS if p.name == "k")
    finally:
        server.memory.vault.close()


def test_the_prompt_hook_reads_z_with_the_weight_recall_used(demo, fake_model):
    """hooks.BM25_WEIGHT (0.25) duplicated the default (0.30): z came back 20% off."""
    hit = demo.recall("advisory locks for job leasing", k=1)[0].as_dict(True)
    e = hit["explain"]
    assert e["bm25_weight"] == DEFAULTS["recall"]["bm25_weight"]
    zb, zv = zscores(e)
    assert zb == pytest.approx(e["bm25"] * 6 / 0.30, rel=1e-3)
