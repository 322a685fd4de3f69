"""ToolsetTester: an isolated registry, a workspace and a ``call`` that goes through dispatch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..dispatch import call_tool
from ..privileges import Privileges
from ..registry import Registry
from ..workspace import Workspace


class ToolsetTester:
    """What the ``janito`` fixture gives a test.

    ``load("files")`` builds a fresh registry with those toolsets (and only those), rooted
    in the temporary ``workspace``; ``call(name, ...)`` sends a call through dispatch as a
    model would, so validation, privileges and hooks all apply.
    """

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.registry: Registry | None = None

    def load(self, *toolsets: str, privileges: str | Privileges | None = None,
             confined: bool = True) -> Registry:
        if isinstance(privileges, str):
            privileges = Privileges.from_string(privileges)
        registry = Registry(
            privileges=privileges,
            workspace=Workspace(self.workspace, confined=confined),
            autoload=(),
            allowed=None,
        )
        for name in toolsets:
            registry.add_toolset(name)
        self.registry = registry
        return registry

    def call(self, name: str, arguments: str | dict[str, Any] | None = None, /,
             **kwargs: Any) -> dict[str, Any]:
        """Call tool ``name`` with a JSON string, a mapping, or keyword arguments."""
        if self.registry is None:
            raise RuntimeError("call janito.load(<toolset>) before janito.call()")
        if arguments is None:
            arguments = kwargs
        elif kwargs:
            raise TypeError("pass the arguments either as one value or as keywords, not both")
        return call_tool(name, arguments, registry=self.registry)

    def path(self, relative: str) -> Path:
        """A path inside the workspace."""
        return self.workspace / relative
