"""A tool class's call plan: what the short way of dispatch needs of it, derived once.

A plan is kept on the class, beside the schema it was derived from, and forgotten with
it (``schema.forget_schema``); it holds the ``run()`` it was made for, so a class whose
``run`` is replaced gets a new one. It says whether the tool takes no parameters, and,
once the tool has been called often enough, holds a compiled decoder of its arguments.

The decoder exists where msgspec is installed (``janito-core[fast]``) and every parameter
is of a few plain types. It is tried first on a call's JSON text. Whatever it accepts,
janito's own parsing and converters would have accepted and turned into the same
arguments (``tests/test_call_plans.py`` checks this on random calls); whatever it
refuses goes to them, and they answer it. So it changes how fast a call is read, never
what the call is read as.

Importing msgspec takes about 50 ms, and a decoder saves about 6 µs on each call of a
tool with six parameters. So msgspec is imported only once a tool's calls have already
spent about what the import costs (``COLD_CALLS``), as a renter buys once the rent paid
reaches the price: a process that calls tools a few times never pays for it, and one
that calls them without end pays at most about twice what knowing the future would have
let it pay (docs/decisions/0022).
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable
from typing import Any, Literal

from ._convert import convert_bool, convert_float, convert_int, convert_str
from ._types import annotated_metadata
from .base_tool import is_async_function
from .schema import _CACHE_ATTR, _HINTS_ATTR, _PLAN_ATTR

if typing.TYPE_CHECKING:
    from .schema import ToolSchema

#: Calls of one tool with JSON arguments before msgspec is imported for it.
COLD_CALLS = 8192
#: Calls of one tool before its decoder is built, once msgspec is imported anyway.
WARM_CALLS = 16

_CO_VARIADIC = 0x04 | 0x08  # *args, **kwargs
_HUGE = 2.0**1023
_SCALARS: dict[Any, Any] = {str: convert_str, int: convert_int, float: convert_float,
                            bool: convert_bool}


class Plan:
    """What the calls of one tool class need that does not change from call to call."""

    __slots__ = ("bare", "calls", "decode", "hints", "names", "owner", "positional", "run",
                 "schema", "unpack")

    def __init__(self, owner: type, run: Any, schema: ToolSchema, hints: Any) -> None:
        #: The class this plan was made for: a subclass, which finds it by inheritance,
        #: needs its own.
        self.owner = owner
        #: The ``run`` function this plan was made for: another one needs another plan.
        self.run = run
        self.schema = schema
        #: ``run()``'s resolved annotations, which the schema was built from (None for a
        #: schema declared as JSON Schema).
        self.hints = hints if isinstance(hints, dict) else None
        #: No parameters: a call without arguments needs no validation.
        self.bare = not schema.params and not schema.groups
        self.names = tuple(schema.params)
        #: Calls counted toward building the decoder; None once it was decided.
        self.calls: int | None = 0
        #: The compiled decoder's ``decode``, and what turns its answer into arguments:
        #: a tuple for ``run(*values)``, or a dict for ``run(**values)``.
        self.decode: Callable[[str], Any] | None = None
        self.unpack: Callable[[Any], Any] = dict
        self.positional = False

    def counted(self) -> None:
        """Count a call whose arguments janito parsed; build the decoder once it is due."""
        if self.calls is None:
            return
        self.calls += 1
        if self.calls >= (WARM_CALLS if "msgspec" in sys.modules else COLD_CALLS):
            self.calls = None
            self._compile()

    def _compile(self) -> None:
        built = _decoder(self.run, self.schema, self.hints)
        if built is not None:
            decode, self.unpack, self.positional = built
            # decode last: a call on another thread that sees it sees how to unpack too
            self.decode = decode


def plan_of(cls: type) -> Plan | None:
    """``cls``'s plan, made now if it has none for its present ``run()``; None for a tool
    the short way does not run (an ``async def run()``, a ``run`` that is no function) or
    whose schema is not built yet."""
    run = getattr(cls, "run", None)
    if getattr(run, "__code__", None) is None or is_async_function(run):
        return None
    schema = cls.__dict__.get(_CACHE_ATTR)
    if schema is None:
        return None
    declared = isinstance(cls.__dict__.get("input_schema"), dict)  # a schema not from hints
    plan = Plan(cls, run, schema, None if declared else cls.__dict__.get(_HINTS_ATTR))
    setattr(cls, _PLAN_ATTR, plan)
    return plan


def _decoder(run: Any, schema: ToolSchema, hints: dict[str, Any] | None
             ) -> tuple[Callable[[str], Any], Callable[[Any], Any], bool] | None:
    """(decode, unpack, positional) for the arguments of ``run``, or None: msgspec is not
    installed, or a parameter is of a type it would read differently from janito."""
    if schema.open or schema.groups or not schema.params or hints is None:
        return None
    try:
        import msgspec
    except ImportError:
        return None
    fields: list[tuple[Any, ...]] = []
    for name, param in schema.params.items():
        plain = _plain_type(hints.get(name), param.info.convert, msgspec)
        if plain is None or param.none_if_omitted:
            return None
        if param.required:
            fields.append((name, plain))
        elif type(param.default) in (str, int, float, bool):
            # run() gets its own default object, as it would by its signature
            fields.append((name, plain, param.default))
        else:
            return None
    shape = msgspec.defstruct("Arguments", fields, kw_only=True, forbid_unknown_fields=True)
    code = run.__code__
    positional = (not code.co_flags & _CO_VARIADIC and code.co_kwonlyargcount == 0
                  and code.co_varnames[1:code.co_argcount] == shape.__struct_fields__)
    unpack = msgspec.structs.astuple if positional else msgspec.structs.asdict
    return msgspec.json.Decoder(shape).decode, unpack, positional


def _plain_type(hint: Any, convert: Any, msgspec: Any) -> Any:
    """The type msgspec reads exactly as janito reads ``hint``, or None."""
    if any(not isinstance(note, str) for note in annotated_metadata(hint)):
        return None  # constraints, or metadata janito reads: janito checks those
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is list and len(arguments) == 1 and arguments[0] in _SCALARS:
        item = _plain_type(arguments[0], _SCALARS[arguments[0]], msgspec)
        return list[item]  # type: ignore[valid-type]
    if hint in _SCALARS:
        if convert is not _SCALARS[hint]:
            return None
        if hint is float:
            # janito reads an integer of 2**1023 or more as the largest float
            # (convert_float), msgspec as the nearest: such a number is left to janito
            return typing.Annotated[float, msgspec.Meta(gt=-_HUGE, lt=_HUGE)]
        return hint
    if origin is Literal and arguments and all(type(a) is str for a in arguments):
        return hint
    return None
