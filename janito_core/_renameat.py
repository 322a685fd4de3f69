"""Renaming without replacing: ``renameat2(RENAME_NOREPLACE)`` where the C library has it.

A rename that must not replace an existing target (a folder moved without overwrite, a
file on a filesystem without hard links) is one atomic call on Linux 3.15+ with glibc
2.28+; elsewhere it is a check followed by a rename, and a target created between the two
by another process is replaced (the narrow race is documented in the author guide).
"""

from __future__ import annotations

import errno
import os
from typing import Any

RENAME_NOREPLACE = 1


class _Libc:
    """``renameat2`` from the C library, looked up on first use (None when absent)."""

    function: Any = False   # False: not looked up yet


def _renameat2() -> Any:
    found = _Libc.function
    if found is False:
        found = None
        try:
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            found = getattr(libc, "renameat2", None)
            if found is not None:
                found.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                  ctypes.c_uint]
                found.restype = ctypes.c_int
        except (OSError, ImportError, AttributeError):
            found = None
        _Libc.function = found
    return found


def rename_noreplace(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
    """Rename ``src`` to ``dst`` (each relative to its folder); FileExistsError when ``dst``
    exists, which is then left untouched."""
    function = _renameat2()
    if function is not None:
        import ctypes

        result = function(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst),
                          RENAME_NOREPLACE)
        if result == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise OSError(code, os.strerror(code), dst)
    try:
        os.stat(dst, dir_fd=dst_dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        return
    raise FileExistsError(errno.EEXIST, "the target exists", dst)
