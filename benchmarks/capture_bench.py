"""Capture precision and recall (issue 36): what ``hook end`` keeps from a session, against the
memories a careful person would keep (``data/capture_set/sessions.yaml``).

Every session of the set is rendered into its agent's log format (``capture_set.py``) and run,
oldest first, through ``hooks.end_hook`` (the path of ``hook end`` for all five agents and of
``vaultmem import``) into one vault that holds a project note per project folder (as after
``wake``), with no embedding model. The memories a session wrote are the notes that are not its
session summary, handoff, project note or the aging rules'
``Session history`` note.

A written memory matches a label when its type is one of the label's types and every one of the
label's words is in its title or body (case-insensitive); each memory matches at most one label.
Precision: matched memories / memories written; recall: matched labels / labels. Per session
also: the ``## Outcome`` holds the label's outcome words, the title holds its topic words (a
whole clause), ``## Requests`` holds the request words, a chat-only session is not the project's
``Last Session`` (a session of Gemini, Copilot or Cursor is dated when the hook runs: the
script waits a second before each, so that no two are written in the same second); and across the set: memories made of a redacted secret, file names cut with "…".

    python benchmarks/capture_bench.py --label after

Results go to benchmarks/results/capture-<label>.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("VAULTMEM_NO_SERVICE", "1")

from benchmarks.capture_set import render, sessions
from benchmarks.common import WORK, parser, write_result

SKIP_TYPES = {"session_summary", "handoff", "project"}
SPLITS = ("tune", "heldout", "heldout2", "heldout3")
UNTIMED = ("gemini", "copilot", "cursor")  # their events carry no time the readers use
AGED = "Session history"  # what the aging rules write when a project has more than 3 sessions


def _section(body: str, name: str) -> str:
    m = re.search(rf"^## {name}\s*$(.*?)(?=^## |\Z)", body, re.M | re.S)
    return m.group(1).strip() if m else ""


def _matches(rec: dict, label: dict) -> bool:
    text = f"{rec['title']}\n{rec['body']}".lower()
    return rec["type"] in label["type"].split("|") and all(w.lower() in text for w in label["words"])


def score(written: list[dict], labels: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    """(true positives, false positives, missed labels)."""
    left, tp, fp = list(labels), [], []
    for rec in written:
        hit = next((lab for lab in left if _matches(rec, lab)), None)
        if hit is None:
            fp.append(rec)
        else:
            left.remove(hit)
            tp.append({**rec, "label": hit})
    return tp, fp, left


def run_session(vault: Any, s: dict, path: Path, n: int) -> dict:
    from vaultmem.agents.hooks import end_hook
    from vaultmem.memory.context import collect

    if s["agent"] in UNTIMED:
        time.sleep(1.05)  # dated when the hook runs, to the second: no tie with the session before
    before = set(vault.records())
    payload = {"session_id": f"capture-{n:04d}-{s['id']}", "transcript_path": str(path), "agent": s["agent"],
               "cwd": s["cwd"], "hook_event_name": "SessionEnd"}  # fmt: skip  # normalised, as its adapter reads it
    end_hook(vault, payload)
    records = vault.records()
    new = [records[k] for k in records if k not in before]
    written = [{"type": r.type, "title": r.title, "path": r.path, "body": vault.body(r.path)}
               for r in new if r.type not in SKIP_TYPES and not r.title.startswith(AGED)]  # fmt: skip
    summary = next((r for r in new if r.type == "session_summary"), None)
    body = vault.body(summary.path) if summary else ""
    anchor = f"Project: {Path(s['cwd']).name}"
    last = {line.id for line in collect(vault, anchor) if line.section == "Last Session"}
    checks, want = {}, s.get("checks") or {}
    if "outcome" in want:
        out = _section(body, "Outcome").lower()
        checks["outcome"] = all(w.lower() in out for w in want["outcome"])
    if "topic" in want:
        title = (summary.title if summary else "").lower()
        checks["topic"] = all(w.lower() in title for w in want["topic"])
    if "request" in want:
        req = _section(body, "Requests").lower()
        checks["request"] = all(w.lower() in req for w in want["request"])
    if want.get("last_session") is False:
        checks["not_last_session"] = not (summary and summary.key in last)
    tp, fp, missed = score(written, s.get("labels") or [])
    return {"id": s["id"], "agent": s["agent"], "split": s["split"], "tp": len(tp), "fp": len(fp),
            "labels": len(s.get("labels") or []), "false": [f"{r['type']}: {r['title']}" for r in fp],
            "missed": [f"{m['type']}: {' + '.join(m['words'])}" for m in missed],
            "summary": summary.title if summary else None, "checks": checks,
            "secret": [r["title"] for r in written if re.search(r"redacted", r["title"] + r["body"], re.I)],
            "cut": [r["path"] for r in written if Path(r["path"]).stem.endswith(("…", "..."))],
            "by_type": [(lab["label"]["type"], 1) for lab in tp] + [(m["type"], 0) for m in missed]}  # fmt: skip


def totals(rows: list[dict]) -> dict:
    tp, fp, labels = (sum(r[k] for r in rows) for k in ("tp", "fp", "labels"))
    checks = [(k, v) for r in rows for k, v in r["checks"].items()]
    by_type: dict[str, list[int]] = {}
    for r in rows:
        for t, hit in r["by_type"]:
            by_type.setdefault(t.split("|")[0], []).append(hit)
    return {
        "sessions": len(rows), "labels": labels, "written": tp + fp, "tp": tp, "fp": fp,
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / labels, 3) if labels else None,
        "recall_by_type": {t: f"{sum(h)}/{len(h)}" for t, h in sorted(by_type.items())},
        "checks_passed": {k: f"{sum(v for c, v in checks if c == k)}/{sum(1 for c, _ in checks if c == k)}"
                          for k in sorted({c for c, _ in checks})},
        "secret_memories": sum(len(r["secret"]) for r in rows), "cut_file_names": sum(len(r["cut"]) for r in rows),
    }  # fmt: skip


def bench(work: Path, only: str | None = None) -> dict:
    from vaultmem.core.scaffold import init_vault
    from vaultmem.index.embed import NoEmbedder
    from vaultmem.vault import Vault

    shutil.rmtree(work, ignore_errors=True)
    paths = render(work / "transcripts")
    root = work / "vault"
    init_vault(root)
    (root / ".vaultmem.toml").write_text('[embedding]\nmodel = "none"\n')
    vault = Vault(root, embedder=NoEmbedder())
    rows = []
    try:
        for folder in dict.fromkeys(Path(s["cwd"]).name for s in sessions()):
            vault.remember("project", f"Project: {folder}", f"The {folder} project.")
        for n, (s, path) in enumerate(zip(sessions(), paths, strict=True)):
            if only is None or s["split"] == only:
                rows.append(run_session(vault, s, path, n))
    finally:
        vault.close()
    return {"all": totals(rows), **{split: totals([r for r in rows if r["split"] == split])
                                    for split in SPLITS}, "sessions": rows}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--label", default="after", help="results go to results/capture-<label>.json")
    ap.add_argument("--split", choices=list(SPLITS), help="only these sessions")
    args = ap.parse_args(argv)
    result = bench(WORK / "capture", args.split)
    path = write_result(f"capture-{args.label}", result)
    for split in (*SPLITS, "all"):
        print(split, json.dumps(result[split]))
    for r in result["sessions"]:
        if r["false"] or r["missed"] or not all(r["checks"].values()) or r["secret"] or r["cut"]:
            print(f"  {r['id']}: false={r['false']} missed={r['missed']} checks={r['checks']} "
                  f"secret={r['secret']} cut={r['cut']} title={r['summary']!r}")  # fmt: skip
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
