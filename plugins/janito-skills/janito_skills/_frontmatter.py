"""Reading a SKILL.md: its YAML front matter, and on demand its Markdown body.

``read_front_matter`` reads the file line by line and stops at the closing ``---``: listing
skills never reads instructions or resource files. The block is parsed with PyYAML's safe
loader (the C one when PyYAML was built with libyaml), so folded and quoted descriptions
and nested ``metadata`` mappings work as the Agent Skills format allows. Every problem is a
:class:`SkillFileError` whose message names what to fix; nothing else escapes.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from janito_core.workspace import Workspace

SKILL_FILE = "SKILL.md"
DELIMITER = "---"
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_SKILL_FILE_BYTES = 1024 * 1024
MAX_NODES = 2000
NOT_OPENED = "the file does not start with a '---' line opening the YAML front matter"
NOT_CLOSED = "the front matter is never closed: no '---' line follows the opening one"


class SkillFileError(Exception):
    """A SKILL.md that cannot be used; the message says why, for the file's author."""


def _is_delimiter(line: bytes) -> bool:
    return line.rstrip(b" \t\r\n") == DELIMITER.encode()


def _first_line_ok(line: bytes) -> bool:
    if line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    return _is_delimiter(line)


def split_front_matter(lines: list[bytes]) -> tuple[list[bytes], int] | None:
    """The front-matter lines and the index of the closing delimiter, None if unclosed."""
    for index in range(1, len(lines)):
        if _is_delimiter(lines[index]):
            return lines[1:index], index
    return None


Source = str | os.PathLike[str] | BinaryIO
"""A SKILL.md: a file opened through its skill folder, or the path of one."""


def open_skill_file(folder: Workspace, name: str = SKILL_FILE) -> BinaryIO:
    """File ``name`` of a skill folder (a workspace of its own), opened for reading.

    A link is followed only while it stays inside the folder: a SKILL.md that is a link to
    a file elsewhere, even elsewhere in the project, is refused like any resource would be.
    SkillFileError says what is wrong.
    """
    from janito_core import WorkspaceError
    from janito_core.workspace import NotRegularFile

    try:
        return folder.open_file(name)
    except WorkspaceError as exc:
        if exc.error_type == "outside_workspace":
            raise SkillFileError(f"{name} is a symbolic link leading outside the skill's "
                                 "folder; refused") from None
        if exc.error_type == "symlink_loop":
            raise SkillFileError(f"{name} goes round a loop of symbolic links") from None
        raise SkillFileError(f"the file cannot be opened ({exc.reason})") from None
    except FileNotFoundError:
        raise SkillFileError("the file does not exist") from None
    except (IsADirectoryError, NotRegularFile):
        raise SkillFileError(f"{name} must be a regular file") from None
    except OSError as exc:
        raise SkillFileError(f"the file cannot be opened ({exc.strerror or exc})") from None


def _open(source: Source) -> BinaryIO:
    if not isinstance(source, (str, os.PathLike)):
        return source
    # A path names a file in its own folder, confined to it like any skill's files.
    folder, name = os.path.split(os.path.abspath(os.fspath(source)))
    if not os.path.isdir(folder):
        raise SkillFileError("the file does not exist")
    from janito_core.workspace import Workspace

    with Workspace(folder) as place:
        return open_skill_file(place, name)


def read_front_matter_bytes(source: Source) -> bytes:
    """The raw front matter of a SKILL.md, reading no further than its end (a file object
    given is read from where it stands and closed)."""
    handle = _open(source)
    with handle:
        try:
            first = handle.readline(MAX_FRONT_MATTER_BYTES)
            if not first:
                raise SkillFileError("the file is empty; it must start with a '---' line")
            if not _first_line_ok(first):
                raise SkillFileError(NOT_OPENED)
            collected: list[bytes] = []
            size = len(first)
            while True:
                line = handle.readline(MAX_FRONT_MATTER_BYTES)
                if not line:
                    raise SkillFileError(NOT_CLOSED)
                if _is_delimiter(line):
                    return b"".join(collected)
                size += len(line)
                if size > MAX_FRONT_MATTER_BYTES:
                    raise SkillFileError(
                        "no closing '---' line within the first "
                        f"{MAX_FRONT_MATTER_BYTES // 1024} KiB of the file"
                    )
                collected.append(line)
        except OSError as exc:
            raise SkillFileError(f"the file cannot be read ({exc.strerror or exc})") from None


def _yaml_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


def parse_front_matter(raw: bytes) -> dict[str, Any]:
    """The front matter as a JSON-compatible mapping (SkillFileError when it is not one)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFileError(
            f"the front matter is not valid UTF-8 (byte {exc.start} of the block)"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    import yaml

    try:
        data = yaml.load(text, Loader=_yaml_loader())  # a safe loader
    except yaml.YAMLError as exc:
        raise SkillFileError(_describe_yaml_error(exc)) from None
    except (RecursionError, MemoryError, ValueError, TypeError) as exc:
        raise SkillFileError(f"the front matter cannot be parsed ({type(exc).__name__})") from None
    if data is None:
        raise SkillFileError("the front matter is empty; it needs 'name' and 'description'")
    if not isinstance(data, dict):
        raise SkillFileError(
            f"the front matter must be a mapping of keys to values, not a {_yaml_kind(data)}"
        )
    budget = [MAX_NODES]
    cleaned = _jsonable(data, budget)
    assert isinstance(cleaned, dict)
    return cleaned


def _yaml_kind(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _describe_yaml_error(exc: Exception) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    where = ""
    if mark is not None:
        # line 1 of the file is the opening '---'
        where = f" at line {mark.line + 2}, column {mark.column + 1}"
    hint = ""
    if "mapping values are not allowed" in problem:
        hint = "; a value containing ': ' must be quoted"
    return f"the front matter is not valid YAML: {problem}{where}{hint}"


def _jsonable(value: Any, budget: list[int]) -> Any:
    """``value`` with YAML-only types made JSON-friendly; a size bound defeats alias bombs."""
    budget[0] -= 1
    if budget[0] < 0:
        raise SkillFileError(
            f"the front matter is too large once expanded (more than {MAX_NODES} values)"
        )
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        finite = value == value and value not in (float("inf"), float("-inf"))
        return value if finite else str(value)
    if callable(getattr(value, "isoformat", None)):  # YAML timestamps: date, datetime
        return str(value.isoformat())
    if isinstance(value, dict):
        return {str(k): _jsonable(v, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v, budget) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def read_front_matter(source: Source) -> dict[str, Any]:
    """Read and parse the front matter of a SKILL.md (see :data:`Source`)."""
    return parse_front_matter(read_front_matter_bytes(source))


def read_body(source: Source) -> tuple[str, bool]:
    """The Markdown body of a SKILL.md (after the front matter), truncated?"""
    try:
        with _open(source) as handle:
            data = handle.read(MAX_SKILL_FILE_BYTES + 1)
    except OSError as exc:
        raise SkillFileError(f"the file cannot be read ({exc.strerror or exc})") from None
    truncated = len(data) > MAX_SKILL_FILE_BYTES
    if truncated:
        data = data[:MAX_SKILL_FILE_BYTES]
    lines = data.splitlines(keepends=True)
    if not lines or not _first_line_ok(lines[0]):
        raise SkillFileError(NOT_OPENED)
    found = split_front_matter(lines)
    if found is None:
        raise SkillFileError(NOT_CLOSED)
    _, closing = found
    body = b"".join(lines[closing + 1 :]).decode("utf-8", "replace")
    return body.lstrip("\r\n"), truncated
