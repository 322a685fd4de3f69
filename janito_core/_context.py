"""What the running call belongs to, so reports and nested calls reach the right plugins.

Dispatch sets :data:`active_registry` (and :data:`current_call_id`) while a tool runs. A
report made outside any call goes to the process's default registry, which lives in
``janito_core.registry``, a layer above this one: the registry module hands in the way to
reach it once, at import (:func:`set_default_reports`), so nothing here imports upward.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .registry import Registry
    from .reporter import ReportEvent


class ReportSink(Protocol):
    """Where report events go: a registry's plugin host."""

    def report(self, event: ReportEvent) -> None: ...


active_registry: ContextVar[Registry | None] = ContextVar("janito_active_registry", default=None)

#: The id of the tool call being executed (as the model's tool call named it), if any.
current_call_id: ContextVar[str | None] = ContextVar("janito_current_call_id", default=None)

#: Who makes the calls, as the journal and the audit log record it: ``{"kind": "cli"}``,
#: ``{"kind": "mcp", "client": ..., "session": ...}``; None is Python.
current_caller: ContextVar[dict[str, Any] | None] = ContextVar("janito_current_caller",
                                                               default=None)


class _DefaultReports:
    """How to reach the default registry's reports; filled once by janito_core.registry."""

    provider: Callable[[], ReportSink] | None = None


def set_default_reports(provider: Callable[[], ReportSink]) -> None:
    """Name the sink of reports made outside any call (called once, by the registry module)."""
    _DefaultReports.provider = provider


def reports_sink() -> ReportSink | None:
    """Where a report made now goes: the running call's registry, else the default one."""
    registry = active_registry.get()
    if registry is not None:
        return registry.plugins
    provider = _DefaultReports.provider
    return provider() if provider is not None else None
