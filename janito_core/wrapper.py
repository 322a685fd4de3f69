"""The callable that stands for a tool class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._context import active_registry
from ._types import UnsupportedType, type_info
from .base_tool import runs_async
from .schema import MISSING, AnnotationError, resolve_hints, tool_schema

if TYPE_CHECKING:
    import inspect

    from .registry import Registry


def check_annotations(cls: type) -> str | None:
    """Why ``cls.run()``'s annotations cannot become a schema, or None when they can."""
    if isinstance(cls.__dict__.get("input_schema"), dict):
        return None
    try:
        hints = resolve_hints(cls)
    except AnnotationError as exc:
        return str(exc)
    for name, annotation in hints.items():
        if name == "return":
            continue
        try:
            type_info(annotation)
        except UnsupportedType as exc:
            return f"{cls.__name__}.run() parameter {name!r}: {exc}"
        except Exception as exc:
            return f"{cls.__name__}.run() parameter {name!r}: {type(exc).__name__}: {exc}"
    return None


class ToolWrapper:
    """Calls ``cls(workspace).run(**kwargs)``; looks like ``run()`` without ``self``.

    ``__name__``, ``__doc__``, ``__annotations__`` and ``__signature__`` mirror the class
    and its ``run()`` method, so frameworks that introspect functions see the tool. For an
    ``async def run()`` tool, calling the wrapper returns the coroutine to await.
    """

    def __init__(self, cls: type, registry: Registry | None = None) -> None:
        self.tool_class = cls
        self.registry = registry
        self.__name__ = cls.__name__
        self.__qualname__ = cls.__qualname__
        self.__module__ = cls.__module__
        self.__doc__ = cls.__doc__
        self.__annotations__ = dict(getattr(cls.run, "__annotations__", {}))  # type: ignore[attr-defined]
        self._tool_permissions: str = getattr(cls, "_tool_permissions", "")

    @property
    def __signature__(self) -> inspect.Signature:
        import inspect

        signature = inspect.signature(self.tool_class.run)  # type: ignore[attr-defined]
        if isinstance(self.tool_class.__dict__.get("input_schema"), dict):
            declared = [
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY,
                    default=inspect.Parameter.empty if param.required else param.default
                    if param.default is not MISSING else None,
                )
                for name, param in tool_schema(self.tool_class).params.items()
                if name.isidentifier()
            ]
            return signature.replace(parameters=declared)
        parameters = list(signature.parameters.values())[1:]
        return signature.replace(parameters=parameters)

    def instantiate(self) -> Any:
        workspace = self.registry.workspace if self.registry is not None else None
        return self.tool_class(workspace)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.registry is not None and not self.registry.privileges.allows(self._tool_permissions):
            raise PermissionError(
                f"{self.__name__} needs permissions {self._tool_permissions!r}; the registry "
                f"grants {str(self.registry.privileges)!r}"
            )
        if runs_async(self.tool_class):
            return self._run_async(args, kwargs)
        token = active_registry.set(self.registry) if self.registry is not None else None
        try:
            return self.instantiate().run(*args, **kwargs)
        finally:
            if token is not None:
                active_registry.reset(token)

    async def _run_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # The registry is set where the coroutine runs, which is not where it was made.
        token = active_registry.set(self.registry) if self.registry is not None else None
        try:
            return await self.instantiate().run(*args, **kwargs)
        finally:
            if token is not None:
                active_registry.reset(token)

    def __repr__(self) -> str:
        return f"<tool {self.__name__} ({self._tool_permissions or '-'})>"
