"""The ``@tool`` decorator: marks a BaseTool subclass, or makes a tool of a function."""

from __future__ import annotations

from collections.abc import Iterable
from types import FunctionType
from typing import Any, Callable, TypeVar

from .privileges import validate_permissions

T = TypeVar("T", bound=Callable[..., Any])

#: The attribute of a decorated function that holds its tool class.
FUNCTION_TOOL_ATTR = "_janito_tool"


def tool(permissions: str = "", *, name: str | None = None,
         writes_paths: Iterable[str] | None = None,
         reads_paths: Iterable[str] | None = None) -> Callable[[T], T]:
    """Make a tool that needs ``permissions`` (any of "r", "w", "x").

    On a ``BaseTool`` subclass it marks the class, whose name is the tool name. On a plain
    function (``def`` or ``async def``) it builds the tool class and returns the function
    unchanged, so it can still be called directly; the tool is named ``name``, else the
    function's name in PascalCase. ``writes_paths`` and ``reads_paths`` name the
    parameters that hold workspace paths the tool writes and reads
    (``BaseTool.writes_paths``, ``BaseTool.reads_paths``; a class may set the attributes
    itself): a policy's path rules decide on them before the call runs. An invalid
    permission string raises PermissionStringError at decoration time, so a typo fails
    when the module is imported, never when a model calls the tool; so does a
    ``writes_paths`` or ``reads_paths`` naming no parameter of ``run()``.
    """
    canonical = validate_permissions(permissions)
    written = _names(writes_paths, "writes_paths")
    read = _names(reads_paths, "reads_paths")

    def mark(obj: T) -> T:
        if isinstance(obj, type):
            if name is not None and name != obj.__name__:
                raise TypeError(f"@tool(name=...) is for functions; the class {obj.__name__} "
                                "is named by its class name")
            if not callable(getattr(obj, "run", None)):
                raise TypeError(f"@tool class {obj.__name__} has no run() method")
            if written is not None:
                _check_parameters(obj, written, "writes_paths")
                obj.writes_paths = written  # type: ignore[attr-defined]
            if read is not None:
                _check_parameters(obj, read, "reads_paths")
                obj.reads_paths = read  # type: ignore[attr-defined]
            obj._is_tool = True  # type: ignore[attr-defined]
            obj._tool_permissions = canonical  # type: ignore[attr-defined]
            return obj
        if isinstance(obj, FunctionType):
            # Imported for function tools only: it needs ``inspect``, about 10 ms to import.
            from ._functions import make_tool_class

            setattr(obj, FUNCTION_TOOL_ATTR, make_tool_class(obj, canonical, name, written, read))
            return obj
        raise TypeError(f"@tool decorates classes and functions, not {type(obj).__name__} objects")

    return mark


def _names(given: Iterable[str] | None, option: str) -> tuple[str, ...] | None:
    if given is None:
        return None
    names = (given,) if isinstance(given, str) else tuple(given)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"@tool({option}=...) takes parameter names, not {given!r}")
    return names


def _check_parameters(cls: type, names: tuple[str, ...], option: str) -> None:
    """TypeError for a name that is no parameter of ``cls.run()`` (read from its code object:
    ``inspect`` is not imported for classes)."""
    code = getattr(getattr(cls, "run", None), "__code__", None)
    if code is None or code.co_flags & 0x08:  # **kwargs: any name may arrive
        return
    taken = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    unknown = [n for n in names if n not in taken]
    if unknown:
        raise TypeError(f"@tool({option}=...) names {', '.join(map(repr, unknown))}, which "
                        f"{cls.__name__}.run() does not take")


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
