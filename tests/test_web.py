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
from pathlib import Path

import pytest
from helpers import wait_for, write
from starlette.testclient import TestClient

from vaultmem.core import auth
from vaultmem.web.app import make_app
from vaultmem.web.state import ViewState

ADVISORY = "decisions/Use Postgres advisory locks for job leasing.md"


@pytest.fixture
def served(demo_copy, fake_embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    state = ViewState(demo_copy, fake_embedder)
    token, logins = auth.token(auth.WEB_TOKEN_FILE), auth.Logins()
    app = make_app(state, auth.TokenFile(auth.WEB_TOKEN_FILE), poll=3600, logins=logins)
    with TestClient(app, base_url="http://127.0.0.1:8770") as client:
        client.logins = logins  # type: ignore[attr-defined]
        yield client, state, token, demo_copy
    state.close()


def login(client, token):
    """Log the client in with a one-time code, as a browser does with the link `serve` prints."""
    r = client.get(f"/graph?login={client.logins.mint()}&depth=1", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/graph?depth=1"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("vaultmem_session_8770=") and token not in cookie  # a session, not the token
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    return client


def test_token_is_required(served):
    client, _, token, _ = served
    for path in ("/", "/note?path=x", "/graph", "/state", "/api/graph", "/api/version", "/static/graph.js"):
        assert client.get(path).status_code == 401, path
    assert client.get("/?login=wrong", follow_redirects=False).status_code == 401
    assert (
        client.get(f"/?token={token}", follow_redirects=False).status_code == 401
    )  # the token is no login link
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
    assert (
        '<a href="/note?path=projects/Project%20-%20Tidewater.md" class="wikilink">Project: Tidewater</a>'
        in r.text
    )
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
    evil = client.post(
        "/action", data={"path": ADVISORY, "action": "reopen"}, headers={"Origin": "http://evil.example"}
    )
    assert evil.status_code == 403 and "status: resolved" in (root / ADVISORY).read_text(encoding="utf-8")


def test_file_change_bumps_generation(served):
    client, state, token, root = served
    login(client, token)
    g0 = client.get("/api/version").json()["generation"]
    write(
        root,
        "facts/Brand new fact.md",
        "---\ntitle: Brand new fact\ntype: fact\n---\nThe marina opens at dawn.\n",
    )
    wait_for(state.check, timeout=20, what="the file event, then a look at the files")
    assert client.get("/api/version").json()["generation"] == g0 + 1
    assert "Brand new fact" in client.get("/", params={"q": "marina opens at dawn"}).text
    time.sleep(0.5)  # the thing under test: no echo of its own index write arrives meanwhile
    assert not (state.check() or state.check())  # its own index write is not a change: no reload loop


def test_the_view_reads_the_vaults_change_stream_not_its_own_observer(
    empty_vault, fake_embedder, monkeypatch
):
    """The web view consumes the same stream of change sets as the watcher (ignored files and
    vaultmem's own state never make one); it runs no watchdog observer of its own."""
    import vaultmem.service.watch as watchmod

    streams, seen = [], []

    class Recorded(watchmod.ChangeStream):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            streams.append(self)

        def drain(self):
            batch = super().drain()
            seen.extend(batch.paths if batch else ())
            return batch

    monkeypatch.setattr(watchmod, "ChangeStream", Recorded)
    write(empty_vault, ".gitignore", "scratch/\n")
    state = ViewState(empty_vault, fake_embedder)
    try:
        assert state.watch_files() and len(streams) == 1
        state._looked = time.monotonic()  # a look just happened: only the stream says when to look again
        write(empty_vault, "scratch/Ignored.md", "# Ignored\n\nnot a note of the vault.\n")
        write(empty_vault, "facts/Gamma.md", "# Gamma\n\nThe ferry leaves at nine.\n")

        # the view's first check may find the note by a look before its event arrives: wait for
        # the stream to have carried it (file events come in order: none came for scratch/)
        def carried() -> bool:
            state.check()
            return "facts/Gamma.md" in seen

        wait_for(carried, timeout=20, what="the note's change set")
        assert "facts/Gamma.md" in state.vault.records()
        assert "facts/Gamma.md" in seen and not any(p.startswith("scratch/") for p in seen), (
            seen
        )  # none for it
    finally:
        state.close()
    source = (Path(__file__).parent.parent / "vaultmem" / "web" / "state.py").read_text()
    assert "watchdog" not in source


def _get(url: str, **headers: str) -> tuple[int, dict]:
    """Status and headers of a GET that does not follow redirects."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(
            urllib.request.Request(url, headers=headers), timeout=60
        ) as r:
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)


@pytest.mark.integration  # Python in a subprocess
def test_serve_prints_a_one_time_login_link_and_new_token_rotates_the_web_token(
    demo_copy, tmp_path, monkeypatch
):
    """Issue 29: the token sat in the browser's history as /?token=..., never rotated, and also
    unlocked MCP over HTTP."""
    home = tmp_path / "home"
    monkeypatch.setenv("VAULTMEM_HOME", str(home))
    mcp_token, old = auth.token(), auth.token(auth.WEB_TOKEN_FILE)
    env = {**os.environ, "VAULTMEM_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    write(demo_copy, ".vaultmem.toml", '[embedding]\nmodel = "none"\n')  # BM25 only: no model to load
    proc = subprocess.Popen([sys.executable, "-c", "from vaultmem.cli.app import main; main()", "serve", "--vault",
                             str(demo_copy), "--port", "0", "--new-token"], env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        lines = [proc.stderr.readline() for _ in range(2)]
        assert "new web view token" in lines[0], lines
        m = re.search(r"(http://127\.0\.0\.1:\d+)/\?login=(\S+)", lines[1])
        assert m, lines
        base, code = m.groups()
        new = auth.token(auth.WEB_TOKEN_FILE)
        assert new != old and code not in (new, old) and auth.token() == mcp_token

        def refused() -> bool:
            try:
                urllib.request.urlopen(base + "/")
            except urllib.error.HTTPError as e:
                assert e.code == 401
                return True
            except OSError:  # not listening yet
                return False
            raise AssertionError("served without a token")

        wait_for(refused, timeout=20, interval=0.2, what="the server")
        status, headers = _get(f"{base}/state?login={code}")
        assert status == 303 and headers["location"] == "/state" and new not in headers["set-cookie"]
        session = headers["set-cookie"].split(";")[0]  # vaultmem_session_PORT=<random id>
        assert _get(f"{base}/state?login={code}")[0] == 401  # the link in the history opens nothing now
        assert _get(f"{base}/state?login={code}", Cookie=session)[0] == 303  # logged in: just the clean URL
        for refused in (old, mcp_token):  # the old web token, and MCP's token
            assert _get(base + "/state", Authorization=f"Bearer {refused}")[0] == 401
            assert _get(base + "/state", Cookie=f"{session.split('=')[0]}={refused}")[0] == 401
        req = urllib.request.Request(base + "/state", headers={"Authorization": f"Bearer {new}"})
        assert "Memory state" in urllib.request.urlopen(req, timeout=60).read().decode()
        newer = auth.new_token(auth.WEB_TOKEN_FILE)  # `serve --new-token` elsewhere: this server follows
        assert _get(base + "/state", Authorization=f"Bearer {new}")[0] == 401
        assert _get(base + "/state", Authorization=f"Bearer {newer}")[0] == 200
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
        client = TestClient(
            make_app(state, auth.token(auth.WEB_TOKEN_FILE), poll=3600), base_url="http://127.0.0.1:8770"
        )
        client.headers["Authorization"] = f"Bearer {auth.token(auth.WEB_TOKEN_FILE)}"
        write(
            empty_vault, "facts/Beta.md", "---\ntitle: Beta\n---\nThe harbour crane is booked on Fridays.\n"
        )
        wait_for(lambda: "facts/Beta.md" in watcher.paths(), timeout=20, what="Beta indexed by the watcher")
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
    assert (
        'value="confirm"' not in client.get("/note", params={"path": ADVISORY}).text
    )  # active: nothing to confirm
    listed = client.get("/state").text.split('id="candidates"')[1].split("</ul>")[0]
    assert "Always run migrations in a transaction" in listed and 'value="confirm"' in listed
    hits = client.get("/", params={"q": "schema migration transaction", "status": "candidate"}).text
    assert f'data-path="{CANDIDATE}"' in hits and '<option value="candidate" selected>' in hits
    r = client.post(
        "/action", data={"path": CANDIDATE, "action": "confirm", "back": "state"}, follow_redirects=False
    )
    assert r.status_code == 303 and r.headers["location"].startswith("/state?done=confirmed")
    text = (root / CANDIDATE).read_text(encoding="utf-8")
    assert "status: active" in text and "status: candidate" not in text
    assert (
        "Always run migrations" not in client.get("/state").text.split('id="candidates"')[1].split("</ul>")[0]
    )
    again = client.post(
        "/action", data={"path": CANDIDATE, "action": "confirm"}
    )  # the library refuses: not a candidate
    assert 'class="flash error"' in again.text and "not a candidate" in again.text


def test_state_page_draws_counts_over_time_from_the_daily_snapshots(served):
    client, state, token, root = served
    login(client, token)
    with state.lock:
        usage = state.vault.usage
        assert [d for d, _ in usage.count_history()] == [
            __import__("datetime").date.today().isoformat()
        ]  # the reconcile took it
        usage.snapshot_counts(
            "2026-01-05", {("decision", "active"): 7, ("decision", "superseded"): 1, ("fact", "candidate"): 2}
        )
    page = client.get("/state").text
    history = page.split('id="history"')[1].split("</div>")[0]
    assert (
        '<svg class="chart" id="history-status"' in history
        and '<svg class="chart" id="history-type"' in history
    )
    assert "candidate 2026-01-05: 2" in history and "decision 2026-01-05: 8" in history  # point titles
    assert history.count("<polyline") >= 4 and "2 so far" in history
    assert "2026-01-05" in history and "<script" not in history  # server-rendered, no script
    client.get("/state")
    assert len(state.vault.count_history()) == 2  # building the page again adds nothing the same day


# ---------------------------------------------------------------------- issue 29: the first hour


def _policy(header: str) -> dict[str, str]:
    return {k: v.strip() for k, _, v in (part.strip().partition(" ") for part in header.split(";"))}


def test_every_response_forbids_framing_and_allows_only_own_scripts(served):
    """Issue 29: a page on another port framed the note page and a click on Resolve went through."""
    client, _, token, _ = served
    anonymous = client.get("/state")
    assert anonymous.status_code == 401
    login(client, token)
    pages = [
        "/",
        "/?q=job+leasing",
        "/note?path=" + ADVISORY,
        "/graph",
        "/state",
        "/api/graph",
        "/static/graph.js",
    ]
    for r in [anonymous, *(client.get(p) for p in pages)]:
        assert r.headers["x-frame-options"] == "DENY", r.url
        policy = _policy(r.headers["content-security-policy"])
        assert policy["frame-ancestors"] == "'none'" and policy["script-src"] == "'self'", r.url
        assert policy["img-src"] == "'self' data:" and "unsafe-inline" not in policy["script-src"]
        if r.headers["content-type"].startswith("text/html"):
            assert not re.search(r"<script(?![^>]*\bsrc=)", r.text), r.url  # no inline script
            assert not re.search(r"\son[a-z]+\s*=", r.text), r.url  # no inline event handler


REMOTE = "facts/Marina map.md"


def test_remote_images_are_links_until_asked_for(served):
    """Issue 29: a note's remote image was fetched when the page was viewed."""
    client, state, token, root = served
    login(client, token)
    write(root, REMOTE, "---\ntitle: Marina map\n---\nThe map: ![marina map](http://198.51.100.7/map.png)\n\n"
          "Local: ![dot](data:image/png;base64,iVBORw0KGgo=)\n")  # fmt: skip
    with state.lock:
        state.vault.sync_paths([REMOTE])
    page = client.get("/note", params={"path": REMOTE})
    body = page.text.split('id="note-body"')[1]
    assert "198.51.100.7" in body and not re.search(r"<img[^>]*198\.51\.100\.7", body)
    assert (
        'class="remote-image" href="http://198.51.100.7/map.png"' in body
        and '<img src="data:image/png' in body
    )
    assert (
        "1 remote image not loaded" in page.text
        and _policy(page.headers["content-security-policy"])["img-src"] == "'self' data:"
    )
    loaded = client.get("/note", params={"path": REMOTE, "images": "load"})
    assert re.search(
        r'<img src="http://198\.51\.100\.7/map\.png"[^>]*referrerpolicy="no-referrer"', loaded.text
    )
    assert (
        _policy(loaded.headers["content-security-policy"])["img-src"] == "'self' data: http: https:"
    )  # this response only
    assert (
        _policy(
            client.get("/note", params={"path": ADVISORY, "images": "load"}).headers[
                "content-security-policy"
            ]
        )["img-src"]
        == "'self' data:"
    )


def test_the_note_page_shows_the_title_once(served):
    """Issue 29: the page's heading and the body's first `# Title` showed the title twice."""
    client, _, token, _ = served
    login(client, token)
    page = client.get("/note", params={"path": ADVISORY}).text
    assert page.count(">Use Postgres advisory locks for job leasing</h1>") == 1
    assert (
        page.split('id="note-body">')[1].lstrip().startswith("<p>Part of")
    )  # the body starts after the heading


def test_recently_changed_goes_by_the_notes_own_dates(served):
    """Issue 29: "recently changed" listed every copied note, by file time."""
    client, state, token, root = served
    login(client, token)
    write(
        root, "facts/Copied yesterday.md", "---\ntitle: Copied yesterday\n---\nNo dates in here.\n"
    )  # file time: now
    write(root, "facts/Created only.md", "---\ntitle: Created only\ncreated: 2099-01-02\n---\nA date.\n")
    write(
        root,
        "facts/Updated too.md",
        "---\ntitle: Updated too\ncreated: 2001-01-01\nupdated: 2099-03-04T05:06:07Z\n---\nB.\n",
    )
    with state.lock:
        state.vault.sync_paths(["facts/Copied yesterday.md", "facts/Created only.md", "facts/Updated too.md"])
    state.bump()
    recent = client.get("/state").text.split('id="recent"')[1].split("</ul>")[0]
    titles = re.findall(r'<a href="[^"]+">([^<]+)</a>', recent)
    assert titles[:2] == ["Updated too", "Created only"] and "Copied yesterday" not in titles
    assert "updated 2099-03-04T05:06" in recent and "created 2099-01-02" in recent and len(titles) == 15


def test_type_colours_are_clearly_distinct():
    """Issue 29: several types shared near-identical colours (two greens 1.3 CIEDE2000 apart)."""
    import itertools

    from coloraide import Color

    from vaultmem.core.memtypes import TYPES
    from vaultmem.web import pages

    colours = {t: pages.type_colour(t) for t in TYPES} | {"(unknown)": pages.type_colour("nonsense")}
    assert len(set(colours.values())) == len(colours)
    for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2):
        assert Color(ca).delta_e(Color(cb), method="2000") >= 15, (a, ca, b, cb)
    for t, c in colours.items():  # readable dots and lines on the white page
        assert Color(c).delta_e(Color("white"), method="2000") >= 20, (t, c)


def test_the_note_page_links_what_the_graph_links(demo_copy, fake_embedder, tmp_path, monkeypatch):
    """The page's renderer read wiki-links with a grammar of its own (no ``[`` inside), so a
    link the index holds as an edge (``[[Pier [B] plan]]``) showed as plain text; both now read
    ``core.links.LINK_RE``."""
    (demo_copy / "Pier [B] plan.md").write_text("# Pier [B] plan\n\nBerths by the fuel dock.\n")
    (demo_copy / "Moorings.md").write_text("# Moorings\n\nSee [[Pier [B] plan]] and [[a[[Moorings]].\n")
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    state = ViewState(demo_copy, fake_embedder)
    logins = auth.Logins()
    app = make_app(state, auth.TokenFile(auth.WEB_TOKEN_FILE), poll=3600, logins=logins)
    try:
        with TestClient(app, base_url="http://127.0.0.1:8770") as client:
            page = client.get("/note", params={"path": "Moorings.md", "login": logins.mint()}).text
    finally:
        state.close()
    assert '<a href="/note?path=Pier%20%5BB%5D%20plan.md" class="wikilink">Pier [B] plan</a>' in page
    assert '[[a<a href="/note?path=Moorings.md" class="wikilink">Moorings</a>' in page
