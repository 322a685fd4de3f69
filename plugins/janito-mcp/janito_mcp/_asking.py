"""Asking the person at the MCP client about a call the policy asks about.

On the handshake eras (up to 2025-11-25) the server sends ``elicitation/create`` in the
middle of the call and waits for the answer. On the 2026-07-28 era a request cannot carry
a question back; the call's result is an *input-required* result instead: the question
(an elicitation form) and a ``requestState``. The client asks its person, then sends the
same ``tools/call`` again with the answer and the state echoed back.

The state is sealed by the SDK's ``RequestStateBoundary`` (AES-GCM, bound to the tool's
name and arguments, with an expiry), so a client can neither read nor forge it, nor carry
it over to another call. Inside it janito keeps what the seal cannot: the call it asked
about (tool, validated arguments and the real paths they led to), when it asked, and a
nonce. An answer is taken once:
the server remembers the nonces it was answered with until they expire, so the same yes
sent twice runs the call once. The nonces are kept where the tasks are (``_taskstore``):
in Redis, every instance behind one address sees an answer another one took. Anything
but an explicit yes, in time, runs nothing.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from janito_core.policy import ApprovalRequest


class Ledger(Protocol):
    """Where the nonces of answers already taken are kept (a task store is one)."""

    async def claim_once(self, key: str, seconds: float) -> bool:
        """True the first time ``key`` is claimed within ``seconds``, False after."""
        ...


class MemoryLedger:
    """The nonces taken by this process."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    async def claim_once(self, key: str, seconds: float) -> bool:
        now = time.time()
        for old in [k for k, until in self._until.items() if until < now]:
            del self._until[old]
        if key in self._until:
            return False
        self._until[key] = now + seconds
        return True

#: How long the person at the client has to answer a call the policy asks about.
DEFAULT_ASK_TIMEOUT = 300.0
#: The key of janito's one question in an input-required result.
APPROVAL_INPUT = "janito.approve"
#: The era whose requests ask through input-required results.
INPUT_REQUIRED_ERA = "2026-07-28"
#: What the client's form asks for: one yes or no.
ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Run this call?",
                               "description": "Yes runs this one call; no leaves it undone."}},
    "required": ["approve"],
}


@dataclass
class InputRound:
    """One ``tools/call`` request of the 2026-07-28 era: what the client brought back (the
    answers and the unsealed state of an earlier input-required result, if any), and the
    question to answer it with instead of a result, once the approver has asked one."""

    answers: Mapping[str, Any]
    state: str | None
    question: Any = None
    question_state: str | None = None


#: The request whose call is being decided, and its round on the 2026-07-28 era: the
#: approver asks that request's client.
REQUEST: contextvars.ContextVar[tuple[Any, InputRound | None] | None] = \
    contextvars.ContextVar("janito_mcp_request", default=None)


def asks_by_result(protocol_version: str | None) -> bool:
    """Whether a request of ``protocol_version`` asks through input-required results."""
    from mcp_types.version import is_version_at_least

    return bool(protocol_version) and is_version_at_least(str(protocol_version),
                                                          INPUT_REQUIRED_ERA)


def request_state_boundary(key: bytes | None, ask_timeout: float) -> Any:
    """The SDK middleware that seals and checks ``requestState``, under ``key`` (shared by
    every worker behind one address) or a key of this process alone. Its lifetime outlasts
    the ask timeout, which janito checks itself so that the refusal can say so."""
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    ttl = ask_timeout + 60.0
    security = (RequestStateSecurity(keys=[key], ttl=ttl) if key is not None
                else RequestStateSecurity.ephemeral(ttl=ttl))
    return RequestStateBoundary(security, default_audience="janito")


def _call_digest(request: ApprovalRequest) -> str:
    # the real paths too: a yes is for where the call went when the person was asked, and
    # a link swapped in before the answer comes back makes it another call
    text = json.dumps([request.tool, request.arguments, request.paths], sort_keys=True,
                      ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def eliciting_approver(timeout: float, ledger: Ledger | None = None) -> Any:
    """An async approver that asks the person at the client of the current request: through
    ``elicitation/create`` on the handshake eras, through an input-required result on the
    2026-07-28 era. Anything but an explicit yes within ``timeout`` seconds is a no: a
    decline, a cancel, a timeout, a client that cannot ask. ``ledger`` keeps the answers
    taken (this process's memory by default)."""
    answered = ledger if ledger is not None else MemoryLedger()

    async def approve(request: ApprovalRequest) -> Any:
        import anyio
        import mcp_types as types

        who = (f"the policy rule {request.rule!r} ({request.source})" if request.rule
               else f"the policy ({request.source})")
        current = REQUEST.get()
        if current is None:
            return f"no MCP client to ask; {who} asks a person about this call"
        ctx, round_ = current
        session = ctx.session
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not session.check_client_capability(wanted):
            return (f"this MCP client cannot ask its user (it declared no elicitation "
                    f"capability), and {who} asks a person about this call")
        paths = "".join(f"\n{path['access']}s {path['path']}" for path in request.paths)
        message = f"janito: {request.summary()}\n{request.reason}{paths}"
        if round_ is not None:
            return await _answer_by_result(round_, request, message, timeout, answered)
        if not session.can_send_request:
            return (f"this request cannot carry a question back to the client (protocol "
                    f"{ctx.protocol_version}), and {who} asks a person about it")
        try:
            with anyio.fail_after(timeout):
                result = await session.elicit_form(message, ASK_SCHEMA,
                                                   related_request_id=ctx.request_id)
        except TimeoutError:
            return f"no answer within {timeout:g} s"
        except Exception as exc:
            return f"the question could not be asked ({type(exc).__name__}: {exc})"
        return _said(result.action, result.content)

    return approve


def _said(action: str, content: Any) -> Any:
    if action == "accept" and isinstance(content, Mapping) and content.get("approve") is True:
        return True
    if action == "accept":
        return "answered no"
    return "declined" if action == "decline" else "cancelled without an answer"


async def _answer_by_result(round_: InputRound, request: ApprovalRequest, message: str,
                            timeout: float, answered: Ledger) -> Any:
    """The person's answer brought back in this retry, or else the question to ask (set on
    ``round_``) with a no for now: the call does not run on this round either way."""
    import mcp_types as types

    now = time.time()
    digest = _call_digest(request)
    kept = _kept(round_.state)
    if kept is not None and APPROVAL_INPUT in round_.answers:
        if kept.get("call") != digest:
            return "the answer brought back was given for another call"
        nonce = str(kept.get("nonce"))
        asked_at = float(kept.get("asked", 0.0))
        try:
            first = await answered.claim_once(f"answer:{nonce}",
                                              max(1.0, asked_at + timeout + 120.0 - now))
        except Exception as exc:
            return f"the answers already taken cannot be read ({type(exc).__name__})"
        if not first:
            return "the answer brought back was used already; one yes runs one call"
        if not now - asked_at <= timeout:
            return f"no answer within {timeout:g} s"
        answer = round_.answers[APPROVAL_INPUT]
        if not isinstance(answer, types.ElicitResult):
            return "the client's answer was not the answer of an elicitation form"
        return _said(answer.action, answer.content)
    round_.question = types.ElicitRequest(params=types.ElicitRequestFormParams(
        message=message, requested_schema=ASK_SCHEMA))  # type: ignore[arg-type]
    round_.question_state = json.dumps(
        {"call": digest, "nonce": secrets.token_hex(16), "asked": now})
    return "asked the person at the client; the call runs when the client brings a yes"


def _kept(state: str | None) -> dict[str, Any] | None:
    if not state:
        return None
    try:
        kept = json.loads(state)
    except ValueError:
        return None
    return kept if isinstance(kept, dict) else None
