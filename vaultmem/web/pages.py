"""Server-rendered HTML of the web view's pages (every value escaped here, nowhere else)."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any
from urllib.parse import quote, urlencode

from ..core.memtypes import TYPES
from ..recall.options import PROFILES

# a colour per memory type, in TYPES' order: picked by farthest-point search among saturated sRGB
# colours readable on white, so every two of them and the grey of an unknown type differ by at
# least 19 CIEDE2000 (tests/test_web.py checks it)
PALETTE = ("#0066aa", "#008866", "#ff7700", "#7700aa", "#ff3388", "#990000", "#ff0022", "#ddbb00", "#886600",
           "#44bb00", "#11ccff", "#00ccbb", "#aa55ff", "#ff99ff", "#005500", "#992255", "#ff9999")  # fmt: skip
UNKNOWN_TYPE = "#98a2b3"
NAV = (("/", "Search", "search"), ("/graph", "Graph", "graph"), ("/state", "Memory state", "state"))
STATUSES = ("active", "any", "candidate", "conflict", "expired", "resolved", "superseded", "archived")


def type_colour(type_: str | None) -> str:
    if type_ in TYPES:
        return PALETTE[TYPES.index(type_) % len(PALETTE)]
    return UNKNOWN_TYPE


def _template() -> Template:
    return Template(
        resources.files("vaultmem.web").joinpath("templates/base.html").read_text(encoding="utf-8")
    )


def page(
    title: str, active: str, content: str, *, root: Path, generation: int, scripts: Iterable[str] = ()
) -> str:
    nav = "".join(
        f'<a href="{href}" class="{"on" if key == active else ""}">{label}</a>' for href, label, key in NAV
    )
    return _template().substitute(
        title=escape(title), page=active, main_class="wide" if active == "graph" else "", nav=nav, content=content, generation=generation,
        vault_name=escape(root.name), vault_path=escape(str(root)),
        scripts="".join(f'<script src="/static/{s}"></script>' for s in scripts),
    )  # fmt: skip


def note_href(path: str) -> str:
    return "/note?path=" + quote(path)


def note_link(path: str, title: str | None = None) -> str:
    return f'<a href="{escape(note_href(path))}">{escape(title or path)}</a>'


def badges(type_: str | None, status: str) -> str:
    c = type_colour(
        type_
    )  # the type's colour as a tint and a dot; the text stays dark (light hues read badly)
    t = f'<span class="badge" style="background:{c}1f;color:var(--fg)"><i style="background:{c}"></i>{escape(type_ or "note")}</span>'
    return t + (f'<span class="badge {escape(status)}">{escape(status)}</span>' if status != "active" else "")


def flash(message: str | None, error: bool = False) -> str:
    return (
        f'<div class="flash{" error" if error else ""}" role="status">{escape(message)}</div>'
        if message
        else ""
    )


def _select(name: str, options: Iterable[str], chosen: str, blank: str | None = None) -> str:
    opts = [f'<option value="">{escape(blank)}</option>'] if blank is not None else []
    opts += [
        f'<option value="{escape(o)}"{" selected" if o == chosen else ""}>{escape(o)}</option>'
        for o in options
    ]
    return f'<select name="{name}">{"".join(opts)}</select>'


# ---------------------------------------------------------------------- search


def search_form(p: dict[str, str]) -> str:
    def field(label: str, inner: str) -> str:
        return f"<label>{label}{inner}</label>"

    return (
        '<form class="search" method="get" action="/">'
        + field("query", f'<input name="q" value="{escape(p.get("q", ""))}" autofocus placeholder="what do you need to remember?">')
        + field("type", _select("type", TYPES, p.get("type", ""), "any"))
        + field("status", _select("status", STATUSES, p.get("status") or "active"))
        + field("tag", f'<input name="tag" size="8" value="{escape(p.get("tag", ""))}">')
        + field("since", f'<input name="since" size="6" placeholder="30d" value="{escape(p.get("since", ""))}">')
        + field("anchor", f'<input name="anchor" size="14" value="{escape(p.get("anchor", ""))}">')
        + field("profile", _select("profile", PROFILES, p.get("profile") or "default"))
        + '<button type="submit">Recall</button></form>'
    )  # fmt: skip


def _snippet(text: str, words: list[str]) -> str:
    out = escape(text)
    for w in sorted(set(words), key=len, reverse=True):
        if w.strip():
            out = out.replace(escape(w), f"<mark>{escape(w)}</mark>")
    return out


def _explain(data: dict[str, Any]) -> str:
    if not data:
        return ""
    rows = "".join(
        f"<tr><td>{escape(str(k))}</td><td>{escape(f'{v:.4f}' if isinstance(v, float) else json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else str(v))}</td></tr>"
        for k, v in data.items()
    )  # fmt: skip
    return f'<details class="explain"><summary>why this hit</summary><table>{rows}</table></details>'


def _left_out(n: int, params: dict[str, str]) -> str:
    """`` · 7 below the relevance floor (list them)``: what the floor left out, and the link."""
    if not n:
        return ""
    link = "/?" + urlencode({**params, "all": "1"})
    return f' · {n} below the relevance floor (<a id="list-all" href="{escape(link)}">list them</a>)'


def search_results(hits: list[dict[str, Any]], query: str, left_out: int = 0,
                   params: dict[str, str] | None = None) -> str:  # fmt: skip
    """Recall hits as ``Hit.as_dict(explain=True)`` gives them (from this process or a watcher);
    ``left_out``: how many more recall returned below the relevance floor (``relevance.py``)."""
    if not query:
        return '<p class="meta">Type a question: the same hybrid recall as <code>vaultmem recall</code>.</p>'
    more = _left_out(left_out, params or {"q": query})
    if not hits:
        return f'<p class="meta" id="no-hits">No memory matches {escape(query)!s}{more}.</p>'
    out = [f'<p class="meta">{len(hits)} hits for <b>{escape(query)}</b>{more}</p><div id="hits">']
    for h in hits:
        via = f" · {escape(h['via'])}" if h.get("via") else ""
        out.append(
            f'<div class="hit" data-path="{escape(h["path"])}"><h3>{note_link(h["path"], h["title"])}</h3>'
            f'<div class="meta">{badges(h.get("type"), h["status"])} score {h["score"]:.3f} · {escape(h["path"])}{via}</div>'
            f'<div>{_snippet(h.get("snippet") or "", h.get("highlights") or [])}</div>{_explain(h.get("explain") or {})}</div>'
        )  # fmt: skip
    return "".join(out) + "</div>"


# ---------------------------------------------------------------------- note


def _value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(escape(str(x)) for x in v)
    if isinstance(v, dict):
        return escape(json.dumps(v, ensure_ascii=False, default=str))
    return escape(str(v))


def frontmatter_table(meta: dict[str, Any]) -> str:
    rows = "".join(f"<tr><td>{escape(str(k))}</td><td>{_value(v)}</td></tr>" for k, v in meta.items())
    return (
        f'<table class="fm" id="frontmatter">{rows}</table>' if rows else '<p class="meta">no frontmatter</p>'
    )


def _when(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if ts else "never"


def remote_images_bar(path: str, count: int, loaded: bool) -> str:
    """What the note page says about its remote images (none: nothing), with the link that loads
    them for this one view or goes back to not loading them."""
    if not count:
        return ""
    if loaded:
        return (f'<p class="remote-bar" id="remote-images">{count} remote image{"s" if count != 1 else ""} loaded for this view · '
                f'<a href="{escape(note_href(path))}">hide them</a></p>')  # fmt: skip
    return (f'<p class="remote-bar" id="remote-images">{count} remote image{"s" if count != 1 else ""} not loaded '
            "(loading tells their server you read this note) · "
            f'<a id="load-remote" href="{escape(note_href(path))}&amp;images=load">load remote images</a></p>')  # fmt: skip


def note_page(rec: Any, meta: dict, html_body: str, backlinks: list[dict], chain: list[tuple[str, str, str]],
              usage: Any, message: str | None = None, error: bool = False, remote: tuple[int, bool] = (0, False)) -> str:  # fmt: skip
    back = (
        "".join(f"<li>{note_link(b['path'], b['title'])}</li>" for b in backlinks)
        or '<li class="meta">none</li>'
    )
    chain_html = (
        "".join(
            f'<li class="{"current" if p == rec.path else ""}">{note_link(p, t)} <span class="meta">{escape(s)}</span></li>'
            for p, t, s in chain
        )  # fmt: skip
        if len(chain) > 1
        else '<li class="meta">no other versions</li>'
    )
    u = usage
    usage_html = (
        f"<ul class=\"plain\" id=\"usage\"><li>retrieved {u.count if u else 0} times (last {_when(u.last_access if u else None)})</li>"
        f"<li>rated useful {u.useful if u else 0} of {u.ratings if u else 0} times</li></ul>"
    )  # fmt: skip
    hidden = f'<input type="hidden" name="path" value="{escape(rec.path)}">'

    def action(name: str, label: str, extra: str = "", cls: str = "") -> str:
        return (f'<form method="post" action="/action">{hidden}<input type="hidden" name="action" value="{name}">'
                f'{extra}<button class="{cls}" type="submit">{label}</button></form>')  # fmt: skip

    if rec.status == "candidate":  # a memory captured from a session, waiting for a person's yes
        acts = [action("confirm", "Confirm"), action("resolve", "Resolve", cls="plain")]
    else:
        acts = [
            action("resolve", "Resolve")
            if rec.status == "active"
            else action("reopen", "Reopen", cls="plain")
        ]
    acts.append(
        action(
            "supersede",
            "Superseded by",
            '<input name="other" placeholder="newer note: title or id" required>',
            "plain",
        )
    )
    acts += [
        action("rate-useful", "Useful", cls="plain"),
        action("rate-not-useful", "Not useful", cls="plain"),
    ]
    return (
        flash(message, error)
        + f'<h1 id="note-title">{escape(rec.title)}</h1><p class="meta">{badges(rec.type, rec.status)} {escape(rec.path)}</p>'
        + remote_images_bar(rec.path, *remote)
        + '<div class="cols"><div><div class="body" id="note-body">' + html_body + "</div></div><aside>"
        + f'<div class="card actions"><h2>Lifecycle</h2>{"".join(acts)}</div>'
        + f'<div class="card"><h2>Frontmatter</h2>{frontmatter_table(meta)}</div>'
        + f'<div class="card"><h2>Backlinks</h2><ul class="plain" id="backlinks">{back}</ul></div>'
        + f'<div class="card"><h2>Versions</h2><ol class="chain">{chain_html}</ol></div>'
        + f'<div class="card"><h2>Usage</h2>{usage_html}</div>'
        + "</aside></div>"
    )  # fmt: skip


# ---------------------------------------------------------------------- graph


def graph_page(params: dict[str, str], types: list[str], api: str, info: str) -> str:
    legend = "".join(f'<span><i style="background:{type_colour(t)}"></i>{escape(t)}</span>' for t in types)
    form = (
        '<form class="search" method="get" action="/graph">'
        f'<label>anchor (empty: whole vault)<input name="anchor" size="24" value="{escape(params.get("anchor", ""))}"></label>'
        f'<label>depth<input name="depth" size="2" value="{escape(params.get("depth", "2"))}"></label>'
        f'<label>cap<input name="cap" size="5" value="{escape(params.get("cap", "5000"))}"></label>'
        '<button type="submit">Draw</button></form>'
    )  # fmt: skip
    return (
        form + f'<p class="meta" id="graph-info">{escape(info)} · faded: resolved, superseded or archived · '
        "scroll to zoom, drag to pan, click a node to open it</p>"
        + f'<p class="legend">{legend}</p>'
        + f'<div id="graph-wrap"><canvas id="graph" data-src="{escape(api)}"></canvas><div id="tip"></div></div>'
    )  # fmt: skip


def graph_api_url(params: dict[str, str]) -> str:
    keep = {k: v for k, v in params.items() if k in ("anchor", "depth", "cap") and v}
    return "/api/graph" + ("?" + urlencode(keep) if keep else "")


# ---------------------------------------------------------------------- memory state


STATUS_COLOURS = {"active": "#12b76a", "candidate": "#f79009", "conflict": "#d92d20", "resolved": "#2f5bea",
                  "superseded": "#7a5af8", "archived": "#98a2b3"}  # fmt: skip


def history_chart(history: list[tuple[str, dict[tuple[str, str], int]]], by: str, chart_id: str) -> str:
    """An inline SVG line chart of the daily snapshots' totals by ``by`` ("type" or "status"),
    days placed by date (a missed day is a gap in x, not a squeezed step)."""
    if not history:
        return '<p class="meta">no snapshot yet</p>'
    pick = 0 if by == "type" else 1
    series: dict[str, dict[str, int]] = defaultdict(dict)
    for day, counts in history:
        for key, n in counts.items():
            series[key[pick]][day] = series[key[pick]].get(day, 0) + n
    days = [dt.date.fromisoformat(d) for d, _ in history]
    w, h, left, right, top, bottom = 560, 170, 36, 8, 8, 22
    span = max(1, (days[-1] - days[0]).days)
    top_n = max((n for row in series.values() for n in row.values()), default=1) or 1

    def x(d: dt.date) -> float:
        return left + (w - left - right) * ((d - days[0]).days / span if len(days) > 1 else 0.5)

    def y(n: int) -> float:
        return top + (h - top - bottom) * (1 - n / top_n)

    colour = (lambda k: STATUS_COLOURS.get(k, "#98a2b3")) if by == "status" else type_colour
    parts = [f'<line x1="{left}" y1="{y(0):.1f}" x2="{w - right}" y2="{y(0):.1f}" stroke="#d0d5dd"/>',
             f'<text x="{left - 4}" y="{y(top_n) + 4:.1f}" text-anchor="end">{top_n}</text>',
             f'<text x="{left - 4}" y="{y(0) + 4:.1f}" text-anchor="end">0</text>',
             f'<text x="{left}" y="{h - 4}">{days[0].isoformat()}</text>']  # fmt: skip
    if len(days) > 1:
        parts.append(f'<text x="{w - right}" y="{h - 4}" text-anchor="end">{days[-1].isoformat()}</text>')
    for name in sorted(series, key=lambda k: -max(series[k].values())):
        c = escape(colour(name))
        pts = [
            (x(d), y(series[name].get(d.isoformat(), 0)), d, series[name].get(d.isoformat(), 0)) for d in days
        ]
        parts.append(
            f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{" ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in pts)}"/>'
        )
        parts += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{c}"><title>{escape(name)} {d.isoformat()}: {n}</title></circle>'
                  for px, py, d, n in pts]  # fmt: skip
    legend = "".join(f'<span><i style="background:{escape(colour(k))}"></i>{escape(k)} {series[k].get(history[-1][0], 0)}</span>'
                     for k in sorted(series))  # fmt: skip
    return (f'<svg class="chart" id="{chart_id}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
            f'aria-label="notes by {by} per day" font-size="10" fill="#667085">{"".join(parts)}</svg>'
            f'<p class="legend">{legend}</p>')  # fmt: skip


def state_page(counts: dict[str, dict[str, int]], months: list[tuple[str, Counter[str]]], recent: list[tuple[Any, str, str]],
               candidates: list[Any], gaps: list[dict], report: Any,
               history: Sequence[tuple[str, dict[tuple[str, str], int]]] = ()) -> str:  # fmt: skip
    statuses = sorted({s for row in counts.values() for s in row}, key=lambda s: (s != "active", s))
    head = "".join(f"<th>{escape(s)}</th>" for s in statuses)
    body = "".join(
        f"<tr><td>{badges(t, 'active')}</td>" + "".join(f"<td>{row.get(s, 0)}</td>" for s in statuses) + "</tr>"
        for t, row in sorted(counts.items())
    )  # fmt: skip
    mbody = "".join(
        f"<tr><td>{escape(m)}</td><td>{sum(row.values())}</td>"
        f'<td class="bar"><div style="width:{min(300, 6 * sum(row.values()))}px"></div></td>'
        f'<td class="meta">{escape(", ".join(f"{t} {n}" for t, n in row.most_common()))}</td></tr>'
        for m, row in months
    )  # fmt: skip
    rec_html = "".join(f"<li>{note_link(r.path, r.title)} <span class=\"meta\">{escape(r.type or '')} · "
                       f"{escape(which)} {escape(date[:16])}</span></li>" for r, date, which in recent)  # fmt: skip
    rec_html = rec_html or '<li class="meta">no note has an updated or created date</li>'
    cand = "".join(
        f'<li>{note_link(r.path, r.title)}<form class="inline" method="post" action="/action">'
        f'<input type="hidden" name="path" value="{escape(r.path)}"><input type="hidden" name="action" value="confirm">'
        f'<input type="hidden" name="back" value="state"><button class="plain" type="submit">Confirm</button></form></li>'
        for r in candidates
    ) or '<li class="meta">none waiting</li>'  # fmt: skip
    gap_html = (
        "".join(f'<li>{escape(g["text"])} <span class="meta">×{g["count"]}</span></li>' for g in gaps)
        or '<li class="meta">none reported</li>'
    )
    finds = "".join(
        f'<li><span class="sev-{f.severity}">{escape(f.check.replace("_", " "))}</span> '
        f'{note_link(f.path) if f.path else ""} {escape(f.message)}</li>' for f in report.findings[:200]
    ) or '<li class="meta">nothing found</li>'  # fmt: skip
    held_html = "".join(
        f'<li>{note_link(f.path)} <span class="meta">{escape(f.message)}</span></li>'
        for f in report.findings if f.check == "held"
    ) or '<li class="meta">none held</li>'  # fmt: skip
    more = (
        f'<p class="meta">and {len(report.findings) - 200} more: run vaultmem doctor</p>'
        if len(report.findings) > 200
        else ""
    )
    summary = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.counts().items() if n) or "all good"
    return (
        '<h1>Memory state</h1><div class="cols"><div>'
        + f'<div class="card"><h2>Notes by type and status</h2><table class="grid" id="counts"><tr><th>type</th>{head}</tr>{body}</table></div>'
        + f'<div class="card"><h2>Added per month, by type</h2><table class="grid bars" id="months"><tr><th>month</th><th>notes</th><th></th><th>by type</th></tr>{mbody}</table>'
        + '<p class="meta">by each note\'s created date</p></div>'
        + '<div class="card" id="history"><h2>Notes over time, by status</h2>' + history_chart(list(history), "status", "history-status")
        + '<h2>Notes over time, by type</h2>' + history_chart(list(history), "type", "history-type")
        + f'<p class="meta">one snapshot a day ({len(history)} so far), taken when the index is reconciled or this page is built</p></div>'
        + f'<div class="card"><h2>Doctor</h2><p id="doctor-summary">{escape(summary)}</p><ul class="plain" id="doctor">{finds}</ul>{more}</div>'
        + '</div><aside>'
        + f'<div class="card"><h2>Recently changed</h2><ul class="plain" id="recent">{rec_html}</ul></div>'
        + f'<div class="card"><h2>Candidates to confirm</h2><ul class="plain" id="candidates">{cand}</ul></div>'
        + '<div class="card"><h2>Held for review</h2><p class="meta">from an agent or a capture, giving the agent '
        + f'orders: never injected until a person rewrites them or makes them their own</p><ul class="plain" id="held">{held_html}</ul></div>'
        + f'<div class="card"><h2>Gaps reported</h2><ul class="plain" id="gaps">{gap_html}</ul></div>'
        + "</aside></div>"
    )  # fmt: skip


def error_page(message: str) -> str:
    return f'<h1>Not here</h1>{flash(message, True)}<p><a href="/">Back to search</a></p>'
