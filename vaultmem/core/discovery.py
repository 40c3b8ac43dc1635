"""Finding a vault like git finds a repository (light: no heavy imports, used by thin clients)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import environment
from .errors import VaultError, VaultNotFound

STATE_DIR = (
    ".vaultmem"  # disposable: indexes, sockets, locks (everything in it can be rebuilt from the files)
)
USAGE_DIR = ".vaultmem-usage"  # durable: usage data the files cannot give back (ratings, retrievals, gaps)
_ROOTS = (STATE_DIR, USAGE_DIR)


def find_vault(path: str | os.PathLike | None = None, cwd: Path | None = None) -> Path:
    """Vault discovery like git: explicit path, else $VAULTMEM_VAULT, else walk up to ``.vaultmem/``.
    A folder named by path becomes a vault here, in the caller's process (its ``.vaultmem/`` is
    made, when it can be), so the memory service is only ever asked about initialised vaults
    (``served_vault``); the filesystem root is never one."""
    explicit = path or environment.VAULTMEM_VAULT.get()
    if explicit:
        root = Path(explicit).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f"no vault folder at {root}")
        root = root.resolve()
        if root == Path(root.anchor):
            raise VaultNotFound(
                f"{root} is the filesystem's root, never a vault: name the folder of your notes"
            )
        if not (root / STATE_DIR).is_dir():
            try:
                private_dir(root / STATE_DIR)
            except OSError:  # a folder this user cannot write: read as it is (the service refuses it)
                pass
        return root
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / STATE_DIR).is_dir():
            return folder
    raise VaultNotFound(
        "no vault found: pass --vault PATH, set VAULTMEM_VAULT, or run `vaultmem init` in a folder"
    )


IGNORE_ALL = "*\n"  # the .gitignore inside each state folder: git never sees what is in it


def served_vault(root: str | os.PathLike) -> Path:
    """The vault a memory service operation may open: a folder holding a real ``.vaultmem/``
    folder (not a link) of this user's, never the filesystem root. Anything else a caller of the
    socket names (``/``, a folder never initialised, another user's) is refused, not made a vault
    and watched whole; the CLI makes a folder named by path a vault first (``find_vault``)."""
    folder = Path(root).resolve()
    try:
        st = os.lstat(folder / STATE_DIR)
        ours = stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
    except OSError:
        ours = False
    if not ours or folder == Path(folder.anchor):
        raise VaultNotFound(f"{folder} is not an initialised vault of this user (no {STATE_DIR}/ folder of "
                            f"yours in it): vaultmem init {folder}")  # fmt: skip
    return folder


def writable(root: Path) -> bool:
    """Whether this user can write the vault at ``root``: its folder and the state folders in it
    that exist (not on a read-only mount, nor in another user's vault)."""
    folders = [root] + [
        f for f in (root / STATE_DIR, root / STATE_DIR / "index", root / USAGE_DIR) if f.is_dir()
    ]
    return all(os.access(f, os.W_OK) for f in folders)


def private_dir(path: Path) -> Path:
    """Make sure ``path`` is a folder only its owner can enter (0700), creating missing
    folders on the way with that mode, and tightening the folder itself if it is ours and
    open to others (``.vaultmem/`` holds queries, ``.vaultmem-usage/`` usage). Refuses a
    state folder that is a symlink (a cloned vault could point ``.vaultmem`` anywhere). A
    state folder ignores itself (``ignores_itself``): no file of the user's, such as the
    vault's .gitignore, is changed to keep it out of git."""
    inside = any(name in path.parts for name in _ROOTS)
    for folder in (path, *path.parents):
        if folder.is_symlink():
            raise VaultError(f"{folder} is a symlink; vaultmem keeps its state only in a real folder")
        if folder.name in _ROOTS or not inside:
            break
    missing = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
    for folder in (path, *path.parents):  # the folder and its parents up to .vaultmem/
        st = folder.stat()
        if st.st_mode & 0o077 and st.st_uid == os.getuid():
            os.chmod(folder, 0o700)
        if folder.name in _ROOTS:
            ignores_itself(folder)
        if folder.name in _ROOTS or not inside:
            break
    return path


def ignores_itself(folder: Path) -> None:
    """A ``.gitignore`` holding ``*`` in the state folder ``folder`` (made when missing; one
    that says something else is left alone)."""
    ignore = folder / ".gitignore"
    if os.path.lexists(ignore):
        return
    try:
        fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return
    try:
        os.write(fd, IGNORE_ALL.encode())
    finally:
        os.close(fd)


def owner_only(path: Path) -> None:
    """Create (or tighten) a file vaultmem keeps in ``.vaultmem/`` as owner-only (0600);
    called before SQLite opens it, so its -wal and -shm files get the same mode."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    st = path.stat()
    if st.st_mode & 0o077 and st.st_uid == os.getuid():
        os.chmod(path, 0o600)
