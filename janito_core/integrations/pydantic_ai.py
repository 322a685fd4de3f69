"""janito's tools as a pydantic-ai toolset (docs/integrations.md).

``JanitoToolset(registry)`` offers a registry's tools to an ``Agent``; every call goes
through janito's dispatch and answers janito's JSON result. A call janito's policy asks
about is deferred as pydantic-ai defers a tool that requires approval: the run ends with
``DeferredToolRequests`` (or a ``HandleDeferredToolCalls`` capability answers in the run),
and the person's decisions come back through ``toolset.results(requests, decisions)``,
which lets janito decline the calls the person refused, so the model reads janito's
``approval_declined`` answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    ToolApproved,
    ToolDefinition,
    ToolDenied,
)
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from . import _bridge

if TYPE_CHECKING:
    from ..registry import Registry

_HOST = "pydantic-ai"

__all__ = ["JanitoToolset"]

#: The key under which arguments that are not a JSON object reach ``call_tool`` intact,
#: so dispatch answers them with its own error (``invalid_json``, ``invalid_arguments``).
_AS_SENT = "__janito_arguments__"


class _ArgumentsAsSent:
    """pydantic-ai's argument validator for janito's tools: it checks nothing, because
    dispatch validates the arguments and answers a bad one in janito's shape."""

    def validate_json(self, input: str | bytes | bytearray, *, allow_partial: Any = False,
                      **kwargs: Any) -> Any:
        try:
            value = json.loads(input or "{}")
        except (ValueError, RecursionError):
            return {_AS_SENT: input}
        return value if type(value) is dict else {_AS_SENT: value}

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        if input is None:
            return {}
        return input if isinstance(input, dict) else {_AS_SENT: input}


_VALIDATOR = _ArgumentsAsSent()


def _sent(tool_args: dict[str, Any]) -> Any:
    if len(tool_args) == 1 and _AS_SENT in tool_args:
        return tool_args[_AS_SENT]
    return tool_args


class JanitoToolset(AbstractToolset[Any]):
    """The tools of a janito ``Registry`` as a pydantic-ai toolset.

    ``tools`` names the tools to offer (default: every loaded tool of the registry, when
    the toolset is made). ``id`` is the toolset's id, which durable execution needs.
    Results are janito's result objects; a failure is one too (``success: false``), as the
    model gets it from janito everywhere.
    """

    def __init__(self, registry: Registry | None = None, *,
                 tools: list[str] | tuple[str, ...] | None = None, id: str | None = None) -> None:
        self.registry = _bridge.registry_or_default(registry)
        self._id = id
        self._definitions = {
            tool.name: ToolDefinition(
                name=tool.name,
                parameters_json_schema=tool.parameters,
                description=tool.description,
                return_schema=tool.output_schema,
                metadata={"janito": {"permissions": tool.permissions, "toolset": tool.toolset}},
            )
            for tool in _bridge.offered(self.registry, tools)
        }

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {name: ToolsetTool(toolset=self, tool_def=definition, max_retries=1,
                                  args_validator=_VALIDATOR)
                for name, definition in self._definitions.items()}

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        arguments = _sent(tool_args)
        call_id = ctx.tool_call_id
        if ctx.tool_call_approved:
            return await _bridge.acall(self.registry, name, arguments, call_id, decision=True,
                                       host=_HOST)
        asked = _bridge.request(self.registry, name, arguments, call_id)
        if asked is not None:
            raise ApprovalRequired(metadata={"janito": asked.as_json()})
        return await _bridge.acall(self.registry, name, arguments, call_id, host=_HOST)

    def results(self, requests: DeferredToolRequests,
                decisions: Mapping[str, Any]) -> DeferredToolResults:
        """The ``DeferredToolResults`` that carry a person's ``decisions`` (by tool call
        id: True to run the call, False or the reason to refuse it) on calls of
        ``requests``; calls without a decision stay pending.

        A refused call of this toolset is declined by janito there and then (logged, and
        traced as declined), and the model reads janito's ``approval_declined`` result.
        """
        approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
        for part in requests.approvals:
            if part.tool_call_id not in decisions:
                continue
            answer = _bridge.decision_of(decisions[part.tool_call_id])
            if answer is True:
                approvals[part.tool_call_id] = ToolApproved()
            elif part.tool_name in self._definitions:
                result = _bridge.call(self.registry, part.tool_name,
                                      part.args if part.args is not None else {},
                                      part.tool_call_id, decision=answer, host=_HOST)
                approvals[part.tool_call_id] = ToolDenied(_bridge.text(result))
            else:
                approvals[part.tool_call_id] = ToolDenied(answer) if isinstance(answer, str) \
                    else ToolDenied()
        return DeferredToolResults(approvals=approvals)
