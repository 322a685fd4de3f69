"""The ``@tool`` decorator: marks a BaseTool subclass, or makes a tool of a function."""

from __future__ import annotations

from types import FunctionType
from typing import Any, Callable, TypeVar

from .privileges import validate_permissions

T = TypeVar("T", bound=Callable[..., Any])

#: The attribute of a decorated function that holds its tool class.
FUNCTION_TOOL_ATTR = "_janito_tool"


def tool(permissions: str = "", *, name: str | None = None) -> Callable[[T], T]:
    """Make a tool that needs ``permissions`` (any of "r", "w", "x").

    On a ``BaseTool`` subclass it marks the class, whose name is the tool name. On a plain
    function it builds the tool class and returns the function unchanged, so it can still
    be called directly; the tool is named ``name``, else the function's name in PascalCase.
    An invalid permission string raises PermissionStringError at decoration time, so a
    typo fails when the module is imported, never when a model calls the tool.
    """
    canonical = validate_permissions(permissions)

    def mark(obj: T) -> T:
        if isinstance(obj, type):
            if name is not None and name != obj.__name__:
                raise TypeError(f"@tool(name=...) is for functions; the class {obj.__name__} "
                                "is named by its class name")
            if not callable(getattr(obj, "run", None)):
                raise TypeError(f"@tool class {obj.__name__} has no run() method")
            obj._is_tool = True  # type: ignore[attr-defined]
            obj._tool_permissions = canonical  # type: ignore[attr-defined]
            return obj
        if isinstance(obj, FunctionType):
            # Imported for function tools only: it needs ``inspect``, about 10 ms to import.
            from ._functions import make_tool_class

            setattr(obj, FUNCTION_TOOL_ATTR, make_tool_class(obj, canonical, name))
            return obj
        raise TypeError(f"@tool decorates classes and functions, not {type(obj).__name__} objects")

    return mark


def tool_class(obj: Any) -> type:
    """The tool class of ``obj``: a ``@tool`` class itself, or the class made for a ``@tool``
    function. TypeError for anything else."""
    if isinstance(obj, type):
        if obj.__dict__.get("_is_tool") is not True:
            raise TypeError(f"{obj!r} is not decorated with @tool")
        return obj
    made = getattr(obj, "__dict__", {}).get(FUNCTION_TOOL_ATTR)
    if isinstance(made, type):
        return made
    raise TypeError(f"{obj!r} is not decorated with @tool")
