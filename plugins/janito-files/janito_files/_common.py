"""Helpers shared by the file tools: results, errors, paths, decoding.

Every path is opened through the workspace (``janito_core.Workspace``), by descriptor."""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import TYPE_CHECKING, Any

# The result types of the tools (their MCP output schemas) mark the keys a result may
# leave out with NotRequired, which typing has from 3.11 on.
if sys.version_info >= (3, 11):
    from typing import NotRequired as NotRequired
    from typing import TypedDict as TypedDict
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired as NotRequired
    from typing_extensions import TypedDict as TypedDict

from janito_core import Failure, WorkspaceError, failure
from janito_core.cancellation import current_token

if TYPE_CHECKING:
    from janito_core import BaseTool
    from janito_core.workspace import Location

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


class PathProblem(TypedDict):
    """One path a listing or search could not start from (the others were done).

    Attributes:
        path: The path as given.
        error: Why it was left out.
        error_type: The kind of problem (not_found, outside_workspace, ...).
    """

    path: str
    success: bool
    error: str
    error_type: str


def regex_parser() -> Any:
    """The standard library's parser of regular expressions (what ``re.compile`` parses
    with), whose trees the search and the ignore rules read."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # Python 3.10
        import sre_parse as parser
    return parser


def check_cancelled() -> None:
    """Raise CallCancelled when this call was cancelled or ran out of time (its timeout
    cancels it): checked between the blocks of every read whose length the file decides,
    so a huge file never holds a call past its caller's patience."""
    token = current_token()
    if token is not None:
        token.check()


def outside(exc: WorkspaceError, **echo: Any) -> Failure:
    """The failure for a path the workspace refuses: outside it, or no path at all."""
    return failure(f"refused: {exc.reason}", exc.error_type, **echo)


def os_failure(exc: OSError, action: str, **echo: Any) -> Failure:
    """The failure for an operating-system error, typed by its errno."""
    from janito_core._atomic import ReadOnly
    from janito_core.workspace import NotRegularFile

    if isinstance(exc, ReadOnly):
        return read_only_failure(action, exc.strerror, **echo)
    if isinstance(exc, NotRegularFile):
        return failure(f"could not {action}: it is not a regular file (a FIFO, socket or "
                       "device)", "not_a_file", **echo)
    kind = _ERRNO_TYPES.get(exc.errno or 0, "os_error")
    reason = exc.strerror or str(exc) or type(exc).__name__
    return failure(f"could not {action}: {reason}", kind, **echo)


def read_only_failure(action: str, why: str | None, **echo: Any) -> Failure:
    """The failure for a file whose mode marks it read-only: a person made it so, and a
    tool never replaces it silently (the file is left as it is)."""
    return failure(f"could not {action}: {why or 'the file is marked read-only'}; make it "
                   "writable first if it should change", "read_only_file", **echo)


def invalid(message: str, **echo: Any) -> Failure:
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


def _name_max() -> int:
    try:
        return os.pathconf("/", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


NAME_MAX = _name_max()


def too_long(text: str) -> str | None:
    """Why a path a model sent holds a name too long for the system, or None."""
    try:
        raw = os.fsencode(text)
    except UnicodeError:
        return None
    longest = max((len(part) for part in raw.split(b"/")), default=0)
    if longest > NAME_MAX:
        return f"a name in the path is {longest} bytes long; the limit is {NAME_MAX}"
    return None


def locate(tool: BaseTool, path: str, name: str, *, follow: bool = True,
           make_parents: bool = False, action: str = "open"
           ) -> tuple[Location | None, Failure | None]:
    """(where ``path`` leads, None) or (None, the failure) for a path a model sent as
    parameter ``name``; the failure echoes the path under ``name``.

    ``follow=False``: a final symbolic link is the entry itself (to delete or move the link,
    never what it points to). The walk never leaves the workspace (see janito_core.Workspace).
    """
    echo = {name: safe_text(str(path))}
    problem = too_long(path) if isinstance(path, str) else None
    if problem:
        return None, failure(problem, "name_too_long", **echo)
    try:
        return tool.workspace.locate(path, follow_symlinks=follow,
                                     make_parents=make_parents), None
    except WorkspaceError as exc:
        return None, outside(exc, **echo)
    except OSError as exc:
        where = safe_text(exc.filename) if isinstance(exc.filename, str) else echo[name]
        return None, os_failure(exc, f"{action} {where}", **echo)


def open_for_reading(tool: BaseTool, path: str, name: str
                     ) -> tuple[tuple[int, os.stat_result, str] | None, Failure | None]:
    """((descriptor, stat, shown path), None) of a regular file a model named as parameter
    ``name``, or (None, the failure): outside the workspace, missing, a folder, a FIFO or a
    device (never opened in a way that could block). The caller closes the descriptor."""
    echo = {name: safe_text(str(path))}
    problem = too_long(path) if isinstance(path, str) else None
    if problem:
        return None, failure(problem, "name_too_long", **echo)
    try:
        return tool.workspace.open_regular(path), None
    except WorkspaceError as exc:
        return None, outside(exc, **echo)
    except IsADirectoryError:
        return None, failure("the path is a folder, not a file; use ListFiles to see what it "
                             "holds", "is_a_directory", **echo)
    except OSError as exc:
        where = safe_text(exc.filename) if isinstance(exc.filename, str) else echo[name]
        return None, os_failure(exc, f"open {where}", **echo)


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
    if isinstance(paths, str) and len(paths.strip().split()) > 1 and \
            tool.workspace.exists(paths.strip()):
        return [paths.strip()]
    return split_paths(paths)


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


def clip_line(text: str, limit: int = LINE_CHARS, total: int | None = None) -> str:
    """``text`` cut to ``limit`` characters with a marker saying so; ``total``: the length
    of the whole line when ``text`` is only its start."""
    total = len(text) if total is None else total
    if total <= limit:
        return text
    return text[:limit] + f" [... line cut: {limit} of {total} characters shown]"
