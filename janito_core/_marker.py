"""``hookimpl``: marks hook implementations without importing pluggy.

Toolset packages are imported on every start; marking their hooks must not cost the
import of pluggy. The marks are read by janito's plugin manager, which imports pluggy
only when plugins are in play.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])

MARK = "janito_impl"


@overload
def hookimpl(function: F) -> F: ...


@overload
def hookimpl(
    function: None = None,
    *,
    wrapper: bool = False,
    hookwrapper: bool = False,
    optionalhook: bool = False,
    tryfirst: bool = False,
    trylast: bool = False,
    specname: str | None = None,
) -> Callable[[F], F]: ...


def hookimpl(
    function: F | None = None,
    *,
    wrapper: bool = False,
    hookwrapper: bool = False,
    optionalhook: bool = False,
    tryfirst: bool = False,
    trylast: bool = False,
    specname: str | None = None,
) -> F | Callable[[F], F]:
    """Mark ``function`` as an implementation of the janito hook of the same name."""
    options = {
        "wrapper": wrapper,
        "hookwrapper": hookwrapper,
        "optionalhook": optionalhook,
        "tryfirst": tryfirst,
        "trylast": trylast,
        "specname": specname,
    }

    def mark(func: F) -> F:
        setattr(func, MARK, dict(options))
        return func

    return mark(function) if function is not None else mark


def has_hooks(namespace: object) -> bool:
    """Whether a module or object defines any marked hook implementation."""
    for value in vars(namespace).values():
        if callable(value) and isinstance(getattr(value, MARK, None), dict):
            return True
    return False
