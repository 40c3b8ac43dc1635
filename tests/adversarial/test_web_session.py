"""The web view's login cookie (issue 39 Medium 8): browsers send a 127.0.0.1 cookie to every port
there, so the cookie is a session of one web view (random, kept in that process, expiring, named
for its port), never the permanent web token. Through the real app (Starlette's TestClient)."""

from __future__ import annotations

from http.cookies import SimpleCookie

import pytest
from starlette.testclient import TestClient

from vaultmem.core import auth
from vaultmem.web.app import make_app
from vaultmem.web.state import ViewState


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def view(demo_copy, fake_embedder, tmp_path, monkeypatch):
    """(app, logins, token) of a web view as `vaultmem serve` makes it."""
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    state = ViewState(demo_copy, fake_embedder)
    logins = auth.Logins()
    yield (
        make_app(state, auth.TokenFile(auth.WEB_TOKEN_FILE), poll=3600, logins=logins),
        logins,
        auth.token(auth.WEB_TOKEN_FILE),
    )
    state.close()


@pytest.fixture
def timed_view(demo_copy, fake_embedder, tmp_path, monkeypatch):
    """(app, logins, clock) of a web view whose sessions last 60 s of ``clock``."""
    from vaultmem.web.sessions import Sessions

    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    state = ViewState(demo_copy, fake_embedder)
    logins, clock = auth.Logins(), Clock()
    app = make_app(state, auth.TokenFile(auth.WEB_TOKEN_FILE), poll=3600, logins=logins,
                   sessions=Sessions(ttl=60, clock=clock))  # fmt: skip
    yield app, logins, clock
    state.close()


def _get(client: TestClient, cookies: dict[str, str]) -> object:
    """GET /state carrying exactly ``cookies``, as a browser holding them would."""
    client.cookies.clear()
    for name, value in cookies.items():
        client.cookies.set(name, value)
    return client.get("/state")


def _login(client: TestClient, logins: auth.Logins) -> tuple[str, str, str]:
    """(cookie name, value, the whole Set-Cookie) a browser gets from its login link."""
    r = client.get(f"/state?login={logins.mint()}", follow_redirects=False)
    assert r.status_code == 303, r.text
    header = r.headers["set-cookie"]
    (name, morsel), *_ = SimpleCookie(header).items()
    return name, morsel.value, header


def test_the_login_cookie_is_a_session_not_the_token_and_named_for_the_port(view):
    app, logins, token = view
    with TestClient(app, base_url="http://127.0.0.1:8770") as browser:
        name, sid, header = _login(browser, logins)
        assert sid != token and token not in header, "the cookie carries the permanent token"
        assert name == "vaultmem_session_8770"
        assert "HttpOnly" in header and "SameSite=Strict" in header and "Max-Age=" in header
        browser.cookies.clear()
        assert _get(browser, {name: sid}).status_code == 200
        assert _get(browser, {"vaultmem_session": token}).status_code == 401  # the old cookie
        assert _get(browser, {name: token}).status_code == 401  # the token is no session
        assert _get(browser, {name: sid[:-1] + "x"}).status_code == 401
    with TestClient(app, base_url="http://127.0.0.1:8771") as other_port:  # another view's port
        assert _get(other_port, {name: sid}).status_code == 401


def test_a_session_expires_and_ends_with_a_new_token(timed_view):
    app, logins, clock = timed_view
    with TestClient(app, base_url="http://127.0.0.1:8770") as browser:
        name, sid, _ = _login(browser, logins)
        browser.cookies.clear()
        clock.now += 59
        assert _get(browser, {name: sid}).status_code == 200
        clock.now += 2
        assert _get(browser, {name: sid}).status_code == 401, "a session never expires"
        name, sid, _ = _login(browser, logins)
        browser.cookies.clear()
        assert _get(browser, {name: sid}).status_code == 200
        auth.new_token(auth.WEB_TOKEN_FILE)
        assert _get(browser, {name: sid}).status_code == 401, "a new token leaves sessions open"


def test_two_web_views_keep_their_own_sessions(demo_copy, fake_embedder, tmp_path, monkeypatch):
    """Two views on two ports: each browser session opens its own view only."""
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    state = ViewState(demo_copy, fake_embedder)
    try:
        token = auth.TokenFile(auth.WEB_TOKEN_FILE)
        (la, lb) = auth.Logins(), auth.Logins()
        a, b = make_app(state, token, poll=3600, logins=la), make_app(state, token, poll=3600, logins=lb)
        with (
            TestClient(a, base_url="http://127.0.0.1:8770") as ca,
            TestClient(b, base_url="http://127.0.0.1:8771") as cb,
        ):
            name_a, sid_a, _ = _login(ca, la)
            name_b, sid_b, _ = _login(cb, lb)
            assert name_a != name_b
            both = {name_a: sid_a, name_b: sid_b}  # a browser sends both cookies to both ports
            ca.cookies.clear()
            cb.cookies.clear()
            assert _get(ca, both).status_code == 200
            assert _get(cb, both).status_code == 200
            assert _get(cb, {name_b: sid_a}).status_code == 401  # A's session on B
    finally:
        state.close()
