"""Executing what a model asks for.

``call_tool(name, arguments)`` turns one tool call into a result dict and never raises
for anything the model or the tool did. Every result has ``success``; a failure has
``error`` (one sentence), ``error_type`` and, for bad arguments, ``details`` naming each
bad field. ``execute_tool_calls`` does the same for all the calls of one assistant turn
in the OpenAI chat, OpenAI responses, Anthropic or Gemini shape, running them at the same
time. ``acall_tool`` and ``aexecute_tool_calls`` are the same for a caller on an event
loop: ``async def run()`` tools are awaited there, the others run in threads.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ._context import active_registry, current_call_id
from ._convert import INVALID
from .base_tool import runs_async
from .cancellation import CallCancelled, CancelToken, _current, current_token
from .errors import WorkspaceError
from .registry import default_registry
from .results import (
    CANCELLED,
    INVALID_ARGUMENTS,
    INVALID_JSON,
    INVALID_RESULT,
    OUTSIDE_WORKSPACE,
    PERMISSION_DENIED,
    PLUGIN_ERROR,
    REFUSED,
    TIMEOUT,
    TOOL_EXCEPTION,
    UNAVAILABLE,
    UNKNOWN_TOOL,
    failure,
)
from .schema import tool_schema

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from .registry import Registry, ToolRecord

DEFAULT_MAX_RESULT_CHARS = 100_000
MAX_DEPTH = 64
#: Calls of one turn that ``execute_tool_calls`` runs at the same time, at most.
MAX_CONCURRENCY = 8

__all__ = [
    "CANCELLED", "INVALID_ARGUMENTS", "INVALID_JSON", "INVALID_RESULT", "MAX_CONCURRENCY",
    "OUTSIDE_WORKSPACE", "PERMISSION_DENIED", "PLUGIN_ERROR", "REFUSED", "TIMEOUT",
    "TOOL_EXCEPTION", "UNAVAILABLE", "UNKNOWN_TOOL", "ToolCall", "acall_tool",
    "aexecute_tool_calls", "call_tool", "execute_tool_calls", "failure", "normalise_result",
    "truncate_result", "utf8_text",
]


class ToolCall:
    """One validated call on its way to the tool, as the ``janito_tool_call`` hook sees it."""

    __slots__ = ("_loop", "arguments", "cancel_token", "id", "name", "raw_arguments", "record",
                 "registry")
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
            result: dict[str, Any] = self.record.cls(self.registry.workspace).run(**self.arguments)
        except (Exception, SystemExit) as exc:
            return _failed(self.name, exc)
        if type(result) is not dict and hasattr(result, "__await__"):
            # An async run() (or a plain one handing back an awaitable) made a coroutine
            # that has not started: asking first whether run() is async would cost every
            # synchronous call the question.
            return self._to_completion(result)
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
                awaitable = self.record.cls(self.registry.workspace).run(**self.arguments)
            result: dict[str, Any] = await awaitable
            return result
        except (Exception, SystemExit) as exc:
            return _failed(self.name, exc)


def _failed(name: str, exc: BaseException) -> dict[str, Any]:
    """The result of a tool that raised ``exc``."""
    if isinstance(exc, WorkspaceError):
        return failure(str(exc), exc.error_type, tool=name)
    if isinstance(exc, CallCancelled):
        return failure(f"{name} stopped: {exc.reason}", CANCELLED, tool=name)
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
) -> dict[str, Any]:
    """Execute one tool call from a model and return its result dict; never raises.

    ``cancel_token``, when given, is what the tool sees as its cancellation signal
    (``janito_core.cancellation``); a call cancelled before it starts does not run.
    ``timeout`` (seconds) cancels the call when it runs out: the tool answers ``timeout``
    if it stops (an async tool is cancelled; a synchronous one is told through its
    token and is waited for). An ``async def run()`` tool is run to completion, on
    its registry's background event loop; from inside a running loop, await ``acall_tool``
    instead, which does not block that loop.
    """
    if registry is None:
        registry = default_registry()
    call = _prepare(name, arguments, registry, call_id)
    if type(call) is not ToolCall:
        return call  # type: ignore[return-value]  # the failure that refused it
    if timeout is not None or cancel_token is not None:
        return _complete(call, cancel_token, timeout, max_result_chars)
    registry_var = active_registry.set(registry)
    call_var = current_call_id.set(call_id) if call_id is not None else None
    try:
        result = _hooked(call) if registry.plugins.call_hooks_present() else call.run()
    finally:
        active_registry.reset(registry_var)
        if call_var is not None:
            current_call_id.reset(call_var)
    limit = registry.max_result_chars if max_result_chars is None else max_result_chars
    return normalise_result(name, result, limit)


def _prepare(name: Any, arguments: str | bytes | Mapping[str, Any] | None, registry: Registry,
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
    if record.status == "skipped":
        return _refused(failure(f"{name} is not available here: {record.reason}", UNAVAILABLE, tool=name))
    if record.status == "denied" or not registry.privileges.allows(record.permissions):
        return _refused(failure(
            f"{name} {registry.privileges.denied_reason(record.permissions)}",
            PERMISSION_DENIED, tool=name,
        ))
    kwargs = _validate(record, parsed)
    if isinstance(kwargs, list):
        return _refused(failure(
            f"invalid arguments for {name}: {_said(kwargs)}; see details and call again",
            INVALID_ARGUMENTS, tool=name, details=kwargs,
        ))
    return ToolCall(record, kwargs, registry, arguments, call_id)


def _complete(call: ToolCall, cancel_token: CancelToken | None, timeout: float | None,
              max_result_chars: int | None) -> dict[str, Any]:
    """Run a prepared call on this thread and answer its normalised result."""
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
    call = _prepare(name, arguments, registry, call_id)
    if isinstance(call, dict):
        return call
    return await _acomplete(call, cancel_token, timeout, max_result_chars)


async def _acomplete(call: ToolCall, cancel_token: CancelToken | None, timeout: float | None,
                     max_result_chars: int | None) -> dict[str, Any]:
    """Run a prepared call from a coroutine and answer its normalised result."""
    import asyncio

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
        if registry.plugins.call_hooks_present():
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


def _json_number(text: str) -> float | int:
    """A JSON number with a fraction or an exponent; one too large for a float (``1e400``,
    valid JSON) is kept as the integer it is, rather than becoming infinity."""
    number = float(text)
    if math.isinf(number):
        _, _, exponent = text.lower().partition("e")
        if exponent and abs(int(exponent)) <= 4300:  # as far as int() reads digits
            from decimal import Decimal

            exact = Decimal(text)
            if exact == exact.to_integral_value():
                return int(exact)
    return number


_DECODER = json.JSONDecoder(parse_float=_json_number)


def _said(details: list[dict[str, str]]) -> str:
    """The first few problems in one sentence, so a reader of ``error`` alone knows them."""
    said = "; ".join(f"{d['field']}: {d['error']}" for d in details[:3])
    return said + (f"; and {len(details) - 3} more" if len(details) > 3 else "")


def _parse_json(text: str | bytes | bytearray) -> tuple[Any, str | None]:
    """(the decoded value, None) or (None, what is wrong with the text)."""
    try:
        if not text.strip():
            return {}, None
        if isinstance(text, str):
            return _DECODER.decode(text), None
        return json.loads(text, parse_float=_json_number), None
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:
        return None, str(exc)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def _unknown_tool(name: str, registry: Registry) -> dict[str, Any]:
    import difflib

    names = registry.names()
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if not close:
        lowered = {n.lower(): n for n in names}
        close = [lowered[k] for k in difflib.get_close_matches(name.lower(), list(lowered), n=3)]
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    try:
        spec = registry.toolset_offering(name)
    except Exception:  # the search is a courtesy: an odd installation must not break it
        spec = None
    if spec is not None:
        return failure(f"{name} belongs to toolset {spec.name!r} ({spec.distribution}), which "
                       "is installed but not loaded here", UNKNOWN_TOOL,
                       suggestions=close, toolset=spec.name, distribution=spec.distribution)
    return failure(f"there is no tool called {name[:100]!r}{hint}", UNKNOWN_TOOL,
                   suggestions=close)


def _validate(record: ToolRecord, arguments: Mapping[str, Any]) -> dict[str, Any] | list[dict[str, str]]:
    """Keyword arguments for ``run()``, or the list of problems, one per bad field."""
    schema = tool_schema(record.cls)
    params = schema.params
    if not arguments:
        if not params and not schema.groups:
            return {}
        missing = [n for n, p in params.items() if p.required]
        if not missing:
            problems = _group_problems(schema.groups, arguments) if schema.groups else []
            return problems or {n: None for n, p in params.items() if p.none_if_omitted}
        return [{"field": n, "error": "missing required field"} for n in missing]
    errors: list[dict[str, str]] = []
    kwargs: dict[str, Any] = {}
    for key, value in arguments.items():
        param = params.get(key) if isinstance(key, str) else None
        if param is None:
            if schema.open and isinstance(key, str):
                kwargs[key] = value
                continue
            errors.append({"field": str(key)[:100], "error": _unknown_field(record, key, params)})
            continue
        if value is None and not param.info.nullable:
            if not param.required:
                continue
            errors.append({"field": key, "error": "must not be null"})
            continue
        converted = param.info.convert(value, key, errors)
        if converted is not INVALID:
            kwargs[key] = converted
    for name, param in params.items():
        if param.required:
            if name not in arguments:
                errors.append({"field": name, "error": "missing required field"})
        elif param.none_if_omitted and name not in arguments:
            kwargs[name] = None
    if schema.groups and not errors:
        errors = _group_problems(schema.groups, arguments)
    return errors or kwargs


def _group_problems(groups: Iterable[Any], arguments: Mapping[str, Any]) -> list[dict[str, str]]:
    """One problem per member of each group the arguments break (null is "not given")."""
    problems: list[dict[str, str]] = []
    for group in groups:
        given = [m for m in group.members if arguments.get(m) is not None]
        if len(given) > 1 and group.kind != "at_least":
            said = f"give only one of {', '.join(group.members)}, not {' and '.join(given)}"
            problems.extend({"field": m, "error": said} for m in given)
        elif not given and group.kind in ("exactly", "at_least"):
            said = f"give one of {', '.join(group.members)}; none was given"
            problems.extend({"field": m, "error": said} for m in group.members)
    return problems


def _unknown_field(record: ToolRecord, key: Any, params: Mapping[str, Any]) -> str:
    """What to tell a model that sent an argument ``run()`` does not take.

    A tool that renamed a parameter says so in ``renamed_parameters`` ({old name: what
    became of it}), so a call written for the old signature is told the new name instead
    of a guess.
    """
    renamed = getattr(record.cls, "renamed_parameters", None)
    note = renamed.get(key) if isinstance(renamed, Mapping) and isinstance(key, str) else None
    if isinstance(note, str) and note:
        return f"unknown field: {note}"
    import difflib

    close = difflib.get_close_matches(str(key), list(params), n=1)
    return f"unknown field (did you mean {close[0]!r}?)" if close else "unknown field"


def normalise_result(name: str, result: Any, max_chars: int) -> dict[str, Any]:
    """Check a tool's result is a JSON object with ``success``, make every key and string
    of it encodable as UTF-8 (see ``utf8_text``) and cap its size."""
    if not isinstance(result, dict):
        return failure(
            f"{name} returned {type(result).__name__}, not a dict; this is a bug in the tool",
            INVALID_RESULT, tool=name,
        )
    success = result.get("success", INVALID)
    if success is INVALID:
        result = {"success": True, **result}
    elif not isinstance(success, bool):
        return failure(f"{name} returned success={success!r}, which is not a boolean",
                       INVALID_RESULT, tool=name)
    wide: list[str] = []
    try:
        size = _size(result, 0, wide)
    except _NotJSON as problem:
        return failure(f"{name} returned a result that is not JSON: {problem.at('result')}; "
                       "this is a bug in the tool", INVALID_RESULT, tool=name)
    if wide and not _encodes("".join(wide)):
        result = _utf8_safe(result)
        size = _inspect(result, "result", 0, [])[1]
    if size > max_chars:
        return truncate_result(result, max_chars)
    checked: dict[str, Any] = result
    return checked


class _NotJSON(Exception):
    """Where a value stops being JSON; ``steps`` is the way down to it, innermost first."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.steps: list[str] = []

    def at(self, path: str) -> str:
        """What is wrong, said from ``path``, the name of the value that was sized."""
        return f"{path}{''.join(reversed(self.steps))} {self.what}"


def _inspect(value: Any, path: str, depth: int, wide: list[str]) -> tuple[str | None, int]:
    """(where the value stops being JSON, or None; its approximate size in characters).

    ``wide`` collects the keys and strings that are not ASCII, so that one encode of them
    all can tell whether a lone surrogate is among them (most results have none at all).
    """
    try:
        return None, _size(value, depth, wide)
    except _NotJSON as problem:
        return problem.at(path), 0


def _size(value: Any, depth: int, wide: list[str]) -> int:
    """The approximate size of JSON value ``value`` in characters; _NotJSON if it is none.

    Every call pays for this on its result, so scalars are sized in the loops rather than
    by a call each, and the path to a problem is written only when there is one.
    """
    kind = type(value)
    if kind is str:
        if not value.isascii():
            wide.append(value)
        return len(value) + 2
    if kind is bool or value is None or kind is int:
        return 5
    if kind is float:
        if math.isfinite(value):
            return 8
        raise _NotJSON(f"is {value!r}, which JSON cannot carry")
    if depth > MAX_DEPTH:
        raise _NotJSON(f"is nested more than {MAX_DEPTH} levels deep")
    items: Iterable[tuple[Any, Any]]
    if kind is dict or isinstance(value, dict):
        size = 2
        for key in value:
            if type(key) is not str:
                raise _NotJSON(f"has a key {key!r} that is not a string")
            if not key.isascii():
                wide.append(key)
            size += len(key) + 4
        items = value.items()
    elif kind is list or kind is tuple:
        size = 2 + len(value)
        items = enumerate(value)
    else:
        return _other_size(value, kind, wide)
    for step, item in items:
        kind = type(item)
        if kind is str:
            if not item.isascii():
                wide.append(item)
            size += len(item) + 2
        elif kind is bool or item is None or kind is int:
            size += 5
        else:
            try:
                size += _size(item, depth + 1, wide)
            except _NotJSON as problem:
                problem.steps.append(f"[{step!r}]")
                raise
    return size


def _other_size(value: Any, kind: type, wide: list[str]) -> int:
    """The size of a subclass of str or int (JSON text of its value); _NotJSON otherwise."""
    if isinstance(value, str):
        if not value.isascii():
            wide.append(str(value))
        return len(value) + 2
    if isinstance(value, int) and not isinstance(value, bool):
        return 5
    raise _NotJSON(f"is a {kind.__name__}")


def _encodes(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: false only for a lone surrogate, which JSON text
    (a ``\\ud800`` escape), a file name that is not UTF-8 or a ``surrogateescape`` decode
    can put in a Python string."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf8_text(text: str) -> str:
    """``text`` with every lone surrogate written as its escape, six characters such as
    ``\\udcff``; other text is returned as it is."""
    if text.isascii() or _encodes(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _utf8_safe(value: Any) -> Any:
    """A copy of the JSON value ``value`` whose keys and strings all encode as UTF-8."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, dict):
        return {utf8_text(k) if isinstance(k, str) else k: _utf8_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_utf8_safe(v) for v in value]
    return value


def _refused(result: dict[str, Any]) -> dict[str, Any]:
    """A failure dispatch built itself, which may quote the model's keys or the tool name."""
    wide: list[str] = []
    _inspect(result, "result", 0, wide)
    if wide and not _encodes("".join(wide)):
        cleaned: dict[str, Any] = _utf8_safe(result)
        return cleaned
    return result


def _strings(value: Any, path: tuple[Any, ...], out: list[tuple[int, tuple[Any, ...]]]) -> None:
    if isinstance(value, str):
        out.append((len(value), path))
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(item, (*path, key), out)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _strings(item, (*path, index), out)


def _lists(value: Any, path: tuple[Any, ...], out: list[tuple[int, tuple[Any, ...]]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _lists(item, (*path, key), out)
    elif isinstance(value, (list, tuple)):
        out.append((len(value), path))
        for index, item in enumerate(value):
            _lists(item, (*path, index), out)


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = new


def _thaw(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def truncate_result(result: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """A copy of ``result`` cut to about ``max_chars``: longest strings first, then lists."""
    out: dict[str, Any] = _thaw(result)
    max_chars = max(max_chars, 200)
    _, size = _inspect(out, "result", 0, [])
    excess = size - max_chars
    strings: list[tuple[int, tuple[Any, ...]]] = []
    _strings(out, (), strings)
    strings.sort(key=lambda item: item[0], reverse=True)
    for length, path in strings:
        if excess <= 0:
            break
        if not path or length <= 200:
            continue
        keep = max(100, length - excess - 60)
        if keep >= length:
            continue
        text = _get(out, path)
        marker = f"\n[... truncated: {keep} of {length} characters shown]"
        _set(out, path, text[:keep] + marker)
        excess -= length - keep - len(marker)
    if excess > 0:
        lists: list[tuple[int, tuple[Any, ...]]] = []
        _lists(out, (), lists)
        lists.sort(key=lambda item: item[0], reverse=True)
        for length, path in lists:
            if excess <= 0 or length <= 1 or not path:
                continue
            items = _get(out, path)
            keep = length
            while keep > 1 and excess > 0:
                _, item_size = _inspect(items[keep - 1], "", 0, [])
                excess -= item_size + 1
                keep -= 1
            _set(out, path, [*items[:keep], f"[... truncated: {keep} of {length} items shown]"])
    out["truncated"] = True
    return out


# -- one assistant turn ---------------------------------------------------------------


def execute_tool_calls(
    tool_calls: Any,
    *,
    registry: Registry | None = None,
    max_result_chars: int | None = None,
    sequential: bool = False,
    max_concurrency: int = MAX_CONCURRENCY,
    cancel_token: CancelToken | None = None,
    timeout: float | None = None,
) -> list[dict[str, Any]]:
    """Run every tool call of one assistant turn and return the result items, in the order
    of the calls.

    The calls run at the same time, at most ``max_concurrency`` of them, each in a worker
    thread (an async tool on its registry's background loop), except where the order can
    matter: calls that write one workspace path (``BaseTool.writes_paths``), or name a
    path another call of the turn writes, run one after the other in the order of the
    calls, and a writing tool that declares no paths runs alone (``janito_core._writes``).
    ``sequential=True`` runs them one after the other on this thread, as before.
    ``cancel_token`` cancels the whole turn: running tools are told, calls not started yet
    answer ``cancelled``. ``timeout`` applies to each call (see ``call_tool``).

    Accepts the calls (or the whole assistant message / output list) in one of these shapes
    and answers in the same one:

    - OpenAI chat: ``{"id", "type": "function", "function": {"name", "arguments"}}`` ->
      ``{"role": "tool", "tool_call_id", "content"}``
    - OpenAI responses: ``{"type": "function_call", "call_id", "name", "arguments"}`` ->
      ``{"type": "function_call_output", "call_id", "output"}``
    - Anthropic: ``{"type": "tool_use", "id", "name", "input"}`` ->
      ``{"type": "tool_result", "tool_use_id", "content", "is_error"}`` (send them together
      as the content of one user message)
    - Gemini: ``{"functionCall": {"name", "args"}}`` ->
      ``{"functionResponse": {"name", "response"}}``

    A call in none of these shapes raises TypeError before any call runs.
    """
    plans = [_plan(item) for item in _calls_of(tool_calls)]
    if sequential or max_concurrency <= 1 or len(plans) < 2:
        return [_reply(plan, call_tool(plan.name, plan.arguments, registry=registry,
                                       max_result_chars=max_result_chars, call_id=plan.id,
                                       cancel_token=cancel_token, timeout=timeout))
                for plan in plans]
    if registry is None:
        registry = default_registry()
    calls = [_prepare(plan.name, plan.arguments, registry, plan.id) for plan in plans]
    results = _run_turn(calls, _order(calls), max_concurrency, cancel_token, timeout,
                        max_result_chars)
    return [_reply(plan, result) for plan, result in zip(plans, results, strict=True)]


def _run_turn(calls: list[ToolCall | dict[str, Any]], after: list[tuple[int, ...]],
              workers: int, cancel_token: CancelToken | None, timeout: float | None,
              limit: int | None) -> list[dict[str, Any]]:
    """The calls in a pool of worker threads, each started once the calls it waits for
    are done; the refused ones are their answers already."""
    import contextvars
    from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

    results: list[dict[str, Any]] = [c if isinstance(c, dict) else {} for c in calls]
    finished = {i for i, c in enumerate(calls) if isinstance(c, dict)}
    waiting = [i for i in range(len(calls)) if i not in finished]
    # One token for the turn, so that an interrupt here reaches every running tool.
    turn = _Signal("the turn", cancel_token, None)
    running: dict[Future[dict[str, Any]], int] = {}
    pool = ThreadPoolExecutor(min(workers, len(waiting)) or 1, thread_name_prefix="janito-turn")
    interrupted = False
    try:
        while waiting or running:
            for index in [i for i in waiting if finished.issuperset(after[i])]:
                waiting.remove(index)
                call = calls[index]
                assert not isinstance(call, dict)
                context = contextvars.copy_context()
                future = pool.submit(context.run, _complete, call, turn.token, timeout, limit)
                running[future] = index
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                results[index] = _outcome(future, calls[index])
                finished.add(index)
    except BaseException:
        # An interrupt (Ctrl-C) tells the running tools and returns at once: a tool that
        # does not listen to its token (one blocked reading the terminal) is left to end
        # on its own rather than holding the interrupt up.
        interrupted = True
        turn.token.cancel("the turn was interrupted")
        raise
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        turn.release()
        _close_when_done(turn, list(running) if interrupted else [])
    return results


def _close_when_done(signal: _Signal, futures: list[Any]) -> None:
    """Close the turn's token now, or once the tools still running have ended (they may be
    watching its descriptor)."""
    left = [len(futures)]
    lock = threading.Lock()

    def one_done(_: Any) -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            signal.close()

    if not futures:
        signal.close()
    for future in futures:
        future.add_done_callback(one_done)


def _outcome(future: Any, call: ToolCall | dict[str, Any]) -> dict[str, Any]:
    try:
        result: dict[str, Any] = future.result()
        return result
    except Exception as exc:  # dispatch answers everything; this is a fault of janito's own
        name = call.name if isinstance(call, ToolCall) else "the tool"
        return _refused(failure(f"{name} could not be run: {type(exc).__name__}: {exc}",
                                TOOL_EXCEPTION, tool=name))


def _order(calls: list[ToolCall | dict[str, Any]]) -> list[tuple[int, ...]]:
    """For each call, the earlier calls it must wait for (``janito_core._writes``)."""
    from ._writes import paths_named, paths_written, waits

    root: str | None = None
    written: list[tuple[tuple[str, ...], ...] | None] = []
    named: list[tuple[tuple[str, ...], ...]] = []
    for call in calls:
        if isinstance(call, dict):
            written.append(())
            named.append(())
            continue
        if root is None:
            root = call.registry.workspace.root
        written.append(paths_written(call.record.cls, call.permissions, call.arguments, root))
        named.append(paths_named(call.arguments, root))
    return waits(written, named)


async def aexecute_tool_calls(
    tool_calls: Any,
    *,
    registry: Registry | None = None,
    max_result_chars: int | None = None,
    sequential: bool = False,
    max_concurrency: int = MAX_CONCURRENCY,
    cancel_token: CancelToken | None = None,
    timeout: float | None = None,
) -> list[dict[str, Any]]:
    """``execute_tool_calls`` for a caller on an event loop.

    Async tools are awaited on this loop, synchronous ones run in worker threads; at most
    ``max_concurrency`` calls at once, calls whose order can matter in the order of the
    calls (as ``execute_tool_calls``), results in the order of the calls. Cancelling the task awaiting this coroutine
    cancels every call of the turn (see ``acall_tool``) and raises ``CancelledError``.
    """
    import asyncio

    plans = [_plan(item) for item in _calls_of(tool_calls)]
    if registry is None:
        registry = default_registry()
    calls = [_prepare(plan.name, plan.arguments, registry, plan.id) for plan in plans]
    results: list[dict[str, Any]] = []
    if sequential or max_concurrency <= 1 or len(calls) < 2:
        for call in calls:
            results.append(call if isinstance(call, dict) else
                           await _acomplete(call, cancel_token, timeout, max_result_chars))
    else:
        after = _order(calls)
        finished = [asyncio.Event() for _ in calls]
        gate = asyncio.Semaphore(max_concurrency)

        async def one(index: int) -> dict[str, Any]:
            call = calls[index]
            try:
                if isinstance(call, dict):
                    return call
                for earlier in after[index]:
                    await finished[earlier].wait()
                async with gate:
                    return await _acomplete(call, cancel_token, timeout, max_result_chars)
            finally:
                finished[index].set()

        results = list(await asyncio.gather(*(one(i) for i in range(len(calls)))))
    return [_reply(plan, result) for plan, result in zip(plans, results, strict=True)]


class _Plan(NamedTuple):
    """One call of a turn: its provider's shape, what it asks for, and the item itself."""

    shape: str
    name: Any
    arguments: Any
    id: Any
    item: Mapping[str, Any]


def _calls_of(turn: Any) -> Iterable[Any]:
    if isinstance(turn, Mapping):
        if "tool_calls" in turn:
            return list(turn.get("tool_calls") or [])
        content = turn.get("content")
        if isinstance(content, list) and turn.get("role") == "assistant":
            return [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        parts = turn.get("parts")
        if isinstance(parts, list):
            return [p for p in parts if isinstance(p, Mapping) and "functionCall" in p]
        return [turn]
    if isinstance(turn, (list, tuple)):
        return [
            item for item in turn
            if not (isinstance(item, Mapping) and item.get("type") in ("message", "reasoning", "text"))
        ]
    raise TypeError(f"tool calls must be a list or a message, not {type(turn).__name__}")


def _content(result: dict[str, Any]) -> str:
    # call_tool's results hold no lone surrogate, so this text always encodes as UTF-8
    return json.dumps(result, ensure_ascii=False)


def _echo(value: Any) -> Any:
    """An id or name from the call, repeated in its result item (as UTF-8-safe text)."""
    return utf8_text(value) if isinstance(value, str) else value


def _plan(item: Any) -> _Plan:
    if not isinstance(item, Mapping):
        raise TypeError(f"a tool call must be a mapping, not {type(item).__name__}")
    if "function" in item and isinstance(item.get("function"), Mapping):
        function = item["function"]
        return _Plan("chat", function.get("name"), function.get("arguments"), item.get("id"), item)
    kind = item.get("type")
    if kind == "function_call":
        return _Plan("responses", item.get("name"), item.get("arguments"), item.get("call_id"),
                     item)
    if kind == "tool_use":
        return _Plan("anthropic", item.get("name"), item.get("input"), item.get("id"), item)
    if isinstance(item.get("functionCall"), Mapping):
        call = item["functionCall"]
        return _Plan("gemini", call.get("name"), call.get("args"), call.get("id"), item)
    raise TypeError(
        "unrecognised tool call shape: expected OpenAI chat, OpenAI responses, Anthropic or "
        f"Gemini, got keys {sorted(map(str, item))[:8]}"
    )


def _reply(plan: _Plan, result: dict[str, Any]) -> dict[str, Any]:
    """The result item of one call, in the shape of the call."""
    if plan.shape == "chat":
        return {"role": "tool", "tool_call_id": _echo(plan.id), "content": _content(result)}
    if plan.shape == "responses":
        return {"type": "function_call_output", "call_id": _echo(plan.id),
                "output": _content(result)}
    if plan.shape == "anthropic":
        return {"type": "tool_result", "tool_use_id": _echo(plan.id),
                "content": _content(result), "is_error": not result.get("success", False)}
    response: dict[str, Any] = {"name": _echo(plan.name), "response": result}
    if plan.id is not None:
        response["id"] = _echo(plan.id)
    return {"functionResponse": response}
