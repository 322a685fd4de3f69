"""One ignore file's rules, asked of each path a walk meets: what ``pathspec`` says of it,
with the paths no rule matches at all answered without asking it.

``pathspec`` tries a path against each pattern of the file in turn, in Python: with the 76
patterns of a common Python ``.gitignore`` that is 75 regular expressions tried per path
(about 20 µs), and a search of a project holding such a file spent most of its time
there. Most paths of a walk match no pattern, and for them ``pathspec``'s answer is None
whatever the patterns' order or kind. So every pattern's regular expression is joined
into one, tried first (one call into the regular-expression engine), and ``pathspec``
is asked only when it matches. The joined expression is used only where it is proven to
match exactly the paths some pattern matches (see :func:`joined_patterns`); where it is
not, every path is asked of ``pathspec``, as before.
"""

from __future__ import annotations

import re
from typing import Any

_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_REFERENCES = frozenset({"GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE",
                         "GROUPREF_LOC_IGNORE", "GROUPREF_UNI_IGNORE"})
_NOTHING = re.compile(r"(?!)")


class IgnoreFile:
    """The compiled rules of one ignore file (a ``pathspec.GitIgnoreSpec``).

    ``verdict(path)`` is ``spec.check_file(path).include``: True when the rules ignore
    ``path`` (relative to the file's folder, a folder's with a trailing "/"), False when a
    ``!`` rule takes it back, None when no rule decides.
    """

    __slots__ = ("_any", "spec")

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self._any = joined_patterns(spec)

    def verdict(self, path: str) -> bool | None:
        joined = self._any
        # pathspec drops a leading "/" or "./" first; the walk's paths never have one
        if joined is not None and joined.search(path) is None and not path.startswith(("/", "./")):
            return None
        include: bool | None = self.spec.check_file(path).include
        return include


def compile_lines(lines: list[str]) -> Any | None:
    """The ``GitIgnoreSpec`` of an ignore file's ``lines``, a malformed line left out (as git
    leaves out a pattern it cannot use) rather than the whole file; None when no line is
    a rule."""
    from pathspec import GitIgnoreSpec

    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    try:
        return GitIgnoreSpec.from_lines(lines)
    except Exception:  # pathspec's error for one bad pattern: find it
        pass
    usable = []
    for line in lines:
        try:
            GitIgnoreSpec.from_lines([line])
        except Exception:
            continue
        usable.append(line)
    try:
        return GitIgnoreSpec.from_lines(usable)
    except Exception:
        return None


def joined_patterns(spec: Any) -> re.Pattern[str] | None:
    """One expression that ``search`` finds in exactly the paths where the regular
    expression of some deciding pattern of ``spec`` is found; None when that cannot be
    proven (the caller then asks ``spec`` of every path).

    The patterns' named groups would clash once joined, so each ``(?P<name>`` becomes
    ``(?:``; the result is kept only if, parsed, it is the pattern's own expression but
    for its groups' numbers, and nothing in it refers to a group or sets a global flag.
    """
    parts = []
    for pattern in getattr(spec, "patterns", None) or ():
        if getattr(pattern, "include", None) is None:
            continue  # a comment or a blank: decides nothing
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
            return None
        if regex.flags != re.UNICODE:  # an inline global flag would reach the others
            return None
        text = _NAMED_GROUP.sub("(?:", regex.pattern)
        if not _same_expression(regex.pattern, text):
            return None
        parts.append(f"(?:{text})")
    if not parts:
        return _NOTHING
    try:
        return re.compile("|".join(parts))
    except (re.error, RecursionError, OverflowError):
        return None


def _same_expression(original: str, renamed: str) -> bool:
    """Whether ``renamed`` matches what ``original`` matches: their parsed forms are equal
    once groups are taken as the sequences they hold, and neither refers to a group."""
    parser = _parser()
    if parser is None:
        return False
    try:
        same: bool = _shape(parser.parse(original)) == _shape(parser.parse(renamed))
    except (re.error, _RefersToGroup, RecursionError, AttributeError, TypeError, ValueError):
        return False
    return same


class _RefersToGroup(Exception):
    """A back reference or a conditional: group numbers matter, and joining moves them."""


def _shape(value: Any) -> Any:
    """A parsed expression as nested tuples, each group without flags spliced into the
    sequence around it and every group's number left out."""
    data = getattr(value, "data", None)
    if data is not None:  # a SubPattern
        value = data
    if isinstance(value, list) and all(isinstance(item, tuple) and len(item) == 2
                                       for item in value):
        items: list[Any] = []
        for op, av in value:
            name = str(op)
            if name in _REFERENCES:
                raise _RefersToGroup
            if name == "SUBPATTERN":
                _group, add_flags, del_flags, inner = av
                if not add_flags and not del_flags:
                    items.extend(_shape(inner))
                    continue
                items.append((name, (add_flags, del_flags, _shape(inner))))
                continue
            items.append((name, _shape(av)))
        return tuple(items)
    if isinstance(value, (list, tuple)):
        return tuple(_shape(item) for item in value)
    return value


def _parser() -> Any:
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # Python 3.10
        try:
            import sre_parse as parser
        except ImportError:
            return None
    return parser
