"""The ``@tool`` decorator that marks a BaseTool subclass as a tool."""

from __future__ import annotations

from typing import Callable, TypeVar

from .privileges import validate_permissions

T = TypeVar("T", bound=type)


def tool(permissions: str = "") -> Callable[[T], T]:
    """Mark a class as a tool that needs ``permissions`` (any of "r", "w", "x").

    An invalid permission string raises PermissionStringError at decoration time, so a
    typo fails when the module is imported, never when a model calls the tool.
    """
    canonical = validate_permissions(permissions)

    def mark(cls: T) -> T:
        if not isinstance(cls, type):
            raise TypeError(f"@tool decorates classes, not {type(cls).__name__} objects")
        if not callable(getattr(cls, "run", None)):
            raise TypeError(f"@tool class {cls.__name__} has no run() method")
        cls._is_tool = True  # type: ignore[attr-defined]
        cls._tool_permissions = canonical  # type: ignore[attr-defined]
        return cls

    return mark
