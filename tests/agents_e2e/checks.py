"""What a session of a real agent must show, each check a (passed, detail) pair.

Shared by the test lane (one test per check) and ``benchmarks/agents_e2e.py`` (the table)."""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable

from agents_e2e.harness import PLANTED, PROJECT, PROMPT, REMINDER, UNRELATED, Session

LOOP = ("start", "prompt", "stop", "end")  # the vaultmem hooks a one-prompt session must run
SOURCE = {"claude": "claude-code-", "gemini": "gemini-cli-", "codex": "codex-", "copilot": "copilot-cli-"}
Result = tuple[bool, str]


def _marker(text: str) -> str | None:
    found = re.search(r"\[MEMORY ([0-9a-f]+)\]", text or "")
    return found.group(1) if found else None


def _reached(s: Session, text: str) -> bool:
    return any(text in t for t in s.model_texts())


def hooks_fired(s: Session) -> Result:
    fired = {h["vaultmem"] for h in s.hooks}
    missing = [e for e in LOOP if e not in fired]
    return not missing, f"fired {sorted(fired)}" + (f"; missing {missing}" if missing else "")


def hooks_completed(s: Session) -> Result:
    bad = [
        f"{h['event']} (killed: no end)" if h.get("seconds") is None else f"{h['event']} (exit {h.get('rc')})"
        for h in s.hooks
        if h.get("seconds") is None or h.get("rc") != 0
    ]
    return not bad, "every hook ended with exit 0" if not bad else "; ".join(bad)


def start_context(s: Session) -> Result:
    starts = s.hook("start")
    mark = _marker(starts[0].get("stdout", "")) if starts else None
    if not mark:
        return False, "the start hook printed no [MEMORY] block"
    ok = _reached(s, f"[MEMORY {mark}]") and _reached(s, PROJECT)
    return ok, f"start block {mark} {'reached' if ok else 'did not reach'} the model"


def prompt_recall(s: Session) -> Result:
    """The first prompt hook ran on the user's question, recalled the planted note only, and
    its block reached the model."""
    prompts = s.hook("prompt")
    if not prompts:
        return False, "no prompt hook"
    first = prompts[0]
    payload = str(first.get("payload") or "")
    out = first.get("stdout", "")
    mark = _marker(out)
    problems = []
    if PROMPT not in payload:
        problems.append("the question is not in its payload")
    if PLANTED not in out:
        problems.append(f"'{PLANTED}' not recalled")
    if UNRELATED in out:
        problems.append(f"unrelated '{UNRELATED}' recalled")
    if mark and not _reached(s, f"[MEMORY {mark}]"):
        problems.append("its block did not reach the model")
    return not problems, "; ".join(problems) or f"recalled '{PLANTED}', block {mark} reached the model"


def stop_once(s: Session) -> Result:
    asked = [h for h in s.hook("stop") if REMINDER in h.get("stdout", "")]
    reached = _reached(s, REMINDER)
    ok = len(asked) == 1 and reached
    return (
        ok,
        f"reminder given {len(asked)} time(s) by {len(s.hook('stop'))} stop hook(s), reached the model: {reached}",
    )


def reminder_not_recalled(s: Session) -> Result:
    """A prompt hook fed vaultmem's own reminder as a user prompt answers nothing."""
    echoed = [
        h for h in s.hook("prompt") if REMINDER in str(h.get("payload") or "") and h.get("stdout", "").strip()
    ]
    n = len([h for h in s.hook("prompt") if REMINDER in str(h.get("payload") or "")])
    return not echoed, f"{n} prompt hook(s) got the reminder as a prompt, {len(echoed)} recalled on it"


def _summaries(s: Session) -> list[dict]:
    prefix = SOURCE[s.agent]
    return [n for n in s.notes_of("session_summary") if str(n.get("source", "")).startswith(prefix)]


def summary_written(s: Session) -> Result:
    found = _summaries(s)
    if len(found) != 1:
        return False, f"{len(found)} session summaries from {SOURCE[s.agent]}*"
    body = found[0]["body"]
    problems = []
    if PROMPT not in body:
        problems.append("the user's request is missing")
    if REMINDER in body or REMINDER in str(found[0].get("title", "")):
        problems.append("it holds the Stop reminder")
    return not problems, "; ".join(problems) or f"'{found[0].get('title')}' lists the request"


def no_bogus_checkpoint(s: Session) -> Result:
    bad = [n["path"] for n in s.notes if "before compaction" in n["body"]]
    return not bad, f"checkpoint lines in {bad}" if bad else "no compaction checkpoint"


CHECKS: dict[str, Callable[[Session], Result]] = {
    "hooks_fired": hooks_fired,
    "hooks_completed": hooks_completed,
    "start_context": start_context,
    "prompt_recall": prompt_recall,
    "stop_once": stop_once,
    "reminder_not_recalled": reminder_not_recalled,
    "summary_written": summary_written,
    "no_bogus_checkpoint": no_bogus_checkpoint,
}


def waits(s: Session) -> dict[str, list[float]]:
    """Seconds the agent waited for each vaultmem hook (recorder start to end), by hook."""
    out: dict[str, list[float]] = {}
    for h in s.hooks:
        if h.get("seconds") is not None:
            out.setdefault(h["vaultmem"], []).append(round(h["seconds"], 3))
    return out


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return round(statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1], 3)
