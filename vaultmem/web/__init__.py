"""The local web view (`vaultmem serve`): server-rendered pages over the library API.

``app.make_app`` builds the Starlette app (pages, JSON for the graph, lifecycle actions) behind
``sessions.WebGate`` (its own ``web-token``; browsers log in with one-time links, each opening a
session whose cookie is not the token) and its
security headers (no framing, a Content-Security-Policy); ``server.run`` serves it on 127.0.0.1 with uvicorn. Templates and the
static files (CSS, the graph canvas script; no third-party JavaScript) ship in the package.
"""
