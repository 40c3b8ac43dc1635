"""A hook command's wrapper: ``python recorder.py LOGDIR EVENT -- COMMAND``.

Runs COMMAND (a shell string, as the agent would) with the same stdin, passes its stdout,
stderr and exit code through, and writes ``LOGDIR/<ns>-<EVENT>.json``: the payload, the
answer and the start and end times. The start is written first, so a hook the agent killed
leaves a record without an end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    logdir, event, sep, *rest = argv
    assert sep == "--", "usage: recorder.py LOGDIR EVENT -- COMMAND"
    command = " ".join(rest)
    started = time.time()
    raw = sys.stdin.buffer.read()
    path = Path(logdir) / f"{time.time_ns()}-{os.getpid()}-{event}.json"
    record = {"event": event, "command": command, "start": started, "stdin": raw.decode("utf-8", "replace")}
    record["env"] = {
        k: v for k, v in os.environ.items() if k.startswith(("CLAUDE", "GEMINI", "CODEX", "COPILOT"))
    }
    _write(path, record)
    done = subprocess.run(command, shell=True, input=raw, capture_output=True)
    record.update(
        end=time.time(),
        rc=done.returncode,
        stdout=done.stdout.decode("utf-8", "replace"),
        stderr=done.stderr.decode("utf-8", "replace"),
    )
    _write(path, record)
    sys.stdout.buffer.write(done.stdout)
    sys.stderr.buffer.write(done.stderr)
    return done.returncode


def _write(path: Path, record: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1))
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
