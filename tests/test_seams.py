"""Every command and hook in every state, one result (issue 44): the harness (``seams.py``) run
against each state, what shows it covers every operation and command with no test code of their
own, and the failures the issue reproduces, each on its own."""

from __future__ import annotations

import json

import pytest
import seams
from conftest import runtime_room

from vaultmem.service.protocol import OPS, Op


@pytest.fixture
def sweep(tmp_path, fake_model, monkeypatch, socket_tmp, fake_embedder):
    """The harness on this test's folders, with the small test embedder in process and in the
    service; no real service process is ever started."""
    return seams.Sweep(tmp_path, socket_tmp(runtime_room() + 8) / "run", monkeypatch, fake_embedder)


def report(grid: seams.Grid) -> str:
    return f"{len(grid.problems)} problem(s) in state {grid.state!r}:\n" + "\n".join(grid.problems)


# ---------------------------------------------------------------------- what the harness runs


def test_the_harness_runs_every_command_and_hook_of_the_cli():
    """Generated from the typer app and the typer-free paths: every command runs (or is left out
    by name, with the reason), every fast path with the options that keep it on it."""
    found = seams.typer_commands()
    runs = {c.path for c in seams.commands()}
    assert set(found) == runs | set(seams.NOT_RUN)
    assert not runs & set(seams.NOT_RUN) and set(seams.NOT_RUN) <= set(found)  # no stale exclusion
    argv = {c.argv for c in seams.commands()}
    from vaultmem.agents.hook_io import HOOKS as RUN
    from vaultmem.cli.fast import SPECS
    from vaultmem.cli.main import FAST, HOOKS

    assert FAST == set(SPECS) and set(HOOKS) <= set(RUN)
    for name in [*FAST, "recall", "remember"]:
        assert any(a[0] == name for a in argv), name
        if name in FAST and "--json" in SPECS[name][1]:
            assert any(a[0] == name and "--json" in a for a in argv), name
    for hook in RUN:
        assert any(a[:2] == ("hook", hook) and a[-2:] == ("--agent", "claude") for a in argv), hook
        assert any(a[:2] == ("hook", hook) and a[-2:] == ("--agent", "claude-code") for a in argv), hook
        assert all("--vault" not in a for a in argv)  # the vault comes from VAULTMEM_VAULT


def test_the_harness_runs_every_operation_of_the_table(tmp_path):
    assert {c.name for c in seams.operations(OPS, tmp_path)} == set(OPS)


def test_a_new_operation_is_covered_with_no_new_test_code(sweep, monkeypatch):
    """Two operations added to a copy of the table: the harness runs both in process and through
    the service, passes the one written once, and catches the one whose answer depends on the host."""
    from vaultmem.service import daemon, ops, protocol, server

    table = {**OPS, "seams_count": Op("seams_count", {"root": str}, "notes", optional={"served": (bool, False)}),
             "seams_host": Op("seams_host", {"root": str}, "which host")}  # fmt: skip

    def count(host, args):
        with host.entry(args["root"]).reading() as vault:
            return {"notes": len(vault.records())}

    handlers = {**ops.HANDLERS, "seams_count": count, "seams_host": lambda host, args: type(host).__name__}
    for module in (protocol, server):
        monkeypatch.setattr(module, "OPS", table)
    for module in (ops, daemon):  # where the table's names are bound
        monkeypatch.setattr(module, "HANDLERS", handlers)
    grid = sweep.run(seams.STATES[3], [], table)  # warm: no command line, every operation
    assert {"op seams_count", "op seams_host"} <= set(grid.cells)
    assert json.loads(grid.cells["op seams_count"][1].out) == {"notes": 4}
    assert [p.split(":")[0] for p in grid.problems] == ["[warm] op seams_host"], report(grid)


# ---------------------------------------------------------------------- every cell of every state


@pytest.mark.parametrize("state", seams.STATES, ids=[s.name for s in seams.STATES])
def test_every_command_and_hook_in_every_state_gives_one_result(state, sweep):
    if state.read_only and not seams.can_mount():
        pytest.skip("no read-only vault can be made here")
    grid = sweep.run(state, seams.commands(), OPS)
    assert len(grid.cells) > 100
    assert not grid.problems, report(grid)
