"""Each operation written once (issue 44): one handler per declared operation, the same through
the memory service (here in a thread of the test, ``service_thread``) and in process; the first
real call answers the version question; ``list`` in one round trip; the user's config read once
a call; the prompt hook's project filter before the top k."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vaultmem import api
from vaultmem.service import client
from vaultmem.service.ops import HANDLERS
from vaultmem.service.protocol import OPS

QUERY = "how do we lease jobs with advisory locks?"


@pytest.fixture
def indexed(demo_copy, open_vault):
    """The demo vault indexed before the service serves it (as the service tests' ``vault``)."""
    vault = open_vault(demo_copy)
    vault.reindex()
    vault.close()
    return demo_copy


@pytest.fixture
def calls(monkeypatch):
    """The operations this test process sends to the service, in order."""
    sent: list[str] = []
    real = client.call

    def counting(op: str, args: dict | None = None, *more: Any, **named: Any) -> dict | None:
        sent.append(op)
        return real(op, args, *more, **named)

    monkeypatch.setattr(client, "call", counting)
    return sent


def test_every_declared_operation_has_one_handler_and_the_session_none():
    assert set(HANDLERS) == set(OPS)
    assert not hasattr(api.Session, "door") and not hasattr(api, "ServedVault")


def test_a_call_through_the_service_is_one_round_trip(service_thread, demo_copy, calls):
    """Before: a ping for the version before each session's first call, and `list` asked twice
    more whether the service served the vault (3 round trips); now the call itself answers."""
    with api.Session([str(demo_copy)]) as session:
        assert session.recall(QUERY, k=3) and calls == ["recall"]
        assert session.backend == api.SERVICE
    calls.clear()
    with api.Session([str(demo_copy)]) as session:
        assert session.list_notes(limit=5) and calls == ["list"]
    calls.clear()
    with api.Session([str(demo_copy)]) as session:
        assert session.show("Use Postgres advisory locks for job leasing")["path"] and calls == ["show"]


def test_a_read_of_a_vault_the_service_does_not_serve_is_answered_here(service_thread, demo_copy, calls):
    """`list` of a vault the service does not serve yet is refused ("unserved") in the same round
    trip and read here: the service never opens (and indexes) a vault for a read of the files."""
    with api.Session([str(demo_copy)]) as session:
        rows = session.list_notes(limit=3)
    assert rows and calls == ["list"] and service_thread.service.entries == {}


def test_the_users_config_is_read_once_a_call(service_thread, demo_copy, monkeypatch):
    """Before: `[service] enabled` was read before the ping and again before the call."""
    from vaultmem.service import control

    reads: list[int] = []
    real = control.settings
    monkeypatch.setattr(control, "settings", lambda: reads.append(1) or real())
    with api.Session([str(demo_copy)]) as session:
        session.recall(QUERY, k=3)
        assert len(reads) == 1
        session.list_notes(limit=3)
    assert len(reads) == 1  # once a session


@pytest.mark.parametrize("op", ["list", "show", "stats", "recall", "history", "wake"])
def test_the_same_answer_in_process_and_through_the_service(
    op, indexed, service_thread, monkeypatch, fake_model
):
    def ask() -> object:
        with api.Session([str(indexed)]) as s:
            return {"list": lambda: s.list_notes(limit=50), "show": lambda: s.show("Use Postgres advisory locks for job leasing"),
                    "stats": lambda: {k: v for k, v in s.stats().items() if k != "disk"},
                    "recall": lambda: [(h["id"], h["rank"]) for h in s.recall(QUERY, k=5)],
                    "history": lambda: s.history("Use Postgres advisory locks for job leasing"),
                    "wake": lambda: s.wake(budget=400)["ids"]}[op]()  # fmt: skip

    served = ask()
    monkeypatch.setenv("VAULTMEM_NO_SERVICE", "1")
    assert ask() == served


def _projects(root: Path) -> None:
    """Four decisions of project Alpha that match the query best, one of Beta that matches less."""
    (root / "projects").mkdir()
    for name in ("Alpha", "Beta"):
        (root / "projects" / f"{name}.md").write_text(
            f"---\ntype: project\ntitle: Project: {name}\n---\n\n{name}.\n"
        )
    for i in range(4):
        (root / "decisions" / f"Alpha queue {i}.md").parent.mkdir(exist_ok=True)
        (root / "decisions" / f"Alpha queue {i}.md").write_text(
            f"---\ntype: decision\nanchor: '[[Project: Alpha]]'\n---\n\nLease queue jobs with advisory locks {i}.\n"
        )
    (root / "decisions" / "Beta queue.md").write_text(
        "---\ntype: decision\nanchor: '[[Project: Beta]]'\n---\n\nBeta leases queue jobs.\n"
    )


def test_the_prompt_hooks_project_filter_runs_before_the_top_k(empty_vault, tmp_path, fake_model):
    """Before: the hook asked for the top k, then dropped other projects' memories, and came back
    short (empty here): the filter now runs where the index is, before the cut."""
    _projects(empty_vault)
    beta = tmp_path / "src" / "beta"
    beta.mkdir(parents=True)
    with api.Session([str(empty_vault)], cwd=beta) as session:
        hits = session.recall(
            "lease queue jobs advisory locks", k=2, project=str(beta), mode="bm25", log=False
        )
        plain = session.recall("lease queue jobs advisory locks", k=2, mode="bm25", log=False)
    assert [h["path"] for h in hits] == ["decisions/Beta queue.md"] and hits[0]["rank"] == 1
    assert all("Alpha" in h["path"] for h in plain)  # what the top 2 were
    assert "explain" not in hits[0]


def test_the_fast_path_takes_no_ping(service_thread, demo_copy, calls, capsys, monkeypatch):
    """`vaultmem list` without typer: its one request is the list itself."""
    from vaultmem.cli.fast import run

    with api.Session([str(demo_copy)]) as session:
        session.recall(QUERY, k=1)  # the service serves the vault from now on
    calls.clear()
    assert run(["list", "--vault", str(demo_copy), "--json", "-n", "2"])
    assert calls == ["list"] and len(json.loads(capsys.readouterr().out)) == 2
