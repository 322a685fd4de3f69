"""Atomic file replacement: a reader, or a crash, sees the old file or the new one.

The new content goes to a temporary file in the same folder (so the final rename stays on
one filesystem), is flushed to disk with ``fsync``, takes the mode (and, where allowed, the
owner) of the file it replaces, and is then renamed over the target in one step. The folder
is synced afterwards so the rename itself survives a power cut. If the process dies before
the rename, the target is untouched and at most a hidden ``.NAME.XXXXXXXX.tmp`` file stays
behind; if it dies after, the target holds the complete new content.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator

TEMP_SUFFIX = ".tmp"


class TargetExists(FileExistsError):
    """The target exists and overwriting was not asked for."""


def temp_name(target: str) -> str:
    """A fresh temporary path next to ``target`` (hidden, recognisable, unpredictable)."""
    folder, name = os.path.split(target)
    # Keep the name within NAME_MAX (255 bytes) whatever the target's length.
    stem = os.fsencode(name)[:200].decode("utf-8", "ignore") or "file"
    return os.path.join(folder, f".{stem}.{os.urandom(4).hex()}{TEMP_SUFFIX}")


def _open_temp(target: str, mode: int) -> tuple[int, str]:
    for _ in range(100):
        path = temp_name(target)
        try:
            # O_EXCL: never follow or reuse something already at that name.
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            return os.open(path, flags, mode), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", target)


def fsync_dir(folder: str) -> None:
    """Flush a folder's entries to disk (best effort where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _copy_metadata(fd: int, existing: os.stat_result | None) -> None:
    if existing is None:
        return
    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
    if hasattr(os, "fchown"):
        with contextlib.suppress(OSError):
            if (existing.st_uid, existing.st_gid) != os.fstat(fd)[4:6]:
                os.fchown(fd, existing.st_uid, existing.st_gid)


def _publish(temp: str, target: str, overwrite: bool) -> None:
    """Put ``temp`` at ``target`` in one step; without ``overwrite`` never replace anything."""
    if overwrite:
        os.replace(temp, target)
        return
    try:
        # link() fails atomically when the target exists, unlike a check before rename().
        os.link(temp, target)
    except FileExistsError:
        raise TargetExists(errno.EEXIST, "the file exists", target) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK,
                             errno.EXDEV, errno.ENOSYS):
            raise
        # A filesystem without hard links: check, then rename (a narrow race remains).
        if os.path.lexists(target):
            raise TargetExists(errno.EEXIST, "the file exists", target) from None
        os.rename(temp, target)
        return
    os.unlink(temp)


def atomic_write(target: str, chunks: bytes | Iterator[bytes], *, overwrite: bool) -> bool:
    """Write ``chunks`` to ``target`` atomically; return whether a file was replaced.

    ``target`` must be a resolved path whose folder exists. Raises ``TargetExists`` when the
    target exists and ``overwrite`` is false, ``IsADirectoryError`` when it is a folder, and
    any ``OSError`` of the writing itself; in every failure the target is left as it was and
    the temporary file is removed.
    """
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if stat.S_ISDIR(existing.st_mode):
            raise IsADirectoryError(errno.EISDIR, "the path is a folder", target)
        if not overwrite:
            raise TargetExists(errno.EEXIST, "the file exists", target)
    fd, temp = _open_temp(target, 0o666)  # the umask applies to new files, as with open()
    try:
        try:
            if isinstance(chunks, (bytes, bytearray, memoryview)):
                _write_all(fd, bytes(chunks))
            else:
                for chunk in chunks:
                    _write_all(fd, chunk)
            _copy_metadata(fd, existing)
            os.fsync(fd)
        finally:
            os.close(fd)
        _publish(temp, target, overwrite)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    fsync_dir(os.path.dirname(target))
    return existing is not None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:1 << 24])
        view = view[written:]


def copy_file_atomic(source: str, target: str, *, overwrite: bool) -> None:
    """Copy ``source`` to ``target`` (content, mode, times) so that ``target`` appears whole."""

    def chunks() -> Iterator[bytes]:
        with open(source, "rb") as handle:
            while True:
                block = handle.read(1 << 20)
                if not block:
                    return
                yield block

    import shutil

    atomic_write(target, chunks(), overwrite=overwrite)
    with contextlib.suppress(OSError):
        shutil.copystat(source, target, follow_symlinks=False)


def copy_tree_atomic(source: str, target: str) -> None:
    """Copy folder ``source`` to the absent ``target``: built aside, then renamed in place."""
    import shutil

    temp = temp_name(target)
    try:
        shutil.copytree(source, temp, symlinks=True)
        for folder, _dirs, files in os.walk(temp):
            for name in files:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    fd = os.open(path, os.O_RDONLY)
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
            fsync_dir(folder)
        if os.path.lexists(target):
            raise TargetExists(errno.EEXIST, "the target exists", target)
        os.rename(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    fsync_dir(os.path.dirname(target))
