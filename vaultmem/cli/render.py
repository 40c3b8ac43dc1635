"""What commands print, as lines (light: stdlib only), for the typer commands and their
typer-free path through the service (``cli/fast.py``), so both print the same."""

from __future__ import annotations

import json
import shlex

from ..core.fence import printable, strip_escapes

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any


def as_json(data: Any) -> list[str]:
    return [json.dumps(data, indent=2, ensure_ascii=False)]


def show_lines(data: dict[str, Any], json_out: bool = False) -> list[str]:
    """``show``: the note's path and id, then its text (a note's text never drives the terminal)."""
    if json_out:
        return as_json(data)
    expired = ", expired" if data["status"] == "expired" else ""
    return [
        strip_escapes(f"# {data['path']}  (id {data['id']}{expired})\n"),
        strip_escapes(data["text"].rstrip("\n")),
    ]


def list_lines(rows: list[dict[str, Any]], json_out: bool = False) -> list[str]:
    """``list``: one line per note (date, key as wide as the longest shown, type, title)."""
    if json_out:
        return as_json(rows)
    keys = [f"{r['vault']}:{r['id']}" if r.get("vault") else r["id"] for r in rows]
    width = min(40, max(map(len, keys), default=0))
    out = []
    for r, key in zip(rows, keys):
        mark = "  (expired)" if r["status"] == "expired" else ""
        out.append(strip_escapes(f"{r['updated'][:10]}  {key[:width]:<{width}}  {(r['type'] or '-'):<15} "
                                 f"{r['title']}{mark}"))  # fmt: skip
    return out


def edit_lines(result: dict[str, Any], json_out: bool = False) -> list[str]:
    if json_out:
        return as_json(result)
    out = [printable(f"{'updated' if result['changed'] else 'unchanged'} {result['path']}")]
    return out + ([f"undo: vaultmem undo {result['undo']}"] if result.get("undo") else [])


def stats_lines(data: dict[str, Any], json_out: bool = False) -> list[str]:
    if json_out:
        return as_json(data)
    out = [f"notes: {data['notes']}  ({data['notes_bytes'] / 1024:.0f} KiB; indexes {data['index_bytes'] / 1024:.0f} KiB)",
           f"dates: {data['oldest'] or '-'} .. {data['newest'] or '-'}"]  # fmt: skip
    for name in ("by_type", "by_status", "by_importance"):
        out.append(f"{name.replace('_', ' ')}: " + ", ".join(f"{k} {n}" for k, n in data[name].items()))
    return out


def report_lines(results: list[dict[str, Any]], json_out: bool = False) -> list[str]:
    """``resolve``, ``reopen``, ``supersede``: what changed (and, on a line of its own, how
    to take it back; ``was``/``was_superseded_by``: what reopen found, for that line only)."""
    if json_out:
        return as_json(
            [{k: v for k, v in r.items() if k not in ("was", "was_superseded_by")} for r in results]
        )
    out = []
    for r in results:
        extra = f" by {r['by']}" if r.get("by") else ""
        out.append(  # a title never drives the terminal
            printable(
                f"{r['action'] if r['changed'] else 'already ' + r['action']}{extra}: {r['id']}  {r['title']}"
            )
        )
    hints = [h for h in (undo_hint(r) for r in results if r["changed"]) if h]
    return out + (["undo: " + "; ".join(hints)] if hints else [])


def undo_hint(r: dict[str, Any]) -> str | None:
    """The command that takes one lifecycle change back."""
    key = shlex.quote(str(r["id"]))
    if r["action"] in ("resolved", "superseded"):
        return f"vaultmem reopen {key}"
    if r["action"] == "confirmed":
        return f"vaultmem edit {key} --set status=candidate"
    if r["action"] == "reopened" and r.get("was") == "superseded" and r.get("was_superseded_by"):
        return f"vaultmem supersede {key} {shlex.quote(str(r['was_superseded_by']))}"
    if r["action"] == "reopened" and r.get("was"):
        return f"vaultmem edit {key} --set status={r['was']}"
    return None


# ---------------------------------------------------------------------- doctor


def doctor_lines(report: dict[str, Any], json_out: bool = False, fixed: list[str] | None = None) -> list[str]:
    """``doctor``: what ``--fix`` changed, then a summary line per check, then each finding (the
    report as ``doctor.Report.as_dict`` gives it); paths and titles never drive the terminal."""
    if json_out:
        return as_json({**report, "fixed": fixed or []})
    out = [printable(f"fixed: {line}") for line in fixed or []]
    return out + [printable("\n".join(report_text(report)), keep="\n")]


def indexing_line(indexing: dict[str, Any] | None) -> str | None:
    """``indexing 300 of 1500 notes (vectors), about 50 s left`` for a vault the memory service
    is indexing (``Watcher.indexing``); None when it is not."""
    if not indexing or indexing.get("total") is None:
        return None
    from .progress import PHASES, about

    what = "notes" if indexing["phase"] in ("keywords", "vectors") else "notes' contextual vectors"
    left = about(indexing.get("seconds_left"))
    return (f"indexing {indexing['done']} of {indexing['total']} {what} ({PHASES.get(indexing['phase'], indexing['phase'])})"
            + (f", {left}" if left else ""))  # fmt: skip


def report_text(report: dict[str, Any]) -> list[str]:
    out = [f"vault: {report['vault']} ({report['notes']} notes)"]
    w = report["watcher"]
    if w.get("by") == "service":
        out.append(f"indexed by: the memory service, pid {w['pid']}")
        line = indexing_line(w.get("indexing"))
        out += [line] if line else []
    else:
        out.append(f"watcher: {w['state']}" + (f", pid {w['pid']}" if w.get("pid") else ""))
    idx = report["index"]
    drift = ", ".join(f"{n} {k}" for k, n in idx["drift"].items() if n) or "none"
    out.append(f"index: {idx['notes_indexed']} of {idx['files']} files indexed; drift: {drift}")
    out.append("disk: " + ", ".join(f"{k} {size(v)}" for k, v in report["disk"].items()))
    counts = {k: n for k, n in report["counts"].items() if n}
    out.append("findings: " + (", ".join(finding_count(k, n) for k, n in counts.items()) or "none"))
    for f in report["findings"]:
        where = f"{f['path']}: " if f["path"] else ""
        out.append(f"  [{f['severity']}] {f['check'].replace('_', ' ')}: {where}{f['message']}"
                   + (f" ({f['hint']})" if f["hint"] else ""))  # fmt: skip
        for kind, paths in (f["data"].get("sample") or {}).items():
            for p in paths:
                out.append(f"      {kind}: {p}")
    out.append("needs attention" if report["needs_attention"] else "all good")
    return out


def size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def finding_count(check: str, n: int) -> str:
    """``4 broken links``, ``1 orphan``: a check's name counted (drift and watcher stay singular)."""
    if check == "config_not_default":
        return f"{n} setting{'s' if n != 1 else ''} not at the default"
    word = check.replace("_", " ")
    return (
        f"{n} {word}"
        if n == 1 or check in ("index_drift", "watcher", "old_config_place")
        else plural(n, word)
    )


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
