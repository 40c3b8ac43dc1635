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
    browser.get(f"{server.base}/?token={server.token}")  # sets the session cookie
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
        (today, counts), = store.count_history()
        for back in range(days, 0, -1):
            day = (dt.date.fromisoformat(today) - dt.timedelta(days=back)).isoformat()
            earlier = {(t, st): n - n * back // (days + 2) for (t, st), n in counts.items() if st != "superseded" or back < 3}
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
            wait_for(lambda: browser.execute_script("return window.vaultmemGraph.settled"), what="graph layout")
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
    wait_for(on_page(lambda: "EDITED-ON-DISK" in browser.find_element("id", "note-body").text), what="the live reload")
    assert severe(browser) == []



def on_page(check):  # type: ignore[no-untyped-def]
    """``check`` for wait_for while the page changes: an element not there yet, or replaced
    (stale) by a reload, means "not yet", not a failure."""
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
    )

    def poll():  # type: ignore[no-untyped-def]
        try:
            return check()
        except (NoSuchElementException, StaleElementReferenceException):
            return False

    return poll


def test_lifecycle_action_from_the_page(site):
    server, browser, root = site
    from urllib.parse import quote

    path = "gotchas/JPY is a zero-decimal currency in Stripe.md"
    browser.get(server.base + "/note?path=" + quote(path))
    browser.find_element("css selector", ".actions button[type=submit]").click()  # Resolve
    wait_for(on_page(lambda: "resolved" in browser.find_element("css selector", ".flash").text), what="the flash")
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
        other.get(server.base + "/graph?token=not-the-token")
        assert "missing or wrong access token" in other.find_element("tag name", "body").text
        other.get(f"{server.base}/state?token={server.token}")
        assert other.current_url == server.base + "/state"  # the token left the address bar
        assert other.find_element("tag name", "h1").text == "Memory state"
        cookie = other.get_cookie("vaultmem_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    finally:
        other.quit()
