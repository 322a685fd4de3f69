"""janito-core: the framework of tools that large language models call.

Write a tool as a ``BaseTool`` subclass or a plain function decorated with
``@tool(permissions=...)``; ship toolsets as distributions advertising a
``janito.toolsets`` entry point; let ``Registry`` discover them and ``call_tool``
execute what a model asks for.

The modules form layers, each importing only from below (docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._marker import hookimpl
from .base_tool import BaseTool
from .cancellation import CallCancelled, CancelToken
from .decorator import tool
from .errors import (
    JanitoError,
    PermissionStringError,
    PluginValidationError,
    SecretStoreError,
    ToolsetNotAllowedError,
    ToolsetNotFoundError,
    WorkspaceError,
)
from .path_utils import norm_path
from .privileges import Privileges
from .registry import AUTOLOAD_TOOLSETS, Registry, default_registry
from .reporter import Reporter
from .results import Failure, failure

if TYPE_CHECKING:
    from .dispatch import acall_tool, aexecute_tool_calls, call_tool, execute_tool_calls
    from .scrub import Scrubber, ScrubFilter
    from .workspace import Workspace
    from .wrapper import ToolWrapper

__version__ = "0.1.0"

__all__ = [
    "AUTOLOAD_TOOLSETS",
    "BaseTool",
    "CallCancelled",
    "CancelToken",
    "Failure",
    "JanitoError",
    "PermissionStringError",
    "PluginValidationError",
    "Privileges",
    "Registry",
    "Reporter",
    "ScrubFilter",
    "Scrubber",
    "SecretStoreError",
    "ToolsetNotAllowedError",
    "ToolsetNotFoundError",
    "Workspace",
    "WorkspaceError",
    "acall_tool",
    "aexecute_tool_calls",
    "call_tool",
    "default_registry",
    "discover_toolsets",
    "execute_tool_calls",
    "failure",
    "hookimpl",
    "norm_path",
    "tool",
]


def discover_toolsets(
    names: list[str] | tuple[str, ...],
    *,
    privileges: Privileges | None = None,
) -> dict[str, ToolWrapper]:
    """Load the named toolsets into a fresh registry and return ``{ClassName: callable}``."""
    registry = Registry(privileges=privileges, autoload=())
    for name in names:
        registry.add_toolset(name)
    return registry.tools()


def __getattr__(name: str) -> Any:
    # Loaded on first use, for the start-up of commands that never call a tool: dispatch
    # (json, the validators), the workspace (about 2 ms) and the scrubber (logging).
    if name in ("call_tool", "execute_tool_calls", "acall_tool", "aexecute_tool_calls"):
        from . import dispatch

        return getattr(dispatch, name)
    if name == "Workspace":
        from .workspace import Workspace

        return Workspace
    if name in ("Scrubber", "ScrubFilter"):
        from . import scrub

        return getattr(scrub, name)
    raise AttributeError(f"module 'janito_core' has no attribute {name!r}")
