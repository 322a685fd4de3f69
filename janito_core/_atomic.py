"""Atomic replacement of a file in a folder held open: a reader, or a crash, sees the old
file or the new one, never a part.

The new content goes to a hidden temporary file in the same folder (``.NAME.XXXXXXXX.tmp``,
so the final rename stays on one filesystem), is flushed with ``fsync``, takes the mode
(and, where allowed, the owner) of the file it replaces, and is renamed over the target in
one step; the folder is synced afterwards so the rename itself survives a power cut. Every
call is relative to the folder's descriptor: the target's name is never a path to walk.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable

from ._renameat import rename_noreplace

TEMP_SUFFIX = ".tmp"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class TargetExists(FileExistsError):
    """The target exists and overwriting was not asked for."""


def temp_name(name: str) -> str:
    """A fresh hidden name next to ``name`` (recognisable, unpredictable, within NAME_MAX)."""
    stem = os.fsencode(name)[:200].decode("utf-8", "ignore") or "file"
    return f".{stem}.{os.urandom(4).hex()}{TEMP_SUFFIX}"


def create_temp(dir_fd: int, name: str, mode: int = 0o666) -> tuple[int, str]:
    """(descriptor, name) of a new temporary file beside ``name`` in folder ``dir_fd``."""
    for _ in range(100):
        temp = temp_name(name)
        try:
            # O_EXCL | O_NOFOLLOW: never reuse or follow something already at that name.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                         mode, dir_fd=dir_fd)
        except FileExistsError:
            continue
        return fd, temp
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)


def sync_folder(dir_fd: int) -> None:
    """Flush a folder's entries to disk (best effort where a folder cannot be synced)."""
    try:
        fd = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:1 << 24])
        view = view[written:]


def copy_metadata(fd: int, existing: os.stat_result | None) -> None:
    """Give a new file the mode and, where allowed, the owner of the file it replaces."""
    if existing is None:
        return
    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
    if hasattr(os, "fchown"):
        with contextlib.suppress(OSError):
            if (existing.st_uid, existing.st_gid) != os.fstat(fd)[4:6]:
                os.fchown(fd, existing.st_uid, existing.st_gid)


def publish(dir_fd: int, temp: str, name: str, overwrite: bool) -> None:
    """Put ``temp`` at ``name`` in one step; without ``overwrite`` never replace anything."""
    if overwrite:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    try:
        # link() fails atomically when the target exists, unlike a check before rename().
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise TargetExists(errno.EEXIST, "the file exists", name) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK,
                             errno.EXDEV, errno.ENOSYS):
            raise
        try:
            rename_noreplace(dir_fd, temp, dir_fd, name)
        except FileExistsError:
            raise TargetExists(errno.EEXIST, "the file exists", name) from None
        return
    os.unlink(temp, dir_fd=dir_fd)


def write_at(dir_fd: int, name: str, chunks: bytes | Iterable[bytes], *, overwrite: bool,
             expect: os.stat_result | None = None, like: os.stat_result | None = None,
             mode: int | None = None) -> bool:
    """Write ``chunks`` as file ``name`` of folder ``dir_fd`` atomically; whether a file was
    replaced.

    Raises TargetExists when ``name`` exists and ``overwrite`` is false, IsADirectoryError
    when it is a folder, and the OSError of the writing; in every failure the target is left
    as it was and the temporary file is removed. ``expect``: the state the caller read the
    file in; ChangedMeanwhile is raised, and nothing written, when it changed since.
    ``like``: the stat whose mode (and owner, where allowed) the new file takes, instead of
    the replaced file's (a copy keeps its source's). ``mode``: the new file's mode whatever
    the umask and the replaced file, set before any byte is written.
    """
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if stat.S_ISDIR(existing.st_mode):
            raise IsADirectoryError(errno.EISDIR, "the path is a folder", name)
        if not overwrite:
            raise TargetExists(errno.EEXIST, "the file exists", name)
        if stat.S_ISLNK(existing.st_mode):
            existing = None  # the link itself is replaced; a link has no mode to keep
    if expect is not None:
        check_unchanged(dir_fd, name, expect)
    # the umask applies to new files, as with open()
    fd, temp = create_temp(dir_fd, name, 0o666 if mode is None else mode)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            if isinstance(chunks, (bytes, bytearray, memoryview)):
                write_all(fd, chunks)
            else:
                for chunk in chunks:
                    write_all(fd, chunk)
            if mode is None:
                copy_metadata(fd, like or existing)
            os.fsync(fd)
        finally:
            os.close(fd)
        if expect is not None:
            check_unchanged(dir_fd, name, expect)
        publish(dir_fd, temp, name, overwrite)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    sync_folder(dir_fd)
    return existing is not None


class ChangedMeanwhile(OSError):
    """The file changed (by another process) between the read and the write."""


def same_version(a: os.stat_result, b: os.stat_result) -> bool:
    """Whether two stats show one file in one state (inode, size, modification times)."""
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == \
        (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns, b.st_ctime_ns)


def check_unchanged(dir_fd: int, name: str, expect: os.stat_result) -> None:
    try:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise ChangedMeanwhile(errno.ESTALE, "the file was removed meanwhile", name) from None
    if not same_version(now, expect):
        raise ChangedMeanwhile(errno.ESTALE, "the file was changed meanwhile", name)
