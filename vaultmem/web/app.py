"""The web view's Starlette app: pages, the graph's JSON, lifecycle actions, the token rule.

Every request needs the web view's access token as a bearer header (its own ``web-token``, not
MCP's) or a browser session (``sessions.WebGate``): a one-time ``/?login=<code>``
(``auth.Logins``) opens a session, sets its cookie (a random id, not the token, named for this
view's port, expiring, HttpOnly, SameSite=Strict) and redirects to the same URL without the
code, so the address left in the browser's history opens nothing. Every response forbids framing and carries a
Content-Security-Policy: scripts and styles from this server only, no remote images (a note's
page loads them only when asked, for that response). Writes are only the lifecycle actions
(resolve, reopen, confirm, supersede, rate), each through the library's guarded writes, and only
from a same-origin form post.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from importlib import resources
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..core import auth
from ..core.errors import NoteNotFound, VaultError
from ..core.note import parse
from . import markdown, pages, relevance
from .sessions import Sessions, WebGate, port_of
from .state import ViewState

GRAPH_CAP = 5000
SAFE_ACTIONS = ("resolve", "reopen", "confirm", "supersede", "rate-useful", "rate-not-useful")


LOGIN = "login"  # the query parameter of a one-time login code
CSP = {
    "default-src": "'self'", "script-src": "'self'", "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data:", "connect-src": "'self'", "object-src": "'none'", "base-uri": "'none'",
    "form-action": "'self'", "frame-ancestors": "'none'",
}  # fmt: skip
REMOTE_IMAGES = {**CSP, "img-src": "'self' data: http: https:"}  # a note page asked to load them


def csp(policy: dict[str, str] = CSP) -> str:
    return "; ".join(f"{k} {v}" for k, v in policy.items())


class SecurityHeaders:
    """ASGI middleware: no response may be framed (X-Frame-Options and the CSP's
    frame-ancestors) or send a referrer to other sites (same-origin, so a form post keeps its
    Origin), and each gets the CSP unless its handler set one."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                extra = [(b"x-frame-options", b"DENY"), (b"referrer-policy", b"same-origin"),
                         (b"x-content-type-options", b"nosniff"), (b"content-security-policy", csp().encode())]  # fmt: skip
                message = {**message, "headers": headers + [(k, v) for k, v in extra if k not in names]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _reply(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes = b"") -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": headers + [(b"cache-control", b"no-store"), (b"content-length", str(len(body)).encode())]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


class Login:
    """ASGI middleware: ``?login=<code>`` with an unspent code opens a session, sets its cookie
    and redirects to the clean URL; a spent code redirects a browser that has a session already
    and is refused otherwise; everything else goes on to the gate."""

    def __init__(self, app: Any, expected: auth.Expected, logins: auth.Logins, sessions: Sessions):
        self.app, self.expected, self.logins, self.sessions = app, expected, logins, sessions

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            given = [v for k, v in query if k == LOGIN]
            if given:
                rest = urlencode([(k, v) for k, v in query if k != LOGIN])
                location = [
                    (b"location", (quote(scope["path"]) + ("?" + rest if rest else "")).encode("latin-1"))
                ]
                if self.logins.spend(given[0]):
                    sid = self.sessions.open(auth.expected_now(self.expected))
                    cookie = self.sessions.set_cookie(sid, port_of(scope))
                    return await _reply(send, 303, location + [(b"set-cookie", cookie)])
                if self.sessions.allows(scope, self.expected) or auth.allowed(scope, self.expected):
                    return await _reply(send, 303, location)
                body = (b"vaultmem: this login link was used already (each link opens one browser session) or is "
                        b"not valid: restart `vaultmem serve` for a new link\n")  # fmt: skip
                return await _reply(send, 401, [(b"content-type", b"text/plain")], body)
        await self.app(scope, receive, send)


def make_app(state: ViewState, token: auth.Expected, poll: float = 2.0, logins: auth.Logins | None = None,
             sessions: Sessions | None = None) -> Any:  # fmt: skip
    """The web view of ``state``'s vault, behind ``token`` (or the ``auth.TokenFile`` that says
    it); browsers log in with codes ``logins`` minted, each opening one of ``sessions``."""
    views = Views(state)
    routes = [
        Route("/", views.search),
        Route("/note", views.note),
        Route("/graph", views.graph),
        Route("/state", views.memory_state),
        Route("/api/graph", views.graph_data),
        Route("/api/version", views.version),
        Route("/action", views.action, methods=["POST"]),
        Mount(
            "/static",
            app=StaticFiles(directory=str(resources.files("vaultmem.web").joinpath("static"))),
            name="static",
        ),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async def watch() -> None:
            while True:
                await asyncio.sleep(poll)
                try:
                    await asyncio.to_thread(state.check)
                except Exception as e:
                    state.last_error = str(e)

        await asyncio.to_thread(state.watch_files)
        task = asyncio.create_task(watch())
        try:
            yield
        finally:
            task.cancel()

    app = Starlette(routes=routes, lifespan=lifespan)
    sessions = sessions or Sessions()
    return SecurityHeaders(Login(WebGate(app, token, sessions), token, logins or auth.Logins(), sessions))


class Views:
    """The page handlers (run in worker threads; each holds the state's lock)."""

    def __init__(self, state: ViewState):
        self.state = state

    def _page(self, title: str, active: str, content: str, scripts: tuple[str, ...] = (), status: int = 200,
              policy: dict[str, str] = CSP) -> HTMLResponse:  # fmt: skip
        html = pages.page(
            title, active, content, root=self.state.root, generation=self.state.generation, scripts=scripts
        )
        return HTMLResponse(
            html,
            status_code=status,
            headers={"cache-control": "no-store", "content-security-policy": csp(policy)},
        )

    def search(self, request: Request) -> Response:
        p = dict(request.query_params)
        query = p.get("q", "").strip()
        hits: list = []
        message = None
        if query:
            status = p.get("status") or "active"
            try:
                with self.state.lock:  # the CLI's routing: the running watcher, else this process
                    hits = self.state.session.recall(
                        query, explain=True, k=int(p.get("k") or 10) * (1 if status in ("active", "any") else 3),
                        types=[p["type"]] if p.get("type") else [], tags=[p["tag"]] if p.get("tag") else [],
                        since=p.get("since") or None, include_resolved=status != "active",
                        anchor=p.get("anchor") or None, profile=p.get("profile") or "default", log=False,
                    )  # fmt: skip
            except (VaultError, ValueError) as e:
                message = str(e)
            if status not in ("active", "any"):
                hits = [h for h in hits if h["status"] == status][: int(p.get("k") or 10)]
        shown = hits if p.get("all") else relevance.above_floor(hits)
        content = (
            pages.search_form(p)
            + pages.flash(message, True)
            + pages.search_results(shown, query, left_out=len(hits) - len(shown), params=p)
        )
        return self._page(query or "Search", "search", content)

    def note(self, request: Request) -> Response:
        path = request.query_params.get("path", "")
        session = self.state.session
        try:  # the note, its backlinks, versions and links' targets, as the indexes hold them
            found = session.graph("note", note=path, indexed=True)
            parsed = parse(found["text"], path)
        except NoteNotFound:
            return self._page(
                "Not found", "", pages.error_page(f"no note {path!r} in this vault"), status=404
            )
        except VaultError as e:
            return self._page("Unreadable", "", pages.error_page(str(e)), status=500)
        rec = SimpleNamespace(**found["note"])
        targets = found["targets"]
        load = request.query_params.get("images") == "load"
        body = markdown.render(parsed.body, lambda target: _page_target(targets, target), title=rec.title,
                               remote_images=load)  # fmt: skip
        used = session.usage([rec.key]).get(rec.key)
        chain = [tuple(v) for v in found["versions"]]
        msg = request.query_params.get("done") or request.query_params.get("error")
        content = pages.note_page(rec, parsed.meta, body.html, found["backlinks"], chain,
                                  used and SimpleNamespace(**used), msg, "error" in request.query_params,
                                  remote=(len(body.remote), load))  # fmt: skip
        return self._page(rec.title, "note", content, policy=REMOTE_IMAGES if load and body.remote else CSP)

    def graph(self, request: Request) -> Response:
        p = dict(request.query_params)
        seen = self.state.session.graph("summary", indexed=True)
        info = (
            f"anchor {p['anchor']}, depth {p.get('depth', '2')}"
            if p.get("anchor")
            else f"whole vault ({seen['notes']} notes)"
        )
        content = pages.graph_page(p, seen["types"], pages.graph_api_url(p), info)
        return self._page("Graph", "graph", content, scripts=("graph.js",))

    def graph_data(self, request: Request) -> Response:
        p = request.query_params
        try:
            depth = max(0, min(10, int(p.get("depth") or 2)))
            cap = max(1, min(GRAPH_CAP, int(p.get("cap") or GRAPH_CAP)))
        except ValueError:
            return JSONResponse({"error": "depth and cap must be numbers"}, status_code=400)
        try:
            data = self.state.session.graph(
                "data", note=p.get("anchor") or None, depth=depth, cap=cap, indexed=True
            )
        except VaultError as e:
            return JSONResponse({"error": str(e)}, status_code=404)
        colours = {t: pages.type_colour(t) for t in {n.get("type") for n in data["nodes"]}}
        return JSONResponse({**data, "colours": colours, "generation": self.state.generation})

    def memory_state(self, request: Request) -> Response:
        session = self.state.session
        seen = self.state.overview()
        counts: dict[str, dict[str, int]] = defaultdict(
            Counter, {t: Counter(c) for t, c in seen["counts"].items()}
        )
        months = [(m, Counter(c)) for m, c in seen["months"]]
        recent = [(SimpleNamespace(**{k: r[k] for k in ("path", "title", "type")}), r["date"], r["which"])
                  for r in seen["recent"]]  # fmt: skip
        candidates = [SimpleNamespace(**r) for r in seen["candidates"]]
        history = [(day, {(t, s): n for t, s, n in rows}) for day, rows in seen["history"]]
        gaps = session.gaps()[:20]
        report = self.state.doctor()  # not under the lock: other pages answer meanwhile
        msg = request.query_params.get("done") or request.query_params.get("error")
        content = pages.flash(msg, "error" in request.query_params) + pages.state_page(
            counts, months, recent, candidates, gaps, report, history)  # fmt: skip
        return self._page("Memory state", "state", content)

    def version(self, request: Request) -> Response:
        return JSONResponse({"generation": self.state.generation, "error": self.state.last_error})

    async def action(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            return Response("vaultmem: cross-origin write refused\n", status_code=403)
        form = await request.form()
        path, kind, other = (
            str(form.get("path", "")),
            str(form.get("action", "")),
            str(form.get("other", "")).strip(),
        )
        if kind not in SAFE_ACTIONS:
            return Response("vaultmem: unknown action\n", status_code=400)
        try:
            message = await asyncio.to_thread(self._act, path, kind, other)
            key = "done"
        except VaultError as e:
            message, key = str(e), "error"
        if form.get("back") == "state":  # confirmed from the state page's candidates list
            return RedirectResponse(f"/state?{key}={quote(message)}", status_code=303)
        return RedirectResponse(f"/note?path={quote(path)}&{key}={quote(message)}", status_code=303)

    def _act(self, path: str, kind: str, other: str) -> str:
        session = self.state.session
        if kind == "resolve":
            r = session.resolve(path)
            out = f"resolved {r['title']}" if r["changed"] else f"{r['title']} was already resolved"
        elif kind == "reopen":
            r = session.reopen(path)
            out = f"reopened {r['title']}"
        elif kind == "confirm":
            r = session.confirm(path)
            out = f"confirmed {r['title']}: it is active now"
        elif kind == "supersede":
            if not other:
                raise VaultError("name the newer note (title, id or path)")
            r = session.supersede(path, other)
            out = f"{r['title']} is now superseded by {r['by']}"
        else:
            useful = kind == "rate-useful"
            done = session.rate([(path, useful)], source="web")
            if done["unknown"]:
                raise NoteNotFound(done["unknown"][0]["error"])
            r = done["rated"][0]
            out = f"rated {r['title']} {'useful' if useful else 'not useful'}"
        self.state.bump()
        return out


def _page_target(targets: dict[str, list[Any]], target: str) -> str | None:
    """Where a link on a note page goes (``graphview``'s ``note`` query resolved it): a note's
    path, an attachment (``markdown.ATTACHMENT`` + its path), or None."""
    found, attachment = targets.get(target) or (None, False)
    return f"{markdown.ATTACHMENT}{found}" if found and attachment else found
