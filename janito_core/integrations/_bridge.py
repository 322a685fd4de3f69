"""What every integration shares: the tools a registry offers a framework, each call
through janito's dispatch, and the policy's ask settled by the framework's approval.

A framework asks its person before a call runs (pydantic-ai's deferred calls, the Agents
SDK's ``needs_approval``, a LangGraph interrupt, llm's ``before_call``). So the question
"does janito's policy ask about this call?" is answered here before anything runs
(``request``), with the same ``ApprovalRequest`` janito's own approver would see, and the
framework's answer is brought to dispatch with the call (``call(..., decision=...)``): the
call is then run or declined by janito, which logs, journals and traces it as any asked
call, with its ``approved`` outcome. A registry with an approver of its own settles its
asks itself, and the frameworks are not asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import Token
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import _gate
from .._call import ToolCall, _prepared, acall_tool, call_tool
from .._context import current_caller
from ..registry import default_registry
from ..results import APPROVAL_DECLINED, APPROVAL_REQUIRED, failure

if TYPE_CHECKING:
    from ..policy import ApprovalRequest
    from ..registry import Registry


class Offered(NamedTuple):
    """One tool as a framework is given it."""

    name: str
    description: str
    #: The JSON Schema of its arguments, and the same in OpenAI's strict form (None when
    #: the parameters cannot be strict: a free-form ``dict[str, T]``).
    parameters: dict[str, Any]
    strict_parameters: dict[str, Any] | None
    permissions: str
    toolset: str
    #: The JSON Schema of a successful result, when ``run()`` declares one.
    output_schema: dict[str, Any] | None


def registry_or_default(registry: Registry | None) -> Registry:
    return default_registry() if registry is None else registry


def offered(registry: Registry, names: list[str] | tuple[str, ...] | None = None) -> list[Offered]:
    """The tools ``names`` (every loaded tool when None), in that order.

    Raises ValueError for a name that is not a loaded tool, saying why: a tool the
    privileges deny, or that was skipped here, is not offered to a model, as
    ``janito run`` and ``janito mcp serve`` do not offer it either.
    """
    chosen = registry.names() if names is None else list(names)
    tools = []
    for name in chosen:
        record = registry.record(name)
        if record is None:
            raise ValueError(f"no tool named {name!r} is loaded in this registry")
        if record.status != "loaded":
            raise ValueError(f"{name} is {record.status} here: {record.reason}")
        schema = registry.schema(name)
        tools.append(Offered(name, schema.description, schema.parameters, schema.strict_parameters,
                             record.permissions, record.toolset or "", schema.output_schema))
    return tools


def text(result: dict[str, Any]) -> str:
    """A result as the JSON text janito gives a model (``execute_tool_calls`` does the same)."""
    # dispatch's results hold no lone surrogate, so this text always encodes as UTF-8
    return json.dumps(result, ensure_ascii=False)


def is_failure(result: Mapping[str, Any]) -> bool:
    return result.get("success") is False


def _asked(registry: Registry, name: str, arguments: Any, call_id: str | None) -> ToolCall | None:
    """The validated call, when the registry's policy asks about it and no one in janito
    answers the ask (no approver, no "always" given for the tool); else None."""
    policy = registry.policy
    if policy is None or registry.approver is not None or name in registry.always_approved:
        return None
    record = registry.record(name) if isinstance(name, str) else None
    if record is None or record.status != "loaded":
        return None
    fixed = policy.plan(_gate.facts(record)).fixed
    if fixed is not None and fixed.action != "ask":
        return None  # decided by the tool alone: nothing to validate for
    call = _prepared(name, arguments, registry, call_id)
    if type(call) is not ToolCall or not call.asks:
        return None  # refused before it could be asked (dispatch will say why), or not asked
    return call


def request(registry: Registry, name: str, arguments: Any,
            call_id: str | None) -> ApprovalRequest | None:
    """What the person is to be asked about this call, when janito's policy asks about it
    (None: it runs or is refused without asking anyone). Nothing is run. The request is
    kept as a pending one (unless it is already, as when a framework asks again about the
    same call), so that the person's yes, when it comes, lets the call go where this
    request showed it goes: the real paths of now, not those a link swapped in later
    leads to (the request a yes brings from elsewhere, another process, is made then)."""
    call = _asked(registry, name, arguments, call_id)
    if call is None:
        return None
    assert call.decision is not None
    asked = _gate.request(registry, call.record, call.arguments, call_id, call.decision)
    if not any(pending.id == asked.id for pending in registry.pending_approvals()):
        registry.keep_pending(asked)
    return asked


def _settled(registry: Registry, name: str, arguments: Any, call_id: str | None,
             decision: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(``approvals=`` bringing the person's ``decision`` on this very call to dispatch,
    or None; the answer instead of dispatching it, or None).

    The ask is kept as a pending one first when janito did not hand it out itself (the
    framework asked), so that dispatch takes the decision exactly as it takes one a
    caller brings back: bound to the tool, its arguments and the call's id, used once.
    A decision on a call that was settled already is not brought again: a framework's
    saved approval resumed twice, or a task LangGraph runs again, does not run the call
    twice, nor turns a no into a yes. (A call without an id cannot be told from the next
    identical one, so each decision on such a call is taken as a new one.)
    """
    if decision is None:
        return None, None
    call = _asked(registry, name, arguments, call_id)
    if call is None:  # not (or no longer) asked: dispatch answers as it would anyway
        return None, None if decision is True else _declined_unasked(name, decision)
    assert call.decision is not None
    approval = _gate.approval_id(registry, name, call.arguments, call_id)
    if call_id is not None and registry.was_decided(approval):
        return None, failure(
            f"{name} was not run again: the person's decision on this call (call id "
            f"{call_id!r}) was used already, and a decision settles one call once. Nothing "
            "was done; a new call is asked about anew", APPROVAL_REQUIRED, tool=name)
    if not any(pending.id == approval for pending in registry.pending_approvals()):
        registry.keep_pending(_gate.request(registry, call.record, call.arguments, call_id,
                                            call.decision))
    return {approval: decision}, None


def _declined_unasked(name: str, decision: Any) -> dict[str, Any]:
    """A no for a call janito no longer asks about (the policy changed meanwhile, or the
    tool was approved "always"): a person's no is never turned into a run. Answered here,
    the call never reaches dispatch, so it leaves no audit line."""
    said = f" ({decision})" if isinstance(decision, str) and decision else ""
    return failure(f"{name} was not run: the person declined it{said}. Nothing was done; do "
                   "not retry it unasked", APPROVAL_DECLINED, tool=name)


def call(registry: Registry, name: str, arguments: Any, call_id: str | None = None, *,
         decision: Any = None, host: str | None = None) -> dict[str, Any]:
    """Dispatch one call; ``decision`` is the person's answer when the framework asked
    them (True, False, or the reason of a no), None when no one was asked. ``host``
    names the framework in the audit log (``caller.kind``), unless the host named
    itself already."""
    decision = None if decision is None else decision_of(decision)
    approvals, answer = _settled(registry, name, arguments, call_id, decision)
    if answer is not None:
        return answer
    token = _named(registry, host)
    try:
        return call_tool(name, arguments, registry=registry, call_id=call_id,
                         approvals=approvals)
    finally:
        if token is not None:
            current_caller.reset(token)


async def acall(registry: Registry, name: str, arguments: Any, call_id: str | None = None, *,
                decision: Any = None, host: str | None = None) -> dict[str, Any]:
    """``call`` from a coroutine: the tool does not block the event loop."""
    decision = None if decision is None else decision_of(decision)
    approvals, answer = _settled(registry, name, arguments, call_id, decision)
    if answer is not None:
        return answer
    token = _named(registry, host)
    try:
        return await acall_tool(name, arguments, registry=registry, call_id=call_id,
                                approvals=approvals)
    finally:
        if token is not None:
            current_caller.reset(token)


def _named(registry: Registry, host: str | None) -> Token[dict[str, Any] | None] | None:
    """Name the framework as the caller, for the journal and the audit log (the only
    readers of the caller: a registry without a journal does without)."""
    if host is None or registry.journal is None or current_caller.get() is not None:
        return None
    return current_caller.set({"kind": host})


def decision_of(answer: Any) -> Any:
    """A person's answer as dispatch takes it: True runs the call, anything else declines
    it (a non-empty string says why)."""
    if answer is True or answer == "always":
        return True
    if isinstance(answer, str) and answer:
        return answer
    return False
