"""Front ends reach a vault only through operations (issue 44): the web view's pages are the
operations' answers, the same through the memory service and in process (`vaultmem graph ...`:
``test_seams.py``)."""

from __future__ import annotations

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
