"""One tool call from a model: prepared (arguments, privileges, the policy), run, answered.

``call_tool`` and ``acall_tool`` never raise for anything the model or the tool did: a
refusal is a result, and so is whatever the tool raised.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import _gate
from ._arguments import _json_kind, _parse_json, _said, _unknown_tool, _validate
from ._context import active_registry, current_call_id, current_caller
from ._shape import _refused, as_result, normalise_result
from .base_tool import runs_async
from .cancellation import CallCancelled, CancelToken, _current, current_token
from .errors import JournalError, WorkspaceError
from .registry import default_registry
from .results import (
    CANCELLED,
    INVALID_ARGUMENTS,
    INVALID_JSON,
    NOT_JOURNALED,
    PERMISSION_DENIED,
    PLUGIN_ERROR,
    REFUSED,
    TIMEOUT,
    TOOL_EXCEPTION,
    UNAVAILABLE,
    UNKNOWN_TOOL,
    failure,
)

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from ._plans import Plan
    from ._telemetry import Span
    from .journal import Journal, Recording
    from .policy import ApprovalRequest, Decision
    from .registry import Registry, ToolRecord
    from .workspace import Workspace


class ToolCall:
    """One validated call on its way to the tool, as the ``janito_tool_call`` hook sees it."""

    __slots__ = ("_loop", "approvals", "approved", "arguments", "cancel_token", "decision", "id",
                 "name", "raw_arguments", "record", "recording", "registry", "workspace")
    _loop: asyncio.AbstractEventLoop | None

    def __init__(self, record: ToolRecord, arguments: dict[str, Any], registry: Registry,
                 raw_arguments: Any = None, call_id: str | None = None,
                 cancel_token: CancelToken | None = None) -> None:
        self.name = record.name
        self.record = record
        self.arguments = arguments
        self.registry = registry
        self.raw_arguments = raw_arguments
        self.id = call_id
        #: What the tool sees as its cancellation signal (None: nobody can cancel the call).
        self.cancel_token = cancel_token
        #: The registry's policy's decision (None: no policy), the decisions the caller
        #: brought for asked calls, and whether a person approved this one.
        self.decision: Decision | None = None
        self.approvals: Mapping[str, Any] | None = None
        self.approved = False
        #: The workspace the tool gets: the registry's, guarded by the policy when there
        #: is one (set when the call is admitted; None until then).
        self.workspace: Workspace | None = None
        #: The journal's record of the call, when its registry keeps a journal.
        self.recording: Recording | None = None
        # ``_loop``, set by acall_tool only (left unset here: every call would pay for it),
        # is the loop an async tool runs on even when a hook calls run() from the worker
        # thread the hooks run in.

    @property
    def permissions(self) -> str:
        return self.record.permissions

    @property
    def is_async(self) -> bool:
        """Whether the tool's ``run()`` is ``async def``."""
        return runs_async(self.record.cls)

    def _workspace(self) -> Workspace:
        workspace = self.workspace
        return self.registry.workspace if workspace is None else workspace

    @property
    def asks(self) -> bool:
        """Whether the policy asks about this call: it runs only once settled (``admit``)."""
        decision = self.decision
        return decision is not None and decision.action == "ask"

    def admit(self) -> dict[str, Any] | None:
        """Settle the policy's decision now that the call is about to run: None to run it
        (the tool then gets the guarded workspace), else the answer instead."""
        decision = self.decision
        if decision is None or self.workspace is not None:
            return None
        self.approved, answer, shown = _gate.admit(self.registry, self.record, self.arguments,
                                                   self.id, decision, self.approvals)
        if answer is None:
            self._guard(shown)
        return answer

    async def aadmit(self) -> dict[str, Any] | None:
        decision = self.decision
        if decision is None or self.workspace is not None:
            return None
        self.approved, answer, shown = await _gate.aadmit(
            self.registry, self.record, self.arguments, self.id, decision, self.approvals)
        if answer is None:
            self._guard(shown)
        return answer

    def _guard(self, shown: ApprovalRequest | None) -> None:
        policy = self.registry.policy
        assert policy is not None
        tool = _gate.facts(self.record)
        within = _gate.approved_paths(self.record, shown) if self.approved else None
        guards = policy.plan(tool).guards
        if within:
            guard = policy.guard(tool, self.arguments, approved=True, within=within)
        elif guards is not None:
            guard = guards[1 if self.approved else 0]
        else:
            guard = policy.guard(tool, self.arguments, approved=self.approved)
        self.workspace = self.registry.guarded_workspace(guard).journaled(self.recording)

    def journal_into(self, recording: Recording) -> None:
        """Record every change the call makes through its workspace in ``recording``."""
        self.recording = recording
        if self.workspace is not None:
            self.workspace = self.workspace.journaled(recording)
        elif self.decision is None:
            self.workspace = self.registry.workspace.journaled(recording)
        # else the policy's ask is still to be settled: ``_guard`` journals the view

    def refuse(self, reason: str) -> dict[str, Any]:
        """The result that denies this call, for a hook that decides it must not run."""
        return failure(reason, REFUSED, tool=self.name)

    def run(self) -> dict[str, Any]:
        """Run the tool; an exception it raises becomes a ``tool_exception`` result.

        An ``async def run()`` tool is run to completion here as well, so a hook sees its
        finished result exactly as it sees a synchronous tool's: on the event loop of the
        ``acall_tool`` that made the call, or else on the registry's background loop.
        """
        try:
            result: dict[str, Any] = self.record.cls(self._workspace()).run(**self.arguments)
        except (Exception, SystemExit) as exc:
            return _failed(self.name, exc)
        if type(result) is not dict:
            if hasattr(result, "__await__"):
                # An async run() (or a plain one handing back an awaitable) made a coroutine
                # that has not started: asking first whether run() is async would cost every
                # synchronous call the question.
                return self._to_completion(result)
            result = as_result(self.name, result)  # a pydantic model: hooks see its JSON
        return result

    def _to_completion(self, awaitable: Awaitable[Any]) -> dict[str, Any]:
        import concurrent.futures

        try:
            loop: asyncio.AbstractEventLoop | None = getattr(self, "_loop", None)
            return self.registry.async_runner().run_coroutine(_guarded(self, awaitable), loop)
        except concurrent.futures.CancelledError:  # the loop went away under the call
            return failure(f"{self.name} stopped: its event loop was shut down", CANCELLED,
                           tool=self.name)

    async def _arun(self, awaitable: Awaitable[Any] | None = None) -> dict[str, Any]:
        """Await the tool; a cancellation of the awaiting task is the tool's to see and
        goes on up (``CancelledError`` is not an ``Exception``)."""
        try:
            if awaitable is None:
                awaitable = self.record.cls(self._workspace()).run(**self.arguments)
            result: dict[str, Any] = as_result(self.name, await awaitable)
            return result
        except (Exception, SystemExit) as exc:
            return _failed(self.name, exc)


def _failed(name: str, exc: BaseException) -> dict[str, Any]:
    """The result of a tool that raised ``exc``."""
    if isinstance(exc, WorkspaceError):
        return failure(str(exc), exc.error_type, tool=name)
    if isinstance(exc, CallCancelled):
        return failure(f"{name} stopped: {exc.reason}", CANCELLED, tool=name)
    if isinstance(exc, JournalError):
        return failure(str(exc), NOT_JOURNALED, tool=name)
    import logging

    logging.getLogger("janito.dispatch").debug("tool %s raised", name, exc_info=exc)
    text = str(exc) or type(exc).__name__
    return failure(f"{name} raised {type(exc).__name__}: {text}", TOOL_EXCEPTION, tool=name)


async def _guarded(call: ToolCall, awaitable: Awaitable[Any] | None = None,
                   done: Callable[[], None] | None = None) -> dict[str, Any]:
    """Await an async tool in a task of its own, which the call's token cancels: the tool
    sees the caller's token, its timeout, as ``CancelledError``.

    ``done`` is called once the tool has finished, which may be after this coroutine when
    the task awaiting it was cancelled (the tool's clean-up runs on).
    """
    import asyncio

    token = current_token()
    if token is None:
        try:
            return await call._arun(awaitable)
        finally:
            if done is not None:
                done()
    loop = asyncio.get_running_loop()
    task = loop.create_task(call._arun(awaitable))
    if done is not None:
        task.add_done_callback(lambda _: done())
    forget = token.on_cancel(lambda: loop.call_soon_threadsafe(task.cancel))
    try:
        await asyncio.wait((task,))
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        forget()
    if task.cancelled():
        return failure(f"{call.name} stopped: {token.reason or 'the call was cancelled'}",
                       CANCELLED, tool=call.name)
    return task.result()


class _Signal:
    """A call's own cancellation token: cancelled when the caller's token is, when the
    call's ``timeout`` runs out, and (async entry points) when the task awaiting the call
    is cancelled. A tool that stops because the time ran out answers ``timeout``."""

    __slots__ = ("_forget", "message", "name", "seconds", "token")

    def __init__(self, name: str, parent: CancelToken | None, seconds: float | None) -> None:
        if seconds is not None and not seconds > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {seconds!r}")
        self.name = name
        self.seconds = seconds
        self.message = f"{name} did not finish within {seconds:g} s" if seconds else ""
        self.token = token = CancelToken()
        self._forget: Callable[[], None] | None = None
        if parent is not None:
            self._forget = parent.on_cancel(
                lambda: token.cancel(parent.reason or "the call was cancelled"))

    def expire(self) -> None:
        self.token.cancel(self.message)

    def release(self) -> None:
        """Stop listening to the caller's token (the call is over)."""
        forget, self._forget = self._forget, None
        if forget is not None:
            forget()

    def close(self) -> None:
        """Release the token's descriptor: once the tool can no longer use it."""
        self.token.close()

    @property
    def expired(self) -> bool:
        return bool(self.message) and self.token.reason == self.message

    def answer(self, result: Any) -> Any:
        """``result``, or the ``timeout`` failure it becomes when the time ran out and the
        tool stopped; a tool that finished anyway keeps its answer."""
        if not self.expired or not isinstance(result, dict):
            return result
        if result.get("success") is False and result.get("error_type") == CANCELLED:
            return {**result, "error": f"{self.message} and was stopped", "error_type": TIMEOUT}
        return result


_PROVIDER_VARIABLES = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
_PROVIDER_NAMED = any(name in os.environ for name in _PROVIDER_VARIABLES)
_MODULES = sys.modules


def _tracing_of(registry: Registry) -> Any:
    """Decide whether a registry's calls are traced (``janito_core._telemetry``): False
    without ``opentelemetry-api``, else its tracing.

    Until something imports OpenTelemetry no provider can have been set, and no span
    would record anything: this call is not traced and the question stays open, so a
    one-off ``janito run`` does not pay for importing the API (about 15 ms)."""
    if "opentelemetry" not in sys.modules and not _PROVIDER_NAMED:
        return False
    from . import _telemetry

    tracing = registry.tracing = _telemetry.load() or False
    return tracing


def _not_run(name: str, token: CancelToken) -> dict[str, Any]:
    return failure(f"{name} was not run: {token.reason}", CANCELLED, tool=name)


def call_tool(
    name: Any,
    arguments: str | bytes | Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
    max_result_chars: int | None = None,
    call_id: str | None = None,
    cancel_token: CancelToken | None = None,
    timeout: float | None = None,
    approvals: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Execute one tool call from a model and return its result dict; never raises.

    ``cancel_token``, when given, is what the tool sees as its cancellation signal
    (``janito_core.cancellation``); a call cancelled before it starts does not run.
    ``timeout`` (seconds) cancels the call when it runs out: the tool answers ``timeout``
    if it stops (an async tool is cancelled; a synchronous one is told through its
    token and is waited for). An ``async def run()`` tool is run to completion, on
    its registry's background event loop; from inside a running loop, await ``acall_tool``
    instead, which does not block that loop.

    With a policy on the registry, a call the policy asks about runs only once approved
    (see ``Registry``); ``approvals`` brings a person's decisions, ``{id: True|False}``,
    for calls answered ``approval_required`` before.

    With ``opentelemetry-api`` installed each call is a span (docs/tracing.md).
    """
    if registry is None:
        registry = default_registry()
    tracing = registry.tracing
    if tracing is None and ("opentelemetry" in _MODULES or _PROVIDER_NAMED):
        tracing = _tracing_of(registry)
    if tracing:
        unset = tracing.unset
        # Tracing.start's own first question, asked here: with OpenTelemetry imported (by
        # another library) and no provider set, every call would otherwise pay for a call
        # of it only to learn it is not traced.
        if (unset is None or unset[0]._TRACER_PROVIDER is not None
                or unset[1]._METER_PROVIDER is not None):
            span = tracing.start(name)
            if span is not None:
                return _traced(span, name, arguments, registry, max_result_chars, call_id,
                               cancel_token, timeout, approvals)
    if timeout is None and cancel_token is None and type(name) is str:
        # The short way (docs/decisions/0021): a call of a loaded, synchronous tool already
        # admitted under the registry's privileges of now, on a registry with no policy,
        # journal or janito_tool_call hook, with valid arguments: what most calls of an
        # agent's loop are. It runs as _plain would run it, without a ToolCall. Anything
        # else, a refusal included, goes the full way, which answers it: no failure but the
        # tool's own (it raised) is answered here. It is written out here, not called,
        # because a call is a tenth of what the short way costs.
        record = registry._by_name.get(name)
        # _granted is set only by a call that passed the full checks, to the privileges
        # they were checked against; Privileges are immutable, so "still these" means
        # "still allowed".
        if (record is not None and record._granted is registry._privileges
                and registry.policy is None and registry.journal is None):
            cls: Any = record._cls
            try:
                plan = cls._janito_plan
            except AttributeError:  # None: a pending tool, which record() imports
                plan = None
            if plan is None or plan.owner is not cls or plan.run is not cls.run:
                plan = _plan_of(cls)
            plugins = registry.plugins
            if (plan is not None and record.status == "loaded"
                    and (plugins._plain_calls or not plugins.call_hooks_present())):
                if arguments is None or arguments == "{}":
                    read: tuple[Any, Any] | None = (None, None) if plan.bare else None
                else:
                    read = _read_arguments(plan, record, arguments)
                if read is not None:
                    values, kwargs = read
                    workspace = registry._workspace
                    if workspace is None:
                        workspace = registry.workspace
                    registry_var = active_registry.set(registry)
                    call_var = current_call_id.set(call_id) if call_id is not None else None
                    try:
                        try:
                            tool = cls(workspace)
                            # each shape called as it is: `**{}` and `*()` cost a tenth of a call
                            if values is not None:
                                result = tool.run(*values) if plan.positional else tool.run(**values)
                            elif kwargs:
                                result = tool.run(**kwargs)
                            else:
                                result = tool.run()
                        except (Exception, SystemExit) as exc:
                            result = _failed(name, exc)
                        else:
                            if type(result) is not dict and hasattr(result, "__await__"):
                                # a plain run() that hands back an awaitable: as ToolCall.run does
                                if values is not None:
                                    kwargs = (dict(zip(plan.names, values, strict=True))
                                              if plan.positional else values)
                                result = ToolCall(record, kwargs or {}, registry, arguments, call_id
                                                  )._to_completion(result)
                    finally:
                        active_registry.reset(registry_var)
                        if call_var is not None:
                            current_call_id.reset(call_var)
                    limit = registry.max_result_chars if max_result_chars is None else max_result_chars
                    if (type(result) is dict and len(result) == 1 and type(result.get("success")) is bool
                            and limit >= _BARE_ANSWER_SIZE):
                        return result  # {"success": true} alone, the answer of many an action
                    return normalise_result(name, result, limit)
    return _full_way(name, arguments, registry, max_result_chars, call_id, cancel_token, timeout,
                     approvals)


#: The size ``normalise_result`` gives ``{"success": true}``.
_BARE_ANSWER_SIZE = 18


def _full_way(name: Any, arguments: str | bytes | Mapping[str, Any] | None, registry: Registry,
              max_result_chars: int | None, call_id: str | None,
              cancel_token: CancelToken | None, timeout: float | None,
              approvals: Mapping[str, Any] | None) -> dict[str, Any]:
    """``call_tool`` for a call the short way does not answer: prepared as a ``ToolCall``,
    checked, asked about, journaled and run."""
    call = _prepare(name, arguments, registry, call_id)
    if type(call) is not ToolCall:
        return call  # type: ignore[return-value]  # the failure that refused it
    call.approvals = approvals
    if timeout is not None or cancel_token is not None or call.asks:
        return _complete(call, cancel_token, timeout, max_result_chars)
    journal = registry.journal
    if journal is not None:
        return _recorded(journal, call, lambda: _plain(call, max_result_chars))
    return _plain(call, max_result_chars)


def _plan_of(cls: type | None) -> Plan | None:
    """``cls``'s call plan for the short way, made now if need be; None for a pending tool."""
    if cls is None:
        return None
    from ._plans import plan_of  # not imported by a process that never calls this way

    return plan_of(cls)


def _read_arguments(plan: Plan, record: ToolRecord, arguments: str | bytes | Mapping[str, Any]
                    ) -> tuple[Any, Any] | None:
    """(values, kwargs) for the short way: the compiled decoder's arguments, for
    ``run(*values)`` or ``run(**values)``, or janito's own reading of them; None for
    arguments the full way must answer (malformed, invalid, bytes, no object)."""
    if type(arguments) is str:
        decode = plan.decode
        if decode is not None:
            try:
                return plan.unpack(decode(arguments)), None
            except Exception:  # refused (or no codec can write the text): janito reads it
                pass
        elif plan.calls is not None:
            plan.counted()
        parsed, problem = _parse_json(arguments)
        if problem is not None or type(parsed) is not dict:
            return None
        arguments = parsed
    elif type(arguments) is not dict:
        return None
    kwargs = _validate(record, arguments)
    return (None, kwargs) if type(kwargs) is dict else None


def _plain(call: ToolCall, max_result_chars: int | None) -> dict[str, Any]:
    """Run a call with no timeout, token or ask on this thread; its normalised result."""
    registry = call.registry
    registry_var = active_registry.set(registry)
    call_var = current_call_id.set(call.id) if call.id is not None else None
    try:
        result = _hooked(call) if registry.plugins.call_hooks_present() else call.run()
    finally:
        active_registry.reset(registry_var)
        if call_var is not None:
            current_call_id.reset(call_var)
    limit = registry.max_result_chars if max_result_chars is None else max_result_chars
    return normalise_result(call.name, result, limit)


def _traced(span: Span, name: Any, arguments: str | bytes | Mapping[str, Any] | None,
            registry: Registry, max_result_chars: int | None, call_id: str | None,
            cancel_token: CancelToken | None, timeout: float | None,
            approvals: Mapping[str, Any] | None) -> dict[str, Any]:
    """``call_tool`` inside the call's span."""
    try:
        call = _prepare(name, arguments, registry, call_id)
        if type(call) is ToolCall:
            span.prepared(call.record, call.decision, call_id)
            call.approvals = approvals
            result = _complete(call, cancel_token, timeout, max_result_chars)
        else:
            result = call  # type: ignore[assignment]  # the failure that refused it
    except BaseException as exc:
        span.failed(exc)
        raise
    span.finish(result, call_id)
    return result


def _recorded(journal: Journal, call: ToolCall, run: Callable[[], dict[str, Any]]
              ) -> dict[str, Any]:
    """``run()`` the call with its workspace journaled, then end its entry and log it."""
    begun = _begin_recording(journal, call)
    if isinstance(begun, dict):
        return begun
    recording, started = begun
    try:
        result = run()
    except BaseException as exc:
        _unfinished(recording, exc)
        raise
    return journal.ended(recording, call, result, *started.since())


async def _arecorded(journal: Journal, call: ToolCall,
                     run: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """``_recorded`` for a call awaited on an event loop."""
    begun = _begin_recording(journal, call)
    if isinstance(begun, dict):
        return begun
    recording, started = begun
    try:
        result = await run()
    except BaseException as exc:
        _unfinished(recording, exc)
        raise
    return journal.ended(recording, call, result, *started.since())


def _unfinished(recording: Recording, exc: BaseException) -> None:
    """End the entry of a call that raised ``exc``; a journal that cannot be written
    then leaves it without its end (undo allows for that), and ``exc`` is what is told."""
    try:
        recording.finish({"success": False, "error_type": type(exc).__name__})
    except OSError:
        pass


class _Started:
    """When a call began: the wall clock for the log, a monotonic one for its duration."""

    __slots__ = ("clock", "wall")

    def __init__(self) -> None:
        import time

        self.wall, self.clock = time.time(), time.perf_counter()

    def since(self) -> tuple[float, float]:
        """(wall-clock start, seconds since)."""
        import time

        return self.wall, time.perf_counter() - self.clock


def _begin_recording(journal: Journal, call: ToolCall
                     ) -> tuple[Recording, _Started] | dict[str, Any]:
    """The call's journal entry, its workspace journaled into it, and when it began; or
    the failure that refuses the call when the journal may not record it."""
    started = _Started()
    try:
        recording = journal.begin(call.registry.workspace, call.name, call.arguments,
                                  caller=current_caller.get(), call_id=call.id)
    except JournalError as exc:
        return failure(str(exc), NOT_JOURNALED, tool=call.name)
    call.journal_into(recording)
    return recording, started


def _prepare(name: Any, arguments: str | bytes | Mapping[str, Any] | None, registry: Registry,
             call_id: str | None) -> ToolCall | dict[str, Any]:
    """The validated call, or the failure that refuses it before anything runs (in the
    audit log, when the registry keeps a journal)."""
    call = _prepared(name, arguments, registry, call_id)
    journal = registry.journal
    if journal is not None and type(call) is not ToolCall:
        import time

        journal.refused(name, arguments, call_id, current_caller.get(), call,  # type: ignore[arg-type]
                        time.time(), 0.0, registry.workspace)
    return call


def _prepared(name: Any, arguments: str | bytes | Mapping[str, Any] | None, registry: Registry,
             call_id: str | None) -> ToolCall | dict[str, Any]:
    """The validated call, or the failure that refuses it before anything runs."""
    if arguments is None or arguments == "{}":
        parsed: Any = {}
    elif isinstance(arguments, (str, bytes, bytearray)):
        parsed, problem = _parse_json(arguments)
        if problem is not None:
            return _refused(failure(
                f"the arguments are not valid JSON ({problem}); send one JSON object",
                INVALID_JSON, tool=name if isinstance(name, str) else None,
            ))
    else:
        parsed = arguments
    if type(parsed) is not dict and not isinstance(parsed, Mapping):
        return _refused(failure(
            f"the arguments must be a JSON object, got {_json_kind(parsed)}",
            INVALID_ARGUMENTS, tool=name if isinstance(name, str) else None,
            details=[{"field": "(arguments)", "error": f"expected an object, got {_json_kind(parsed)}"}],
        ))
    if not isinstance(name, str):
        return _refused(failure(f"the tool name must be a string, got {_json_kind(name)}", UNKNOWN_TOOL))
    try:
        record = registry.record(name)
    except Exception as exc:  # a registry that cannot initialise still answers
        return _refused(failure(f"the tool registry failed: {exc}", PLUGIN_ERROR, tool=name))
    if record is None:
        return _refused(_unknown_tool(name, registry))
    if record.status in ("skipped", "error"):
        return _refused(failure(f"{name} is not available here: {record.reason}", UNAVAILABLE, tool=name))
    privileges = registry.privileges
    if record.status == "denied" or not privileges.allows(record.permissions):
        return _refused(failure(
            f"{name} {privileges.denied_reason(record.permissions)}",
            PERMISSION_DENIED, tool=name,
        ))
    if record.status == "loaded":
        record._granted = privileges
    kwargs = _validate(record, parsed)
    if isinstance(kwargs, list):
        return _refused(failure(
            f"invalid arguments for {name}: {_said(kwargs)}; see details and call again",
            INVALID_ARGUMENTS, tool=name, details=kwargs,
        ))
    call = ToolCall(record, kwargs, registry, arguments, call_id)
    policy = registry.policy
    if policy is not None:
        allowed = record.policy_allowed
        if allowed is not None and allowed[0] is policy and allowed[1] is registry.workspace:
            call.decision, call.workspace = allowed[2], allowed[3]
            return call
        decision = _gate.decide(policy, record, kwargs, registry)
        if decision.action == "deny":
            return _refused(_gate.refusal(name, decision))
        call.decision = decision
        if decision.action == "allow":
            call._guard(None)  # nothing left to settle: the call runs as a plain one does
            plan = policy.plan(_gate.facts(record))
            if plan.fixed is decision and plan.guards is not None:
                record.policy_allowed = (policy, registry.workspace, decision, call.workspace)
    return call


def _complete(call: ToolCall, cancel_token: CancelToken | None, timeout: float | None,
              max_result_chars: int | None) -> dict[str, Any]:
    """Run a prepared call on this thread and answer its normalised result (journaled,
    when its registry keeps a journal)."""
    journal = call.registry.journal
    if journal is not None and call.recording is None:
        return _recorded(journal, call, lambda: _complete(call, cancel_token, timeout,
                                                          max_result_chars))
    if cancel_token is not None and cancel_token.cancelled:
        return _refused(_not_run(call.name, cancel_token))
    registry = call.registry
    signal = None
    timer = None
    token = cancel_token
    if timeout is not None:
        signal = _Signal(call.name, cancel_token, timeout)
        token = signal.token
        timer = threading.Timer(timeout, signal.expire)
        timer.daemon = True
    call.cancel_token = token
    registry_var = active_registry.set(registry)
    call_var = current_call_id.set(call.id) if call.id is not None else None
    cancel_var = _current.set(token) if token is not None else None
    try:
        if timer is not None:
            timer.start()
        refused = call.admit() if call.asks else None
        if refused is not None:
            result = _refused(refused)
        else:
            result = _hooked(call) if registry.plugins.call_hooks_present() else call.run()
    finally:
        active_registry.reset(registry_var)
        if call_var is not None:
            current_call_id.reset(call_var)
        if cancel_var is not None:
            _current.reset(cancel_var)
        if signal is not None:
            timer.cancel()  # type: ignore[union-attr]
            signal.release()
            signal.close()
    if signal is not None:
        result = signal.answer(result)
    limit = registry.max_result_chars if max_result_chars is None else max_result_chars
    return normalise_result(call.name, result, limit)


def _hooked(call: ToolCall) -> Any:
    """The call through the ``janito_tool_call`` hook (the plugins, then janito's runner)."""
    try:
        return call.registry.plugins.manager.hook.janito_tool_call(call=call)
    except Exception as exc:
        error = call.registry.plugins.blame(exc, "janito_tool_call")
        return _refused(failure(error.reason, PLUGIN_ERROR, tool=call.name))


async def acall_tool(
    name: Any,
    arguments: str | bytes | Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
    max_result_chars: int | None = None,
    call_id: str | None = None,
    cancel_token: CancelToken | None = None,
    timeout: float | None = None,
    approvals: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``call_tool`` for a caller on an event loop; never raises for what the model or the
    tool did.

    An ``async def run()`` tool is awaited on this loop; any other runs in a worker
    thread, so the loop is never blocked. The tool gets a token of its own, cancelled by
    ``cancel_token``, by ``timeout`` and by the cancellation of the task awaiting this
    coroutine: an async tool sees ``CancelledError``, a synchronous one its token. When
    the awaiting task is cancelled, ``CancelledError`` is raised here as usual (a
    synchronous tool still running is left to stop on its token); when the token or the
    timeout stops the tool, the answer is ``cancelled`` or ``timeout``.

    With ``janito_tool_call`` hook plugins installed, the hooks (synchronous functions)
    run in a worker thread and an async tool still runs on this loop: a hook sees the
    finished result of every tool, async or not.
    """
    if registry is None:
        registry = default_registry()
    tracing = registry.tracing
    if tracing is None:
        tracing = _tracing_of(registry)
    span = tracing.start(name) if tracing else None
    if span is not None:
        try:
            call = _prepare(name, arguments, registry, call_id)
            if isinstance(call, dict):
                result = call
            else:
                span.prepared(call.record, call.decision, call_id)
                call.approvals = approvals
                result = await _acomplete(call, cancel_token, timeout, max_result_chars)
        except BaseException as exc:
            span.failed(exc)
            raise
        span.finish(result, call_id)
        return result
    call = _prepare(name, arguments, registry, call_id)
    if isinstance(call, dict):
        return call
    call.approvals = approvals
    return await _acomplete(call, cancel_token, timeout, max_result_chars)


async def _acomplete(call: ToolCall, cancel_token: CancelToken | None, timeout: float | None,
                     max_result_chars: int | None) -> dict[str, Any]:
    """Run a prepared call from a coroutine and answer its normalised result (journaled,
    when its registry keeps a journal)."""
    import asyncio

    journal = call.registry.journal
    if journal is not None and call.recording is None:
        return await _arecorded(journal, call, lambda: _acomplete(
            call, cancel_token, timeout, max_result_chars))

    if cancel_token is not None and cancel_token.cancelled:
        return _refused(_not_run(call.name, cancel_token))
    registry = call.registry
    loop = asyncio.get_running_loop()
    signal = _Signal(call.name, cancel_token, timeout)
    timer = loop.call_later(timeout, signal.expire) if timeout is not None else None
    call.cancel_token = signal.token
    call._loop = loop
    registry_var = active_registry.set(registry)
    call_var = current_call_id.set(call.id) if call.id is not None else None
    cancel_var = _current.set(signal.token)
    try:
        refused = await call.aadmit() if call.asks else None
        if refused is not None:
            result = _refused(refused)
        elif registry.plugins.call_hooks_present():
            result = await _in_thread(_hooked, call, signal)
        elif runs_async(call.record.cls):
            result = await _guarded(call, None, signal.close)
        else:
            result = await _in_thread(ToolCall.run, call, signal)
    except asyncio.CancelledError:
        signal.token.cancel("the caller stopped waiting for the call")
        raise
    finally:
        active_registry.reset(registry_var)
        if call_var is not None:
            current_call_id.reset(call_var)
        _current.reset(cancel_var)
        if timer is not None:
            timer.cancel()
        signal.release()
    result = signal.answer(result)
    limit = registry.max_result_chars if max_result_chars is None else max_result_chars
    return normalise_result(call.name, result, limit)


async def _in_thread(function: Callable[[ToolCall], Any], call: ToolCall, signal: _Signal) -> Any:
    """``function(call)`` in a worker thread, in this task's context; the token is closed
    when the thread is done, which may be after the awaiting task was cancelled."""
    import asyncio
    import contextvars

    context = contextvars.copy_context()
    future = call.registry.async_runner().thread_pool().submit(context.run, function, call)
    future.add_done_callback(lambda _: signal.close())
    return await asyncio.wrap_future(future)
