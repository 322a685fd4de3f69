"""Parameter descriptions from a docstring in Google, NumPy or reST style.

A schema needs one thing from a docstring: each parameter's name and its description,
with the description's lines joined into one. Sections are found by indentation, the way
the three styles lay them out, so no general docstring model is built.
"""

from __future__ import annotations

import re

# Each list of words is written once and used both to detect a style and to read it.
_REST_KEYS = "param|parameter|arg|argument|key|keyword|ivar|var|attribute"
_NUMPY_TITLES = "Parameters|Other Parameters|Keyword Arguments|Attributes"
_GOOGLE_TITLES = ("Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments"
                  "|Other Parameters|Attributes")

_REST = re.compile(rf"^\s*:({_REST_KEYS})\b", re.M)
_NUMPY = re.compile(rf"^\s*({_NUMPY_TITLES})\s*\n\s*-{{3,}}\s*$", re.M)
_GOOGLE = re.compile(rf"^\s*({_GOOGLE_TITLES})\s*:\s*$", re.M)

_REST_FIELD = re.compile(rf"\s*:(?:{_REST_KEYS})\b([^:]*):(.*)")
# A name may be starred (*args), its stars escaped for reST (\*args), and a Google entry may
# be a list item ("- name: text").
_GOOGLE_ENTRY = re.compile(r"(?:[-+]\s+)?(\\?\*{0,2}\w+)\s*(?:\(.*?\))?\s*:(.*)")
_NUMPY_NAMES = re.compile(r"\\?\*{0,2}\w+(?:\s*,\s*\\?\*{0,2}\w+)*")
_ANY_FIELD = re.compile(r"\s*:\w[^:`]*:(?:\s|$)")  # ":returns:", not ":class:`x`"
_NUMPY_HEADING = re.compile(rf"\s*(?:{_NUMPY_TITLES})\s*")
_UNDERLINE = re.compile(r"\s*-{3,}\s*")


def parse_param_docs(doc: str | None) -> dict[str, str]:
    """{parameter name: description} documented in ``doc``, whichever of the three styles
    it uses; a parameter listed without a description maps to "".

    The style is detected in the order reST, NumPy, Google; a docstring with no parameter
    section gives {}. An entry that does not read as a parameter is skipped, not fatal.
    """
    if not doc:
        return {}
    if _REST.search(doc):
        parse = _rest
    elif _NUMPY.search(doc):
        parse = _numpy
    elif _GOOGLE.search(doc):
        parse = _google
    else:
        return {}
    found: dict[str, str] = {}
    for name, description in parse(doc.expandtabs().splitlines()):
        name = name.lstrip("\\*")
        if description:
            found[name] = description
        else:
            found.setdefault(name, "")
    return found


Entries = list[tuple[str, str]]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _joined(first: str, rest: list[str]) -> str:
    return " ".join(" ".join([first, *rest]).split())


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The least indented lines of ``lines`` with the lines below each that are indented
    further (blank lines included), in order."""
    margin = min((_indent(line) for line in lines if line.strip()), default=0)
    blocks: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.strip() and _indent(line) <= margin:
            blocks.append((line.strip(), []))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def _google(lines: list[str]) -> Entries:
    """Entries of every ``Args:``-like section: the lines indented under the heading."""
    entries: Entries = []
    at = 0
    while at < len(lines):
        if not _GOOGLE.fullmatch(lines[at]):
            at += 1
            continue
        heading = _indent(lines[at])
        at += 1
        body: list[str] = []
        while at < len(lines) and (not lines[at].strip() or _indent(lines[at]) > heading):
            body.append(lines[at])
            at += 1
        for first, rest in _blocks(body):
            entry = _GOOGLE_ENTRY.fullmatch(first)
            if entry:
                entries.append((entry.group(1), _joined(entry.group(2), rest)))
    return entries


def _numpy(lines: list[str]) -> Entries:
    """Entries of every underlined ``Parameters``-like section, up to the next heading."""
    entries: Entries = []
    at = 0
    while at < len(lines) - 1:
        if not (_NUMPY_HEADING.fullmatch(lines[at]) and _UNDERLINE.fullmatch(lines[at + 1])):
            at += 1
            continue
        heading = _indent(lines[at])
        at += 2
        body: list[str] = []
        while at < len(lines):
            line = lines[at]
            next_is_underline = at + 1 < len(lines) and _UNDERLINE.fullmatch(lines[at + 1])
            if line.strip() and (_indent(line) < heading or next_is_underline):
                break
            body.append(line)
            at += 1
        for first, rest in _blocks(body):
            names = _NUMPY_NAMES.fullmatch(first.split(":", 1)[0].strip())
            if names is not None:
                description = _joined("", rest)
                entries.extend((name.strip(), description) for name in names.group().split(","))
    return entries


def _rest(lines: list[str]) -> Entries:
    """``:param [type] name: text`` fields, with the lines indented under each."""
    entries: Entries = []
    at = 0
    while at < len(lines):
        field = _REST_FIELD.fullmatch(lines[at])
        at += 1
        if field is None:
            continue
        words = field.group(1).split()
        margin = _indent(lines[at - 1])
        rest: list[str] = []
        while (at < len(lines) and lines[at].strip() and _indent(lines[at]) > margin
               and not _ANY_FIELD.match(lines[at])):
            rest.append(lines[at])
            at += 1
        if words:
            entries.append((words[-1], _joined(field.group(2), rest)))
    return entries
