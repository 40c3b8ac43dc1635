"""Save a session's real hook payloads (and the agent's session log) as fast-lane fixtures.

``tests/fixtures/agents/real/<agent>/<Event>.json`` is the JSON the agent piped into that hook
(``<Event>-2.json`` for the second call, ...); ``transcript.<ext>`` is the session log the
payload names. The session's temp folder becomes ``/tmp/e2e`` and nothing else personal is in
them (the fake key, the planted notes and a generated session id). ``claude/SessionStart-fork.json``
was recorded by hand: a ``claude -p --resume ID --fork-session`` with ``|fork`` added to the
SessionStart matcher (without it Claude Code runs no start hook for a fork)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agents_e2e.harness import Session

SCRUB_ROOT = "/tmp/e2e"
MAX_LOG = 512 * 1024


REPO = Path(__file__).resolve().parents[2]
# each agent's hook event -> the vaultmem hook setup --write runs for it
EVENTS = {
    "SessionStart": "start", "sessionStart": "start",
    "UserPromptSubmit": "prompt", "BeforeAgent": "prompt", "userPromptSubmitted": "prompt",
    "Stop": "stop", "AfterAgent": "stop", "agentStop": "stop",
    "PreCompact": "pre-compact", "PreCompress": "pre-compact", "preCompact": "pre-compact",
    "SessionEnd": "end", "sessionEnd": "end",
}  # fmt: skip


def scrub(text: str, root: Path) -> str:
    """The session's temp folder -> /tmp/e2e, this checkout -> /repo."""
    pairs = [(str(root.resolve()), SCRUB_ROOT), (str(root), SCRUB_ROOT), (str(REPO), "/repo")]
    pairs += [(re.sub(r"[^A-Za-z0-9]", "-", a), re.sub(r"[^A-Za-z0-9]", "-", b)) for a, b in pairs[:2]]
    for real, fake in pairs:  # and Claude's project folder name (the path, dashed)
        text = text.replace(real, fake)
    return text


def save(session: Session, dest: Path) -> list[Path]:
    """Write the fixtures of ``session`` under ``dest`` (emptied first); returns the files."""
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.iterdir():  # a named extra (SessionStart-fork.json, recorded by hand) stays
        if re.fullmatch(r"[A-Za-z]+(-\d+)?\.json|transcript\..*", old.name):
            old.unlink()
    written, seen = [], {}
    for hook in session.hooks:
        if hook.get("payload") is None:
            continue
        event = hook["event"]
        seen[event] = seen.get(event, 0) + 1
        name = f"{event}.json" if seen[event] == 1 else f"{event}-{seen[event]}.json"
        path = dest / name
        path.write_text(scrub(json.dumps(hook["payload"], indent=2), session.root) + "\n")
        written.append(path)
    log = _session_log(session)
    if log and log.is_file() and log.stat().st_size <= MAX_LOG:
        path = dest / f"transcript{''.join(log.suffixes[-1:]) or '.log'}"
        path.write_text(scrub(log.read_text(errors="replace"), session.root))
        written.append(path)
    return written


def _session_log(session: Session) -> Path | None:
    for hook in reversed(session.hooks):
        payload = hook.get("payload") or {}
        for key in ("transcript_path", "transcriptPath"):
            if payload.get(key):
                return Path(payload[key])
    return None
