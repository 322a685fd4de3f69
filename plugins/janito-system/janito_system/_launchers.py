"""What the sandbox's parts share about the programs janito starts, lower than all of them.

Launchers are trusted, never found: bubblewrap (and the programs that mount a call's
overlay) are taken only from the system's own folders (``TRUSTED_FOLDERS``), never from
PATH, and a file may be run as a launcher only when nobody but its owner can change it or
the folders above it (``untrusted`` says why not). ``_sandbox``, ``_mask`` and
``_overlay`` all use these, and ``_sandbox`` uses the other two: the names live here so
that no two of them import each other.
"""

from __future__ import annotations

import os

BUBBLEWRAP = "bubblewrap"
INSTALL_HINT = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
TRUSTED_FOLDERS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")
"""Where bubblewrap is looked for, in this order; PATH is never searched."""
TMPDIR_PREFIX = "janito-call-"
"""The temporary folder of a call is ``<tempdir>/janito-call-<janito's pid>-<random>``."""


def untrusted(path: str, owners: tuple[int, ...]) -> str | None:
    """Why the file at the real path ``path`` may not be run as a launcher (None: it may).

    It must be a regular file owned by one of ``owners`` and writable by nobody else,
    and so must every folder above it be: otherwise someone else (a process of another
    user, or of the same user that the sandbox does not confine) could replace it.
    """
    import stat

    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    problem = _not_owned(info, owners)
    if problem is not None:
        return problem
    return _untrusted_folders(os.path.dirname(path), owners)


def _not_owned(info: os.stat_result, owners: tuple[int, ...]) -> str | None:
    if info.st_uid not in owners:
        return f"is owned by uid {info.st_uid}"
    if info.st_mode & 0o022:
        return "is writable by its group or others"
    return None


def _untrusted_folders(folder: str, owners: tuple[int, ...]) -> str | None:
    """Why ``folder`` or a folder above it lets someone else swap what it holds, or None."""
    import stat

    while True:
        try:
            info = os.lstat(folder)
        except OSError as exc:
            return f"lies in {folder}, which cannot be examined ({exc.strerror or exc})"
        problem = _not_owned(info, owners) if stat.S_ISDIR(info.st_mode) else "is not a folder"
        if problem is not None:
            return f"lies in {folder}, which {problem}"
        if folder == "/":
            return None
        folder = os.path.dirname(folder)
