"""janito's tools as FunctionTools of the OpenAI Agents SDK (docs/integrations.md).

``tools(registry)`` gives one ``FunctionTool`` per tool; every call goes through janito's
dispatch and answers janito's JSON result as the tool's output. A call janito's policy
asks about needs approval (``needs_approval``): the run stops with it among
``result.interruptions``; ``state.approve(item)`` runs it, and ``reject(state, item)``
has janito decline it, so the model reads janito's ``approval_declined`` result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents import FunctionTool, RunContextWrapper
from agents.tool_context import ToolContext

from . import _bridge

if TYPE_CHECKING:
    from agents import RunState, ToolApprovalItem

    from ..registry import Registry

_HOST = "openai-agents"

__all__ = ["reject", "tools"]


class _Invoke:
    """One janito tool's ``on_invoke_tool`` and ``needs_approval``."""

    def __init__(self, registry: Registry, name: str) -> None:
        self.registry = registry
        self.name = name

    async def __call__(self, context: ToolContext[Any], arguments: str) -> str:
        call_id = context.tool_call_id
        approved = context.is_tool_approved(self.name, call_id)
        result = await _bridge.acall(self.registry, self.name, arguments, call_id,
                                     decision=True if approved else None, host=_HOST)
        return _bridge.text(result)

    async def needs_approval(self, context: RunContextWrapper[Any], arguments: dict[str, Any],
                             call_id: str) -> bool:
        return _bridge.request(self.registry, self.name, arguments, call_id) is not None


def tools(registry: Registry | None = None,
          names: list[str] | tuple[str, ...] | None = None) -> list[FunctionTool]:
    """A ``FunctionTool`` for each tool ``names`` names (default: every loaded tool).

    A tool whose parameters can be strict gets janito's strict schema and
    ``strict_json_schema=True``; the others (a free-form ``dict[str, T]``) their ordinary
    schema, not strict. A declared result's schema is not given as ``output_json_schema``:
    the SDK takes only a strict object there, and janito's describes every answer, the
    tool's or janito's failure (``anyOf`` at its root).
    """
    registry = _bridge.registry_or_default(registry)
    made = []
    for tool in _bridge.offered(registry, names):
        invoke = _Invoke(registry, tool.name)
        strict = tool.strict_parameters is not None
        made.append(FunctionTool(
            name=tool.name,
            description=tool.description,
            params_json_schema=tool.strict_parameters if strict else tool.parameters,
            on_invoke_tool=invoke,
            strict_json_schema=strict,
            needs_approval=invoke.needs_approval if registry.policy is not None else False,
        ))
    return made


def reject(state: RunState[Any], item: ToolApprovalItem, reason: str | None = None) -> None:
    """Refuse an interrupted call: janito declines it (logged, traced as declined) and the
    model reads janito's ``approval_declined`` result when the run goes on. ``reason``,
    when given, is told to the model. A call of a tool that is not janito's is rejected
    as ``state.reject`` does."""
    invoke = _invoker(item)
    if invoke is None:
        state.reject(item, rejection_message=reason)
        return
    raw = item.raw_item
    arguments = getattr(raw, "arguments", None)
    call_id = getattr(raw, "call_id", None)
    if isinstance(raw, dict):
        arguments, call_id = raw.get("arguments"), raw.get("call_id")
    result = _bridge.call(invoke.registry, invoke.name, arguments, call_id,
                          decision=reason or False, host=_HOST)
    state.reject(item, rejection_message=_bridge.text(result))


def _invoker(item: ToolApprovalItem) -> _Invoke | None:
    """The janito tool an interrupted call is of, found among its agent's tools."""
    for candidate in getattr(item.agent, "tools", None) or ():
        invoke = getattr(candidate, "on_invoke_tool", None)
        if isinstance(candidate, FunctionTool) and isinstance(invoke, _Invoke) \
                and candidate.name == item.tool_name:
            return invoke
    return None
