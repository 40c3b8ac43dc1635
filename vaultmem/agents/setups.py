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
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import BadInput
from ..core.store import atomic_write

SERVER_NAME = "vaultmem"
AGENTS = ("claude", "codex", "cursor", "gemini")
LABELS = {"claude": "Claude Code", "codex": "Codex CLI", "cursor": "Cursor", "gemini": "Gemini CLI"}


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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------- the pieces


def server_entry(vault: Path) -> dict[str, Any]:
    """The MCP server entry every agent runs: ``vaultmem mcp --vault ABS_PATH`` over stdio."""
    return {"command": "vaultmem", "args": ["mcp", "--vault", str(vault)]}


def http_entry(agent: str, url: str, token: str) -> dict[str, Any]:
    """The MCP server entry for ``vaultmem mcp --http`` at ``url``, carrying the user's access
    token as a bearer header (each agent spells its HTTP entry differently)."""
    headers = {"Authorization": f"Bearer {token}"}
    if agent == "claude":
        return {"type": "http", "url": url, "headers": headers}
    if agent == "gemini":
        return {"httpUrl": url, "headers": headers}
    if agent == "codex":
        return {"url": url, "http_headers": headers}
    return {"url": url, "headers": headers}


def sleep_command(vault: Path, summary: str = "...", source: str | None = None) -> str:
    src = f" --source {shlex.quote(source)}" if source else ""
    return f"vaultmem sleep --vault {shlex.quote(str(vault))}{src} --summary {shlex.quote(summary)}"


def hook_command(vault: Path, event: str) -> str:
    return f"vaultmem hook {event} --vault {shlex.quote(str(vault))}"


HOOK_EVENTS = {  # Claude Code event -> (vaultmem hook, matcher)
    "SessionStart": ("start", "startup|resume|clear|compact"),
    "UserPromptSubmit": ("prompt", None),
    "Stop": ("stop", None),
    "PreCompact": ("pre-compact", None),
    "SessionEnd": ("end", None),
}


def claude_hooks(vault: Path) -> dict[str, Any]:
    """``.claude/settings.json`` hooks: the [MEMORY] block at session start, the relevant memories
    at each prompt, one reminder to save at Stop, a checkpoint before compaction and the session
    summary at the end (see cli_hooks.py)."""
    hooks: dict[str, Any] = {}
    for event, (name, matcher) in HOOK_EVENTS.items():
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": hook_command(vault, name)}]
        hooks[event] = [group]
    return {"hooks": hooks}


def codex_hooks(vault: Path) -> dict[str, Any]:
    """``.codex/hooks.json`` (Codex's experimental hooks take Claude Code's JSON shapes): the wake
    block at start and the relevant memories at each prompt. Stop and the session summary need
    Claude Code's transcript, so they are left out."""
    full = claude_hooks(vault)["hooks"]
    return {"hooks": {e: full[e] for e in ("SessionStart", "UserPromptSubmit")}}


def _is_vaultmem_hook(command: Any) -> bool:
    """A hook command vaultmem installed (``vaultmem wake|sleep|hook ...``), old or new."""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return len(words) >= 2 and Path(words[0]).name == "vaultmem" and words[1] in ("wake", "sleep", "hook")


def merge_hooks(text: str, hooks: dict[str, Any]) -> str:
    """The settings text with vaultmem's hooks in place: every vaultmem hook command already
    there (e.g. the older bare ``wake``/``sleep``) is replaced, every other hook and key kept."""
    data = _json_object(text, "hooks", "the hooks")
    before = json.loads(json.dumps(data))
    current = data.setdefault("hooks", {})
    for event in [*current, *(e for e in hooks["hooks"] if e not in current)]:  # the file's order, then ours
        groups = current.get(event, [])
        if not isinstance(groups, list):
            raise BadInput(f"hooks.{event} in the settings file is not a list; add the hooks by hand")
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                rest = [h for h in group["hooks"] if not (isinstance(h, dict) and _is_vaultmem_hook(h.get("command")))]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
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


def default_paths(agent: str, home: Path, project: Path) -> tuple[Path, str, Path | None, str]:
    """(MCP config file, its format, hooks file or None, rules file) of an agent."""
    table = {
        "claude": (project / ".mcp.json", "json", project / ".claude" / "settings.json", project / "CLAUDE.md"),
        "cursor": (project / ".cursor" / "mcp.json", "json", None, project / ".cursor" / "rules" / "vaultmem.mdc"),
        "gemini": (home / ".gemini" / "settings.json", "json", None, project / "GEMINI.md"),
        "codex": (home / ".codex" / "config.toml", "toml", project / ".codex" / "hooks.json", project / "AGENTS.md"),
    }
    if agent not in table:
        raise BadInput(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
    config, fmt, hooks, rules = table[agent]
    return config, fmt, hooks, str(rules)


HOOKS_NOTES = {
    "claude": "SessionStart prints the [MEMORY] block, UserPromptSubmit the few memories relevant to each prompt, "
              "Stop asks once to save what the session did, PreCompact checkpoints, SessionEnd writes a session "
              "summary from the transcript (`vaultmem hook ...`). --write merges them into .claude/settings.json.",
    "cursor": "vaultmem installs no Cursor hook (beforeSubmitPrompt cannot add context, and Cursor's hooks use their "
              "own JSON): the rule below tells the agent to call `wake` first and `vaultmem sleep` at the end.",
    "gemini": "vaultmem installs no Gemini CLI hook yet (its events, e.g. BeforeAgent, and its transcript differ from "
              "Claude Code's): GEMINI.md tells the agent to call `wake` first and `vaultmem sleep` at the end.",
    "codex": "Codex's hooks are experimental (enable `[features] codex_hooks = true` in config.toml) and take Claude "
             "Code's JSON: put these in .codex/hooks.json by hand (--write does not). No session-end hook: AGENTS.md "
             "tells the agent to `sleep` at the end.",
}  # fmt: skip


def plan(agent: str, vault: Path, home: Path, project: Path, config: Path | None = None,
         http: tuple[str, str] | None = None) -> AgentSetup:  # fmt: skip
    """What ``agent`` needs to use the vault at ``vault`` (an absolute path); with ``http``
    (url, access token), an entry for a running ``vaultmem mcp --http`` instead of stdio."""
    config_path, fmt, hooks_path, rules = default_paths(agent, home, project)
    config_path = config or config_path
    entry = http_entry(agent, *http) if http else server_entry(vault)
    snippet = toml_table(("mcp_servers", SERVER_NAME), entry) if fmt == "toml" else json_snippet(entry)
    instr = instructions(vault, hooks=agent == "claude")
    if agent == "cursor":
        instr = "---\ndescription: How to use long-term memory (vaultmem)\nalwaysApply: true\n---\n\n" + instr
    notes = [] if shutil.which("vaultmem") else [
        "`vaultmem` is not on PATH: the agent will not find the command; install vaultmem where the agent "
        "runs, or replace \"vaultmem\" by its full path in the entries below."]  # fmt: skip
    hooks = claude_hooks(vault) if agent == "claude" else codex_hooks(vault) if agent == "codex" else None
    if http:
        notes.append(f"the entry below holds your access token: keep {config_path} private and out of git; "
                     f"start the server with `vaultmem mcp --vault {shlex.quote(str(vault))} --http`")  # fmt: skip
    return AgentSetup(agent, LABELS[agent], str(vault), str(config_path), fmt, snippet,
                      str(hooks_path) if hooks_path else None, hooks,
                      HOOKS_NOTES[agent], rules, instr, notes, entry)  # fmt: skip


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


TRANSPORT_KEYS = {"command", "args", "type", "url", "httpUrl", "headers", "http_headers"}  # switching stdio <-> HTTP drops the others


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
    merged = {**{k: v for k, v in current.items() if k not in other}, **entry}  # keeps e.g. an "env" the user added
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
        raise BadInput("cannot merge into the config safely (the table is defined in another form); add it by hand")


# ---------------------------------------------------------------------- writing


def merged_text(path: Path, fmt: str, entry: dict[str, Any]) -> tuple[str, str]:
    """(current text, merged text) of a config file ('' when it does not exist)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    return current, (merge_toml(current, entry) if fmt == "toml" else merge_json(current, entry))


def write_config(path: Path, fmt: str, entry: dict[str, Any], now: dt.datetime | None = None) -> dict[str, Any]:
    """Merge the entry into the file, keeping a ``<file>.bak-<timestamp>`` copy of the old one.
    Nothing is written when the file already holds the entry."""
    current, new = merged_text(path, fmt, entry)
    result = _write_merged(path, current, new, now)
    if _holds_token(entry):  # the access token: owner-only, the backup too
        for written in (result["path"], result["backup"]):
            if written is not None:
                os.chmod(written, 0o600)
    return result


def write_hooks(path: Path, hooks: dict[str, Any], now: dt.datetime | None = None) -> dict[str, Any]:
    """Merge vaultmem's hooks into an agent's settings file (backup kept; nothing written when
    they are already there)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    return _write_merged(path, current, merge_hooks(current, hooks), now)


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
    return any(isinstance(entry.get(k), dict) and "Authorization" in entry[k] for k in ("headers", "http_headers"))


def _backup_path(path: Path, now: dt.datetime) -> Path:
    base = path.with_name(f"{path.name}.bak-{now.strftime('%Y%m%d-%H%M%S')}")
    candidate, n = base, 2
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    return candidate
