"""One janito tool class per tool of every mounted MCP server (generated when imported).

``janito_load_errors`` names each configured server that could not be mounted, and why;
janito reports every line as its own load error of janito-mcp, while the servers that did
start keep their tools.
"""

from __future__ import annotations

from .._mount import mounted

__all__: list[str] = []

janito_load_errors: list[str] = []


def _publish() -> None:
    state = mounted()
    for cls in state.classes:
        globals()[cls.__name__] = cls
        __all__.append(cls.__name__)
    janito_load_errors.extend(state.problems)


_publish()
