"""All the tool calls of one assistant turn, in each provider's shape, run side by side.

Calls whose order can matter (``janito_core._writes``) run in the order of the calls;
the others at the same time. Each answers in the shape it came in.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ._call import ToolCall, _acomplete, _complete, _prepare, _Signal, _tracing_of, call_tool
from ._shape import _refused, utf8_text
from .cancellation import CancelToken
from .registry import default_registry
from .results import TOOL_EXCEPTION, failure

if TYPE_CHECKING:
    from .registry import Registry

#: Calls of one turn that ``execute_tool_calls`` runs at the same time, at most.
MAX_CONCURRENCY = 8


def execute_tool_calls(
    tool_calls: Any,
    *,
    registry: Registry | None = None,
    max_result_chars: int | None = None,
    sequential: bool = False,
    max_concurrency: int = MAX_CONCURRENCY,
    cancel_token: CancelToken | None = None,
    timeout: float | None = None,
    approvals: Mapping[str, Any] | None = None,
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

    With a policy on the registry, an asked call waits for its approval alone while the
    others run (those that must follow it wait for it); ``approvals`` brings a person's
    decisions on calls answered ``approval_required`` before (see ``call_tool``).
    """
    plans = [_plan(item) for item in _calls_of(tool_calls)]
    if sequential or max_concurrency <= 1 or len(plans) < 2:
        return [_reply(plan, call_tool(plan.name, plan.arguments, registry=registry,
                                       max_result_chars=max_result_chars, call_id=plan.id,
                                       cancel_token=cancel_token, timeout=timeout,
                                       approvals=approvals))
                for plan in plans]
    if registry is None:
        registry = default_registry()
    tracing = _tracing(registry)
    calls = [_prepare(plan.name, plan.arguments, registry, plan.id) for plan in plans]
    for plan, call in zip(plans, calls, strict=True):
        if isinstance(call, ToolCall):
            call.approvals = approvals
        elif tracing:
            _refusal_span(tracing, plan, call)
    results = _run_turn(calls, _order(calls), max_concurrency, cancel_token, timeout,
                        max_result_chars, tracing)
    return [_reply(plan, result) for plan, result in zip(plans, results, strict=True)]


def _run_turn(calls: list[ToolCall | dict[str, Any]], after: list[tuple[int, ...]],
              workers: int, cancel_token: CancelToken | None, timeout: float | None,
              limit: int | None, tracing: Any = False) -> list[dict[str, Any]]:
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
                future = pool.submit(context.run, _spanned, tracing, call, turn.token, timeout,
                                     limit)
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


def _tracing(registry: Registry) -> Any:
    tracing = registry.tracing
    return _tracing_of(registry) if tracing is None else tracing


def _refusal_span(tracing: Any, plan: _Plan, result: dict[str, Any]) -> None:
    """The span of a call of the turn refused before it could run (as ``call_tool``'s)."""
    span = tracing.start(plan.name)
    if span is not None:
        span.finish(result, plan.id)


def _spanned(tracing: Any, call: ToolCall, token: CancelToken | None, timeout: float | None,
             limit: int | None) -> dict[str, Any]:
    """``_complete`` inside the call's span, started on the worker thread that runs it (in
    the caller's context, so the caller's span is its parent)."""
    span = tracing.start(call.name) if tracing else None
    if span is None:
        return _complete(call, token, timeout, limit)
    try:
        span.prepared(call.record, call.decision, call.id)
        result = _complete(call, token, timeout, limit)
    except BaseException as exc:
        span.failed(exc)
        raise
    span.finish(result, call.id)
    return result


async def _aspanned(tracing: Any, call: ToolCall, token: CancelToken | None,
                    timeout: float | None, limit: int | None) -> dict[str, Any]:
    """``_acomplete`` inside the call's span, current in the task that awaits the call."""
    span = tracing.start(call.name) if tracing else None
    if span is None:
        return await _acomplete(call, token, timeout, limit)
    try:
        span.prepared(call.record, call.decision, call.id)
        result = await _acomplete(call, token, timeout, limit)
    except BaseException as exc:
        span.failed(exc)
        raise
    span.finish(result, call.id)
    return result


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
    approvals: Mapping[str, Any] | None = None,
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
    tracing = _tracing(registry)
    calls = [_prepare(plan.name, plan.arguments, registry, plan.id) for plan in plans]
    for plan, call in zip(plans, calls, strict=True):
        if isinstance(call, ToolCall):
            call.approvals = approvals
        elif tracing:
            _refusal_span(tracing, plan, call)
    results: list[dict[str, Any]] = []
    if sequential or max_concurrency <= 1 or len(calls) < 2:
        for call in calls:
            results.append(call if isinstance(call, dict) else await _aspanned(
                tracing, call, cancel_token, timeout, max_result_chars))
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
                    return await _aspanned(tracing, call, cancel_token, timeout, max_result_chars)
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
