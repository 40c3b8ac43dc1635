"""The labelled capture set (``data/capture_set/sessions.yaml``) and its transcripts: each session
written in its agent's own log format (Claude Code's jsonl, Codex rollouts, Gemini CLI chats,
Cursor agent transcripts, Copilot CLI events), the shapes of the fixtures under
``tests/fixtures/agents/``. ``python benchmarks/capture_set.py`` re-renders
``data/capture_set/transcripts/`` from the YAML.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent / "data" / "capture_set"
SPEC = HERE / "sessions.yaml"
OUT = HERE / "transcripts"
START = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)


def sessions() -> list[dict[str, Any]]:
    return yaml.safe_load(SPEC.read_text(encoding="utf-8"))["sessions"]


def _ts(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _abs(cwd: str, path: str) -> str:
    return path if path.startswith("/") else f"{cwd}/{path}"


def _sid(n: int) -> str:
    return f"0c0ffee0-{n:04d}-4a2b-9c3d-{n:012d}"


def claude(s: dict, n: int, t0: dt.datetime) -> list[dict]:
    sid, cwd, out = _sid(n), s["cwd"], []
    base = {"cwd": cwd, "sessionId": sid, "version": "2.1.0", "isSidechain": False, "userType": "external"}
    for i, turn in enumerate(s["turns"]):
        ts, tid = _ts(t0 + dt.timedelta(seconds=20 * i)), f"toolu_{n:02d}{i:02d}"
        if "user" in turn:
            out.append({**base, "type": "user", "message": {"role": "user", "content": turn["user"]},
                        "uuid": f"u{i}", "timestamp": ts})  # fmt: skip
        elif "say" in turn:
            out.append({**base, "type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": turn["say"]}]}, "uuid": f"a{i}", "timestamp": ts})  # fmt: skip
        else:
            name, inp = (
                ("Bash", {"command": turn["sh"]})
                if "sh" in turn
                else ("Edit", {"file_path": _abs(cwd, turn["edit"]), "old_string": "a", "new_string": "b"})
            )
            text = (
                turn.get("out", "The file has been updated.")
                if "sh" in turn
                else "The file has been updated."
            )
            out.append({**base, "type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": tid, "name": name, "input": inp}]}, "uuid": f"a{i}", "timestamp": ts})  # fmt: skip
            out.append({**base, "type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": tid, "type": "tool_result", "content": text, "is_error": bool(turn.get("code"))}]},
                "uuid": f"r{i}", "timestamp": ts})  # fmt: skip
    return out


def codex(s: dict, n: int, t0: dt.datetime) -> list[dict]:
    sid, cwd = _sid(n), s["cwd"]
    out = [{"timestamp": _ts(t0), "type": "session_meta", "payload": {"id": sid, "timestamp": _ts(t0), "cwd": cwd,
            "originator": "codex_cli_rs", "cli_version": "0.150.0", "source": "cli"}}]  # fmt: skip
    for i, turn in enumerate(s["turns"]):
        ts, cid = _ts(t0 + dt.timedelta(seconds=20 * i + 1)), f"call_{n}_{i}"

        def item(payload: dict, kind: str = "response_item", ts: str = ts) -> None:
            out.append({"timestamp": ts, "type": kind, "payload": payload})

        if "user" in turn:
            item(
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": turn["user"]}]}
            )
            item({"type": "user_message", "message": turn["user"], "kind": "plain"}, "event_msg")
        elif "say" in turn:
            item(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": turn["say"]}],
                }
            )
            item({"type": "agent_message", "message": turn["say"]}, "event_msg")
        elif "sh" in turn:
            item({"type": "function_call", "name": "exec_command", "call_id": cid,
                  "arguments": json.dumps({"cmd": turn["sh"], "workdir": cwd})})  # fmt: skip
            item({"type": "function_call_output", "call_id": cid, "output": f"Chunk ID: {cid}\nWall time: 1.0 seconds\n"
                  f"Process exited with code {turn.get('code', 0)}\nOutput:\n{turn.get('out', '')}\n"})  # fmt: skip
        else:
            patch = f"*** Begin Patch\n*** Update File: {turn['edit']}\n@@\n-a\n+b\n*** End Patch\n"
            item({"type": "custom_tool_call", "status": "completed", "call_id": cid, "name": "apply_patch",
                  "input": patch})  # fmt: skip
            item({"type": "custom_tool_call_output", "call_id": cid,
                  "output": f"Success. Updated the following files:\nM {turn['edit']}\n"})  # fmt: skip
    return out


def gemini(s: dict, n: int, t0: dt.datetime) -> list[dict]:
    cwd = s["cwd"]
    out: list[dict] = [{"sessionId": _sid(n), "projectHash": Path(cwd).name, "startTime": _ts(t0),
                        "lastUpdated": _ts(t0), "kind": "main"}]  # fmt: skip
    for i, turn in enumerate(s["turns"]):
        ts, mid = _ts(t0 + dt.timedelta(seconds=20 * i)), f"m-{n}-{i}"
        if "user" in turn:
            out.append({"id": mid, "timestamp": ts, "type": "user", "content": [{"text": turn["user"]}]})
        elif "say" in turn:
            out.append(
                {
                    "id": mid,
                    "timestamp": ts,
                    "type": "gemini",
                    "content": turn["say"],
                    "model": "gemini-2.5-pro",
                }
            )
        else:
            if "sh" in turn:
                name, args = "run_shell_command", {"command": turn["sh"]}
                text = f"Output: {turn.get('out', '') or '(empty)'}\nExit Code: {turn.get('code', 0)}"
            else:
                name, args = (
                    "replace",
                    {"file_path": _abs(cwd, turn["edit"]), "old_string": "a", "new_string": "b"},
                )
                text = f"Successfully modified file: {_abs(cwd, turn['edit'])} (1 replacements)."
            call = {"id": f"{name}-{n}-{i}", "name": name, "args": args, "status": "success", "timestamp": ts,
                    "result": [{"functionResponse": {"id": f"{name}-{n}-{i}", "name": name,
                                                     "response": {"output": text}}}]}  # fmt: skip
            out.append({"id": mid, "timestamp": ts, "type": "gemini", "content": "", "toolCalls": [call]})
        out.append({"$set": {"lastUpdated": ts}})
    return out


def cursor(s: dict, n: int, t0: dt.datetime) -> list[dict]:
    cwd, out = s["cwd"], []
    for i, turn in enumerate(s["turns"]):
        if "user" in turn:
            stamp = (t0 + dt.timedelta(seconds=20 * i)).strftime("%A, %b %d, %Y, %I:%M %p (UTC+0)")
            text = f"<timestamp>{stamp}</timestamp>\n<user_query>\n{turn['user']}\n</user_query>"
            out.append({"role": "user", "message": {"content": [{"type": "text", "text": text}]}})
        elif "say" in turn:
            out.append({"role": "assistant", "message": {"content": [{"type": "text", "text": turn["say"]}]}})
        elif "sh" in turn:
            out.append({"role": "assistant", "message": {"content": [
                {"type": "tool_use", "name": "Shell", "input": {"command": turn["sh"], "working_directory": cwd}}]}})  # fmt: skip
        else:
            out.append({"role": "assistant", "message": {"content": [{"type": "tool_use", "name": "StrReplace",
                        "input": {"path": _abs(cwd, turn["edit"]), "old_string": "a", "new_string": "b"}}]}})  # fmt: skip
    out.append({"type": "turn_ended", "status": "success"})
    return out


def copilot(s: dict, n: int, t0: dt.datetime) -> list[dict]:
    cwd = s["cwd"]
    out: list[dict] = [{"type": "session.start", "data": {"sessionId": _sid(n), "version": 1, "producer": "copilot-agent",
                        "startTime": _ts(t0), "context": {"cwd": cwd, "gitRoot": cwd, "branch": "main"}},
                        "id": "e0", "timestamp": _ts(t0), "parentId": None}]  # fmt: skip
    for i, turn in enumerate(s["turns"]):
        ts, eid = _ts(t0 + dt.timedelta(seconds=20 * i + 1)), f"e{i + 1}"

        def ev(kind: str, data: dict, suffix: str = "", eid: str = eid, ts: str = ts) -> None:
            out.append({"type": kind, "data": data, "id": eid + suffix, "timestamp": ts, "parentId": None})

        if "user" in turn:
            ev("user.message", {"content": turn["user"], "attachments": []})
        elif "say" in turn:
            ev("assistant.message", {"messageId": eid, "content": turn["say"], "toolRequests": []})
        else:
            cid = f"toolu_{n}_{i}"
            if "sh" in turn:
                name, args = "bash", {"command": turn["sh"]}
                result = turn.get("out", "")
            else:
                name, args = "edit", {"path": _abs(cwd, turn["edit"]), "old_str": "a", "new_str": "b"}
                result = f"File {_abs(cwd, turn['edit'])} updated with changes."
            ev("assistant.message", {"messageId": eid, "content": "", "toolRequests": [
                {"toolCallId": cid, "name": name, "arguments": args, "type": "function"}]})  # fmt: skip
            ev("tool.execution_complete", {"toolCallId": cid, "success": not turn.get("code"),
                                           "result": {"content": result}}, "r")  # fmt: skip
    return out


WRITERS: dict[str, Callable[[dict, int, dt.datetime], list[dict]]] = {
    "claude": claude, "codex": codex, "gemini": gemini, "cursor": cursor, "copilot": copilot,
}  # fmt: skip


def path_of(s: dict) -> Path:
    return OUT / f"{s['id']}.{s['agent']}.jsonl"


def start_of(n: int) -> dt.datetime:
    return START + dt.timedelta(hours=3 * n)


def render(out: Path = OUT) -> list[Path]:
    """Write every session's transcript into ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, s in enumerate(sessions()):
        lines = WRITERS[s["agent"]](s, n, start_of(n))
        path = out / path_of(s).name
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        old = (start_of(n) - START).total_seconds() + 1_700_000_000  # not "still being written"
        os.utime(path, (old, old))
        paths.append(path)
    return paths


if __name__ == "__main__":
    print(f"{len(render())} transcripts in {OUT}")
