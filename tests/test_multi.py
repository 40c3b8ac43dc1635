"""Several vaults: registry, agent identity, fused recall, cross-vault links, isolation, watch --all."""

from __future__ import annotations

import json
import threading
import time

import pytest
from helpers import write as note
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core.errors import BadInput, VaultNotFound
from vaultmem.core.registry import Registry, identity
from vaultmem.core.scaffold import init_vault
from vaultmem.multi import MultiVault


@pytest.fixture
def team(tmp_path, monkeypatch, fake_model):
    """A team folder with shared/, alice/ and bob/ vaults, and a private VAULTMEM_HOME."""
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VAULTMEM_TEAM_DIR", str(tmp_path / "vaults"))
    monkeypatch.delenv("VAULTMEM_AGENT_ID", raising=False)
    (tmp_path / "home").mkdir()
    root = tmp_path / "vaults"
    for name in ("shared", "alice", "bob"):
        init_vault(root / name)
    note(
        root / "shared",
        "decisions/Deploy with blue green.md",
        "# Deploy with blue green\n\nDeploy production with blue green switching on the load balancer. Deploy deploy.\n",
    )
    note(
        root / "alice",
        "facts/Deploy note.md",
        "# Deploy note\n\nI once read about deploy scripts for production.\n",
    )
    note(
        root / "alice",
        "facts/Links out.md",
        "# Links out\n\nSee [[shared:Deploy with blue green]] and [[Deploy note]].\n",
    )
    note(root / "bob", "facts/Bob secret.md", "# Bob secret\n\nBob's private deploy token notes.\n")
    fillers = ["postgres vacuum settings", "react hooks rules", "celery retry policy", "stripe refunds flow",
               "japanese locale strings", "fly.io regions"]  # fmt: skip
    for name in ("shared", "alice"):
        for i, topic in enumerate(fillers):
            note(root / name, f"facts/Filler {i}.md", f"# Filler {i}\n\nNotes about {topic}.\n")
    return root


def test_registry_add_list_remove_never_deletes(tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    reg = Registry()
    target = tmp_path / "v1"
    with pytest.raises(BadInput, match="--create"):  # a typo is not a new vault
        reg.add("work", target)
    assert not target.exists()
    reg.add("work", target, create=True)
    assert (target / ".vaultmem").is_dir()
    assert Registry().vaults == {"work": target.resolve()}
    with pytest.raises(BadInput):
        reg.add("Bad Name", target)
    Registry().remove("work")
    assert Registry().vaults == {} and (target / ".vaultmem").is_dir()
    with pytest.raises(BadInput):
        Registry().remove("work")


def test_identity_selects_personal_shared_and_user(team, tmp_path):
    ident = identity("alice")
    assert ident.personal == team / "alice" and ident.shared == team / "shared"
    assert ident.user == tmp_path / "home" / "user"
    assert set(ident.allowed()) == {"alice", "shared", "user"}
    with pytest.raises(BadInput):
        identity("shared")
    with pytest.raises(BadInput):
        identity("../bob")


def test_fused_recall_ranks_the_shared_hit_above_a_weaker_personal_one(team, fake_embedder):
    mv = MultiVault.for_agent("alice", embedder=fake_embedder)
    hits = mv.recall("production load balancer switching scripts", k=5, mode="bm25")
    assert hits[0].vault == "shared" and hits[0].title == "Deploy with blue green"
    assert {h.vault for h in hits} <= {"alice", "shared", "user"}
    assert any(h.vault == "alice" for h in hits)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    mv.close()


def test_agent_never_sees_another_agents_vault(team, fake_embedder):
    mv = MultiVault.for_agent("alice", embedder=fake_embedder)
    assert "bob" not in mv.vaults
    assert all(h.vault != "bob" for h in mv.recall("Bob private deploy token", k=10))
    mv.close()
    result = CliRunner().invoke(
        app, ["recall", "Bob private token", "--agent", "alice", "--json", "--mode", "bm25"]
    )
    assert result.exit_code == 0, result.output
    assert all(r["vault"] in ("alice", "shared", "user") for r in json.loads(result.stdout)["results"])


def test_cross_vault_links_in_the_graph(team, fake_embedder):
    mv = MultiVault.for_agent("alice", embedder=fake_embedder)
    g = mv.graph()
    src = "alice:facts/Links out.md"
    assert g.has_edge(src, "shared:decisions/Deploy with blue green.md")
    assert g.has_edge(src, "alice:facts/Deploy note.md")  # unqualified: own vault first
    mv.close()


def test_remember_routes_to_personal_shared_and_user_vaults(team, tmp_path):
    run = CliRunner().invoke
    base = ["--agent", "alice", "--json"]
    own = json.loads(run(app, ["remember", "fact", "Alice fact", "mine", *base]).stdout)
    shared = json.loads(run(app, ["remember", "fact", "Team fact", "ours", "--shared", *base]).stdout)
    user = json.loads(
        run(app, ["remember", "preference", "Tabs not spaces", "always", "--scope", "user", *base]).stdout
    )
    assert (team / "alice" / own["path"]).exists()
    assert (team / "shared" / shared["path"]).exists()
    assert (tmp_path / "home" / "user" / user["path"]).exists()
    listed = json.loads(run(app, ["list", "--agent", "alice", "--json", "--all"]).stdout)
    assert {r["vault"] for r in listed} == {"alice", "shared", "user"}
    assert not any("Bob" in r["title"] for r in listed)


def test_repeatable_vault_option_searches_named_vaults(team):
    reg = Registry()
    reg.add("s", team / "shared")
    result = CliRunner().invoke(
        app, ["recall", "deploy", "--vault", "s", "--vault", str(team / "alice"), "--json", "--mode", "bm25"]
    )
    assert result.exit_code == 0, result.output
    assert {r["vault"] for r in json.loads(result.stdout)["results"]} == {"s", "alice"}


def test_unknown_agent_vault_is_a_clear_error(team, monkeypatch, tmp_path):
    monkeypatch.delenv("VAULTMEM_TEAM_DIR")
    monkeypatch.chdir(tmp_path / "home")
    with pytest.raises(VaultNotFound):
        identity("carol", Registry())


def test_watch_all_watches_every_registered_vault_from_one_process(team, fake_embedder):
    """`vaultmem watch --all` is the memory service for every registered vault: one process,
    one model, one garbage-collection schedule."""
    from vaultmem.api import service_parts
    from vaultmem.service.daemon import Service

    reg = Registry()
    for name in ("shared", "alice"):
        reg.add(name, team / name)
    service = Service(*service_parts(), idle_exit=0, quiet=0.05, max_delay=0.3)
    service.embedder = lambda model, batch_size: fake_embedder
    runner = threading.Thread(target=service.run, args=(list(reg.vaults.values()),))
    runner.start()
    try:
        assert service.opened.wait(30)
        watchers = [service.entry(p).watcher for p in reg.vaults.values()]
        assert watchers[0].housekeeping is watchers[1].housekeeping  # one schedule per process
        note(team / "shared", "facts/New shared.md", "# New shared\n\nzebra\n")
        note(team / "alice", "facts/New alice.md", "# New alice\n\nzebra\n")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with watchers[0].mutex, watchers[1].mutex:
                done = all(any("New" in p for p in w.vault.manifest.records()) for w in watchers)
            if done:
                break
            time.sleep(0.05)
        assert done
        assert watchers[0].vault.embedder is watchers[1].vault.embedder  # one model for all
    finally:
        service.stop_event.set()
        runner.join(timeout=30)


def test_mcp_server_for_an_agent_refuses_other_agents_vaults(team, fake_embedder):
    from vaultmem.agents.mcp_server import build_server
    from vaultmem.core.errors import BadInput as Refused

    server = build_server(None, embedder=fake_embedder, agent="alice")
    memory = server.memory
    assert set(memory.vaults) == {"alice", "shared"}  # the user vault does not exist yet
    vault, ref = memory.pick("shared:Deploy with blue green")
    assert vault is memory.vaults["shared"] and ref == "Deploy with blue green"
    with pytest.raises(Refused, match="not available to agent 'alice'"):
        memory.pick("bob:Bob secret")
    hits = [h["vault"] for h in memory.recall("Bob private deploy token", k=10)]
    assert "bob" not in hits
    for v in memory.vaults.values():
        v.close()


def test_the_cli_takes_vault_id_references_like_mcp(team, monkeypatch):
    """`show`, `resolve`, `reopen` and `rate` accept `vault:id` (the MCP tools did, the CLI did not)."""
    from typer.testing import CliRunner

    from vaultmem.cli.app import app

    monkeypatch.setenv("VAULTMEM_AGENT_ID", "alice")
    run = lambda *a: CliRunner().invoke(app, list(a))
    shown = run("show", "shared:Deploy with blue green", "--json")
    assert shown.exit_code == 0, shown.output
    assert "blue green switching" in json.loads(shown.stdout)["text"]
    resolved = run("resolve", "shared:Deploy with blue green", "--json")
    assert resolved.exit_code == 0, resolved.output
    assert "status: resolved" in (team / "shared" / "decisions" / "Deploy with blue green.md").read_text()
    assert run("reopen", "shared:Deploy with blue green").exit_code == 0
    refused = run("show", "bob:Bob secret")
    assert refused.exit_code != 0 and "not available to agent 'alice'" in refused.stderr


def test_supersede_across_vaults_is_refused_by_the_session(team, fake_embedder):
    """The same-vault rule lives in api.Session: the CLI and the MCP tool both get it."""
    from vaultmem.api import Session
    from vaultmem.core.errors import BadInput

    session = Session([], agent="alice", embedder=fake_embedder)
    before = (team / "shared/decisions/Deploy with blue green.md").read_text()
    with pytest.raises(BadInput, match="same vault"):
        session.supersede("shared:Deploy with blue green", "Deploy note")
    assert (team / "shared/decisions/Deploy with blue green.md").read_text() == before
    done = session.supersede("alice:Deploy note", "alice:Links out")
    assert (
        done["action"] == "superseded"
        and "superseded_by" in (team / "alice/facts/Deploy note.md").read_text()
    )
    session.close()
    env = {"VAULTMEM_AGENT_ID": "alice"}
    r = CliRunner().invoke(app, ["supersede", "shared:Deploy with blue green", "Links out"], env=env)
    assert r.exit_code == 2 and "same vault" in r.stderr, r.output
