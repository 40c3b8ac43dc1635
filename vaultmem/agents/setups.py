"""What each coding agent needs to use a vault (``vaultmem setup``): pure functions.

For every agent: the MCP server entry, the session hooks it supports (or a note that it has
none), where its standing instructions go, and the instruction text itself. ``merge_json`` and
``merge_toml`` fold the MCP entry into an existing config file's text without losing any other
entry; ``write_config`` writes the result with a backup of the old file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import BadInput
from ..core.store import atomic_write
from .adapters import ADAPTERS

SERVER_NAME = "vaultmem"
AGENTS = ("claude", "codex", "cursor", "gemini", "copilot")
LABELS = {a: ADAPTERS[a].title for a in AGENTS}  # "Claude Code", "Codex CLI", ...


@dataclass
class AgentSetup:
    """Everything one agent needs, as data (printed by ``vaultmem setup``)."""

    agent: str
    label: str
    vault: str
    config_path: str  # the file holding the agent's MCP servers
    config_format: str  # "json" or "toml"
    config_snippet: str  # what goes into it
    hooks_path: str | None
    hooks: dict[str, Any] | None
    hooks_note: str
    rules_path: str  # where the standing instructions go
    instructions: str
    notes: list[str] = field(default_factory=list)
    server: dict[str, Any] = field(default_factory=dict)  # the MCP server entry (what --write merges)
    command: str = "vaultmem"  # the vaultmem the hooks and the MCP entry run

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------- the command they run


def executable(argv0: str | None = None) -> str:
    """The absolute path of the running ``vaultmem`` (what an agent's hooks and MCP entry will
    run, whatever its PATH), else the one next to this Python, else the one on PATH, else the
    bare name."""
    argv0 = sys.argv[0] if argv0 is None and sys.argv else argv0
    candidates = [Path(argv0)] if argv0 and Path(argv0).name in ("vaultmem", "vaultmem.exe") else []
    candidates.append(Path(sys.executable).with_name("vaultmem"))  # `python -m vaultmem` in an environment
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.absolute())
    found = shutil.which("vaultmem")
    return str(Path(found).absolute()) if found else "vaultmem"


TEMPORARY_MARKS = {"/uv/archive-v": "uv's cache (uvx)", "/pip-build-env-": "a pip build environment",
                   "/pipx/.cache/": "pipx's cache (pipx run)", "/pip-run-": "pip-run"}  # fmt: skip


def temporary_place(command: str) -> str | None:
    """Why ``command`` lives in a temporary environment (the temp folder, uvx's or ``pipx run``'s
    cache) that may be gone when the agent runs it; None when it does not."""
    path = Path(command)
    if not path.is_absolute():
        return None
    text = str(path)
    for mark, what in TEMPORARY_MARKS.items():
        if mark in text:
            return what
    for tmp in {Path(tempfile.gettempdir()), Path(tempfile.gettempdir()).resolve()}:
        if path.is_relative_to(tmp):
            return f"the temporary folder {tmp}"
    return None


# ---------------------------------------------------------------------- the pieces


def server_entry(vault: Path, agent: str = "claude", command: str = "vaultmem") -> dict[str, Any]:
    """The MCP server entry every agent runs: ``vaultmem mcp --vault ABS_PATH`` over stdio."""
    entry = {"command": command, "args": ["mcp", "--vault", str(vault)]}
    return {"type": "local", **entry, "tools": ["*"]} if agent == "copilot" else entry


def http_entry(agent: str, url: str, token: str) -> dict[str, Any]:
    """The MCP server entry for ``vaultmem mcp --http`` at ``url``, carrying the user's access
    token as a bearer header (each agent spells its HTTP entry differently)."""
    headers = {"Authorization": f"Bearer {token}"}
    if agent in ("claude", "copilot"):
        return {"type": "http", "url": url, "headers": headers}
    if agent == "gemini":
        return {"httpUrl": url, "headers": headers}
    if agent == "codex":
        return {"url": url, "http_headers": headers}
    return {"url": url, "headers": headers}


def sleep_command(vault: Path, summary: str = "...", source: str | None = None) -> str:
    src = f" --source {shlex.quote(source)}" if source else ""
    return f"vaultmem sleep --vault {shlex.quote(str(vault))}{src} --summary {shlex.quote(summary)}"


def hook_command(vault: Path, event: str, agent: str = "claude", command: str = "vaultmem") -> str:
    return f"{shlex.quote(command)} hook {event} --agent {agent} --vault {shlex.quote(str(vault))}"


HOOK_EVENTS = tuple(ADAPTERS["claude"].events.values())  # Claude Code's, in the order written
TIMEOUTS = {"start": 30, "prompt": 30, "stop": 10, "pre-compact": 10, "end": 10}  # seconds; a cold prompt loads the model
END_TIMEOUTS = {"claude": 30, "codex": 3}  # Claude Code kills SessionEnd after 1.5 s unless told; Codex caps it at 3 s
# no SessionStart matcher: every source (startup, resume, clear, compact, fork, ...) gets the block
MATCHERS = {("gemini", "pre-compact"): "manual"}  # Gemini fires PreCompress (trigger auto) before every model call


def agent_hooks(agent: str, vault: Path, command: str = "vaultmem") -> dict[str, Any]:
    """The hooks of the whole memory loop in ``agent``'s own config shape, each event the
    adapter maps a vaultmem hook to (``adapters.py``), each command with ``--agent``:

    - Claude Code, Codex (``.codex/hooks.json``), Gemini (``settings.json``): ``{event: [{matcher?,
      hooks: [{type, command, ...}]}]}``; Codex's ``timeout`` in seconds (SessionEnd: 3, its cap),
      Gemini's in milliseconds with a ``name`` for ``/hooks``;
    - Cursor (``hooks.json``, ``version: 1``): ``{event: [{command, timeout}]}``, ``loop_limit: 1``
      on stop (asked once);
    - Copilot CLI (``hooks/*.json``, ``version: 1``): ``{event: [{type, bash, timeoutSec}]}``."""
    from .adapters import ADAPTERS

    events = ADAPTERS[agent].events
    hooks: dict[str, Any] = {}
    for name, event in events.items():
        cmd = hook_command(vault, name, agent, command)
        seconds = END_TIMEOUTS.get(agent, TIMEOUTS[name]) if name == "end" else TIMEOUTS[name]
        if agent == "cursor":
            hooks[event] = [
                {"command": cmd, "timeout": seconds, **({"loop_limit": 1} if name == "stop" else {})}
            ]
        elif agent == "copilot":
            hooks[event] = [{"type": "command", "bash": cmd, "timeoutSec": seconds}]
        else:
            hook: dict[str, Any] = {"type": "command", "command": cmd}
            if agent in ("codex", "claude"):
                hook["timeout"] = seconds
            elif agent == "gemini":
                hook = {
                    "type": "command",
                    "name": f"vaultmem-{name}",
                    "command": cmd,
                    "timeout": seconds * 1000,
                }
            group: dict[str, Any] = {"matcher": MATCHERS[agent, name]} if (agent, name) in MATCHERS else {}
            hooks[event] = [{**group, "hooks": [hook]}]
    return {"version": 1, "hooks": hooks} if agent in ("cursor", "copilot") else {"hooks": hooks}


def claude_hooks(vault: Path, command: str = "vaultmem") -> dict[str, Any]:
    """``.claude/settings.json`` hooks: the [MEMORY] block at session start, the relevant memories
    at each prompt, one reminder to save at Stop, a checkpoint before compaction and the session
    summary at the end (see cli/hooks.py)."""
    return agent_hooks("claude", vault, command)


def _is_vaultmem_hook(entry: Any) -> bool:
    """A hook entry vaultmem installed (``vaultmem wake|sleep|hook ...``, by any path), old or new."""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command", entry.get("bash"))
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return len(words) >= 2 and Path(words[0]).name == "vaultmem" and words[1] in ("wake", "sleep", "hook")


def merge_hooks(text: str, hooks: dict[str, Any]) -> str:
    """The settings text with vaultmem's hooks in place: every vaultmem hook command already
    there (e.g. the older bare ``wake``/``sleep``) is replaced, every other hook and key kept.
    Groups holding ``hooks`` lists (Claude Code, Codex, Gemini) and flat entries (Cursor,
    Copilot) alike."""
    data = _json_object(text, "hooks", "the hooks")
    before = json.loads(json.dumps(data))
    if "version" in hooks:
        data.setdefault("version", hooks["version"])
    current = data.setdefault("hooks", {})
    for event in [*current, *(e for e in hooks["hooks"] if e not in current)]:  # the file's order, then ours
        groups = current.get(event, [])
        if not isinstance(groups, list):
            if event not in hooks["hooks"]:
                continue  # another setting under "hooks" (Gemini CLI's older `hooks.enabled`): not ours
            raise BadInput(f"hooks.{event} in the settings file is not a list; add the hooks by hand")
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                rest = [h for h in group["hooks"] if not _is_vaultmem_hook(h)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
            elif _is_vaultmem_hook(group):
                continue
            kept.append(group)
        kept += hooks["hooks"].get(event, [])
        if kept:
            current[event] = kept
        else:
            current.pop(event, None)
    if data == before:
        return text
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def instructions(vault: Path, hooks: bool) -> str:
    """The standing instruction text telling an agent how to use its memory."""
    start = ("A [MEMORY] block is loaded when a session starts; if it is missing, call `wake`"
             if hooks else "When a session starts, call `wake`")  # fmt: skip
    sleep = sleep_command(vault, "what was done")
    return f"""\
## Memory (vaultmem)

You have long-term memory: a vault of markdown notes at `{vault}`, served by the `vaultmem`
MCP server. Use it: the next session, yours or another agent's, starts from what you leave.

- {start}
  with the project's anchor (e.g. "Project: MyApp") and your task. Ids in [brackets] are
  for `read_note`, `resolve`, `supersede` and `rate_memories`.
- Before deciding or changing something that may have history (why is X like this, how do we
  do Y, was this bug seen before), `recall` it with a question in your own words.
- When something worth keeping happens, `remember` it: one memory per note, a specific title,
  the anchor, your agent/session name as `source`, and the right type: decision (a choice and
  why), gotcha (a trap), bug_fix (symptom, cause, fix), preference (how the user likes
  things), lesson, pattern, fact, discovery, trade_off, commitment, relationship,
  architecture, tech_context, progress.
- When a memory turns out wrong or outdated, `remember` the correction and `supersede` the
  old one; when something is done or no longer relevant, `resolve` it.
- In a long session, save progress now and then: `vaultmem checkpoint --vault {shlex.quote(str(vault))} "..."`.
- Before you finish: `rate_memories` for the memories you used (useful true/false, plus any
  gap), then save the session: `{sleep} --next "step 1; step 2"`.
- Without the MCP tools, write a markdown note into the vault with your file tools, following
  the conventions in `{vault}/README.md`; a running `vaultmem watch` indexes it.
"""


def default_paths(agent: str, home: Path, project: Path, user: bool = False,
                  env: dict[str, str] | None = None) -> tuple[Path, str, Path, str]:  # fmt: skip
    """(MCP config file, its format, hooks file, rules file) of an agent: in the project, or
    with ``user`` the user-level files (``$CODEX_HOME``, ``$COPILOT_HOME`` honoured)."""
    env = dict(os.environ) if env is None else env
    codex = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    copilot = Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else home / ".copilot"
    table = {
        "claude": (project / ".mcp.json", "json", project / ".claude" / "settings.json", project / "CLAUDE.md"),
        "cursor": (project / ".cursor" / "mcp.json", "json", project / ".cursor" / "hooks.json",
                   project / ".cursor" / "rules" / "vaultmem.mdc"),
        "gemini": (project / ".gemini" / "settings.json", "json", project / ".gemini" / "settings.json", project / "GEMINI.md"),
        "codex": (project / ".codex" / "config.toml", "toml", project / ".codex" / "hooks.json", project / "AGENTS.md"),
        "copilot": (project / ".github" / "mcp.json", "json", project / ".github" / "hooks" / "vaultmem.json",
                    project / ".github" / "copilot-instructions.md"),
    }  # fmt: skip
    users = {
        "claude": (home / ".claude.json", "json", home / ".claude" / "settings.json", home / ".claude" / "CLAUDE.md"),
        "cursor": (home / ".cursor" / "mcp.json", "json", home / ".cursor" / "hooks.json", table["cursor"][3]),
        "gemini": (home / ".gemini" / "settings.json", "json", home / ".gemini" / "settings.json",
                   home / ".gemini" / "GEMINI.md"),
        "codex": (codex / "config.toml", "toml", codex / "hooks.json", codex / "AGENTS.md"),
        "copilot": (copilot / "mcp-config.json", "json", copilot / "hooks" / "vaultmem.json",
                    copilot / "copilot-instructions.md"),
    }  # fmt: skip
    if agent not in table:
        raise BadInput(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
    config, fmt, hooks, rules = (users if user else table)[agent]
    return config, fmt, hooks, str(rules)


HOOKS_NOTES = {
    "claude": "SessionStart prints the [MEMORY] block, UserPromptSubmit the few memories relevant to each prompt, "
              "Stop asks once to save what the session did, PreCompact checkpoints, SessionEnd writes a session "
              "summary from the transcript (`vaultmem hook ...`). --write merges them into the settings file.",
    "codex": "The whole loop (Codex's hooks are on by default; `[features] hooks = false` turns them off): SessionStart "
             "and UserPromptSubmit add memory as developer context, Stop asks once to save, PreCompact checkpoints, "
             "SessionEnd (Codex 0.145+) has the session summary written from the rollout by a detached process (Codex "
             "gives it 3 s at most). Codex runs new or changed hooks only once you trust them in `/hooks`, and reads a "
             "project's .codex/ only in a trusted project. --write merges them into hooks.json.",
    "cursor": "The whole loop: sessionStart adds the [MEMORY] block to the conversation, beforeSubmitPrompt the "
              "memories relevant to each prompt (`additional_context`, read by Cursor 3.20 though documented only "
              "for sessionStart), stop sends one follow-up asking to save (loop_limit 1), preCompact checkpoints, "
              "sessionEnd writes the summary from the agent transcript (which has no tool results: failed commands "
              "are not in it). Open a new chat after --write merges them into hooks.json.",
    "gemini": "The whole loop: SessionStart and BeforeAgent add memory as hook context, AfterAgent asks once to save "
              "(Gemini sends the reason back as a prompt), PreCompress checkpoints, SessionEnd has the summary written "
              "from the chat recording by a detached process (the CLI does not wait). Gemini runs a project's hooks "
              "only in a trusted folder and warns once about new ones. --write merges them into settings.json.",
    "copilot": "The whole loop: sessionStart adds the [MEMORY] block (only the last sessionStart hook's context is "
               "kept; CLI 1.0.8 and older dropped it), userPromptSubmitted the memories relevant to each prompt (the "
               "docs say command hooks' output is dropped there, the 1.0.65 changelog that it is used: it depends on "
               "the version), agentStop asks once to save, preCompact checkpoints, sessionEnd writes the summary from "
               "events.jsonl. Copilot reads hooks when it starts. --write merges them into the hooks file.",
}  # fmt: skip
NOTES = {
    "codex": "a project's .codex/config.toml and .codex/hooks.json are read only when Codex trusts the project; "
             "`--user` writes ~/.codex/ instead",
    "copilot": "the instruction file still tells the agent to call `wake` when no [MEMORY] block arrived (Copilot "
               "versions differ in what hooks may add)",
}  # fmt: skip


def plan(agent: str, vault: Path, home: Path, project: Path, config: Path | None = None,
         http: tuple[str, str] | None = None, user: bool = False, command: str = "vaultmem") -> AgentSetup:  # fmt: skip
    """What ``agent`` needs to use the vault at ``vault`` (an absolute path); with ``http``
    (url, access token), an entry for a running ``vaultmem mcp --http`` instead of stdio;
    ``command``: the vaultmem the hooks and the MCP entry run (an absolute path, see
    ``executable``); ``user``: the user-level files instead of the project's."""
    config_path, fmt, hooks_path, rules = default_paths(agent, home, project, user)
    if config is not None and hooks_path == config_path:  # Gemini: one settings file holds both
        hooks_path = config
    config_path = config or config_path
    entry = http_entry(agent, *http) if http else server_entry(vault, agent, command)
    snippet = toml_table(("mcp_servers", SERVER_NAME), entry) if fmt == "toml" else json_snippet(entry)
    instr = instructions(vault, hooks=True)
    if agent == "cursor":
        instr = "---\ndescription: How to use long-term memory (vaultmem)\nalwaysApply: true\n---\n\n" + instr
    notes = []
    if not Path(command).is_absolute():
        notes.append("`vaultmem` was not found as a file: the agent must find the command on its PATH; install "
                     "vaultmem where the agent runs, or put its full path in the entries below.")  # fmt: skip
    why = temporary_place(command)
    if why:
        notes.append(f"the vaultmem running now ({command}) lives in {why}, which may be gone when the agent runs it: "
                     "install vaultmem for good (`uv tool install vaultmem` or `pipx install vaultmem`) and run "
                     "setup again from there")  # fmt: skip
    if agent in NOTES:
        notes.append(NOTES[agent])
    if http:
        notes.append(f"the entry below holds your access token: keep {config_path} private and out of git; "
                     f"start the server with `vaultmem mcp --vault {shlex.quote(str(vault))} --http`")  # fmt: skip
    return AgentSetup(agent, LABELS[agent], str(vault), str(config_path), fmt, snippet, str(hooks_path),
                      agent_hooks(agent, vault, command), HOOKS_NOTES[agent], rules, instr, notes, entry, command)  # fmt: skip


def render(s: AgentSetup) -> str:
    """The human-readable guide ``vaultmem setup`` prints."""
    out = [f"# vaultmem for {s.label}  (vault: {s.vault})", ""]
    out += [f"note: {n}" for n in s.notes] + ([""] if s.notes else [])
    out += [f"## 1. MCP server -> {s.config_path}  (merged by --write)", "", s.config_snippet.rstrip(), ""]
    out += ["## 2. Session hooks" + (f" -> {s.hooks_path}" if s.hooks_path else ""), "", s.hooks_note]
    if s.hooks:
        out += ["", json.dumps(s.hooks, indent=2)]
    out += ["", f"## 3. Instructions -> {s.rules_path}", "", s.instructions.rstrip(), ""]
    return "\n".join(out)


# ---------------------------------------------------------------------- JSON configs


def json_snippet(entry: dict[str, Any]) -> str:
    return json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2) + "\n"


TRANSPORT_KEYS = {
    "command",
    "args",
    "type",
    "url",
    "httpUrl",
    "headers",
    "http_headers",
}  # switching stdio <-> HTTP drops the others


def _json_object(text: str, key: str, what: str) -> dict[str, Any]:
    """A JSON config file's object ({} when empty), whose ``key`` (if there) is an object;
    BadInput saying to add ``what`` by hand otherwise."""
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as e:
        raise BadInput(f"the config is not valid JSON ({e}); fix it or add {what} by hand") from None
    if not isinstance(data, dict) or not isinstance(data.get(key, {}), dict):
        raise BadInput(f"the config is not a JSON object with an object under {key!r}; add {what} by hand")
    return data


def merge_json(text: str, entry: dict[str, Any], name: str = SERVER_NAME) -> str:
    """The config text with ``mcpServers.<name>`` set to ``entry``; every other key kept."""
    data = _json_object(text, "mcpServers", "the entry")
    servers = data.setdefault("mcpServers", {})
    current = servers.get(name) if isinstance(servers.get(name), dict) else {}
    other = _other_transport(entry)
    merged = {
        **{k: v for k, v in current.items() if k not in other},
        **entry,
    }  # keeps e.g. an "env" the user added
    if current == merged:
        return text
    servers[name] = merged
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------- TOML configs

BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    return key if BARE_KEY.match(key) else toml_string(key)


def toml_string(value: str) -> str:
    """A TOML basic string (control characters, quotes and backslashes escaped)."""
    out = []
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\u{ord(ch):04X}"))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_table(path: tuple[str, ...], entry: dict[str, Any]) -> str:
    """One ``[a.b]`` table with its keys."""
    head = "[" + ".".join(toml_key(p) for p in path) + "]"
    return head + "\n" + "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in entry.items())


HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")


def _header_key(line: str) -> tuple[str, ...] | None:
    """The dotted key of a table header line (quotes removed), or None."""
    m = HEADER.match(line)
    if not m:
        return None
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', m.group(1))
    return tuple(a or b or c for a, b, c in parts)


def merge_toml(text: str, entry: dict[str, Any], path: tuple[str, ...] = ("mcp_servers", SERVER_NAME)) -> str:
    """The config text with the table ``[mcp_servers.vaultmem]`` holding ``entry``: its keys are
    rewritten right under the table's header (the table is appended when missing); every other
    line, the table's own comments and other keys included, stays. Checked by parsing: the
    result must equal the old config plus the entry."""
    old = _load_toml(text)
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if _header_key(ln) == path), None)
    if start is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        new = text + sep + toml_table(path, entry)
    else:
        end = next((i for i in range(start + 1, len(lines)) if _header_key(lines[i]) is not None), len(lines))
        header = lines[start] if lines[start].endswith("\n") else lines[start] + "\n"
        keys = "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in entry.items())
        rest = _drop_keys(lines[start + 1 : end], set(entry) | _other_transport(entry))
        new = "".join(lines[:start]) + header + keys + "".join(rest) + "".join(lines[end:])
    _check_toml_merge(old, _load_toml(new, merged=True), path, entry)
    return new


def _other_transport(entry: dict[str, Any]) -> set[str]:
    """The keys of the other transport (stdio ``command``/``args`` vs HTTP ``url``...): an
    entry switched from one to the other must not keep them (as ``merge_json`` does)."""
    return TRANSPORT_KEYS - set(entry) if set(entry) & TRANSPORT_KEYS else set()


KEY_LINE = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*=(.*)$""", re.S)


def _drop_keys(lines: list[str], keys: set[str]) -> list[str]:
    """Table body lines without the assignments of ``keys`` (multi-line arrays included)."""
    out, depth = [], 0
    for line in lines:
        if depth > 0:  # inside a multi-line array being dropped
            depth += line.count("[") - line.count("]")
            continue
        m = KEY_LINE.match(line)
        if m and (m.group(1) or m.group(2) or m.group(3)) in keys:
            value = m.group(4)
            depth = max(0, value.count("[") - value.count("]"))
            continue
        out.append(line)
    return out


def _load_toml(text: str, merged: bool = False) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        what = "merging would make it invalid" if merged else "it is not valid TOML"
        raise BadInput(f"cannot merge into the config: {what} ({e}); add the table by hand") from None


def _check_toml_merge(old: dict, new: dict, path: tuple[str, ...], entry: dict[str, Any]) -> None:
    """Everything but the one table is unchanged, and the table holds the entry."""

    def without(data: dict) -> dict:
        data = json.loads(json.dumps(data, default=str))
        node = data
        for key in path[:-1]:
            node = node.get(key, {})
        if isinstance(node, dict):
            table = node.get(path[-1], {})
            for key in set(entry) | _other_transport(entry):
                table.pop(key, None)
            if not table:
                node.pop(path[-1], None)
            if not node and path[:-1]:
                data.pop(path[0], None)
        return data

    node = new
    for key in path:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    if any(node.get(k) != v for k, v in entry.items()) or without(old) != without(new):
        raise BadInput(
            "cannot merge into the config safely (the table is defined in another form); add it by hand"
        )


# ---------------------------------------------------------------------- writing


def merged_text(path: Path, fmt: str, entry: dict[str, Any]) -> tuple[str, str]:
    """(current text, merged text) of a config file ('' when it does not exist)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    return current, (merge_toml(current, entry) if fmt == "toml" else merge_json(current, entry))


def write_config(
    path: Path, fmt: str, entry: dict[str, Any], now: dt.datetime | None = None
) -> dict[str, Any]:
    """Merge the entry into the file, keeping a ``<file>.bak-<timestamp>`` copy of the old one.
    Nothing is written when the file already holds the entry."""
    current, new = merged_text(path, fmt, entry)
    return _private(entry, _write_merged(path, current, new, now))


def _private(entry: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A file holding the access token is made owner-only, its backup too."""
    if _holds_token(entry):
        for written in (result["path"], result["backup"]):
            if written is not None:
                os.chmod(written, 0o600)
    return result


def write_hooks(path: Path, hooks: dict[str, Any], now: dt.datetime | None = None) -> dict[str, Any]:
    """Merge vaultmem's hooks into an agent's settings file (backup kept; nothing written when
    they are already there)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    return _write_merged(path, current, merge_hooks(current, hooks), now)


def write_plan(s: AgentSetup, now: dt.datetime | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``--write``: the MCP entry and the hooks merged into their files (one write, one backup,
    when both live in one file, as Gemini's settings.json)."""
    config = Path(s.config_path)
    hooks = Path(s.hooks_path) if s.hooks_path and s.hooks else None
    if hooks is not None and hooks == config and s.config_format == "json" and s.hooks is not None:
        current, new = merged_text(config, "json", s.server)
        result = _private(s.server, _write_merged(config, current, merge_hooks(new, s.hooks), now))
        return result, result
    result = write_config(config, s.config_format, s.server, now)
    return result, write_hooks(hooks, s.hooks, now) if hooks is not None and s.hooks is not None else None


def _write_merged(path: Path, current: str, new: str, now: dt.datetime | None) -> dict[str, Any]:
    if path.exists() and new == current:
        return {"path": str(path), "changed": False, "backup": None}
    backup = None
    if path.exists():
        backup = _backup_path(path, now or dt.datetime.now())
        shutil.copy2(path, backup)
    atomic_write(path, new)
    return {"path": str(path), "changed": True, "backup": str(backup) if backup else None}


def _holds_token(entry: dict[str, Any]) -> bool:
    return any(
        isinstance(entry.get(k), dict) and "Authorization" in entry[k] for k in ("headers", "http_headers")
    )


def _backup_path(path: Path, now: dt.datetime) -> Path:
    base = path.with_name(f"{path.name}.bak-{now.strftime('%Y%m%d-%H%M%S')}")
    candidate, n = base, 2
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    return candidate
