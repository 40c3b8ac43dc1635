"""What commands print, as lines (light: stdlib only), for the typer commands and their
typer-free path through the service (``cli/fast.py``), so both print the same."""

from __future__ import annotations

import json

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
    return [printable(f"{'updated' if result['changed'] else 'unchanged'} {result['path']}")]


def stats_lines(data: dict[str, Any], json_out: bool = False) -> list[str]:
    if json_out:
        return as_json(data)
    out = [f"notes: {data['notes']}  ({data['notes_bytes'] / 1024:.0f} KiB; indexes {data['index_bytes'] / 1024:.0f} KiB)",
           f"dates: {data['oldest'] or '-'} .. {data['newest'] or '-'}"]  # fmt: skip
    for name in ("by_type", "by_status", "by_importance"):
        out.append(f"{name.replace('_', ' ')}: " + ", ".join(f"{k} {n}" for k, n in data[name].items()))
    return out


def report_lines(results: list[dict[str, Any]], json_out: bool = False) -> list[str]:
    """``resolve``, ``reopen``, ``supersede``: what changed."""
    if json_out:
        return as_json(results)
    out = []
    for r in results:
        extra = f" by {r['by']}" if r.get("by") else ""
        out.append(  # a title never drives the terminal
            printable(
                f"{r['action'] if r['changed'] else 'already ' + r['action']}{extra}: {r['id']}  {r['title']}"
            )
        )
    return out
