"""A hook command's wrapper: ``python recorder.py LOGDIR EVENT -- COMMAND``.

Runs COMMAND (a shell string, as the agent would) with the same stdin, passes its stdout,
stderr and exit code through, and writes ``LOGDIR/<ns>-<EVENT>.json``: the payload, the
answer and the start and end times. The start is written first, so a hook the agent killed
leaves a record without an end."""

from __future__ import annotations

import ctypes
import json
import os
import signal
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
    # the hook dies with the recorder, as it would have died in its place: a SIGTERM is passed on,
    # and the kernel kills it when the recorder is killed outright (PR_SET_PDEATHSIG)
    child = subprocess.Popen(
        command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_die_with_parent, start_new_session=False,
    )  # fmt: skip
    signal.signal(signal.SIGTERM, lambda *_: (child.send_signal(signal.SIGTERM), sys.exit(143)))
    out, err = child.communicate(raw)
    record.update(
        end=time.time(),
        rc=child.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )
    _write(path, record)
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    return child.returncode


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _write(path: Path, record: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1))
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
