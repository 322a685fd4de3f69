"""janito's tools as LangChain tools (docs/integrations.md).

``tools(registry)`` gives one ``BaseTool`` (langchain-core) per tool; every call goes
through janito's dispatch and answers janito's JSON result as the ``ToolMessage``'s
content (``status="error"`` when ``success`` is false). A call janito's policy asks about
pauses the graph with a LangGraph interrupt shaped as the human-in-the-loop middleware's
per-call request (``{"type": "tool_approval", "tool_call_id", "name", "args",
"description"}``, plus janito's ``approval``), and is answered as that middleware is
answered: ``Command(resume={"type": "approve"})`` runs it, ``{"type": "reject",
"message": ...}`` has janito decline it. Where several calls share a graph task (a
``ToolNode`` given a whole turn), a yes must name its call (``"tool_call_id"``), since
LangGraph hands a task's answers out by position. Outside a graph (no checkpointer, a
plain ``invoke``), the asked call answers janito's ``approval_required``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, ToolException

from ..results import APPROVAL_REQUIRED, failure
from . import _bridge

if TYPE_CHECKING:
    from ..policy import ApprovalRequest
    from ..registry import Registry

_HOST = "langchain"

__all__ = ["JanitoTool", "tools"]

# The id of the model's tool call, which BaseTool hands to ``run`` but not to ``_run``
# when the arguments are described by a JSON Schema: janito needs it for the approval's
# binding and the audit log.
_CALL_ID: ContextVar[str | None] = ContextVar("janito_langchain_tool_call_id", default=None)


class JanitoTool(BaseTool):
    """One janito tool as a LangChain tool; ``tools()`` makes them."""

    registry: Any
    handle_tool_error: Any = True  # a failure is janito's JSON, with status="error"

    def run(self, tool_input: Any, *args: Any, tool_call_id: str | None = None,
            **kwargs: Any) -> Any:
        token = _CALL_ID.set(tool_call_id)
        try:
            return super().run(tool_input, *args, tool_call_id=tool_call_id, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def arun(self, tool_input: Any, *args: Any, tool_call_id: str | None = None,
                   **kwargs: Any) -> Any:
        token = _CALL_ID.set(tool_call_id)
        try:
            return await super().arun(tool_input, *args, tool_call_id=tool_call_id, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _run(self, **arguments: Any) -> str:
        call_id = _CALL_ID.get()
        decision = self._decision(arguments, call_id)
        if isinstance(decision, _Misdirected):
            return _answer(decision.result)
        return _answer(_bridge.call(self.registry, self.name, arguments, call_id,
                                    decision=decision, host=_HOST))

    async def _arun(self, **arguments: Any) -> str:
        call_id = _CALL_ID.get()
        decision = self._decision(arguments, call_id)
        if isinstance(decision, _Misdirected):
            return _answer(decision.result)
        return _answer(await _bridge.acall(self.registry, self.name, arguments, call_id,
                                           decision=decision, host=_HOST))

    def _decision(self, arguments: dict[str, Any], call_id: str | None) -> Any:
        """The person's answer when janito's policy asks about the call (the graph is
        interrupted for it, and this returns once the graph is resumed); None when
        nobody was asked."""
        asked = _bridge.request(self.registry, self.name, arguments, call_id)
        return None if asked is None else _interrupted(asked, arguments, call_id)


def _answer(result: dict[str, Any]) -> str:
    text = _bridge.text(result)
    if _bridge.is_failure(result):
        raise ToolException(text)
    return text


class _Misdirected:
    """An answer the graph was resumed with that may be meant for another call: the call
    is not run, and ``result`` says why."""

    def __init__(self, asked: ApprovalRequest, why: str) -> None:
        self.result = failure(f"{asked.tool} was not run: {why}. Nothing was done",
                              APPROVAL_REQUIRED, tool=asked.tool, approval=asked.as_json())


def _interrupted(asked: ApprovalRequest, arguments: dict[str, Any],
                 call_id: str | None) -> Any:
    """Interrupt the graph to ask the person; their decision (``_Misdirected`` when the
    answer cannot be told to be about this call), or None outside a graph (dispatch then
    answers ``approval_required``)."""
    try:
        from langgraph.config import get_config
        from langgraph.runtime import get_runtime
        from langgraph.types import interrupt
    except ImportError:
        return None
    try:
        in_graph = get_runtime() is not None
    except RuntimeError:  # not even run as a runnable
        in_graph = False
    if not in_graph:  # a plain invoke: there is no graph to resume
        return None
    answer = interrupt({
        "type": "tool_approval",
        "tool_call_id": call_id,
        "name": asked.tool,
        "args": arguments,
        "description": f"{asked.summary()}: {asked.reason}",
        "approval": asked.as_json(),
    })
    path = get_config().get("metadata", {}).get("langgraph_path")
    own_task = isinstance(path, (tuple, list)) and bool(path) and path[0] == "__pregel_push"
    return _decided(answer, asked, call_id, own_task=own_task)


def _decided(answer: Any, asked: ApprovalRequest, call_id: str | None, *,
             own_task: bool) -> Any:
    """The decision ``answer`` carries for this call.

    LangGraph hands the answers to one task's interrupts out by position, in the order
    the task reaches them, and a ToolNode given a turn's calls runs them in one task, in
    threads: the answer the person gave about one call may reach another. So an answer
    that names a call (``tool_call_id``, as the interrupt's value does) counts for that
    call only, and a yes that names none only where the call has its task to itself (a
    ``Send`` of one call, as ``create_agent`` runs each); a no is a no wherever it lands.
    """
    named = _named_call(answer)
    if named is not None and named != call_id:
        return _Misdirected(asked, f"the answer the graph was resumed with names the call "
                            f"{named!r}, not this one ({call_id!r})")
    decision = decision_of(answer)
    if named is None and decision is True and not own_task:
        return _Misdirected(asked, "this call shares its graph task with others, where "
                            "LangGraph may hand an answer to another call than the one the "
                            "person was shown; answer naming the call: "
                            f'{{"type": "approve", "tool_call_id": {json.dumps(call_id)}}}')
    return decision


def _named_call(answer: Any) -> str | None:
    """The ``tool_call_id`` an answer names, if it names one."""
    if not isinstance(answer, Mapping):
        return None
    decisions = answer.get("decisions")
    inner = decisions[0] if isinstance(decisions, list) and len(decisions) == 1 else None
    for candidate in (answer, inner):
        if isinstance(candidate, Mapping) and candidate.get("tool_call_id") is not None:
            return str(candidate["tool_call_id"])
    return None


def decision_of(answer: Any) -> Any:
    """A resume value as janito takes it: the middleware's decision (``{"type":
    "approve"}``, ``{"type": "reject", "message": ...}``, or a ``{"decisions": [...]}``
    holding one), or True/False. An edit or a response in the tool's place is refused:
    janito runs a call only as it was asked about."""
    if isinstance(answer, Mapping):
        decisions = answer.get("decisions")
        if isinstance(decisions, list) and len(decisions) == 1:
            answer = decisions[0]
        if isinstance(answer, Mapping):
            kind = answer.get("type")
            if kind == "approve":
                return True
            if kind == "reject":
                message = answer.get("message")
                return message if isinstance(message, str) and message else False
            return f"the answer was {kind!r}, which a janito tool does not take: only approve " \
                "or reject"
    return _bridge.decision_of(answer)


def tools(registry: Registry | None = None,
          names: list[str] | tuple[str, ...] | None = None) -> list[BaseTool]:
    """A LangChain tool for each tool ``names`` names (default: every loaded tool), with
    janito's schema as its ``args_schema``."""
    registry = _bridge.registry_or_default(registry)
    return [JanitoTool(name=tool.name, description=tool.description, args_schema=tool.parameters,
                       registry=registry)
            for tool in _bridge.offered(registry, names)]
