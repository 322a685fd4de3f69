"""Rules a tool declares on its parameters, in the annotated-types vocabulary.

``Annotated[int, Ge(1)]``, ``Annotated[str, MaxLen(200)]``, ``Annotated[int, Interval(ge=1,
le=1000)]``: janito writes each rule into the schema the model sees (``minimum``,
``maxLength``, ...; in words where a provider's format cannot carry the keyword) and
dispatch refuses a value that breaks it with ``invalid_arguments`` before ``run()`` is
called. The classes of the ``annotated-types`` distribution (what pydantic reads) are read
the same way, so a tool may use either; these cost nothing to import, which keeps the
start-up of ``janito tools`` as it was (docs/decisions/0012-constraints-vocabulary.md).

Beyond annotated-types: ``Format("date")`` and ``Pattern(regex)`` for strings, and
``ExactlyOneOf("group")`` / ``AtMostOneOf("group")`` / ``AtLeastOneOf("group")`` on two or
more optional parameters that go together (``content`` or ``local_path``, never both).
"""

from __future__ import annotations

__all__ = [
    "FORMATS",
    "AtLeastOneOf",
    "AtMostOneOf",
    "ExactlyOneOf",
    "Format",
    "Ge",
    "Gt",
    "Interval",
    "Le",
    "Len",
    "Lt",
    "MaxLen",
    "MinLen",
    "MultipleOf",
    "Pattern",
]

#: The formats dispatch checks; any other name is written into the schema but not checked.
FORMATS = ("date", "date-time", "time", "email", "uri", "uuid", "ipv4", "ipv6", "hostname")


class _Rule:
    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        names: tuple[str, ...] = self.__slots__
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in names
                           if getattr(self, name) is not None)
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        names: tuple[str, ...] = self.__slots__
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in names)

    def __hash__(self) -> int:
        names: tuple[str, ...] = self.__slots__
        return hash((type(self).__name__, *(repr(getattr(self, n)) for n in names)))


class Gt(_Rule):
    """The number must be greater than ``gt``."""

    __slots__ = ("gt",)

    def __init__(self, gt: float) -> None:
        self.gt = gt


class Ge(_Rule):
    """The number must be ``ge`` or more."""

    __slots__ = ("ge",)

    def __init__(self, ge: float) -> None:
        self.ge = ge


class Lt(_Rule):
    """The number must be less than ``lt``."""

    __slots__ = ("lt",)

    def __init__(self, lt: float) -> None:
        self.lt = lt


class Le(_Rule):
    """The number must be ``le`` or less."""

    __slots__ = ("le",)

    def __init__(self, le: float) -> None:
        self.le = le


class Interval(_Rule):
    """Any of ``gt``, ``ge``, ``lt``, ``le`` at once: ``Interval(ge=1, le=1000)``."""

    __slots__ = ("ge", "gt", "le", "lt")

    def __init__(self, *, gt: float | None = None, ge: float | None = None,
                 lt: float | None = None, le: float | None = None) -> None:
        self.gt, self.ge, self.lt, self.le = gt, ge, lt, le


class MultipleOf(_Rule):
    """The number must be a multiple of ``multiple_of``."""

    __slots__ = ("multiple_of",)

    def __init__(self, multiple_of: float) -> None:
        self.multiple_of = multiple_of


class MinLen(_Rule):
    """At least ``min_length`` characters (a string), items (an array) or keys (an object)."""

    __slots__ = ("min_length",)

    def __init__(self, min_length: int) -> None:
        self.min_length = min_length


class MaxLen(_Rule):
    """At most ``max_length`` characters, items or keys."""

    __slots__ = ("max_length",)

    def __init__(self, max_length: int) -> None:
        self.max_length = max_length


class Len(_Rule):
    """Between ``min_length`` and ``max_length`` (None: no upper bound) characters, items or keys."""

    __slots__ = ("max_length", "min_length")

    def __init__(self, min_length: int = 0, max_length: int | None = None) -> None:
        self.min_length, self.max_length = min_length, max_length


class Format(_Rule):
    """A string in a JSON Schema format; dispatch checks those of ``FORMATS``.

    ``date`` is ``YYYY-MM-DD``, ``date-time`` an RFC 3339 time stamp with its offset,
    ``time`` ``HH:MM[:SS[.fff]]`` with an optional offset, ``email`` one plain address
    (no display name), ``uri`` an absolute URI (a scheme, then ``:``), ``uuid``,
    ``ipv4``, ``ipv6`` and ``hostname`` what their names say.
    """

    __slots__ = ("format",)

    def __init__(self, format: str) -> None:
        self.format = format


class Pattern(_Rule):
    """A string in which the regular expression ``pattern`` is found (JSON Schema's
    ``pattern``: anchor it with ``^...$`` to match the whole string). Keep to the syntax
    JSON Schema and Python share: classes, groups, alternatives and quantifiers."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern


class ExactlyOneOf(_Rule):
    """This parameter belongs to ``group``: a call gives exactly one parameter of the group
    (null counts as not given). Put it on two or more parameters with defaults."""

    __slots__ = ("group",)

    def __init__(self, group: str) -> None:
        self.group = group


class AtLeastOneOf(_Rule):
    """This parameter belongs to ``group``: a call gives one or more parameters of the
    group (null counts as not given)."""

    __slots__ = ("group",)

    def __init__(self, group: str) -> None:
        self.group = group


class AtMostOneOf(_Rule):
    """This parameter belongs to ``group``: a call gives at most one parameter of the group."""

    __slots__ = ("group",)

    def __init__(self, group: str) -> None:
        self.group = group
