"""Swapping two paths atomically (``renameat2(RENAME_EXCHANGE)``, Linux >= 3.15, through ctypes):
what lets a rewrite look at the file it took off a path (``store.atomic_write``). Elsewhere
(another OS, a file system without it) ``exchange`` says False and the caller falls back."""

from __future__ import annotations

import errno
import os
from pathlib import Path

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def _load_renameat2():
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError, ImportError, TypeError):  # TypeError: CDLL(None) on Windows
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_FN: list = []  # the loaded function (or None), once: ctypes is imported only by a first swap


def exchange(a: Path | str, b: Path | str) -> bool:
    """Atomically swap the files at ``a`` and ``b``; False where the system cannot (the caller
    falls back); FileNotFoundError when either is gone."""
    if not _FN:
        _FN.append(_load_renameat2())
    if _FN[0] is None:
        return False
    import ctypes

    if _FN[0](AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))
