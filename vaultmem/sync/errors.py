"""The errors of git sync (a module of their own: every sync module raises them)."""

from __future__ import annotations

from ..core.errors import VaultError


class GitError(VaultError):
    """A git command failed, or the vault is not in a state sync can work with."""


class NotARepo(GitError):
    exit_code = 2
