"""Long calls as MCP tasks: the ``io.modelcontextprotocol/tasks`` extension (2026-07-28).

A client declares the extension in a request's capabilities; the server decides per
call. janito's rule: a call of such a client still running ``after`` seconds becomes a
task. The ``tools/call`` request is then answered with a task handle (``resultType:
"task"``) and the call goes on in the process that started it; the client polls
``tasks/get`` (the status, the last progress report as ``statusMessage``, and at the end
the ``CallToolResult`` the call would have answered) and may send ``tasks/cancel``, which
reaches the tool's cancel token wherever the task runs.

The MCP SDK (2.3) carries the extension's types for the 2025-11-25 era only and no task
store; it serves the methods through ``Server.add_request_handler`` and passes a claimed
``resultType`` through untouched. The records live in a ``TaskStore`` (``_taskstore``):
in memory for one process, Redis for several workers or instances behind one address.

A task is bound to who made it: with an authenticated client, another client's token
finds no such task.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

if TYPE_CHECKING:
    from janito_core.cancellation import CancelToken

    from ._taskstore import TaskStore

EXTENSION = "io.modelcontextprotocol/tasks"
#: How long a task's record is kept after it was created.
TASK_TTL = 3600.0
#: What clients are asked to wait between two polls.
POLL_INTERVAL_MS = 1000
#: The owner's lease on a running task, and how often it renews it.
LEASE = 15.0
LEASE_RENEWAL = 5.0
#: The least time between two writes of a task's progress to the store.
PROGRESS_INTERVAL = 0.25
CANCELLED_BY_CLIENT = "the client cancelled the task"
TERMINAL = ("completed", "failed", "cancelled")


class TaskParams(types.RequestParams):
    """The params of ``tasks/get`` and ``tasks/cancel``."""

    task_id: str


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def principal_of(ctx: Any) -> str | None:
    """Who made a request, as authentication saw it (None when nothing authenticated it)."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    token = getattr(user, "access_token", None)
    if token is None:
        return None
    subject = getattr(token, "subject", None) or getattr(token, "sub", None)
    return f"{getattr(token, 'client_id', '')}/{subject or ''}"


class Tasks:
    """The tasks of one server process, kept in ``store``."""

    def __init__(self, store: TaskStore, after: float) -> None:
        self.store = store
        self.after = after
        #: task id -> the cancel token of a task this process runs
        self.running: dict[str, CancelToken] = {}
        self._finishers: set[asyncio.Task[None]] = set()

    def install(self, server: Any) -> None:
        server.add_request_handler("tasks/get", TaskParams, self._get)
        server.add_request_handler("tasks/cancel", TaskParams, self._cancel)
        server.extensions[EXTENSION] = {}

    def wanted(self, ctx: Any) -> bool:
        """Whether the client of this request declared the extension."""
        wanted = types.ClientCapabilities(extensions={EXTENSION: {}})
        try:
            return bool(ctx.session.check_client_capability(wanted))
        except Exception:
            return False

    # -- lifetime ---------------------------------------------------------------------

    async def start(self) -> None:
        await self.store.start(self._on_cancel)

    async def close(self, grace: float) -> None:
        """Let the finishers write their last state (the drain cancelled them first)."""
        if self._finishers:
            await asyncio.wait(set(self._finishers), timeout=grace)
        await self.store.close()

    def _on_cancel(self, task_id: str) -> None:
        token = self.running.get(task_id)
        if token is not None:
            token.cancel(CANCELLED_BY_CLIENT)

    # -- a call becomes a task --------------------------------------------------------

    async def adopt(self, call: asyncio.Task[dict[str, Any]], token: CancelToken,
                    channel: Any, ctx: Any, on_end: Any) -> dict[str, Any] | None:
        """Make the running ``call`` a task; the task handle to answer with, or None when
        the store cannot take it (the call is then answered in its own request).

        The record is written before the handle is answered (a ``tasks/get`` anywhere
        finds it at once). ``on_end`` runs once the call ended and its state is stored.
        """
        task_id = secrets.token_urlsafe(18)
        now = _now()
        record: dict[str, Any] = {
            "taskId": task_id, "status": "working", "createdAt": now, "lastUpdatedAt": now,
            "ttlMs": int(TASK_TTL * 1000), "pollIntervalMs": POLL_INTERVAL_MS,
            "statusMessage": "the call is running",
        }
        stored = dict(record, principal=principal_of(ctx))
        try:
            await self.store.hold(task_id, LEASE)
            await self.store.put(task_id, stored, TASK_TTL)
        except Exception:
            return None
        self.running[task_id] = token
        channel.sink = _ProgressSink(self, task_id, stored)
        finisher = asyncio.get_running_loop().create_task(
            self._finish(task_id, stored, call, token, channel, on_end))
        self._finishers.add(finisher)
        finisher.add_done_callback(self._finishers.discard)
        return dict(record, resultType="task")

    async def _finish(self, task_id: str, stored: dict[str, Any],
                      call: asyncio.Task[dict[str, Any]], token: CancelToken, channel: Any,
                      on_end: Any) -> None:
        started = time.monotonic()
        try:
            while not call.done():
                await asyncio.wait((call,), timeout=LEASE_RENEWAL)
                if not call.done():
                    try:
                        await self.store.hold(task_id, LEASE)
                    except Exception:
                        pass  # the store is away for now; the lease outlasts a renewal
            sink = channel.sink
            if sink is not None:
                await sink.flush()
            final = dict(stored, lastUpdatedAt=_now())
            try:
                result = call.result()
            except BaseException as exc:  # the framework does not raise: this is a bug
                final.update(status="failed", statusMessage="the call failed",
                             error={"code": -32603, "message": f"{type(exc).__name__}: {exc}"})
            else:
                if token.cancelled:
                    final.update(status="cancelled", statusMessage=str(token.reason or
                                                                     CANCELLED_BY_CLIENT))
                else:
                    final.update(status="completed", result=call_tool_result(result),
                                 statusMessage=f"done in {time.monotonic() - started:.1f} s")
            try:
                await self.store.put(task_id, final, TASK_TTL)
            except Exception:
                pass  # nothing else can be done: the lease lapses and pollers see failed
        finally:
            self.running.pop(task_id, None)
            on_end()

    def cancel_all(self, reason: str) -> None:
        for token in list(self.running.values()):
            token.cancel(reason)

    # -- tasks/get and tasks/cancel ---------------------------------------------------

    async def _find(self, ctx: Any, task_id: str) -> dict[str, Any]:
        record = await self.store.get(task_id)
        if record is None or record.get("principal") != principal_of(ctx):
            raise MCPError(code=INVALID_PARAMS, message=f"no task {task_id!r} (unknown, "
                           "expired, or made by another client)")
        if record.get("status") not in TERMINAL and not await self.store.held(task_id):
            record.update(status="failed", lastUpdatedAt=_now(),
                          statusMessage="the server process running the task stopped",
                          error={"code": -32603, "message": "the server process running the "
                                 "task stopped before the call ended"})
            await self.store.put(task_id, record, TASK_TTL)
        return record

    async def _get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        record = await self._find(ctx, params.task_id)
        record.pop("principal", None)
        return record

    async def _cancel(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        record = await self._find(ctx, params.task_id)
        if record.get("status") not in TERMINAL:
            await self.store.cancel(params.task_id)
        return {}


class _ProgressSink:
    """A task's progress reports, written to its record as ``statusMessage``: the latest
    one, at most every PROGRESS_INTERVAL seconds."""

    def __init__(self, tasks: Tasks, task_id: str, stored: dict[str, Any]) -> None:
        self.tasks = tasks
        self.task_id = task_id
        self.stored = stored
        self.latest: str | None = None
        self.writer: asyncio.Task[None] | None = None
        self.loop = asyncio.get_running_loop()

    def report(self, text: str) -> None:
        """From any thread: a progress line of the task's tool."""
        self.latest = text
        self.loop.call_soon_threadsafe(self._schedule)

    def _schedule(self) -> None:
        if self.writer is None or self.writer.done():
            self.writer = self.loop.create_task(self._write())

    async def _write(self) -> None:
        while self.latest is not None:
            text, self.latest = self.latest, None
            self.stored.update(statusMessage=text, lastUpdatedAt=_now())
            try:
                await self.tasks.store.put(self.task_id, self.stored, TASK_TTL)
            except Exception:
                pass
            await asyncio.sleep(PROGRESS_INTERVAL)

    async def flush(self) -> None:
        if self.writer is not None and not self.writer.done():
            self.writer.cancel()
            await asyncio.wait((self.writer,))
        if self.latest is not None:
            self.stored.update(statusMessage=self.latest)
            self.latest = None


def call_tool_result(result: dict[str, Any]) -> dict[str, Any]:
    """janito's result of a call as the ``CallToolResult`` JSON a ``tools/call`` answers."""
    import json

    answer = types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
        structured_content=result, is_error=not result.get("success", False))
    dumped: dict[str, Any] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    dumped.pop("resultType", None)
    return dumped
