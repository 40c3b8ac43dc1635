"""Front ends reach a vault only through operations (issue 44): `vaultmem graph ...` asks the
``graph`` operation where the index is, the same through the memory service and in process."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import seams

GRAPH = [
    ["graph", "links", seams.OTHER],
    ["graph", "backlinks", "Project: Seams"],
    ["graph", "neighbours", "Project: Seams", "--depth", "2", "--json"],
    ["graph", "path", seams.NOTE, "Retry with jitter"],  # none: exit 1, said on stderr
    ["graph", "path", seams.OTHER, seams.NOTE, "--json"],
    ["graph", "orphans"],
    ["graph", "unresolved", "--json"],
    ["graph", "anchors"],
    ["graph", "export", "--format", "mermaid", "--anchor", "Project: Seams", "--depth", "1"],
    ["graph", "export", "--format", "png"],  # an unknown format: one line
    ["graph", "links", "No such note"],  # an unknown note: one line
]


@pytest.fixture
def vault(tmp_path, monkeypatch, fake_model):
    """The harness's small vault, indexed, found by $VAULTMEM_VAULT."""
    root = seams.make_vault(tmp_path / "vault")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("VAULTMEM_VAULT", str(root))
    assert seams.run_cli(["index"]).code == 0
    return root


def opened_here(monkeypatch) -> list[Path]:
    """The vaults this thread opens as ``Vault`` objects from now on (the service's threads aside)."""
    from vaultmem.vault import Vault

    opened: list[Path] = []
    me, real = threading.get_ident(), Vault.__init__

    def init(self, root, *args, **kwargs):
        if threading.get_ident() == me:
            opened.append(Path(root))
        real(self, root, *args, **kwargs)

    monkeypatch.setattr(Vault, "__init__", init)
    return opened


def test_the_graph_commands_go_through_one_operation(vault, service_thread, monkeypatch):
    """`vaultmem graph ...` opened the vault in its own process (``session.vault``) even while
    the memory service served it; now each command is one ``graph`` call: the service answers
    it, with the same stdout, stderr and exit code as in process."""
    from vaultmem.service import client

    here = {tuple(argv): seams.run_cli(argv) for argv in GRAPH}  # the service does not serve it yet
    assert client.call("open", {"roots": [str(vault.resolve())]})["ok"]
    opened = opened_here(monkeypatch)
    with seams.recording_ops() as called:
        there = {tuple(argv): seams.run_cli(argv) for argv in GRAPH}
    assert opened == [] and set(called) == {"graph"}, (opened, called)
    for argv, mine in here.items():
        got = there[argv]
        assert mine.crash is None and got.crash is None, got.shown()
        assert (got.code, got.out, got.err) == (mine.code, mine.out, mine.err), (argv, got.shown())
    assert "Project: Seams  (projects/Project: Seams.md)  [frontmatter]" in here[tuple(GRAPH[0])].out
    assert here[tuple(GRAPH[3])].code == 1 and "no chain of links" in here[tuple(GRAPH[3])].err
    assert here[tuple(GRAPH[8])].out.startswith("```mermaid")
    for bad, code in ((GRAPH[-2], 2), (GRAPH[-1], 3)):
        got = here[tuple(bad)]
        assert (got.code, got.out, len(got.err.splitlines())) == (code, "", 1), got.shown()
        assert got.err.startswith("vaultmem: ")


# ---------------------------------------------------------------------- the web view

ADVISORY = "decisions/Use Postgres advisory locks for job leasing.md"
PAGES = {"note": f"/note?path={ADVISORY}", "graph": "/graph", "data": "/api/graph?anchor=Project: Tidewater&depth=1",
         "state": "/state"}  # fmt: skip


def pages_of(state) -> dict[str, str]:
    """Each page of ``PAGES`` as the web view serves it (with its token); must answer 200."""
    from starlette.testclient import TestClient

    from vaultmem.core import auth
    from vaultmem.web.app import make_app

    token = auth.token(auth.WEB_TOKEN_FILE)
    app = make_app(state, auth.TokenFile(auth.WEB_TOKEN_FILE), poll=3600)
    out = {}
    with TestClient(app, base_url="http://127.0.0.1:8770") as client:
        for name, url in PAGES.items():
            r = client.get(url, headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200, (name, r.text[-500:])
            out[name] = r.text
    return out


def test_the_web_view_reads_the_vault_only_through_operations(demo_copy, fake_model, tmp_path, monkeypatch,
                                                             service_thread):  # fmt: skip
    """The web view read its own Vault for every page (records, the graph, note files, usage,
    gaps, counts, a second Vault for doctor), past the memory service that serves the vault; now
    its pages are the operations' answers: with its own Vault's reads refused, every page is
    served by the service, and the note, graph and graph data pages are the same as in process."""
    from vaultmem.core.scaffold import init_vault
    from vaultmem.service import client
    from vaultmem.web.state import ViewState

    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    init_vault(demo_copy)
    here = ViewState(demo_copy, fake_model)  # in process (an embedder given: no service)
    try:
        mine = pages_of(here)
    finally:
        here.close()
    assert client.call("open", {"roots": [str(demo_copy.resolve())]})["ok"]
    state = ViewState(demo_copy)  # through the service that serves the vault

    def refused(*args, **kwargs):
        raise AssertionError("the web view read its own Vault")

    try:
        for name in ("records", "catalog", "graph", "build_graph", "find", "gaps", "count_history",
                     "snapshot_counts", "show", "resolve", "rate"):  # fmt: skip
            monkeypatch.setattr(state.vault, name, refused)
        for name in ("read", "read_text"):
            monkeypatch.setattr(state.vault.store, name, refused)
        monkeypatch.setattr("vaultmem.vault.Vault.__init__", refused)  # no second Vault (doctor)
        theirs = pages_of(state)
    finally:
        state.close()
    for name in ("note", "graph", "data"):
        assert theirs[name] == mine[name], name
    assert (
        "Use Postgres advisory locks for job leasing" in theirs["note"]
        and "Project: Tidewater" in theirs["data"]
    )
    assert 'id="history"' in theirs["state"] and "Harbor Point Marina" in theirs["state"]
