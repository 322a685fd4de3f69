"""Globs of policy rules: gitignore-style ones on workspace paths, shell-style on names.

A path pattern is matched against a real path inside the workspace, as the ``Workspace``
resolved it (``"src/app/.env"``, no leading slash, ``"."`` never), the way ``.gitignore``
reads patterns:

- a pattern without a slash but a trailing one (``.env``, ``*.pem``, ``secrets/``) matches
  a name at any depth; one with a slash elsewhere (``config/prod.toml``, ``/build``) is
  anchored at the workspace root (a leading slash only anchors);
- ``*`` matches anything but a slash, ``?`` one character but a slash, ``[...]`` a set;
  ``**`` as a whole component matches any number of folders (``**/x``, ``a/**/b``,
  ``secrets/**``);
- a pattern that matches a folder matches everything inside it as well: denying
  ``secrets`` denies ``secrets/key.pem``.

A name glob (``Run*``, ``gmail``) is matched against a whole tool name, toolset name or
argument value with ``*``, ``?`` and ``[...]``, case-sensitively.
"""

from __future__ import annotations

import re
from functools import lru_cache


class GlobError(ValueError):
    """A pattern that cannot be read (an unclosed ``[``, an empty pattern)."""


def _segment(text: str, pattern: str, *, any_char: str = "[^/]") -> str:
    """The regex of one glob: of a path component (``*`` stops at a slash), or with
    ``any_char="."`` of a whole name."""
    out = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "*":
            out.append(any_char + "*")
        elif char == "?":
            out.append(any_char)
        elif char == "[":
            end = text.find("]", index + 2 if text[index + 1:index + 2] in ("!", "]") else index + 1)
            if end < 0:
                raise GlobError(f"the pattern {pattern!r} has an unclosed '['")
            body = text[index + 1:end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = end
        elif char == "\\" and index + 1 < len(text):
            index += 1
            out.append(re.escape(text[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def path_regex(pattern: str) -> re.Pattern[str]:
    """The compiled form of gitignore-style ``pattern`` (see the module's docstring)."""
    if not isinstance(pattern, str) or not pattern.strip("/"):
        raise GlobError(f"a path pattern must name something, not {pattern!r}")
    if "\x00" in pattern:
        raise GlobError("a path pattern must not contain a NUL character")
    body = pattern.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    parts = [p for p in body.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise GlobError(f"the pattern {pattern!r} climbs with '..': patterns are relative to "
                        "the workspace root")
    pieces: list[str] = []
    for position, part in enumerate(parts):
        last = position == len(parts) - 1
        if part == "**":
            # any number of whole folders (none included), then on to the next component
            pieces.append("(?:[^/]+/)*" if not last else "(?:[^/]+(?:/[^/]+)*)?")
        else:
            pieces.append(_segment(part, pattern) + ("" if last else "/"))
    text = "".join(pieces)
    if text.endswith("/"):
        text = text[:-1]
    lead = "" if anchored else "(?:[^/]+/)*"
    # Matching a folder matches what is inside it too.
    return re.compile(f"{lead}{text}(?:/.*)?", re.S)


def path_matches(pattern: str, relative: str) -> bool:
    """Whether workspace path ``relative`` (``"a/b"``) is matched by ``pattern``."""
    return path_regex(pattern).fullmatch(relative) is not None


@lru_cache(maxsize=1024)
def name_regex(pattern: str) -> re.Pattern[str]:
    """The compiled form of name glob ``pattern``: ``*`` here matches slashes too."""
    if not isinstance(pattern, str) or not pattern:
        raise GlobError(f"a name pattern must not be empty, not {pattern!r}")
    return re.compile(_segment(pattern, pattern, any_char="."), re.S)


def name_matches(pattern: str, value: str) -> bool:
    return name_regex(pattern).fullmatch(value) is not None


def name_pattern(pattern: str) -> str | None:
    """The regex of one component when ``pattern`` matches by name at any depth (no slash
    but a trailing one, no ``**``), else None."""
    body = pattern.rstrip("/")
    if "/" in body or body in ("", ".", "..") or "**" in body:
        return None
    return _segment(body, pattern)


def first_literal(pattern: str) -> str | None:
    """The first component of anchored ``pattern`` when it holds no wildcard, else None."""
    body = pattern.strip("/")
    first = body.split("/", 1)[0]
    if not first or any(c in first for c in "*?[\\"):
        return None
    return first
