"""One janito tool class per tool of every mounted MCP server (generated when imported).

``janito_load_errors`` names each configured server that could not be mounted, and why
(``janito_load_notes`` says when nothing is configured, which is no error);
janito reports every line as its own load error of janito-mcp, while the servers that did
start keep their tools. The ``janito_toolset_loaded`` hook keeps each registry that loads
the toolset, so a tool that a server adds later (``notifications/tools/list_changed``)
appears there too.
"""

from __future__ import annotations

from typing import Any

from janito_core import hookimpl

from .._mount import mounted, watch

__all__: list[str] = []

janito_load_errors: list[str] = []
janito_load_notes: list[str] = []


def _publish() -> None:
    state = mounted()
    for cls in state.classes:
        globals()[cls.__name__] = cls
        __all__.append(cls.__name__)
    janito_load_errors.extend(state.problems)
    janito_load_notes.extend(state.notes)


@hookimpl
def janito_toolset_loaded(registry: Any, toolset: str, tools: list[str]) -> None:
    """Keep ``registry``, so tools a server adds later appear in it."""
    if toolset == "mcp":
        watch(registry)


_publish()
