"""A function's type hints, resolved faster than ``typing.get_type_hints``.

Tool modules use ``from __future__ import annotations``, so every annotation is a string,
and ``get_type_hints`` compiles each one anew: about 10 µs for ``dict[str, Any]``, most of a
schema's first build. The same few strings recur across every tool, so each is compiled
once per process and evaluated in the function's module. Anything this does not cover
(a forward reference left inside a type, an annotation that fails to evaluate) is handed
to ``get_type_hints``, which gives the standard result or the standard error.
"""

from __future__ import annotations

import functools
import typing
from types import CodeType
from typing import Any

_NoneType = type(None)


@functools.lru_cache(maxsize=512)
def _compiled(source: str) -> CodeType:
    # A pure function of its argument: memoising it shares no state between callers.
    return compile(source, "<annotation>", "eval")


def _unresolved(hint: Any) -> bool:
    """Whether ``hint`` still holds a forward reference (a string inside a type)."""
    if isinstance(hint, (str, typing.ForwardRef)):
        return True
    origin = typing.get_origin(hint)
    if origin is None or origin is typing.Literal:
        return False
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        args = args[:1]  # the metadata after the type may be any object, strings included
    return any(_unresolved(arg) for arg in args)


def type_hints(function: Any) -> dict[str, Any]:
    """``typing.get_type_hints(function, include_extras=True)``, faster for string
    annotations; raises what it raises."""
    annotations = getattr(function, "__annotations__", None) or {}
    namespace = function
    while hasattr(namespace, "__wrapped__"):
        namespace = namespace.__wrapped__
    scope = getattr(namespace, "__globals__", None)
    if not isinstance(scope, dict):
        return typing.get_type_hints(function, include_extras=True)
    hints: dict[str, Any] = {}
    try:
        for name, annotation in annotations.items():
            if isinstance(annotation, str):
                annotation = eval(_compiled(annotation), scope)  # the module's own annotation
            if _unresolved(annotation):
                raise LookupError(name)
            hints[name] = _NoneType if annotation is None else annotation
    except Exception:
        return typing.get_type_hints(function, include_extras=True)
    return hints
