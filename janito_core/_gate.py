"""The policy's step in a call: deny before anything runs, ask a person, guard the paths.

Before a call runs (``decide``), the registry's policy looks at the tool, its validated
arguments and the real paths the tool declares it reads and writes; a deny is the call's
answer (``denied_by_policy``). An ask is settled when the call is about to run
(``admit``), on the thread that runs it, so that in a turn only the asked call waits:

1. a decision the caller brings (``approvals={id: True|False}``) for the id this call was
   given when it was first asked;
2. else the registry's approver (a function, or a coroutine function), which sees an
   :class:`~janito_core.policy.ApprovalRequest`;
3. else the answer is ``approval_required`` with the request, kept by the registry until
   a caller brings the person's decision.

The id is a keyed hash of the tool, its validated arguments and the call's id, made with
a secret of the registry: a decision answers exactly the call that was shown, and a call
whose arguments changed is a different call, asked anew. A decision is used once.
Whatever the answer, the tool then runs with a workspace that puts every path it touches
to the policy again (``PathGuard``), by its real path. A yes lets the call where the
person was shown it goes (``Admitted.shown``), not where a link swapped in meanwhile leads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .policy import ALLOW, ASK, DENY, READ, WRITE, ApprovalRequest, PathUse, ToolFacts
from .results import APPROVAL_DECLINED, APPROVAL_REQUIRED, DENIED_BY_POLICY, failure

if TYPE_CHECKING:
    from .policy import Decision, Policy
    from .registry import Registry, ToolRecord
    from .workspace import Workspace


def facts(record: ToolRecord) -> ToolFacts:
    """What the policy looks at of ``record``'s tool (worked out once per record)."""
    known = record.policy_facts
    if known is None:
        cls = record.cls
        known = record.policy_facts = ToolFacts(
            record.name, record.toolset or "", record.permissions,
            bool(getattr(cls, "reads_paths", None)), bool(getattr(cls, "writes_paths", None)))
    facts: ToolFacts = known
    return facts


def decide(policy: Policy, record: ToolRecord, arguments: Mapping[str, Any],
           registry: Registry) -> Decision:
    """The policy's decision for a validated call (the paths resolved only when needed)."""
    tool = facts(record)
    fixed = policy.plan(tool).fixed
    if fixed is not None:
        return fixed
    return policy.decide_call(
        tool, arguments, lambda wanted: uses(record.cls, arguments, registry.workspace, wanted))


def uses(cls: type, arguments: Mapping[str, Any], workspace: Workspace,
         accesses: Any = (READ, WRITE)) -> list[PathUse]:
    """The paths a call of ``cls`` names in the arguments it declares as paths, resolved."""
    found: list[PathUse] = []
    for access, attribute in ((READ, "reads_paths"), (WRITE, "writes_paths")):
        if access not in accesses:
            continue
        names = getattr(cls, attribute, None) or ()
        if isinstance(names, str):
            names = (names,)
        for name in names:
            value = arguments.get(name)
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if not isinstance(item, str):
                    continue
                found.append(PathUse(name, _where(workspace, item, True), access))
                if access == WRITE:  # the entry itself too: a link is removed, not followed
                    found.append(PathUse(name, _where(workspace, item, False), access))
    return found


def _where(workspace: Workspace, path: str, follow: bool) -> str | None:
    from .errors import WorkspaceError

    try:
        real = workspace.resolve(path, follow_symlinks=follow)
    except (WorkspaceError, OSError, ValueError):
        return None
    if not workspace.contains(real):
        return None
    shown = workspace.display(real)
    return "" if shown == "." else shown


def refusal(name: str, decision: Decision) -> dict[str, Any]:
    extra: dict[str, Any] = {"tool": name, "reason": decision.reason}
    if decision.rule is not None:
        extra["rule"] = decision.rule.text
        extra["source"] = decision.rule.source
    return failure(f"{name} was not run: {decision.reason}", DENIED_BY_POLICY, **extra)


def approval_id(registry: Registry, name: str, arguments: Mapping[str, Any],
                call_id: str | None) -> str:
    # Imported here: only an asked call needs them, and hashlib loads OpenSSL (start-up).
    import hashlib
    import hmac

    text = json.dumps([name, dict(arguments), call_id], sort_keys=True, default=repr,
                      ensure_ascii=False)
    digest = hmac.new(registry.approval_key, text.encode("utf-8", "surrogatepass"),
                      hashlib.sha256).hexdigest()
    return f"ap_{digest[:32]}"


def request(registry: Registry, record: ToolRecord, arguments: Mapping[str, Any],
            call_id: str | None, decision: Decision) -> ApprovalRequest:
    shown = [{"argument": u.argument, "path": u.relative, "access": u.access}
             for u in uses(record.cls, arguments, registry.workspace)
             if u.relative is not None]
    unique = [dict(t) for t in dict.fromkeys(tuple(sorted(p.items())) for p in shown)]
    return ApprovalRequest(
        id=approval_id(registry, record.name, arguments, call_id), tool=record.name,
        toolset=record.toolset or "", permissions=record.permissions,
        arguments=_plain(arguments), paths=unique, call_id=call_id, reason=decision.reason,
        rule=decision.rule.text if decision.rule else None,
        source=decision.source)


def approved_paths(record: ToolRecord, shown: ApprovalRequest | None
                   ) -> dict[str, tuple[tuple[str, ...], ...]] | None:
    """The workspace paths (as parts, by access) a person's yes on ``shown`` lets the call
    reach where the policy would ask first (``.git/``, an ask rule's paths); None when the
    yes is not bound to paths: the call showed none of that access, or runs code, which
    goes wherever its text does and is bounded by the sandbox instead."""
    if shown is None or "x" in record.permissions:
        return None
    within: dict[str, list[tuple[str, ...]]] = {}
    for use in shown.paths:
        within.setdefault(use["access"], []).append(tuple(use["path"].split("/")))
    return {access: tuple(paths) for access, paths in within.items()} or None


def _plain(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as JSON values, for the person and for an approval kept for later."""
    plain: dict[str, Any] = json.loads(json.dumps(dict(arguments), default=repr,
                                                  ensure_ascii=False))
    return plain


class Admitted(NamedTuple):
    """How the policy's decision on a call was settled."""

    #: Whether a person approved the call.
    approved: bool
    #: The answer instead of running the call, or None to run it.
    answer: dict[str, Any] | None
    #: What the person approved, when they were asked about this very call (not when
    #: the tool was approved "always"): the call may go where it showed, and no further.
    shown: ApprovalRequest | None = None


def admit(registry: Registry, record: ToolRecord, arguments: Mapping[str, Any],
          call_id: str | None, decision: Decision,
          approvals: Mapping[str, Any] | None) -> Admitted:
    """Settle the decision: run the call, or the answer instead (see ``Admitted``)."""
    outcome = _admit(registry, record, arguments, call_id, decision, approvals)
    if decision.action == ASK:
        _settled(registry, record, arguments, call_id, decision, outcome)
    return outcome


def _admit(registry: Registry, record: ToolRecord, arguments: Mapping[str, Any],
           call_id: str | None, decision: Decision,
           approvals: Mapping[str, Any] | None) -> Admitted:
    if decision.action == ALLOW:
        return Admitted(False, None)
    if decision.action == DENY:
        return Admitted(False, refusal(record.name, decision))
    asked = request(registry, record, arguments, call_id, decision)
    given = approvals.get(asked.id) if approvals else None
    if given is not None:
        taken = registry.take_pending(asked.id)
        if not taken:
            return Admitted(False, failure(
                f"{record.name} was not run: the decision brought for {asked.id} is for no "
                "call this registry asked about (or was used already); ask again",
                APPROVAL_REQUIRED, tool=record.name, approval=_asked_again(registry, asked)))
        # what the person was shown when it was asked, not what the paths lead to now
        return _answer(record.name, taken, given)
    if record.name in registry.always_approved:
        return Admitted(True, None)
    approver = registry.approver
    if approver is not None:
        try:
            answer = approver(asked)
            if hasattr(answer, "__await__"):
                answer = registry.async_runner().run_coroutine(_awaited(answer), None)
        except Exception as exc:
            return Admitted(False, failure(
                f"{record.name} was not run: the approver failed ({type(exc).__name__}: "
                f"{exc}), which counts as a no", APPROVAL_DECLINED, tool=record.name,
                approval=asked.as_json()))
        if answer == "always":
            registry.always_approved.add(record.name)
            answer = True
        return _answer(record.name, asked, answer)
    return Admitted(False, failure(
        f"{record.name} needs a person's approval: {decision.reason}. Nothing was done; "
        "the call runs once the person approves it", APPROVAL_REQUIRED, tool=record.name,
        approval=_asked_again(registry, asked)))


async def aadmit(registry: Registry, record: ToolRecord, arguments: Mapping[str, Any],
                 call_id: str | None, decision: Decision,
                 approvals: Mapping[str, Any] | None) -> Admitted:
    """``admit`` on an event loop: an async approver is awaited here."""
    outcome = await _aadmit(registry, record, arguments, call_id, decision, approvals)
    if decision.action == ASK:
        _settled(registry, record, arguments, call_id, decision, outcome)
    return outcome


async def _aadmit(registry: Registry, record: ToolRecord, arguments: Mapping[str, Any],
                  call_id: str | None, decision: Decision,
                  approvals: Mapping[str, Any] | None) -> Admitted:
    approver = registry.approver
    import inspect

    if decision.action != ASK or approver is None or not inspect.iscoroutinefunction(approver) \
            or (approvals and approval_id(registry, record.name, arguments, call_id) in approvals) \
            or record.name in registry.always_approved:
        return _admit(registry, record, arguments, call_id, decision, approvals)
    asked = request(registry, record, arguments, call_id, decision)
    try:
        answer = await approver(asked)
    except Exception as exc:
        return Admitted(False, failure(
            f"{record.name} was not run: the approver failed ({type(exc).__name__}: {exc}), "
            "which counts as a no", APPROVAL_DECLINED, tool=record.name,
            approval=asked.as_json()))
    if answer == "always":
        registry.always_approved.add(record.name)
        answer = True
    return _answer(record.name, asked, answer)


def _settled(registry: Registry, record: ToolRecord, arguments: Mapping[str, Any],
             call_id: str | None, decision: Decision,
             outcome: Admitted) -> None:
    """Show on the call's span how its ask was settled, when the registry's calls are
    traced (docs/tracing.md). Told from here, not read off the call's result: an
    approved call answers with the tool's result, which says nothing of the approval."""
    tracing = registry.tracing
    if tracing:
        tracing.settled(decision, call_id, outcome[0], outcome[1],
                        approval_id(registry, record.name, arguments, call_id))


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _asked_again(registry: Registry, asked: ApprovalRequest) -> dict[str, Any]:
    registry.keep_pending(asked)
    return asked.as_json()


def _answer(name: str, asked: ApprovalRequest, answer: Any) -> Admitted:
    if answer is True:
        return Admitted(True, None, asked)
    said = f"the person declined it ({answer})" if isinstance(answer, str) and answer \
        else "the person declined it"
    return Admitted(False, failure(f"{name} was not run: {said}. Nothing was done; do not "
                                   "retry it unasked", APPROVAL_DECLINED, tool=name,
                                   approval=asked.as_json()))
