"""The web view in a real headless browser: Debian's Chromium driven through its chromedriver by
selenium (an explicit Service path, so nothing is downloaded).

Without chromium/chromedriver these tests skip with the reason; under CI (CI=true) they fail
instead, so CI cannot pass without running them (.ci/run installs both).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from browser import Server, missing, open_browser
from helpers import wait_for, write

pytestmark = pytest.mark.integration  # a browser (chromedriver, chromium)

ADVISORY = "decisions/Use Postgres advisory locks for job leasing.md"
SHOTS = os.environ.get("VAULTMEM_SCREENSHOTS")  # a folder: save a screenshot of each page there
SHOTS = os.path.abspath(SHOTS) if SHOTS else None  # relative to where pytest starts (tests chdir away)


def _require_browser() -> None:
    reason = missing()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests must run in CI: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _require_browser()
    import shutil as sh

    from conftest import DEMO
    from helpers import HashEmbedder

    base = tmp_path_factory.mktemp("web")
    root = base / "demo"
    sh.copytree(DEMO, root, ignore=sh.ignore_patterns(".vaultmem", ".vaultmem-usage"))
    old = os.environ.get("VAULTMEM_HOME")
    os.environ["VAULTMEM_HOME"] = str(base / "home")
    server = Server(root, HashEmbedder())
    plant_history(root)
    browser = open_browser(base)
    browser.get(server.login_url())  # sets the session cookie
    try:
        yield server, browser, root
    finally:
        browser.quit()
        server.stop()
        if old is None:
            os.environ.pop("VAULTMEM_HOME", None)
        else:
            os.environ["VAULTMEM_HOME"] = old


def plant_history(root: Path, days: int = 5) -> None:
    """Earlier daily count snapshots, so the state page draws its charts over several days:
    today's counts (the server's reconcile took them) with fewer notes further back."""
    import datetime as dt

    from vaultmem.index.usage import UsageStore

    store = UsageStore.of(root)
    try:
        ((today, counts),) = store.count_history()
        for back in range(days, 0, -1):
            day = (dt.date.fromisoformat(today) - dt.timedelta(days=back)).isoformat()
            earlier = {
                (t, st): n - n * back // (days + 2)
                for (t, st), n in counts.items()
                if st != "superseded" or back < 3
            }
            store.snapshot_counts(day, earlier)
    finally:
        store.close()


def severe(browser) -> list[dict]:
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def shot(browser, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        size = browser.get_window_size()
        if not name.startswith("graph"):  # the whole page, up to 2,000 px
            height = browser.execute_script("return document.documentElement.scrollHeight")
            browser.set_window_size(size["width"], min(2000, height + 140))
        browser.save_screenshot(str(Path(SHOTS) / f"web-{name}.png"))
        browser.set_window_size(size["width"], size["height"])


def test_every_page_loads_without_console_errors(site):
    server, browser, _ = site
    from urllib.parse import quote

    pages = {"search": "/?q=why+advisory+locks+for+job+leasing", "note": "/note?path=" + quote(ADVISORY),
             "graph": "/graph", "graph-anchor": "/graph?anchor=" + quote("Harbor Point Marina") + "&depth=1",
             "state": "/state"}  # fmt: skip
    browser.get_log("browser")
    for name, url in pages.items():
        browser.get(server.base + url)
        wait_for(lambda: browser.execute_script("return document.readyState") == "complete", what=name)
        if name.startswith("graph"):
            wait_for(
                lambda: browser.execute_script("return window.vaultmemGraph.settled"), what="graph layout"
            )
            drawn = browser.execute_script("return window.vaultmemGraph.nodes")
            assert drawn == 68 if name == "graph" else 1 < drawn < 68, drawn
        else:
            time.sleep(0.5)  # let live.js poll once
        assert browser.find_element("css selector", "header nav"), name
        if name == "state":  # the counts over time: six daily snapshots, drawn as SVG lines
            lines = browser.find_elements("css selector", "#history-status polyline")
            assert lines and all(len(l.get_attribute("points").split()) == 6 for l in lines)
        assert severe(browser) == [], name
        shot(browser, name)


def test_search_returns_the_expected_hit(site):
    server, browser, _ = site
    browser.get(server.base + "/")
    box = browser.find_element("name", "q")
    box.send_keys("postgres advisory locks for job leasing")
    box.submit()
    first = wait_for(lambda: browser.find_elements("css selector", "#hits .hit"), what="hits")[0]
    assert first.get_attribute("data-path") == ADVISORY
    first.find_element("css selector", "h3 a").click()
    wait_for(lambda: "/note?path=" in browser.current_url, what="note page")
    assert browser.find_element("id", "note-title").text == "Use Postgres advisory locks for job leasing"


def test_clicking_a_graph_node_opens_the_note(site):
    server, browser, _ = site
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    target = "projects/Project - Tidewater.md"
    browser.get(server.base + "/graph")
    wait_for(lambda: browser.execute_script("return window.vaultmemGraph.settled"), what="graph layout")
    assert browser.execute_script("return window.vaultmemGraph.nodes") == 68
    browser.execute_script("document.getElementById('graph').scrollIntoView()")
    point = browser.execute_script("return window.vaultmemGraph.pointOf(arguments[0])", target)  # viewport px
    actions = ActionBuilder(browser)
    actions.pointer_action.move_to_location(int(point["x"]), int(point["y"])).click()
    actions.perform()
    wait_for(lambda: "/note?path=" in browser.current_url, what="the click to open a note")
    assert browser.find_element("id", "note-title").text == "Project: Tidewater"


def test_a_file_edited_on_disk_appears(site):
    server, browser, root = site
    from urllib.parse import quote

    path = "facts/Harbor Point launch discount.md"
    browser.get(server.base + "/note?path=" + quote(path))
    assert "EDITED-ON-DISK" not in browser.find_element("id", "note-body").text
    text = (root / path).read_text(encoding="utf-8")
    write(root, path, text.rstrip("\n") + "\n\nEDITED-ON-DISK: the discount now ends in March.\n")
    wait_for(
        on_page(lambda: "EDITED-ON-DISK" in browser.find_element("id", "note-body").text),
        what="the live reload",
    )
    assert severe(browser) == []


def on_page(check):  # type: ignore[no-untyped-def]
    """``check`` for wait_for while the page changes: an element not there yet, or replaced
    (stale) by a reload, means "not yet", not a failure. Chromium reports an element replaced
    between the lookup and the read as an "unknown error" whose message says so."""
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
        WebDriverException,
    )

    def poll():  # type: ignore[no-untyped-def]
        try:
            return check()
        except (NoSuchElementException, StaleElementReferenceException):
            return False
        except WebDriverException as e:
            if "does not belong to the document" in str(e.msg):
                return False
            raise

    return poll


def test_lifecycle_action_from_the_page(site):
    server, browser, root = site
    from urllib.parse import quote

    path = "gotchas/JPY is a zero-decimal currency in Stripe.md"
    browser.get(server.base + "/note?path=" + quote(path))
    browser.find_element("css selector", ".actions button[type=submit]").click()  # Resolve
    wait_for(
        on_page(lambda: "resolved" in browser.find_element("css selector", ".flash").text), what="the flash"
    )
    assert "status: resolved" in (root / path).read_text(encoding="utf-8")


def test_confirming_a_candidate_on_its_page(site):
    server, browser, root = site
    from urllib.parse import quote

    from selenium.common.exceptions import StaleElementReferenceException

    path = "rules/Always run migrations in a transaction.md"
    write(root, path, "---\ntitle: Always run migrations in a transaction\ntype: rule\nstatus: candidate\n---\n"
          "Wrap every schema migration in one transaction.\n")  # fmt: skip

    def loaded() -> bool:  # the server picks the new file up with its next look at the files
        browser.get(server.base + "/note?path=" + quote(path))
        return bool(browser.find_elements("id", "note-title"))

    wait_for(loaded, what="the new candidate note")
    browser.get_log("browser")  # drop the 404s of the looks before the server had the note
    assert "candidate" in browser.find_element("css selector", "p.meta").text
    browser.find_element("css selector", ".actions button[type=submit]").click()  # Confirm

    def flashed() -> bool:  # the old page may still be there, or go stale, right after the click
        try:
            return any("confirmed" in f.text for f in browser.find_elements("css selector", ".flash"))
        except StaleElementReferenceException:
            return False

    wait_for(flashed, what="the flash")
    text = (root / path).read_text(encoding="utf-8")
    assert "status: active" in text and "status: candidate" not in text
    assert severe(browser) == []


def test_the_token_is_required(site, tmp_path):
    server, _, _ = site
    other = open_browser(tmp_path)  # a fresh profile: no cookie
    try:
        other.get(server.base + "/state")
        assert "missing or wrong access token" in other.find_element("tag name", "body").text
        other.get(server.base + "/graph?login=not-a-login-code")
        assert "login link was used already" in other.find_element("tag name", "body").text
        other.get(server.login_url("/state"))
        assert other.current_url == server.base + "/state"  # the code left the address bar
        assert other.find_element("tag name", "h1").text == "Memory state"
        cookie = other.get_cookie(f"vaultmem_session_{server.base.rsplit(':', 1)[1]}")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    finally:
        other.quit()


# ---------------------------------------------------------------------- issue 29: the first hour


def open_note(server, browser, path: str) -> None:
    """Open a note written a moment ago (the server picks it up with its next look at the files)."""
    from urllib.parse import quote

    def loaded() -> bool:
        browser.get(server.base + "/note?path=" + quote(path))
        return bool(browser.find_elements("id", "note-title"))

    wait_for(loaded, what=path)
    browser.get_log("browser")  # drop the 404s of the looks before the server had the note


def test_a_page_on_another_port_cannot_frame_the_note_page(site):
    """Issue 29: a page on another port of 127.0.0.1 framed the note page and a click on Resolve
    went through (same site, so the session cookie was sent)."""
    from urllib.parse import quote

    from browser import OtherSite

    server, browser, _ = site
    target = server.base + "/note?path=" + quote(ADVISORY)
    evil = OtherSite({"/": ("text/html", (f'<h1>win a prize</h1><iframe id="f" src="{target}" width="900" height="600" '
                                          'onload="window.framed = true"></iframe>').encode())})  # fmt: skip
    try:
        browser.get(evil.base + "/")
        wait_for(lambda: browser.execute_script("return window.framed === true"), what="the frame's load")
        browser.switch_to.frame(browser.find_element("id", "f"))
        try:
            shown = browser.find_elements("id", "note-title") + browser.find_elements(
                "css selector", ".actions button"
            )
        finally:
            browser.switch_to.default_content()
        assert shown == []
    finally:
        evil.stop()
        browser.get_log("browser")  # the refusal is logged as an error: not this page's


def test_the_login_link_leaves_nothing_usable_in_the_browser_history(site, tmp_path):
    """Issue 29: the token sat in the browser's history as /?token=... (Chrome keeps the address
    it was sent to even when the server redirects at once)."""
    import sqlite3
    import urllib.error
    import urllib.request

    server, _, _ = site
    link = server.login_url("/state")
    other = open_browser(tmp_path)  # its own profile, with its own history
    try:
        other.get(link)
        assert other.current_url == server.base + "/state"
        other.get(server.base + "/graph")
    finally:
        other.quit()  # writes the history out
    (history,) = tmp_path.glob("tmp*/Default/History")
    db = sqlite3.connect(history)
    try:
        urls = [u for (u,) in db.execute("SELECT url FROM urls")]
    finally:
        db.close()
    assert link in urls and not any(server.token in u for u in urls)
    with pytest.raises(urllib.error.HTTPError) as refused:  # the link kept in the history opens nothing now
        urllib.request.urlopen(link, timeout=30)
    assert refused.value.code == 401


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a0e1a8e80000000049454e44ae426082")  # fmt: skip


def test_viewing_a_note_fetches_no_remote_image(site):
    """Issue 29: a note's remote image was fetched when the page was viewed."""
    from browser import OtherSite

    server, browser, root = site
    host = OtherSite({"/map.png": ("image/png", PNG)})
    path = "facts/Marina map.md"
    long_source = "https://charts.example.invalid/harbor-point/" + "slip-layout-" * 14 + "v2.png"
    try:
        write(root, path, f"---\ntitle: Marina map\ntype: fact\nsource: {long_source}\ncreated: 2026-11-20\n---\n"
              f"# Marina map\n\nThe slips as the harbour master drew them: ![marina map]({host.base}/map.png)\n\n"
              "Part of [[Project: Tidewater]].\n")  # fmt: skip
        open_note(server, browser, path)
        time.sleep(1.0)  # time for a load to happen, if anything were to load
        assert host.hits == []
        link = browser.find_element("css selector", "#note-body a.remote-image")
        assert link.get_attribute("href") == f"{host.base}/map.png" and "not loaded" in link.text
        shot(browser, "note-remote-images")
        browser.find_element("id", "load-remote").click()  # the click to load them, for this view
        wait_for(lambda: host.hits == ["/map.png"], what="the image loaded on request")
        img = wait_for(lambda: browser.find_elements("css selector", "#note-body img"), what="the image")[0]
        wait_for(lambda: browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) == 1,
                 what="the image drawn")  # fmt: skip
        assert severe(browser) == []
        browser.get(
            server.base + "/note?path=" + __import__("urllib.parse").parse.quote(path)
        )  # plain view again
        time.sleep(0.5)
        assert host.hits == ["/map.png"]
    finally:
        host.stop()


def test_the_note_page_shows_the_title_once_and_long_values_wrap(site):
    """Issue 29: the note page showed the title twice; long frontmatter values overflowed the sidebar."""
    server, browser, root = site
    path = "facts/Berth sensor feed.md"
    write(root, path, "---\ntitle: Berth sensor feed\ntype: fact\n"
          f"source: https://sensors.example.invalid/api/v3/berths/{'0123456789abcdef' * 8}\n"
          f"context: [\"app/integrations/{'berth_sensor_occupancy_' * 5}client.py\"]\n"
          f"an_unusually_long_frontmatter_key_name_from_another_tool: {'x' * 90}\n"
          "---\n# Berth sensor feed\n\nThe feed posts occupancy every 30 s.\n")  # fmt: skip
    open_note(server, browser, path)
    headings = [
        h
        for h in browser.find_elements("css selector", "h1, h2, h3")
        if h.text.strip() == "Berth sensor feed"
    ]
    assert len(headings) == 1
    overflow = browser.execute_script("""
        var aside = document.querySelector('aside').getBoundingClientRect(), out = [];
        document.querySelectorAll('#frontmatter td, #frontmatter').forEach(function (el) {
          var r = el.getBoundingClientRect();
          out.push([el.textContent.slice(0, 30), el.scrollWidth - el.clientWidth, r.right - aside.right]);
        });
        out.push(['page', document.documentElement.scrollWidth - document.documentElement.clientWidth, 0]);
        return out;""")
    assert overflow and [o for o in overflow if o[1] > 0 or o[2] > 0.5] == []
    shot(browser, "note-long-frontmatter")


LABELS = """
var drawn = [], proto = CanvasRenderingContext2D.prototype, fill = proto.fillText, dpr = window.devicePixelRatio || 1;
proto.fillText = function (text, x, y) {  // each title's box on the screen, as drawn
  var t = this.getTransform(), size = parseFloat(this.font), w = this.measureText(text).width;
  var left = (t.a * x + t.e) / dpr, base = (t.d * y + t.f) / dpr;
  drawn.push([text, left, base - 0.8 * size * t.d / dpr, left + w * t.a / dpr, base + 0.2 * size * t.d / dpr]);
  return fill.apply(this, arguments);
};
try { window.vaultmemGraph.finish(); } finally { proto.fillText = fill; }
return drawn;"""


def test_graph_labels_do_not_overlap(site):
    """Issue 29: graph labels overlapped at the centre."""
    server, browser, _ = site
    browser.get(server.base + "/graph")
    wait_for(lambda: browser.execute_script("return window.vaultmemGraph.settled"), what="graph layout")
    boxes = browser.execute_script(LABELS)
    assert len(boxes) >= 15, boxes
    clashes = [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
               if a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5 and a[2] < b[4] - 0.5 and b[2] < a[4] - 0.5]  # fmt: skip
    assert clashes == []
    shot(browser, "graph")
