"""Compiled argument decoders: a tool's JSON arguments decoded and checked in one step.

Where msgspec is installed (``janito-core[fast]``), a tool whose parameters are all of a
few plain types gets a decoder built from them. It is tried first on a call's JSON text;
whatever it accepts, janito's own parsing and converters would have accepted and turned
into the same keyword arguments (``tests/test_compiled_decoders.py`` checks this on
random calls), and whatever it refuses goes to them, which answer it. So the decoder
changes how fast a call is read, never what it is read as.

Importing msgspec takes about 50 ms; a decoder saves about 6 µs on each call of a tool
with six parameters. It is imported only once calls have already spent about what the
import costs (``COLD_CALLS``), as a renter buys once the rent paid reaches the price: a
process that calls tools a few times never pays for it, and one that calls them without
end pays at most twice what waiting for certainty would have (docs/decisions/0022).
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable
from typing import Any, Literal

from ._convert import convert_bool, convert_float, convert_int, convert_str
from ._types import annotated_metadata
from .schema import _HINTS_ATTR

if typing.TYPE_CHECKING:
    from .schema import ToolSchema

#: JSON-argument calls of one tool before msgspec is imported for it.
COLD_CALLS = 8192
#: Calls of one tool before its decoder is built, once msgspec is imported anyway.
WARM_CALLS = 16

Decoder = Callable[[str], "dict[str, Any] | None"]

_HUGE = 2.0**1023

_SCALARS: dict[Any, Any] = {str: convert_str, int: convert_int, float: convert_float,
                            bool: convert_bool}


def due(calls: int) -> bool:
    """Whether a tool called ``calls`` times has been called enough to build a decoder."""
    return calls >= (WARM_CALLS if "msgspec" in sys.modules else COLD_CALLS)


def build(cls: type, schema: ToolSchema) -> Decoder | None:
    """A decoder for ``cls``'s arguments, or None: msgspec is not installed, or a
    parameter is of a type it would read differently from janito."""
    if schema.open or schema.groups or not schema.params or "input_schema" in cls.__dict__:
        return None
    hints = cls.__dict__.get(_HINTS_ATTR)
    if not isinstance(hints, dict):
        return None
    fields: list[tuple[Any, ...]] = []
    numbers: list[str] = []  # the float parameters, and lists of them
    for name, param in schema.params.items():
        hint = hints.get(name)
        plain = _plain_type(hint, param.info.convert)
        if plain is None or param.none_if_omitted:
            return None
        if plain is float or plain == list[float]:
            numbers.append(name)
        if param.required:
            fields.append((name, plain))
        elif type(param.default) in (str, int, float, bool):
            # run() gets its own default object, as it would by its signature
            fields.append((name, plain, param.default))
        else:
            return None
    try:
        import msgspec
    except ImportError:
        return None
    shape = msgspec.defstruct(f"{cls.__name__}Arguments", fields, kw_only=True,
                              forbid_unknown_fields=True)
    decode = msgspec.json.Decoder(shape).decode
    as_dict = msgspec.structs.asdict

    def decoded(text: str) -> dict[str, Any] | None:
        try:
            arguments: dict[str, Any] = as_dict(decode(text))
        except Exception:  # refused (or text no codec can write): janito's own path answers
            return None
        for name in numbers:
            if not _ordinary(arguments[name]):
                return None
        return arguments

    return decoded


def _ordinary(number: float | list[float]) -> bool:
    """Whether a float read from JSON is one janito reads alike: janito reads an integer of
    2**1023 or more as the largest float (``convert_float``), msgspec as the nearest one."""
    if type(number) is list:
        return all(-_HUGE < item < _HUGE for item in number)
    return -_HUGE < number < _HUGE  # type: ignore[operator]  # a float, or run()'s default


def _plain_type(hint: Any, convert: Any) -> Any:
    """The type msgspec reads exactly as janito reads ``hint``, or None."""
    if any(not isinstance(note, str) for note in annotated_metadata(hint)):
        return None  # constraints, or metadata janito reads: janito checks those
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if hint in _SCALARS:
        return hint if convert is _SCALARS[hint] else None
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is list and len(arguments) == 1 and arguments[0] in _SCALARS:
        return hint
    if origin is Literal and arguments and all(type(a) is str for a in arguments):
        return hint
    return None
