"""The vault registry and agent identities (light: stdlib only).

The registry lives in the user's config folder (``$VAULTMEM_HOME``, else the platform's:
``$XDG_CONFIG_HOME/vaultmem`` or ``~/.config/vaultmem``, ``~/Library/Application
Support/vaultmem`` on macOS, ``%APPDATA%/vaultmem`` on Windows) as ``registry.json``:
named vaults with their paths, and the team folder (``vaults/`` of a repo) holding
``shared/`` and one ``<agent-id>/`` vault per agent.

An agent (``--agent ID`` or ``$VAULTMEM_AGENT_ID``) reads and writes its personal vault,
the shared vault and the user's own vault; never another agent's personal vault.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import namedtuple
from pathlib import Path

from . import environment
from .errors import BadInput, VaultError, VaultNotFound

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
SHARED, USER = "shared", "user"


def home() -> Path:
    """vaultmem's per-user config folder."""
    own, appdata = environment.VAULTMEM_HOME.get(), environment.APPDATA.get()
    if own:
        return own
    if sys.platform == "darwin":
        return environment.home() / "Library" / "Application Support" / "vaultmem"
    if os.name == "nt" and appdata:
        return appdata / "vaultmem"
    return environment.config_home() / "vaultmem"


def check_name(name: str) -> str:
    if not NAME_RE.match(name or ""):
        raise BadInput(f"vault name {name!r}: use lowercase letters, digits, '-', '_' or '.' (max 64)")
    return name


class Registry:
    """Named vaults of one user."""

    def __init__(self, path: Path | None = None):
        self.path = path or home() / "registry.json"
        self.data = self._load()

    def _load(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"vaults": {}}
        except (OSError, ValueError) as e:
            raise VaultError(f"{self.path}: unreadable vault registry ({e})") from None
        if not isinstance(data, dict) or not isinstance(data.get("vaults"), dict):
            raise VaultError(f"{self.path}: not a vault registry")
        return data

    def _save(self) -> None:
        from .store import (
            atomic_write,  # local: keeps this module light for thin clients
        )

        atomic_write(self.path, json.dumps(self.data, indent=2, ensure_ascii=False) + "\n")

    @property
    def vaults(self) -> dict[str, Path]:
        return {name: Path(v["path"]) for name, v in sorted(self.data["vaults"].items())}

    def add(self, name: str, path: Path, create: bool = False) -> Path:
        """Register a vault (the folder is made a vault if it is not one); never moves files.
        A folder that does not exist is created only with ``create`` (a typo is not a new vault)."""
        check_name(name)
        path = path.expanduser().resolve()
        if not path.exists() and not create:
            raise BadInput(f"{path} does not exist; pass --create to make a new vault there")
        if name in self.data["vaults"] and Path(self.data["vaults"][name]["path"]) != path:
            raise BadInput(
                f"a vault named {name!r} is already registered at {self.data['vaults'][name]['path']}"
            )
        from .scaffold import init_vault

        init_vault(path)
        self.data["vaults"][name] = {"path": str(path)}
        self._save()
        return path

    def remove(self, name: str) -> Path:
        """Forget a vault; its files stay where they are."""
        if name not in self.data["vaults"]:
            raise BadInput(f"no vault named {name!r} is registered")
        path = Path(self.data["vaults"].pop(name)["path"])
        self._save()
        return path

    def team_dir(self) -> Path | None:
        """Where ``shared/`` and the agents' vaults live: $VAULTMEM_TEAM_DIR, the registry's
        team folder, else ``./vaults`` when it exists."""
        team = environment.VAULTMEM_TEAM_DIR.get()
        if team:
            return team.resolve()
        if self.data.get("team_dir"):
            return Path(self.data["team_dir"])
        local = Path.cwd() / "vaults"
        return local.resolve() if local.is_dir() else None

    def resolve(self, ref: str) -> Path:
        """A vault by registered name or by path."""
        if ref in self.data["vaults"]:
            return Path(self.data["vaults"][ref]["path"])
        path = Path(ref).expanduser()
        if path.is_dir():
            return path.resolve()
        raise VaultNotFound(f"no vault named or at {ref!r} (see `vaultmem vault list`)")

    def name_of(self, path: Path) -> str:
        """The registered name of a vault path, else its folder name."""
        path = path.resolve()
        for name, p in self.vaults.items():
            if p.resolve() == path:
                return name
        return path.name


class Identity(namedtuple("Identity", "agent personal shared user")):
    """The vaults one agent may use: ``agent``, its ``personal`` vault, the ``shared`` one (None
    without a team folder) and the ``user``'s (a named tuple: ``dataclasses`` imports ``inspect``,
    ~5 ms of every hook and recall call)."""

    __slots__ = ()
    agent: str
    personal: Path
    shared: Path | None
    user: Path

    def allowed(self) -> dict[str, Path]:
        out = {self.agent: self.personal, USER: self.user}
        if self.shared is not None:
            out[SHARED] = self.shared
        return out


def agent_id(explicit: str | None = None) -> str | None:
    value = explicit or environment.VAULTMEM_AGENT_ID.get()
    return check_name(value) if value else None


def identity(agent: str, registry: Registry | None = None) -> Identity:
    """Personal (registry name ``<agent>`` or ``<team>/<agent>/``), shared and user vaults."""
    reg = registry or Registry()
    check_name(agent)
    if agent in (SHARED, USER):
        raise BadInput(f"{agent!r} is reserved for the {agent} vault; pick another agent id")
    team = reg.team_dir()
    vaults = reg.vaults

    def locate(name: str, default: Path | None) -> Path | None:
        return vaults.get(name) or default

    personal = locate(agent, team / agent if team else None)
    if personal is None:
        raise VaultNotFound(f"no vault for agent {agent!r}: register one (`vaultmem vault add {agent} PATH`) "
                            "or set VAULTMEM_TEAM_DIR to the folder holding the team's vaults")  # fmt: skip
    shared = locate(SHARED, team / SHARED if team and (team / SHARED).is_dir() else None)
    user = locate(USER, home() / USER)
    return Identity(agent, personal, shared, user)
