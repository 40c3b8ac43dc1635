"""What each coding agent needs to use a vault (``vaultmem setup``): pure functions.

For every agent: the MCP server entry, the session hooks it supports (or a note that it has
none), where its standing instructions go, and the instruction text itself. ``merge_json`` and
``merge_toml`` fold the MCP entry into an existing config file's text without losing any other
entry; ``write_config`` writes the result with a backup of the old file.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..core import environment
from ..core.errors import BadInput
from .adapters import ADAPTERS

SERVER_NAME = "vaultmem"
AGENTS = tuple(ADAPTERS)  # every registered agent (``adapters.REGISTRY``)


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
    config_under: list[str] = field(
        default_factory=list
    )  # the keys holding ``mcpServers`` (Claude's local scope)
    steps: list[str] = field(default_factory=list)  # what the user must do for the hooks to run at all
    moved_from: list[str] = field(default_factory=list)  # committed files older set-ups wrote vaultmem into

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
    for tmp in {environment.temp_dir(), environment.temp_dir().resolve()}:
        if path.is_relative_to(tmp):
            return f"the temporary folder {tmp}"
    return None


# ---------------------------------------------------------------------- the pieces


def server_entry(vault: Path, agent: str = "claude", command: str = "vaultmem") -> dict[str, Any]:
    """The MCP server entry every agent runs: ``vaultmem mcp --vault ABS_PATH`` over stdio."""
    return ADAPTERS[agent].server_entry({"command": command, "args": ["mcp", "--vault", str(vault)]})


def http_entry(agent: str, url: str, token: str) -> dict[str, Any]:
    """The MCP server entry for ``vaultmem mcp --http`` at ``url``, carrying the user's access
    token as a bearer header (each agent spells its HTTP entry differently)."""
    return ADAPTERS[agent].http_entry(url, {"Authorization": f"Bearer {token}"})


def sleep_command(vault: Path, summary: str = "...", source: str | None = None) -> str:
    src = f" --source {shlex.quote(source)}" if source else ""
    return f"vaultmem sleep --vault {shlex.quote(str(vault))}{src} --summary {shlex.quote(summary)}"


def hook_command(vault: Path, event: str, agent: str = "claude", command: str = "vaultmem") -> str:
    return f"{shlex.quote(command)} hook {event} --agent {agent} --vault {shlex.quote(str(vault))}"


HOOK_EVENTS = tuple(ADAPTERS["claude"].events.values())  # Claude Code's, in the order written
TIMEOUTS = {"start": 30, "prompt": 30, "stop": 10, "pre-compact": 10}  # fmt: skip  # seconds; a cold prompt loads the model


def planned_timeout(agent: str, hook: str) -> float:
    """The timeout, in seconds, ``setup`` declares on ``agent``'s ``hook``."""
    return float(ADAPTERS[agent].end_timeout if hook == "end" else TIMEOUTS.get(hook, 0))


def agent_hooks(agent: str, vault: Path, command: str = "vaultmem") -> dict[str, Any]:
    """The hooks of the whole memory loop in ``agent``'s own config shape, each event the
    adapter maps a vaultmem hook to (``adapters.py``), each command with ``--agent``:

    - Claude Code, Codex (``.codex/hooks.json``), Gemini (``settings.json``): ``{event: [{matcher?,
      hooks: [{type, command, ...}]}]}``; Codex's ``timeout`` in seconds (SessionEnd: 3, its cap),
      Gemini's in milliseconds with a ``name`` for ``/hooks``;
    - Cursor (``hooks.json``, ``version: 1``): ``{event: [{command, timeout}]}``, ``loop_limit: 1``
      on stop (asked once);
    - Copilot CLI (``hooks/*.json``, ``version: 1``): ``{event: [{type, bash, timeoutSec}]}``."""
    adapter = ADAPTERS[agent]
    hooks = {event: [adapter.hook_group(name, hook_command(vault, name, agent, command), int(planned_timeout(agent, name)))]
             for name, event in adapter.events.items()}  # fmt: skip
    return {"version": 1, "hooks": hooks} if adapter.versioned else {"hooks": hooks}


def claude_hooks(vault: Path, command: str = "vaultmem") -> dict[str, Any]:
    """``.claude/settings.json`` hooks: the [MEMORY] block at session start, the relevant memories
    at each prompt, one reminder to save at Stop, a checkpoint before compaction and the session
    summary at the end (see cli/hooks.py)."""
    return agent_hooks("claude", vault, command)


def hook_words(entry: Any) -> list[str]:
    """The words of a hook entry's command (``command``, or Copilot's ``bash``); none for an
    entry that is no object or whose command does not parse."""
    if not isinstance(entry, dict):
        return []
    command = entry.get("command", entry.get("bash"))
    try:
        return shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return []


def _is_vaultmem_hook(entry: Any) -> bool:
    """A hook entry vaultmem installed (``vaultmem wake|sleep|hook ...``, by any path), old or new."""
    words = hook_words(entry)
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
    if not current and "hooks" not in before:
        data.pop("hooks")
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
    env = environment.declared() if env is None else env
    if agent not in ADAPTERS:
        raise BadInput(f"unknown agent {agent!r}; choose one of {', '.join(ADAPTERS)}")
    config, fmt, hooks, rules = ADAPTERS[agent].files(home, project, user, env)
    return config, fmt, hooks, str(rules)


def shared_command(command: str) -> str:
    """``vaultmem`` when the one on the PATH is ``command`` (a teammate's PATH finds theirs),
    else ``command``."""
    found = shutil.which("vaultmem")
    same = found and Path(command).is_absolute() and os.path.realpath(found) == os.path.realpath(command)
    return "vaultmem" if same else command


def shared_vault(vault: Path) -> str:
    """The vault's registered name (a teammate registers theirs under it), else its path."""
    from ..core.registry import Registry

    for name, path in Registry().vaults.items():
        if path.resolve() == vault.resolve():
            return name
    return str(vault)


def plan(agent: str, vault: Path, home: Path, project: Path, config: Path | None = None,
         http: tuple[str, str] | None = None, user: bool = False, command: str = "vaultmem") -> AgentSetup:  # fmt: skip
    """What ``agent`` needs to use the vault at ``vault`` (an absolute path); with ``http``
    (url, access token), an entry for a running ``vaultmem mcp --http`` instead of stdio;
    ``command``: the vaultmem the hooks and the MCP entry run (an absolute path, see
    ``executable``); ``user``: the user-level files instead of the project's."""
    config_path, fmt, hooks_path, rules = default_paths(agent, home, project, user)
    if config is not None and hooks_path == config_path:  # Gemini: one settings file holds both
        hooks_path = config
    # Claude Code's local scope: the project's MCP server in ~/.claude.json, its hooks in
    # .claude/settings.local.json (git-ignored): personal paths stay out of committed files
    adapter = ADAPTERS[agent]
    under = ["projects", str(project)] if adapter.local_scope and not user and config is None else []
    config_path = config or config_path
    if not user and not adapter.local_scope:  # the project's files are shared: what a teammate can run
        command, vault_ref = shared_command(command), shared_vault(vault)
    else:
        vault_ref = str(vault)
    entry = http_entry(agent, *http) if http else server_entry(Path(vault_ref), agent, command)
    snippet = toml_table(("mcp_servers", SERVER_NAME), entry) if fmt == "toml" else json_snippet(entry)
    instr = adapter.rules_header + instructions(vault, hooks=True)
    notes = []
    if not Path(command).is_absolute():
        notes.append("`vaultmem` was not found as a file: the agent must find the command on its PATH; install "
                     "vaultmem where the agent runs, or put its full path in the entries below.")  # fmt: skip
    why = temporary_place(command)
    if why:
        notes.append(f"the vaultmem running now ({command}) lives in {why}, which may be gone when the agent runs it: "
                     "install vaultmem for good (`uv tool install vaultmem-md` or `pipx install vaultmem-md`) and run "
                     "setup again from there")  # fmt: skip
    if adapter.setup_note:
        notes.append(adapter.setup_note)
    personal = (
        [p for p in (command, vault_ref) if Path(p).is_absolute()]
        if not user and not adapter.local_scope
        else []
    )
    if personal:
        notes.append(f"the project's files will hold personal paths ({', '.join(personal)}): keep them out of git, "
                     "or use --user; with `vaultmem` on the PATH and the vault registered (`vaultmem vault add NAME "
                     "PATH`) they hold only `vaultmem` and the vault's name")  # fmt: skip
    if http:
        notes.append(f"the entry below holds your access token: keep {config_path} private and out of git; "
                     f"start the server with `vaultmem mcp --vault {shlex.quote(str(vault))} --http`")  # fmt: skip
    steps = [adapter.trust_step] if adapter.trust_required else []
    moved = [str(project / ".mcp.json"), str(project / ".claude" / "settings.json")] if under else []
    return AgentSetup(agent, ADAPTERS[agent].title, str(vault), str(config_path), fmt, snippet, str(hooks_path),
                      agent_hooks(agent, Path(vault_ref), command), ADAPTERS[agent].hooks_note, rules, instr, notes, entry,
                      command, under, steps, moved)  # fmt: skip


def render(s: AgentSetup) -> str:
    """The human-readable guide ``vaultmem setup`` prints."""
    out = [f"# vaultmem for {s.label}  (vault: {s.vault})", ""]
    out += [f"note: {n}" for n in s.notes] + ([""] if s.notes else [])
    out += [f"REQUIRED: {step}" for step in s.steps] + ([""] if s.steps else [])
    where = f"{s.config_path}" + (
        f" (under {'.'.join(s.config_under[:1])}[{s.config_under[1]!r}])" if s.config_under else ""
    )
    out += [f"## 1. MCP server -> {where}  (merged by --write)", "", s.config_snippet.rstrip(), ""]
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


def merge_json(
    text: str, entry: dict[str, Any], name: str = SERVER_NAME, under: list[str] | None = None
) -> str:
    """The config text with ``mcpServers.<name>`` (below the keys ``under``) set to ``entry``;
    every other key kept."""
    data = _json_object(text, "mcpServers", "the entry")
    node = data
    for key in under or []:
        if not isinstance(node.setdefault(key, {}), dict):
            raise BadInput(f"the config's {key!r} is not an object; add the entry by hand")
        node = node[key]
    servers = node.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise BadInput("the config's mcpServers is not an object; add the entry by hand")
    found = servers.get(name)
    current = found if isinstance(found, dict) else {}
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


def merged_text(
    path: Path, fmt: str, entry: dict[str, Any], under: list[str] | None = None
) -> tuple[str, str]:
    """(current text, merged text) of a config file ('' when it does not exist)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    return current, (merge_toml(current, entry) if fmt == "toml" else merge_json(current, entry, under=under))


def write_config(path: Path, fmt: str, entry: dict[str, Any], now: dt.datetime | None = None,
                 under: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Merge the entry into the file, keeping a copy of the old one under vaultmem's state
    folder (``backup_dir``). Nothing is written when the file already holds the entry."""
    current, new = merged_text(path, fmt, entry, under)
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
        current, new = merged_text(config, "json", s.server, s.config_under)
        result = _private(s.server, _write_merged(config, current, merge_hooks(new, s.hooks), now))
        return result, result
    for old in s.moved_from:  # an older set-up's entry and hooks in committed files: moved to local ones
        path = Path(old)
        if path.is_file():
            current = path.read_text(encoding="utf-8")
            _write_merged(path, current, _without_vaultmem(current, s, old), now)
    if s.config_under and hooks is not None:
        _git_exclude(hooks, now)
    result = write_config(config, s.config_format, s.server, now, s.config_under)
    return result, write_hooks(hooks, s.hooks, now) if hooks is not None and s.hooks is not None else None


def _write_merged(path: Path, current: str, new: str, now: dt.datetime | None) -> dict[str, Any]:
    if path.exists() and new == current:
        return {"path": str(path), "changed": False, "backup": None}
    existed = path.exists()
    backup = None
    if existed:
        backup = _backup_path(path, now or dt.datetime.now())
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, backup)
    made = [str(d) for d in reversed(path.parents) if not d.exists()]
    from ..core.store import atomic_write  # here: the doctor's read of the hooks loads no YAML

    atomic_write(path, new)
    _record(path, current if existed else None, new, made)
    return {"path": str(path), "changed": True, "backup": str(backup) if backup else None}


def _records_path() -> Path:
    from ..service.control import state_dir

    return state_dir() / "setups.json"


def _records() -> list[dict[str, Any]]:
    try:
        data = json.loads(_records_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def _save_records(records: list[dict[str, Any]]) -> None:
    path = _records_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    from ..core.store import atomic_write  # here: the doctor's read of the hooks loads no YAML

    atomic_write(path, json.dumps(records, indent=1, ensure_ascii=False) + "\n")
    os.chmod(path, 0o600)


def _record(path: Path, before: str | None, after: str, made: list[str]) -> None:
    """What ``--write`` changed in a file (its text before and after, the folders it made), in
    the user's state folder, so ``--remove`` can undo exactly that."""
    records = [r for r in _records() if r.get("path") != str(path)]
    old = next((r for r in _records() if r.get("path") == str(path)), None)
    if old is not None:  # written again: the first write's "before" is what --remove restores
        before, made = old.get("before"), old.get("made", [])
    records.append({"path": str(path), "before": before, "after": after, "made": made})
    _save_records(records)


def recorded_setups() -> list[tuple[str, str]]:
    """(agent, file) of every file ``setup --write`` wrote that holds vaultmem hooks."""
    out = []
    for r in _records():
        after = r.get("after") or ""
        agent = re.search(r"vaultmem hook \S+ --agent (\w+)", after.replace('\\"', '"'))
        if agent:
            out.append((agent.group(1), str(r["path"])))
    return out


def _git_exclude(local: Path, now: dt.datetime | None) -> None:
    """Claude Code's local settings file listed in the repository's own ``.git/info/exclude``
    (never committed), so ``git add .`` does not pick it up."""
    project = local.parent.parent
    exclude = project / ".git" / "info" / "exclude"
    if not (project / ".git").is_dir():
        return
    current = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    line = str(local.relative_to(project))
    if line not in current.splitlines():
        _write_merged(
            exclude,
            current,
            current + ("" if not current or current.endswith("\n") else "\n") + line + "\n",
            now,
        )


def remove_plan(s: AgentSetup, now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """``--remove``: undo what ``--write`` added to the plan's files. A file unchanged since
    vaultmem wrote it gets its old text back byte for byte (or is deleted, with the folders
    ``--write`` made, when it did not exist); a file changed since loses only vaultmem's entry
    and hooks."""
    exclude = (
        [str(Path(s.hooks_path).parent.parent / ".git" / "info" / "exclude")]
        if s.config_under and s.hooks_path
        else []
    )
    paths = list(
        dict.fromkeys(
            p for p in (s.config_path, s.hooks_path if s.hooks else None, *s.moved_from, *exclude) if p
        )
    )
    records = {r.get("path"): r for r in _records()}
    out = []
    for name in paths:
        path = Path(name)
        rec = records.pop(name, None)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current is None or (name in s.moved_from + exclude and rec is None):
            if name not in s.moved_from + exclude:
                out.append({"path": name, "changed": False, "how": "missing"})
        elif rec is not None and current == rec.get("after"):
            _restore(path, rec.get("before"), rec.get("made", []))
            out.append(
                {
                    "path": name,
                    "changed": True,
                    "how": "restored" if rec.get("before") is not None else "deleted",
                }
            )
        else:
            new = _without_vaultmem(current, s, name)
            changed = new != current
            if changed:
                _write_merged(path, current, new, now)
                records.pop(name, None)
            out.append(
                {"path": name, "changed": changed, "how": "edited" if changed else "nothing of vaultmem"}
            )
    _save_records([r for r in _records() if r.get("path") not in paths])
    return out


def _restore(path: Path, before: str | None, made: list[str]) -> None:
    if before is None:
        path.unlink()
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                Path(folder).rmdir()  # only when empty
    else:
        from ..core.store import atomic_write  # here: the doctor's read of the hooks loads no YAML

        atomic_write(path, before)


def _without_vaultmem(text: str, s: AgentSetup, name: str) -> str:
    """``text`` without vaultmem's MCP entry (in the plan's config file) and its hooks."""
    if name == s.config_path and s.config_format == "toml":
        return drop_toml_table(text, ("mcp_servers", SERVER_NAME))
    data = _json_object(text, "mcpServers", "the entry")
    before = json.loads(json.dumps(data))
    if name == s.config_path or name.endswith(".mcp.json"):
        node = data
        for key in s.config_under if name == s.config_path else []:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        servers = node.get("mcpServers") if isinstance(node, dict) else None
        if isinstance(servers, dict):
            servers.pop(SERVER_NAME, None)
    changed = data != before
    new = json.dumps(data, indent=2, ensure_ascii=False) + "\n" if changed else text
    if s.hooks and (name == s.hooks_path or name.endswith("settings.json")):
        new = merge_hooks(new, {"hooks": {}})
    return new


def drop_toml_table(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the table ``[a.b]`` (its header and its lines up to the next header)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if _header_key(ln) == path), None)
    if start is None:
        return text
    end = next((i for i in range(start + 1, len(lines)) if _header_key(lines[i]) is not None), len(lines))
    return "".join(lines[:start] + lines[end:])


def _holds_token(entry: dict[str, Any]) -> bool:
    return any(
        isinstance(entry.get(k), dict) and "Authorization" in entry[k] for k in ("headers", "http_headers")
    )


def backup_dir() -> Path:
    """Where ``--write`` keeps the files it replaced: vaultmem's state folder, never the repository."""
    from ..service.control import state_dir

    return state_dir() / "setup-backups"


def _backup_path(path: Path, now: dt.datetime) -> Path:
    flat = str(path.absolute()).strip(os.sep).replace(os.sep, "%")
    base = backup_dir() / now.strftime("%Y%m%d-%H%M%S") / flat
    candidate, n = base, 2
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    return candidate
