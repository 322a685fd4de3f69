"""The rules of a parameter (``janito_core.constraints`` or annotated-types), three ways:
as JSON Schema keywords, as a check of a converted value, and in words for a provider
whose format cannot carry the keyword.

annotated-types is never imported: its classes are recognised by the module that defines
them and read by their attribute names, which are the ones ``janito_core.constraints``
uses too (docs/decisions/0012-constraints-vocabulary.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

_MODULES = ("annotated_types", "janito_core.constraints")
_NUMBER_KEYS = ("gt", "ge", "lt", "le", "multiple_of")
_LENGTH_KEYS = ("min_length", "max_length")
_TEXT_KEYS = ("format", "pattern")
_GROUP_KINDS = {"ExactlyOneOf": "exactly", "AtMostOneOf": "at_most", "AtLeastOneOf": "at_least"}

#: Schema keywords the rules become, by the JSON type they apply to.
NUMBER_KEYWORDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf")
KEYWORDS = (*NUMBER_KEYWORDS, "minLength", "maxLength", "pattern", "format", "minItems",
            "maxItems", "minProperties", "maxProperties", "uniqueItems")

FORMAT_WORDS = {
    "date": "a date as YYYY-MM-DD",
    "date-time": "a date and time as RFC 3339, with its offset (2025-01-31T09:30:00Z)",
    "time": "a time as HH:MM or HH:MM:SS",
    "email": "one email address (name@example.com, no display name)",
    "uri": "an absolute URI, scheme first (https://...)",
    "uuid": "a UUID (8-4-4-4-12 hexadecimal digits)",
    "ipv4": "an IPv4 address",
    "ipv6": "an IPv6 address",
    "hostname": "a host name",
}


class Rules:
    """What one ``Annotated[...]`` says about its value beyond the type."""

    __slots__ = ("format", "ge", "groups", "gt", "le", "lt", "max_length", "min_length",
                 "multiple_of", "pattern", "unread")

    def __init__(self) -> None:
        self.gt: float | None = None
        self.ge: float | None = None
        self.lt: float | None = None
        self.le: float | None = None
        self.multiple_of: float | None = None
        self.min_length: int | None = None
        self.max_length: int | None = None
        self.format: str | None = None
        self.pattern: str | None = None
        self.groups: list[tuple[str, str]] = []  # (kind, group name)
        self.unread: list[str] = []  # annotated-types rules janito cannot express

    def __bool__(self) -> bool:
        return any(getattr(self, k) is not None
                   for k in (*_NUMBER_KEYS, *_LENGTH_KEYS, *_TEXT_KEYS))


def _vocabulary(item: Any) -> bool:
    """Whether ``item`` is one of the rule classes janito reads (ours or annotated-types')."""
    return any(getattr(klass, "__module__", None) in _MODULES for klass in type(item).__mro__[:-1])


def read(metadata: Iterable[Any]) -> Rules | None:
    """The rules among the metadata of an ``Annotated``; None when there are none."""
    rules: Rules | None = None
    for item in metadata:
        if isinstance(item, str) or not _vocabulary(item):
            continue
        if rules is None:
            rules = Rules()
        name = type(item).__name__
        if name in _GROUP_KINDS:
            group = getattr(item, "group", None)
            if isinstance(group, str) and group:
                rules.groups.append((_GROUP_KINDS[name], group))
            continue
        found = False
        for key in (*_NUMBER_KEYS, *_LENGTH_KEYS, *_TEXT_KEYS):
            value = getattr(item, key, None)
            if value is None:
                continue
            found = True
            setattr(rules, key, _tighter(key, getattr(rules, key), value))
        if not found and name not in ("Interval", "Len"):
            rules.unread.append(repr(item))
    return rules


def _tighter(key: str, old: Any, new: Any) -> Any:
    if old is None:
        return new
    if key in ("gt", "ge", "min_length"):
        return max(old, new)
    if key in ("lt", "le", "max_length"):
        return min(old, new)
    return new


def documentation(metadata: Iterable[Any]) -> str | None:
    """The text of an annotated-types ``doc("...")`` among the metadata, if any."""
    for item in metadata:
        text = getattr(item, "documentation", None)
        if isinstance(text, str) and type(item).__name__ in ("Doc", "DocInfo"):
            return text
    return None


def compile_pattern(pattern: str) -> Any:
    """``pattern`` compiled to mean what JSON Schema says it means (ECMA-262), where it
    differs from Python: ``$`` is the end of the text only, not also the place before a
    last line feed (so ``^[^\n]*$`` refuses ``"x\n"``, as every validator of the
    published schema does)."""
    import re

    try:
        return re.compile(_end_anchors(pattern))
    except re.error as exc:
        raise ValueError(f"Pattern({pattern!r}) is not a regular expression: {exc}") from None


def _end_anchors(pattern: str) -> str:
    r"""``pattern`` with each ``$`` outside a character class written as ``\Z``."""
    if "$" not in pattern:
        return pattern
    out = []
    escaped = in_class = False
    opened = 0  # characters of the class read so far, as Python counts them
    for char in pattern:
        if escaped:
            escaped = False
            opened += 1
        elif char == "\\":
            escaped = True
        elif in_class:
            # Python reads "]" right after "[" (or "[^") as a member, not the end.
            if char == "]" and opened > 0:
                in_class = False
            elif not (char == "^" and opened == 0):
                opened += 1
        elif char == "[":
            in_class, opened = True, 0
        elif char == "$":
            out.append("\\Z")
            continue
        out.append(char)
    return "".join(out)


# -- as JSON Schema ----------------------------------------------------------------------


def _types_of(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def keywords(rules: Rules, kinds: list[str]) -> dict[str, Any]:
    """The schema keywords of ``rules`` for a node of the JSON types ``kinds``."""
    out: dict[str, Any] = {}
    if "integer" in kinds or "number" in kinds:
        for key, word in (("gt", "exclusiveMinimum"), ("ge", "minimum"), ("lt", "exclusiveMaximum"),
                          ("le", "maximum"), ("multiple_of", "multipleOf")):
            value = getattr(rules, key)
            if value is not None:
                out[word] = value
    for kind, low, high in (("string", "minLength", "maxLength"), ("array", "minItems", "maxItems"),
                            ("object", "minProperties", "maxProperties")):
        if kind in kinds:
            if rules.min_length:
                out[low] = rules.min_length
            if rules.max_length is not None:
                out[high] = rules.max_length
    if "string" in kinds:
        if rules.format is not None:
            out["format"] = rules.format
        if rules.pattern is not None:
            out["pattern"] = rules.pattern
    return out


def apply(schema: dict[str, Any], rules: Rules) -> dict[str, Any]:
    """``schema`` with the keywords of ``rules`` on each of its forms they apply to."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        return {**schema, "anyOf": [apply(o, rules) if isinstance(o, dict) else o for o in options]}
    extra = keywords(rules, _types_of(schema))
    return {**schema, **extra} if extra else schema


def from_schema(node: dict[str, Any]) -> Rules | None:
    """The rules a declared JSON Schema node states, for dispatch to check them too."""
    rules = Rules()
    for key, word in (("gt", "exclusiveMinimum"), ("ge", "minimum"), ("lt", "exclusiveMaximum"),
                      ("le", "maximum"), ("multiple_of", "multipleOf")):
        value = node.get(word)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            setattr(rules, key, value)
    kinds = _types_of(node)
    for kind, low, high in (("string", "minLength", "maxLength"), ("array", "minItems", "maxItems"),
                            ("object", "minProperties", "maxProperties")):
        if kind in kinds or not kinds:
            for key, word in (("min_length", low), ("max_length", high)):
                value = node.get(word)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    setattr(rules, key, value)
    if isinstance(node.get("format"), str) and node["format"] in FORMAT_WORDS:
        rules.format = node["format"]
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            compile_pattern(pattern)
        except ValueError:
            pass  # a pattern Python cannot read (ECMA syntax) is the server's to enforce
        else:
            rules.pattern = pattern
    return rules if rules else None


# -- as a check of the converted value -------------------------------------------------


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = _number(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return type(value).__name__


def range_words(low: Any, low_open: bool, high: Any, high_open: bool) -> str:
    """``1 to 1000``, ``at least 1``, ``more than 0``, ``less than 10``..."""
    if low is not None and high is not None and not low_open and not high_open:
        return f"{_number(low)} to {_number(high)}"
    parts = []
    if low is not None:
        parts.append(f"more than {_number(low)}" if low_open else f"at least {_number(low)}")
    if high is not None:
        parts.append(f"less than {_number(high)}" if high_open else f"at most {_number(high)}")
    return " and ".join(parts)


def _bounds(rules: Rules) -> tuple[Any, bool, Any, bool]:
    low, low_open = rules.ge, False
    if rules.gt is not None and (low is None or rules.gt >= low):
        low, low_open = rules.gt, True
    high, high_open = rules.le, False
    if rules.lt is not None and (high is None or rules.lt <= high):
        high, high_open = rules.lt, True
    return low, low_open, high, high_open


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def checker(rules: Rules) -> Callable[[Any], str | None]:
    """A function naming what is wrong with a converted value (None when it keeps the rules)."""
    low, low_open, high, high_open = _bounds(rules)
    has_range = low is not None or high is not None
    in_message = range_words(low, low_open, high, high_open) if has_range else ""
    if low is not None and high is not None and not low_open and not high_open:
        in_message = f"from {_number(low)} to {_number(high)}"
    step = rules.multiple_of
    min_length, max_length = rules.min_length, rules.max_length
    has_length = bool(min_length) or max_length is not None
    pattern = compile_pattern(rules.pattern) if rules.pattern is not None else None
    format_check = format_checker(rules.format) if rules.format is not None else None

    def length_problem(size: int, unit: str) -> str | None:
        if min_length and size < min_length:
            if min_length == 1:
                return "must not be empty"
            return f"must hold at least {_count(min_length, unit)}, got {size}"
        if max_length is not None and size > max_length:
            return f"must hold at most {_count(max_length, unit)}, got {size}"
        return None

    def check(value: Any) -> str | None:
        kind = type(value)
        if kind is int or kind is float or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            if has_range and not _within(value, low, low_open, high, high_open):
                return f"must be {in_message}, got {_shown(value)}"
            if step is not None and not _multiple(value, step):
                return f"must be a multiple of {_number(step)}, got {_shown(value)}"
            return None
        if isinstance(value, str):
            if has_length:
                problem = length_problem(len(value), "character")
                if problem:
                    return problem
            if format_check is not None and not format_check(value):
                return f"must be {FORMAT_WORDS[str(rules.format)]}, got {_shown(value)}"
            if pattern is not None and pattern.search(value) is None:
                return f"must match the pattern {rules.pattern}, got {_shown(value)}"
            return None
        if has_length and isinstance(value, (list, tuple, set, frozenset)):
            return length_problem(len(value), "item")
        if has_length and isinstance(value, dict):
            return length_problem(len(value), "key")
        return None

    return check


def _within(value: float, low: Any, low_open: bool, high: Any, high_open: bool) -> bool:
    if low is not None and (value <= low if low_open else value < low):
        return False
    return not (high is not None and (value >= high if high_open else value > high))


def _multiple(value: float, step: float) -> bool:
    if step == 0:
        return True
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    quotient = value / step
    if not math.isfinite(quotient):
        return False
    return abs(quotient - round(quotient)) <= 1e-9 * max(1.0, abs(quotient))


# -- formats -----------------------------------------------------------------------------


def format_checker(name: str) -> Callable[[str], bool] | None:
    """A test of a string against format ``name``; None for a format dispatch does not check."""
    return _FORMAT_CHECKS.get(name)


def _date(text: str) -> bool:
    import datetime
    import re

    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _time_of_day(text: str, offset_required: bool) -> bool:
    import re

    match = re.fullmatch(
        r"([0-9]{2}):([0-9]{2})(?::([0-9]{2})(\.[0-9]+)?)?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))?", text)
    if not match:
        return False
    hour, minute, second = int(match[1]), int(match[2]), int(match[3] or 0)
    if hour > 23 or minute > 59 or second > 60:
        return False
    has_offset = bool(match[5] or match[6])
    if offset_required and (not has_offset or match[3] is None):
        return False
    return not (match[6] and (int(match[7]) > 23 or int(match[8]) > 59))


def _date_time(text: str) -> bool:
    if len(text) < 20 or text[10] not in "Tt":
        return False
    return _date(text[:10]) and _time_of_day(text[11:], offset_required=True)


def _email(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    if not at or not local or not domain or ("@" in local and not local.startswith('"')):
        return False
    if any(c.isspace() or c in "<>()[],;:\\\"" for c in domain):
        return False
    if any(c.isspace() for c in local) or local.startswith(".") or local.endswith("."):
        return False
    return ".." not in domain and not domain.startswith(".") and not domain.endswith(".")


def _uri(text: str) -> bool:
    import re

    return re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s]*", text) is not None


def _uuid(text: str) -> bool:
    import re

    return re.fullmatch(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}", text) is not None


def _ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        import ipaddress

        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            return False
        return address.version == version and (version == 6 or text.count(".") == 3)

    return check


def _hostname(text: str) -> bool:
    import re

    if not text or len(text) > 253:
        return False
    return all(re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", label)
               for label in text.split("."))


_FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "date": _date,
    "date-time": _date_time,
    "time": lambda text: _time_of_day(text, offset_required=False),
    "email": _email,
    "uri": _uri,
    "uuid": _uuid,
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "hostname": _hostname,
}


# -- in words ----------------------------------------------------------------------------


def words(node: dict[str, Any], drop: Iterable[str]) -> str:
    """The rules of schema ``node`` under the keywords ``drop``, as a phrase for its
    description (``1 to 1000``; ``at most 200 characters``; ``a date as YYYY-MM-DD``)."""
    dropped = set(drop)
    parts: list[str] = []
    numeric = {k: node[k] for k in NUMBER_KEYWORDS if k in node and k in dropped}
    if numeric.keys() & {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}:
        rules = Rules()
        rules.ge, rules.gt = node.get("minimum"), node.get("exclusiveMinimum")
        rules.le, rules.lt = node.get("maximum"), node.get("exclusiveMaximum")
        parts.append(range_words(*_bounds(rules)))
    if "multipleOf" in numeric:
        parts.append(f"a multiple of {_number(node['multipleOf'])}")
    for low, high, unit in (("minLength", "maxLength", "character"), ("minItems", "maxItems", "item"),
                            ("minProperties", "maxProperties", "key")):
        lo = node.get(low) if low in dropped else None
        hi = node.get(high) if high in dropped else None
        if lo and hi is not None:
            parts.append(f"{lo} to {_count(hi, unit)}" if lo != hi else _count(hi, unit))
        elif lo:
            parts.append("not empty" if lo == 1 else f"at least {_count(lo, unit)}")
        elif hi is not None:
            parts.append(f"at most {_count(hi, unit)}")
    if "uniqueItems" in dropped and node.get("uniqueItems"):
        parts.append("no item twice")
    if "format" in dropped and isinstance(node.get("format"), str):
        parts.append(FORMAT_WORDS.get(node["format"], f"format {node['format']}"))
    if "pattern" in dropped and isinstance(node.get("pattern"), str):
        parts.append(f"matching {node['pattern']}")
    return "; ".join(parts)
