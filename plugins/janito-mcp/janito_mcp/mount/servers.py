"""One janito tool class per tool of every mounted MCP server (generated when imported)."""

from __future__ import annotations

from .._mount import mounted

__all__: list[str] = []


def _publish() -> None:
    for cls in mounted().classes:
        globals()[cls.__name__] = cls
        __all__.append(cls.__name__)


_publish()
