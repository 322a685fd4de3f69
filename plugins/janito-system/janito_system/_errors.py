"""The last line of defence of every tool: an unexpected exception becomes a result."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Callable, TypeVar

from janito_core import BaseTool, Failure, failure

RunMethod = TypeVar("RunMethod", bound=Callable[..., Mapping[str, Any]])


def unexpected(tool: BaseTool, exc: BaseException, echo: dict[str, Any]) -> Failure:
    """A failed result for an exception no code path expected (a bug, or a broken system)."""
    text = str(exc) or type(exc).__name__
    name = type(tool).__name__
    try:
        tool.report_error(f"{name} failed: {type(exc).__name__}: {text}")
    except Exception:  # a broken report hook must not turn this into a second failure
        pass
    return failure(f"{name} failed unexpectedly ({type(exc).__name__}: {text})",
                   "internal_error", **echo)


def guarded(*echoed: str) -> Callable[[RunMethod], RunMethod]:
    """Decorate a tool's ``run()`` so that an exception escaping it becomes a result.

    The result is ``unexpected()``'s, repeating the parameters named in ``echoed``. A call
    whose arguments do not fit ``run()``'s signature raises TypeError as before: that is
    the caller's mistake, not the tool's (dispatch checks arguments before calling).
    """

    def decorate(run: RunMethod) -> RunMethod:
        @functools.wraps(run)
        def guarded_run(self: BaseTool, *args: Any, **kwargs: Any) -> Mapping[str, Any]:
            try:
                return run(self, *args, **kwargs)
            except Exception as exc:
                arguments = _bound_arguments(run, self, args, kwargs)
                if arguments is None:
                    raise
                return unexpected(self, exc, {name: arguments[name] for name in echoed})

        return guarded_run  # type: ignore[return-value]

    return decorate


def _bound_arguments(run: Callable[..., Any], tool: BaseTool, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """Every parameter of ``run()`` with its value in this call, or None when they do not fit."""
    import inspect

    try:
        bound = inspect.signature(run).bind(tool, *args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return dict(bound.arguments)
