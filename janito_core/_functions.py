"""Function tools: ``@tool`` on a plain function makes a tool class that calls it.

The class is an ordinary ``BaseTool`` subclass, so schema, validation, privileges,
reporting, dispatch and the harness treat it exactly as a hand-written one. Its ``run()``
looks like the function without the parameters janito supplies itself (the workspace,
a reporter, the cancellation token), which the model therefore never sees. An
``async def`` function makes an ``async def run()``.
"""

from __future__ import annotations

import inspect
import re
import typing
from types import MappingProxyType
from typing import Any, Callable

from ._annotations import _compiled
from .base_tool import BaseTool
from .cancellation import CancelToken
from .reporter import Reporter

#: (module, qualified name) of each type a function may ask janito for.
_INJECTABLE = {
    ("janito_core.workspace", "Workspace"): "workspace",
    ("janito_core.reporter", "Reporter"): "reporter",
    ("janito_core.cancellation", "CancelToken"): "cancel_token",
}
_BY_NAME = {name: kind for (_, name), kind in _INJECTABLE.items()}
_OPTIONAL_TEXT = re.compile(r"(?:typing\.)?Optional\[(.+)\]")
_NONE_TYPE = type(None)
TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


def pascal_case(name: str) -> str:
    """``get_current_time`` -> ``GetCurrentTime``; a name in PascalCase stays as it is.

    Each underscore-separated word gets a capital first letter and keeps the rest as
    written, so ``read_html`` becomes ``ReadHtml`` (pass ``name="ReadHTML"`` for that).
    """
    return "".join(word[0].upper() + word[1:] for word in name.split("_") if word)


def _kind_of_object(annotation: Any) -> tuple[str, bool] | None:
    optional = False
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    args = typing.get_args(annotation)
    if args and type(None) in args:
        rest = [a for a in args if a is not _NONE_TYPE]
        if len(rest) != 1:
            return None
        annotation, optional = rest[0], True
    key = (getattr(annotation, "__module__", None), getattr(annotation, "__qualname__", None))
    kind = _INJECTABLE.get(key)  # type: ignore[arg-type]
    return (kind, optional) if kind else None


def _kind_of_text(text: str) -> tuple[str, bool] | None:
    """For an annotation naming a type imported only under TYPE_CHECKING."""
    compact = text.replace(" ", "")
    optional = False
    match = _OPTIONAL_TEXT.fullmatch(compact)
    if match:
        compact, optional = match.group(1), True
    parts = compact.split("|")
    rest = [p for p in parts if p != "None"]
    if len(rest) != 1:
        return None
    kind = _BY_NAME.get(rest[0].rpartition(".")[2])
    return (kind, optional or len(parts) > 1) if kind else None


def injected_kind(annotation: Any, scope: dict[str, Any]) -> tuple[str, bool] | None:
    """("workspace" | "reporter" | "cancel_token", whether None is allowed), or None when
    the parameter is an ordinary one the model fills in."""
    if annotation is inspect.Parameter.empty:
        return None
    for _ in range(2):  # "'Reporter'" under `from __future__ import annotations` is two deep
        if not isinstance(annotation, str):
            break
        try:
            annotation = eval(_compiled(annotation), scope)  # the module's own annotation
        except Exception:
            return _kind_of_text(annotation)
    if isinstance(annotation, str):
        return _kind_of_text(annotation)
    return _kind_of_object(annotation)


class FunctionTool(BaseTool):
    """The base of every tool made from a function by ``@tool``."""

    _function: Callable[..., Any]
    _injected: MappingProxyType[str, tuple[str, bool]]

    def run(self, *args: Any, **kwargs: Any) -> dict[str, Any]:  # replaced in each subclass
        raise NotImplementedError

    def _provide(self, kind: str, optional: bool) -> Any:
        if kind == "workspace":
            return self.workspace
        if kind == "reporter":
            return Reporter(type(self).__name__, self._tool_permissions)
        token = self.cancel_token
        if token is None and not optional:
            token = CancelToken()  # never cancelled: the caller cannot cancel this call
        return token


def make_tool_class(function: Callable[..., Any], permissions: str, name: str | None,
                    writes_paths: tuple[str, ...] | None = None,
                    reads_paths: tuple[str, ...] | None = None) -> type:
    """The ``BaseTool`` subclass standing for ``function``."""
    if inspect.isasyncgenfunction(function) or inspect.isgeneratorfunction(function):
        raise TypeError(f"@tool function {function.__name__} is a generator; a tool returns "
                        "one dict")
    if name is None and function.__name__ == "<lambda>":
        raise TypeError("@tool needs a named function (def), not a lambda")
    tool_name = name if name is not None else pascal_case(function.__name__)
    if not TOOL_NAME.match(tool_name):
        raise ValueError(
            f"{tool_name!r} cannot be a tool name: use letters, digits, _ and -, starting with a "
            "letter, at most 64 characters"
        )
    signature = inspect.signature(function)
    scope = inspect.unwrap(function).__globals__
    injected: dict[str, tuple[str, bool]] = {}
    visible = []
    for parameter in signature.parameters.values():
        kind = injected_kind(parameter.annotation, scope)
        if kind is None:
            visible.append(parameter)
        else:
            injected[parameter.name] = kind
    shown = signature.replace(parameters=visible)
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    supplied = tuple(injected.items())
    for option, declared in (("writes_paths", writes_paths), ("reads_paths", reads_paths)):
        unknown = [p for p in declared or () if p not in shown.parameters]
        if unknown:
            raise TypeError(f"@tool({option}=...) names {', '.join(map(repr, unknown))}, "
                            f"which {function.__name__}() does not take")

    def arguments(self: FunctionTool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if args:
            kwargs = dict(shown.bind_partial(*args, **kwargs).arguments)
        for parameter_name, (kind, optional) in supplied:
            kwargs[parameter_name] = self._provide(kind, optional)
        return kwargs

    run: Any
    if inspect.iscoroutinefunction(function):
        async def run_async(self: FunctionTool, *args: Any, **kwargs: Any) -> Any:
            return await function(**arguments(self, args, kwargs))

        run = run_async
    else:
        def run_sync(self: FunctionTool, *args: Any, **kwargs: Any) -> Any:
            return function(**arguments(self, args, kwargs))

        run = run_sync

    run.__name__ = "run"
    run.__qualname__ = f"{tool_name}.run"
    run.__module__ = function.__module__
    run.__doc__ = function.__doc__
    run.__annotations__ = {
        k: v for k, v in getattr(function, "__annotations__", {}).items() if k not in injected
    }
    run.__signature__ = shown.replace(parameters=[self_parameter, *visible])
    run.__wrapped__ = function  # annotations resolve in its module
    namespace = {
        "__doc__": function.__doc__,
        "__module__": function.__module__,
        "__qualname__": tool_name,
        "run": run,
        "_function": staticmethod(function),
        "_injected": MappingProxyType(injected),
        "_is_tool": True,
        "_tool_permissions": permissions,
        "writes_paths": writes_paths,
        "reads_paths": reads_paths,
    }
    return type(tool_name, (FunctionTool,), namespace)
