"""Page load of the web view's graph page (whole vault) for a synthetic vault, in headless Chromium.

    python benchmarks/web_graph.py [--notes 5000] [--runs 5] [--vault DIR]

Makes the vault with ``synth.py`` (BM25 only: the graph page needs no vectors), serves it with
the web app in this process, and loads ``/graph`` ``--runs`` times in one browser. Per load:
the graph JSON's server time and size, then in the page (ms since navigation start) when the
data arrived, when the first frame was drawn (the page is usable: zoom, pan, click) and when
the layout settled; and the time of one redraw (what panning or zooming costs). Also times
the other pages once warm. Writes ``results/web-graph-<notes>.json``; medians are quoted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from benchmarks.common import write_result  # noqa: E402
from benchmarks.synth import generate  # noqa: E402


def fetch(url: str, token: str) -> tuple[float, int]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    t = time.perf_counter()
    body = urllib.request.urlopen(req, timeout=300).read()
    return time.perf_counter() - t, len(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--vault", type=Path, help="Reuse (or make) the vault here.")
    args = ap.parse_args()
    from browser import Server, missing, open_browser

    if missing():
        sys.exit(f"web_graph: {missing()}")
    work = Path(tempfile.mkdtemp(prefix="vm-webgraph-"))
    root = args.vault or work / "vault"
    if not (root / "projects").is_dir():
        generate(root, args.notes)
    (root / ".vaultmem.toml").write_text('[embedding]\nmodel = "none"\n', encoding="utf-8")
    os.environ.setdefault("VAULTMEM_HOME", str(work / "home"))
    t = time.perf_counter()
    server = Server(root, None, poll=3600)
    start_s = time.perf_counter() - t
    browser = open_browser(work)
    try:
        browser.get(f"{server.base}/?token={server.token}")
        runs = []
        for _ in range(args.runs):
            api_s, api_bytes = fetch(server.base + "/api/graph", server.token)
            browser.get(server.base + "/graph")
            deadline = time.time() + 300
            while not browser.execute_script("return window.vaultmemGraph && window.vaultmemGraph.settled"):
                if time.time() > deadline:
                    raise SystemExit("web_graph: the layout did not settle in 300 s")
                time.sleep(0.05)
            g = browser.execute_script("return window.vaultmemGraph")
            nav = browser.execute_script("var t = performance.getEntriesByType('navigation')[0]; return [t.responseEnd, t.domContentLoadedEventEnd]")
            errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
            runs.append({"api_ms": round(api_s * 1000, 1), "api_bytes": api_bytes, "html_ms": round(nav[0], 1),
                         "dom_ms": round(nav[1], 1), "data_ms": round(g["fetchedMs"], 1),
                         "first_frame_ms": round(g["readyMs"], 1), "settled_ms": round(g["settledMs"], 1),
                         "redraw_ms": round(g["drawMs"], 2), "nodes": g["nodes"], "edges": g["edges"],
                         "console_errors": len(errors)})  # fmt: skip
            print(runs[-1], flush=True)
        pages = {}
        for name, url in (("search", "/?q=kalo+mine"), ("state", "/state"), ("note", "/note?path=projects/Project%20-%20P0.md")):
            fetch(server.base + url, server.token)  # warm
            pages[name] = round(statistics.median(fetch(server.base + url, server.token)[0] for _ in range(3)) * 1000, 1)
    finally:
        browser.quit()
        server.stop()
    keys = [k for k in runs[0] if k not in ("nodes", "edges")]
    summary = {k: statistics.median(r[k] for r in runs) for k in keys}
    data = {"notes": args.notes, "nodes": runs[0]["nodes"], "edges": runs[0]["edges"], "runs": runs,
            "median": summary, "server_start_s": round(start_s, 1), "other_pages_ms": pages}  # fmt: skip
    print(write_result(f"web-graph-{args.notes}", data))
    print({"median": summary, "other_pages_ms": pages})


if __name__ == "__main__":
    main()
