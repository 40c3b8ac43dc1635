"""The web view's app without a browser (Starlette's test client): the token rule, every page,
the graph JSON, lifecycle writes, live updates, and `vaultmem serve` as a real process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from helpers import write
from starlette.testclient import TestClient

from vaultmem.core import auth
from vaultmem.web.app import make_app
from vaultmem.web.state import ViewState

ADVISORY = "decisions/Use Postgres advisory locks for job leasing.md"


@pytest.fixture
def served(demo_copy, fake_embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    state = ViewState(demo_copy, fake_embedder)
    token = auth.token()
    with TestClient(make_app(state, token, poll=3600), base_url="http://127.0.0.1:8770") as client:
        yield client, state, token, demo_copy
    state.close()


def login(client, token):
    r = client.get(f"/graph?token={token}&depth=1", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/graph?depth=1"
    cookie = r.headers["set-cookie"]
    assert f"{auth.COOKIE}={token}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    return client


def test_token_is_required(served):
    client, _, token, _ = served
    for path in ("/", "/note?path=x", "/graph", "/state", "/api/graph", "/api/version", "/static/graph.js"):
        assert client.get(path).status_code == 401, path
    assert client.get("/?token=wrong", follow_redirects=False).status_code == 401
    assert client.post("/action", data={"path": ADVISORY, "action": "resolve"}).status_code == 401
    assert client.get("/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    login(client, token)
    assert client.get("/").status_code == 200


def test_pages_render(served):
    client, _, token, _ = served
    login(client, token)
    r = client.get("/", params={"q": "postgres advisory locks job leasing"})
    assert r.status_code == 200 and f'data-path="{ADVISORY}"' in r.text and "why this hit" in r.text
    r = client.get("/", params={"q": "job leasing", "type": "decision", "status": "superseded"})
    assert "Use Redis locks for job leasing" in r.text and ADVISORY not in r.text
    r = client.get("/note", params={"path": ADVISORY})
    assert r.status_code == 200
    assert '<a href="/note?path=projects/Project%20-%20Tidewater.md" class="wikilink">Project: Tidewater</a>' in r.text
    assert 'id="frontmatter"' in r.text and "yx66znwj" in r.text  # the id, in the frontmatter table
    assert "Use Redis locks for job leasing" in r.text.split('class="chain"')[1]  # its older version
    assert client.get("/note", params={"path": "nope.md"}).status_code == 404
    harbor = client.get("/note", params={"path": "relationships/Harbor Point Marina.md"}).text
    assert 'class="wikilink broken"' in harbor  # [[Harbor Point contract]] does not exist
    state = client.get("/state").text
    assert 'id="counts"' in state and "broken link" in state and 'id="months"' in state
    assert client.get("/graph").status_code == 200 and client.get("/static/graph.js").status_code == 200


def test_graph_data(served):
    client, _, token, _ = served
    login(client, token)
    data = client.get("/api/graph").json()
    assert len(data["nodes"]) == data["total"] == 68 and data["edges"]
    assert all(n["path"] for n in data["nodes"]) and set(data["colours"]) >= {"decision", "project"}
    near = client.get("/api/graph", params={"anchor": "Harbor Point Marina", "depth": 1}).json()
    assert near["anchor"] == "relationships/Harbor Point Marina.md" and 1 < len(near["nodes"]) < 68
    capped = client.get("/api/graph", params={"cap": 10}).json()
    assert len(capped["nodes"]) == 10 and capped["total"] == 68
    assert client.get("/api/graph", params={"anchor": "No such note"}).status_code == 404


def test_lifecycle_actions_write_guarded_and_same_origin_only(served):
    client, state, token, root = served
    login(client, token)
    before = state.generation
    r = client.post("/action", data={"path": ADVISORY, "action": "resolve"}, follow_redirects=False)
    assert r.status_code == 303 and "done=resolved" in r.headers["location"]
    assert "status: resolved" in (root / ADVISORY).read_text(encoding="utf-8")
    assert state.generation > before
    r = client.post("/action", data={"path": ADVISORY, "action": "rate-useful"})
    assert "rated useful 1 of 1" in r.text
    r = client.post("/action", data={"path": ADVISORY, "action": "supersede", "other": "No such note"})
    assert 'class="flash error"' in r.text and "no note" in r.text
    assert client.post("/action", data={"path": ADVISORY, "action": "delete"}).status_code == 400
    evil = client.post("/action", data={"path": ADVISORY, "action": "reopen"}, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403 and "status: resolved" in (root / ADVISORY).read_text(encoding="utf-8")


def test_file_change_bumps_generation(served):
    client, state, token, root = served
    login(client, token)
    g0 = client.get("/api/version").json()["generation"]
    write(root, "facts/Brand new fact.md", "---\ntitle: Brand new fact\ntype: fact\n---\nThe marina opens at dawn.\n")
    deadline = time.time() + 20  # the file event arrives, then a check looks at the files
    while not state.check() and time.time() < deadline:
        time.sleep(0.1)
    assert client.get("/api/version").json()["generation"] == g0 + 1
    assert "Brand new fact" in client.get("/", params={"q": "marina opens at dawn"}).text
    time.sleep(0.5)
    assert not (state.check() or state.check())  # its own index write is not a change: no reload loop


def test_serve_command_prints_token_url_and_refuses_without_it(demo_copy, tmp_path):
    env = {**os.environ, "VAULTMEM_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    write(demo_copy, ".vaultmem.toml", '[embedding]\nmodel = "none"\n')  # BM25 only: no model to load
    proc = subprocess.Popen([sys.executable, "-c", "from vaultmem.cli.app import main; main()", "serve", "--vault",
                             str(demo_copy), "--port", "0"], env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        line = proc.stderr.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
        assert m, line
        base, token = m.groups()
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/")
            except urllib.error.HTTPError as e:
                assert e.code == 401
                break
            except OSError:
                time.sleep(0.2)
        req = urllib.request.Request(base + "/state", headers={"Authorization": f"Bearer {token}"})
        assert "Memory state" in urllib.request.urlopen(req, timeout=60).read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_with_a_watcher_running_the_view_follows_its_index(empty_vault, fake_embedder, tmp_path, monkeypatch):
    from helpers import Running

    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    write(empty_vault, "facts/Alpha.md", "---\ntitle: Alpha\n---\nPostgres advisory locks.\n")
    watcher = Running(empty_vault, fake_embedder, serve=True)  # answers recall on its socket
    state = ViewState(empty_vault, fake_embedder)
    try:
        client = TestClient(make_app(state, auth.token(), poll=3600), base_url="http://127.0.0.1:8770")
        client.headers["Authorization"] = f"Bearer {auth.token()}"
        write(empty_vault, "facts/Beta.md", "---\ntitle: Beta\n---\nThe harbour crane is booked on Fridays.\n")
        deadline = time.time() + 20
        while "facts/Beta.md" not in watcher.paths() and time.time() < deadline:
            time.sleep(0.05)
        g0 = state.generation
        state.check()  # sees the files changed (its reindex defers to the watcher) and the watcher's commit
        assert state.generation == g0 + 1
        assert 'data-path="facts/Beta.md"' in client.get("/", params={"q": "harbour crane fridays"}).text
        assert not (state.check() or state.check())  # nothing new: no spurious reloads
    finally:
        state.close()
        watcher.stop()


def test_serve_errors_are_one_line(demo_copy, tmp_path):
    import socket

    from helpers import failed
    from typer.testing import CliRunner

    from vaultmem.cli.app import app

    assert "vaultmem: " in failed(CliRunner().invoke(app, ["serve", "--vault", str(tmp_path / "nowhere")]))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = str(taken.getsockname()[1])
        line = failed(CliRunner().invoke(app, ["serve", "--vault", str(demo_copy), "--port", port]))
        assert line.startswith(f"vaultmem: cannot listen on 127.0.0.1:{port}")
    finally:
        taken.close()


CANDIDATE = "rules/Always run migrations in a transaction.md"


def plant_candidate(state, root):
    write(root, CANDIDATE, "---\ntitle: Always run migrations in a transaction\ntype: rule\nstatus: candidate\n---\n"
          "Wrap every schema migration in one transaction.\n")  # fmt: skip
    with state.lock:
        state.vault.sync_paths([CANDIDATE])
    state.bump()


def test_confirm_a_candidate_from_its_page_and_from_the_state_page(served):
    client, state, token, root = served
    login(client, token)
    plant_candidate(state, root)
    page = client.get("/note", params={"path": CANDIDATE}).text
    assert 'value="confirm"' in page and 'value="reopen"' not in page
    assert 'value="confirm"' not in client.get("/note", params={"path": ADVISORY}).text  # active: nothing to confirm
    listed = client.get("/state").text.split('id="candidates"')[1].split("</ul>")[0]
    assert "Always run migrations in a transaction" in listed and 'value="confirm"' in listed
    hits = client.get("/", params={"q": "schema migration transaction", "status": "candidate"}).text
    assert f'data-path="{CANDIDATE}"' in hits and '<option value="candidate" selected>' in hits
    r = client.post("/action", data={"path": CANDIDATE, "action": "confirm", "back": "state"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/state?done=confirmed")
    text = (root / CANDIDATE).read_text(encoding="utf-8")
    assert "status: active" in text and "status: candidate" not in text
    assert "Always run migrations" not in client.get("/state").text.split('id="candidates"')[1].split("</ul>")[0]
    again = client.post("/action", data={"path": CANDIDATE, "action": "confirm"})  # the library refuses: not a candidate
    assert 'class="flash error"' in again.text and "not a candidate" in again.text


def test_state_page_draws_counts_over_time_from_the_daily_snapshots(served):
    client, state, token, root = served
    login(client, token)
    with state.lock:
        usage = state.vault.usage
        assert [d for d, _ in usage.count_history()] == [__import__("datetime").date.today().isoformat()]  # the reconcile took it
        usage.snapshot_counts("2026-01-05", {("decision", "active"): 7, ("decision", "superseded"): 1, ("fact", "candidate"): 2})
    page = client.get("/state").text
    history = page.split('id="history"')[1].split("</div>")[0]
    assert '<svg class="chart" id="history-status"' in history and '<svg class="chart" id="history-type"' in history
    assert "candidate 2026-01-05: 2" in history and "decision 2026-01-05: 8" in history  # point titles
    assert history.count("<polyline") >= 4 and "2 so far" in history
    assert "2026-01-05" in history and "<script" not in history  # server-rendered, no script
    client.get("/state")
    assert len(state.vault.count_history()) == 2  # building the page again adds nothing the same day
