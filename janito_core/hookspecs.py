"""Hook specifications of the ``janito`` plugin project.

Implement them in a module advertised under the ``janito.plugins`` entry-point group,
or in a toolset's package, with ``@janito_core.hookimpl``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import argparse

    from .dispatch import ToolCall
    from .registry import Registry
    from .reporter import ReportEvent

hookspec = pluggy.HookspecMarker("janito")


@hookspec
def janito_report(event: ReportEvent) -> None:
    """Receive one progress report of a tool or of janito itself.

    The built-in implementation (plugin name ``janito.stderr``) renders it on stderr;
    unregister that plugin to render reports elsewhere.
    """


@hookspec(firstresult=True)
def janito_tool_call(call: ToolCall) -> dict[str, Any] | None:
    """Run one validated tool call and return its result dict.

    The built-in implementation runs the tool and is called last. An implementation
    that returns a dict answers instead of the tool: return
    ``call.refuse("reason")`` to deny a call. A ``wrapper=True`` implementation sees
    every call and its result, for auditing, timing or changing the result.
    """


@hookspec
def janito_register_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add subcommands to the ``janito`` command.

    Add parsers with ``subparsers.add_parser(...)`` and give each a handler with
    ``parser.set_defaults(handler=function)``; the handler receives the parsed
    ``argparse.Namespace`` and returns the exit status.
    """


@hookspec
def janito_toolset_loaded(registry: Registry, toolset: str, tools: list[str]) -> None:
    """A toolset was loaded into ``registry``; ``tools`` names the tools it made available."""
