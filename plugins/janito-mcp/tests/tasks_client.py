"""The client side of the MCP tasks extension, for the tests: the MCP SDK (2.3) has its
types for the 2025-11-25 era only, so the 2026-07-28 shapes are declared here, on the
SDK's own client extension surface (a claim on ``resultType: "task"``)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import anyio
import mcp_types as types
from mcp.client.extension import ClientExtension, ResultClaim

EXTENSION = "io.modelcontextprotocol/tasks"


class TaskHandle(types.Result):
    """``CreateTaskResult``: what a ``tools/call`` answers when the call became a task."""

    result_type: Literal["task"] = "task"  # type: ignore[assignment]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskState(types.Result):
    """What ``tasks/get`` answers."""

    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"


class Tasks(ClientExtension):
    """Declares the extension; ``call_tool`` of a client carrying it finishes a task by
    polling, and ``session.call_tool(..., allow_claimed=True)`` gives the handle."""

    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self._resolve)]

    async def _resolve(self, handle: TaskHandle, ctx: Any) -> types.CallToolResult:
        state = await wait_until_done(ctx.session, handle.task_id)
        if state.status != "completed" or state.result is None:
            raise RuntimeError(f"task {state.status}: {state.status_message} {state.error}")
        return types.CallToolResult.model_validate(state.result)


async def get_task(session: Any, task_id: str) -> TaskState:
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)  # type: ignore[no-any-return]


async def cancel_task(session: Any, task_id: str) -> None:
    await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.Result)


async def wait_until_done(session: Any, task_id: str, seen: list[str] | None = None,
                          timeout: float = 60.0) -> TaskState:
    """Poll ``tasks/get`` until the task ends (faster than it asks: a test waits)."""
    with anyio.fail_after(timeout):
        while True:
            state = await get_task(session, task_id)
            if seen is not None and state.status_message:
                seen.append(state.status_message)
            if state.status in ("completed", "failed", "cancelled"):
                return state
            await anyio.sleep(0.1)
