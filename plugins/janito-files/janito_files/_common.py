"""Helpers shared by the file tools: results, errors, paths, decoding."""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, Any, BinaryIO

from janito_core import WorkspaceError, failure

if TYPE_CHECKING:
    from janito_core import BaseTool

# How many leading bytes are looked at to decide that a file is binary.
SNIFF_BYTES = 8192

# Default cap on the text one read returns (the dispatcher caps whole results at 100,000
# characters, so a read stays below it and can say itself where it stopped).
DEFAULT_MAX_BYTES = 64_000

_ERRNO_TYPES = {
    errno.ENOENT: "not_found",
    errno.EACCES: "permission_denied",
    errno.EPERM: "permission_denied",
    errno.EISDIR: "is_a_directory",
    errno.ENOTDIR: "not_a_directory",
    errno.EEXIST: "file_exists",
    errno.ENOTEMPTY: "directory_not_empty",
    errno.ENAMETOOLONG: "name_too_long",
    errno.ELOOP: "symlink_loop",
    errno.ENOSPC: "no_space",
    errno.EROFS: "read_only_filesystem",
    errno.EFBIG: "file_too_large",
    errno.EBUSY: "busy",
}


def outside(exc: WorkspaceError, **echo: Any) -> dict[str, Any]:
    """The failure for a path the workspace refuses: outside it, or no path at all."""
    return failure(f"refused: {exc.reason}", exc.error_type, **echo)


def os_failure(exc: OSError, action: str, **echo: Any) -> dict[str, Any]:
    """The failure for an operating-system error, typed by its errno."""
    if isinstance(exc, NotRegularFile):
        return failure(f"could not {action}: it is not a regular file (a FIFO, socket or "
                       "device)", "not_a_file", **echo)
    kind = _ERRNO_TYPES.get(exc.errno or 0, "os_error")
    reason = exc.strerror or str(exc) or type(exc).__name__
    return failure(f"could not {action}: {reason}", kind, **echo)


def invalid(message: str, **echo: Any) -> dict[str, Any]:
    return failure(message, "invalid_arguments", **echo)


def safe_text(text: str) -> str:
    """``text`` made encodable as UTF-8: bytes of undecodable file names become ``\\xNN``."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def echoed(value: Any) -> Any:
    """An input echoed in a result, made encodable (strings and lists of strings)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, list):
        return [safe_text(v) if isinstance(v, str) else v for v in value]
    return value


def shown(tool: BaseTool, real: str) -> str:
    """A resolved path as the result shows it."""
    return safe_text(tool.display_path(real))


def _limits() -> tuple[int, int]:
    try:
        return os.pathconf("/", "PC_PATH_MAX"), os.pathconf("/", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 4096, 255


PATH_MAX, NAME_MAX = _limits()


def too_long(real: str) -> str | None:
    """Why a resolved path is too long for the system, or None."""
    raw = os.fsencode(real)
    if len(raw) >= PATH_MAX:
        return f"the path is {len(raw)} bytes long; the limit is {PATH_MAX - 1}"
    longest = max((len(part) for part in raw.split(b"/")), default=0)
    if longest > NAME_MAX:
        return f"a name in the path is {longest} bytes long; the limit is {NAME_MAX}"
    return None


def resolve(tool: BaseTool, path: str, name: str) -> tuple[str | None, dict[str, Any] | None]:
    """(real path, None) or (None, failure) for a path a model sent as parameter ``name``."""
    try:
        real = tool.resolve_path(path)
    except WorkspaceError as exc:
        return None, outside(exc, **{name: safe_text(str(path))})
    problem = too_long(real)
    if problem:
        return None, failure(problem, "name_too_long", **{name: safe_text(str(path))})
    return real, None


def resolve_entry(tool: BaseTool, path: str, name: str) -> tuple[str | None, dict[str, Any] | None]:
    """Like :func:`resolve`, but a final symbolic link is the entry itself, not its target.

    The path must still resolve inside the workspace (a link pointing outside is refused),
    so deleting or moving a link never touches what it points to.
    """
    real, problem = resolve(tool, path, name)
    if problem is not None or real is None:
        return None, problem
    text = path if isinstance(path, str) else os.fsdecode(path)  # type: ignore[arg-type]
    trimmed = text.rstrip("/")
    head, tail = os.path.split(trimmed)
    if not trimmed or tail in (".", ".."):
        return real, None
    parent, problem = resolve(tool, head or ".", name)
    if problem is not None or parent is None:
        return None, problem
    return os.path.join(parent, tail), None


def split_paths(paths: str | list[str]) -> list[str]:
    """The list of paths a model sent: a list, or one string of whitespace-separated paths.

    A string naming an existing path as a whole (spaces included) is kept whole; the original
    tools took space-separated paths, so prompts written for them keep working.
    """
    if isinstance(paths, str):
        text = paths.strip()
        if not text:
            return []
        parts = text.split()
        return [text] if len(parts) == 1 else parts
    return [p for p in paths if isinstance(p, str) and p.strip()]


def split_paths_in(tool: BaseTool, paths: str | list[str]) -> list[str]:
    """:func:`split_paths`, keeping a string whole when it names an existing path."""
    if isinstance(paths, str) and len(paths.strip().split()) > 1:
        try:
            if os.path.lexists(tool.resolve_path(paths.strip())):
                return [paths.strip()]
        except (WorkspaceError, OSError, ValueError):
            pass
    return split_paths(paths)


class NotRegularFile(OSError):
    """The path is a FIFO, a socket or a device, which a read could block on forever."""


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_regular_fd(real: str) -> tuple[int, os.stat_result]:
    """(file descriptor, stat) of a regular file opened for reading, without ever blocking
    on a FIFO or a device; the caller closes the descriptor.

    Raises IsADirectoryError for a folder, NotRegularFile for anything else that is not a
    regular file, and the OSError of the open otherwise.
    """
    fd = os.open(real, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "the path is a folder", real)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(errno.EINVAL, "the path is not a regular file", real)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_regular(real: str, buffering: int = -1) -> tuple[BinaryIO, os.stat_result]:
    """:func:`open_regular_fd` as a binary file object."""
    fd, info = open_regular_fd(real)
    try:
        handle = os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise
    return handle, info


def ensure_folder(folder: str) -> None:
    """Create ``folder`` and its missing parents; NotADirectoryError when one is a file.

    Iterative (``os.makedirs`` recurses once per level, which a deep path turns into a
    RecursionError).
    """
    missing: list[str] = []
    probe = folder
    while not os.path.isdir(probe):
        if os.path.lexists(probe):
            raise NotADirectoryError(errno.ENOTDIR, "a parent of the path is a file, not a folder",
                                     probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        missing.append(probe)
        probe = parent
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def is_binary(head: bytes) -> bool:
    """Whether leading bytes look like a binary file (a NUL byte, as grep and git decide)."""
    return b"\x00" in head


def decode(data: bytes) -> tuple[str, int, int | None]:
    """(text, number of undecodable byte sequences, offset of the first) for UTF-8 ``data``.

    Undecodable sequences become U+FFFD; a leading byte-order mark is dropped.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), 0, None
    except UnicodeDecodeError as exc:
        first_offset = exc.start
    text = data.decode("utf-8", "replace")
    # "replace" puts one U+FFFD per undecodable sequence; genuine U+FFFD characters in the
    # file are complete sequences and are subtracted.
    errors = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    return text, errors, first_offset


LINE_CHARS = 500
"""Characters of one line a result shows before :func:`clip_line` cuts it."""


def clip_line(text: str, limit: int = LINE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... line cut: {limit} of {len(text)} characters shown]"
