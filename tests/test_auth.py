"""The access token of the HTTP surfaces: owner-only, stable, required."""

from __future__ import annotations

import stat

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from vaultmem.core import auth


def test_token_is_owner_only_and_stable(tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    first = auth.token()
    assert len(first) >= 40 and auth.token() == first
    assert stat.S_IMODE(auth.token_path().stat().st_mode) == 0o600
    assert stat.S_IMODE(auth.token_path().parent.stat().st_mode) == 0o700


def test_gate_requires_the_token(tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    secret = auth.token()
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("memory"))])
    client = TestClient(auth.TokenGate(app, secret))
    assert client.get("/").status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/", headers={"Authorization": f"Bearer {secret}"}).text == "memory"
    client.cookies.set("vaultmem_session", secret)
    assert client.get("/").status_code == 401  # a cookie never carries the token


def test_each_surface_has_its_own_token_and_new_token_replaces_it(tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_HOME", str(tmp_path / "home"))
    mcp, web = auth.token(), auth.token(auth.WEB_TOKEN_FILE)
    assert mcp != web and auth.token_path(auth.WEB_TOKEN_FILE).name == "web-token"
    following = auth.TokenFile(auth.WEB_TOKEN_FILE)
    assert following() == web
    fresh = auth.new_token(auth.WEB_TOKEN_FILE)
    assert fresh not in (web, mcp) and following() == fresh and auth.token() == mcp
    assert stat.S_IMODE(auth.token_path(auth.WEB_TOKEN_FILE).stat().st_mode) == 0o600
    client = TestClient(
        auth.TokenGate(Starlette(routes=[Route("/", lambda request: PlainTextResponse("memory"))]), following)
    )
    assert client.get("/", headers={"Authorization": f"Bearer {web}"}).status_code == 401
    assert client.get("/", headers={"Authorization": f"Bearer {fresh}"}).text == "memory"


def test_a_login_code_opens_once():
    logins = auth.Logins()
    code = logins.mint()
    assert not logins.spend("not-" + code) and logins.spend(code) and not logins.spend(code)
