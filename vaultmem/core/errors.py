"""Errors that reach users as one clear line (the CLI prints ``str(err)``)."""


class VaultError(Exception):
    """Base class: anything vaultmem reports to a user instead of a traceback."""

    exit_code = 1


class VaultNotFound(VaultError):
    """No vault at the given path, in ``VAULTMEM_VAULT`` or above the current folder."""

    exit_code = 2


class NoteNotFound(VaultError):
    """An id, title or path that names no note."""

    exit_code = 3


class Conflict(VaultError):
    """A guarded write found the file changed since it was read, or a target exists."""

    exit_code = 4


class BadInput(VaultError):
    """A value given by the user that cannot be used (bad type, date, key=value, ...)."""

    exit_code = 2


class ReadOnlyVault(VaultError):
    """A write to a vault this user cannot write (a read-only mount, another user's folder);
    its reads work from the indexes as they are."""


INTERNAL = 70  # the exit code of a failure vaultmem did not foresee (a bug), as sysexits' EX_SOFTWARE


def internal_error(e: BaseException) -> str:
    """A failure vaultmem did not foresee, as one line (the same wherever it happened)."""
    return f"internal error: {type(e).__name__}: {e} (please report it; VAULTMEM_DEBUG=1 shows where)"


def os_message(e: OSError) -> str:
    """An OS error as the one line a user sees (``PATH: Read-only file system``)."""
    return f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}"


class NoteParseError(VaultError):
    """A file that is not a readable note (bad YAML, not UTF-8, binary)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
