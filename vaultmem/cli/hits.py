"""Recall hits as the terminal shows them (light: stdlib only), for `vaultmem recall` through
typer and its typer-free path (``quick``). Styles are ANSI codes, written only to a terminal."""

from __future__ import annotations

import json
import re

from ..core.fence import strip_escapes

CODES = {"bold": "1", "dim": "2", "yellow": "33"}


def style(text: str, *names: str, color: bool = True) -> str:
    """``text`` in the given styles (bold, dim, yellow) when ``color``."""
    if not color or not names:
        return text
    return "".join(f"\x1b[{CODES[n]}m" for n in names) + text + "\x1b[0m"


def highlight(text: str, words: list[str], color: bool = True) -> str:
    if not words or not color:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
    return pattern.sub(lambda m: style(m.group(0), "yellow", "bold"), text)


def hit_lines(h: dict, explain: bool, color: bool = True) -> list[str]:
    """The lines of one hit: rank, title, type, status and score; id and path; snippet; with
    ``explain`` the parts of its score. A note's own text never reaches the terminal as escapes."""
    h = {**h, **{k: strip_escapes(str(h[k])) for k in ("title", "id", "path", "snippet", "via") if h.get(k)}}
    head = style(f"{h['rank']:>2}. {h['title']}", "bold", color=color)
    state = f"  {h['status']}" if h.get("status") not in (None, "active") else ""
    lines = [
        f"{head}  [{h['type'] or '-'}]{state}  {score_text(h['score'])}"
        + (f"  ({h['via']})" if h.get("via") else "")
    ]
    where = f"{h['vault']}:" if h.get("vault") else ""
    place = (
        f"{where}{h['path']}" if h["id"] == h["path"] else f"{where}{h['id']}  {where}{h['path']}"
    )  # no id: the path once
    lines.append(style(f"    {place}", "dim", color=color))
    if h.get("outdated_by"):
        lines.append("    may be outdated by " + ", ".join(f"[[{t}]]" for t in h["outdated_by"]))
    if h["snippet"]:
        lines.append("    " + highlight(h["snippet"], h["highlights"], color))
    if explain:
        lines += explain_lines(h["explain"])
    return lines


def score_text(score: float) -> str:
    """A hit's score as printed: 3 decimals, 4 when 3 would round a score that is not 0 to 0.000
    (the score it has, below the average note too: its ``via`` says why it is a hit)."""
    return f"{score:.3f}" if abs(score) >= 0.0005 or not score else f"{score:.4f}"


def explain_lines(e: dict) -> list[str]:
    lines = [
        f"    = (bm25 {e['bm25']:.3f} [raw {e['bm25_raw']:.2f}] + vector {e['vector']:.3f} [cos {e['vector_raw']:.3f}]"
        + (f" + length {e['length']:.3f}" if "length" in e else "")
        + f" + context {e.get('context', 0.0):.3f}{' via ' + str(e['context_via']) if e.get('context_via') else ''}"
        f" + graph {e['graph']:.3f}{' via ' + str(e['graph_via']) if e.get('graph_via') else ''}"
        f" + anchor {e['anchor']:.3f}) x profile {e['profile']:.2f} x importance {e['importance']:.2f}"
        f" x adaptive blend {e['blend']:.3f}"
    ]
    if "adaptive" in e:
        lines.append(f"      adaptive {e['adaptive']:.3f} from usefulness {e['usefulness']:.2f}{_ratings(e)}, recency"
                     f" {e['recency']:.2f}, frequency {e['frequency']:.2f} (weights in [adaptive] of the vault config)")  # fmt: skip
    if "time_range" in e:
        lines.append(f"      + time {e.get('time', 0.0):.3f}: dates {e['time_range']}")
    if "first_round_rank" in e:
        came = (
            f"rank {e['first_round_rank']} in the first round"
            if e["first_round_rank"]
            else "not in the first round"
        )
        lines.append(f"      + subject {e.get('subject', 0.0):.3f} (second round; {came})"
                     f"{': ' + e['subject_via'] if e.get('subject_via') else ''}")  # fmt: skip
    if e.get("session_via"):
        lines.append(
            f"      + session {e.get('session', 0.0):.3f}: best match of the notes dated {e['session_via']}"
        )
    if e.get("turn"):
        lines.append(
            f"      + turn {e['turn']:.3f}: a conversation turn that {'tells' if e['turn'] > 0 else 'asks'}"
        )
    if "as_of" in e:
        lines.append(f"      valid on {e['as_of']}")
    return lines


def _ratings(e: dict) -> str:
    """`` (2 ratings; neutral 0.50 until 3)``: why usefulness has not moved yet."""
    n, least = int(e.get("ratings", 0)), int(e.get("min_ratings", 0))
    counted = f"; neutral 0.50 until {least}" if n < least else ""
    return f" ({n} rating{'s' if n != 1 else ''}{counted})"


DEGRADED = {
    "bm25": "keywords only: the memory service is starting (the next recall uses the model); "
    "scores relative to the best match",
    "first-index": "keywords first: this vault's first index; its vectors are being filled in behind "
    "(the next recalls use them)",
    "partial-vectors": "no keyword matches; answered from the vectors embedded so far of this vault's "
    "first index (the rest are being filled in)",
}


def indexing_note(indexing: dict | None) -> list[str]:
    """How far a vault being indexed behind the answer is (the service's ``indexing``)."""
    if not indexing:
        return []
    waited = f"; waited {indexing['waited']:g} s for them" if indexing.get("waited") else ""
    keywords = indexing.get("keywords") or {}
    first = (
        [f"keywords for {keywords['done']} of {keywords['total']} notes so far"]
        if keywords.get("total")
        else []
    )
    vectors = f"vectors for {indexing['vectors']} of {indexing['notes']} notes so far{waited}"
    return first + ([vectors] if indexing.get("notes") else [])


def recall_output(query: str, options: dict, hits: list[dict], degraded: str | None, explain: bool, as_json: bool,
                  color: bool = True, indexing: dict | None = None) -> tuple[list[str], list[str]]:  # fmt: skip
    """What `vaultmem recall` prints, for both of its paths (typer and ``quick``): the lines for
    standard output and the messages for standard error."""
    if as_json:
        data = {"query": query, "mode": options["mode"], "profile": options["profile"], "results": hits,
                **({"degraded": degraded} if degraded else {}), **({"indexing": indexing} if indexing else {})}  # fmt: skip
        return [json.dumps(data, indent=2, ensure_ascii=False)], []
    notes = [DEGRADED.get(degraded, DEGRADED["bm25"])] if degraded else []
    notes += indexing_note(indexing) if degraded else []
    notes += [] if hits else ["no memories match"]
    return [line for h in hits for line in hit_lines(h, explain, color)], notes


SKIPPED_SHOWN = 5  # notes named one by one; more are counted


def skipped_notes(skipped: dict[str, str], told: set[str]) -> list[str]:
    """The stderr lines for notes a command left out because they cannot be read, each named
    once per command (``told``: those already named): every command that reads notes says so,
    in its own process or through the service alike."""
    new = [(path, reason) for path, reason in skipped.items() if path not in told]
    told.update(path for path, _ in new)
    lines = [strip_escapes(f"skipped {path}: {reason}") for path, reason in new[:SKIPPED_SHOWN]]
    if len(new) > SKIPPED_SHOWN:
        lines.append(
            f"skipped {len(new) - SKIPPED_SHOWN} more notes that cannot be read (vaultmem status lists them)"
        )
    return lines
