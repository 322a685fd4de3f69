"""One ignore file's rules, asked of each path a walk meets: what ``pathspec`` says of it,
with the paths no rule matches at all answered without asking it.

``pathspec`` tries a path against each pattern of the file in turn, in Python: with the 76
patterns of a common Python ``.gitignore`` that is 75 regular expressions tried per path
(about 20 µs), and a search of a project holding such a file spent most of its time
there. Most paths of a walk match no pattern, and for them ``pathspec``'s answer is None
whatever the patterns' order or kind. So every pattern's regular expression is joined
into one, tried first (one call into the regular-expression engine), and ``pathspec``
is asked only when it matches and the file holds a ``!`` rule (without one, a path some
rule matches is ignored, whichever rule it is). The joined expression is used only where
it is proven to match exactly the paths some pattern matches (see
:func:`joined_patterns`); where it is not, every path is asked of ``pathspec``, as before.
"""

from __future__ import annotations

import re
from typing import Any

from ._common import regex_parser

_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_REFERENCES = frozenset({"GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE",
                         "GROUPREF_LOC_IGNORE", "GROUPREF_UNI_IGNORE"})


class IgnoreFile:
    """The compiled rules of one ignore file (a ``pathspec.GitIgnoreSpec``).

    ``verdict(path)`` is ``spec.check_file(path).include``: True when the rules ignore
    ``path`` (relative to the file's folder, a folder's with a trailing "/"), False when a
    ``!`` rule takes it back, None when no rule decides.
    """

    __slots__ = ("_joined", "_only_ignores", "spec")

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self._joined = joined_patterns(spec)
        # no "!" rule: a path some rule matches is ignored, whichever rule it is
        self._only_ignores = all(getattr(pattern, "include", None) is not False
                                 for pattern in getattr(spec, "patterns", None) or ())

    def verdict(self, path: str) -> bool | None:
        joined = self._joined
        # pathspec drops a leading "/" or "./" first; the walk's paths never have one
        if joined is not None and not path.startswith(("/", "./")):
            at_start, anywhere = joined
            if ((at_start is None or at_start.match(path) is None)
                    and (anywhere is None or anywhere.search(path) is None)):
                return None
            if self._only_ignores:
                return True
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


Joined = tuple["re.Pattern[str] | None", "re.Pattern[str] | None"]
"""(matched at a path's start, searched anywhere in it): between them they find exactly the
paths some pattern of a spec is found in."""

# Most patterns of a gitignore start so: "^" and, for a pattern of no folder, any folders.
_START = "^"
_ANY_FOLDERS = "(?:.+/)?"


def joined_patterns(spec: Any) -> Joined | None:
    """Expressions that find exactly the paths where the regular expression of some
    deciding pattern of ``spec`` is found (pathspec ``search``es each); None when that
    cannot be proven (the caller then asks ``spec`` of every path).

    The patterns' named groups would clash once joined, so each ``(?P<name>`` becomes
    ``(?:``; that is kept only if, parsed, it is the pattern's own expression but for its
    groups' numbers, nothing in it refers to a group and it sets no global flag. The
    patterns that start with "^" are matched at the start of a path, in one expression
    that tries the common "any folders" start once for them all (a search would try every
    position of the path, each pattern's "^" failing there in turn); the rest are searched.
    """
    parser = regex_parser()
    folders_start = _START + _ANY_FOLDERS
    after_folders: list[str] = []  # what follows "^(?:.+/)?"
    at_start: list[str] = []  # what follows "^"
    anywhere: list[str] = []
    try:
        folders_head, start_head = _shape(parser.parse(folders_start)), _shape(parser.parse(_START))
        for pattern in getattr(spec, "patterns", None) or ():
            if getattr(pattern, "include", None) is None:
                continue  # a comment or a blank: decides nothing
            regex = getattr(pattern, "regex", None)
            if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
                return None
            if regex.flags != re.UNICODE:  # an inline global flag would reach the others
                return None
            text = _NAMED_GROUP.sub("(?:", regex.pattern)
            shape = _shape(parser.parse(text))
            if shape != _shape(parser.parse(regex.pattern)):
                return None  # renaming changed what it matches
            rest = _rest_after(folders_start, folders_head, text, shape, parser)
            if rest is not None:
                after_folders.append(rest)
                continue
            rest = _rest_after(_START, start_head, text, shape, parser)
            if rest is not None:
                at_start.append(rest)
            else:
                anywhere.append(text)
        if after_folders:
            at_start.append(_ANY_FOLDERS + _either(after_folders))
        return (re.compile(_either(at_start)) if at_start else None,
                re.compile(_either(anywhere)) if anywhere else None)
    except (re.error, _RefersToGroup, RecursionError, OverflowError, AttributeError, TypeError,
            ValueError):
        return None


def _rest_after(start: str, head: Any, text: str, shape: Any, parser: Any) -> str | None:
    """What follows ``start`` (parsed, ``head``) in expression ``text`` (parsed,
    ``shape``), where that parses on its own to what followed ``start`` (so it may be
    joined after ``start`` with others); None where ``text`` does not start so."""
    if not text.startswith(start):
        return None
    rest = text[len(start):]
    if shape[:len(head)] != head or shape[len(head):] != _shape(parser.parse(rest)):
        return None
    return rest


def _either(texts: list[str]) -> str:
    return "(?:" + "|".join(f"(?:{text})" for text in texts) + ")"


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

