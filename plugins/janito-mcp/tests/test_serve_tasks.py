"""Long calls as MCP tasks (io.modelcontextprotocol/tasks), with the in-memory store.

The SDK's client (2026-07-28) declares the extension (tests/tasks_client.py) and talks to
janito's server in-process. A call still running after ``task_after`` answers with a
task handle; ``tasks/get`` gives the progress and then the ``CallToolResult``;
``tasks/cancel`` reaches the tool's cancel token. A client that did not declare the
extension, and a quick call, are answered in their own request as before. Redis and
two instances: test_serve_balanced.py.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_async
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from tasks_client import Tasks, cancel_task, get_task, wait_until_done

from janito_core import Registry, Workspace

AFTER = 1.5


def _served(workspace: Path) -> Any:
    from janito_mcp._serve import JanitoServer
    from janito_mcp._tasks import Tasks as ServerTasks
    from janito_mcp._taskstore import MemoryTaskStore

    registry = Registry(autoload=(), workspace=Workspace(workspace), journal=False)
    registry.add_toolset("mcptest")
    # a quick call must end well inside ``after`` on a loaded machine
    return JanitoServer(registry, tasks=ServerTasks(MemoryTaskStore(), AFTER))


def test_a_long_call_is_a_task_with_progress_and_its_result(workspace: Path,
                                                            config_dir: Path) -> None:
    served = _served(workspace)

    async def main() -> None:
        await served.tasks.start()
        async with Client(served.server, extensions=[Tasks()]) as client:
            quick = await client.session.call_tool("EchoText", {"text": "x"}, allow_claimed=True)
            assert quick.structured_content["text"] == "x"  # answered in its request

            handle = await client.session.call_tool("DoWork", {"seconds": 3, "steps": 3},
                                                    allow_claimed=True)
            assert handle.result_type == "task" and handle.status == "working"
            assert handle.poll_interval_ms and handle.ttl_ms
            seen: list[str] = []
            state = await wait_until_done(client.session, handle.task_id, seen)
            assert state.status == "completed", state
            assert state.result is not None
            assert state.result["structuredContent"]["steps"] == 3
            assert state.result["isError"] is False
            assert any(message.startswith("step ") for message in seen), seen

            # the client's call_tool finishes a task by itself (the claim polls)
            result = await client.call_tool("DoWork", {"seconds": 2.5, "steps": 2})
            assert result.structured_content["success"] is True

            with pytest.raises(MCPError, match="no task"):
                await get_task(client.session, "not-a-task")
        # a client that did not declare the extension waits in its request
        async with Client(served.server) as plain:
            result = await plain.call_tool("DoWork", {"seconds": 2.5})
            assert result.structured_content["success"] is True
        await served.tasks.close(1.0)

    run_async(main)
    assert not served.running and not served.forwarder.channels


def test_cancelling_a_task_reaches_the_tools_cancel_token(workspace: Path,
                                                         config_dir: Path) -> None:
    served = _served(workspace)

    async def main() -> Any:
        await served.tasks.start()
        async with Client(served.server, extensions=[Tasks()]) as client:
            handle = await client.session.call_tool(
                "WaitForCancel", {"marker": "m", "seconds": 60}, allow_claimed=True)
            started = time.monotonic()
            await cancel_task(client.session, handle.task_id)
            state = await wait_until_done(client.session, handle.task_id, timeout=20)
            took = time.monotonic() - started
        await served.tasks.close(1.0)
        return state, took

    state, took = run_async(main)
    assert state.status == "cancelled" and state.result is None
    assert state.status_message == "the client cancelled the task"
    assert took < 20  # the tool stopped: it would have waited 60 s
    assert (workspace / "m.cancelled").read_text() == "the client cancelled the task"
    assert not (workspace / "m").exists()


def test_a_call_the_store_cannot_take_is_answered_in_its_request(workspace: Path,
                                                                 config_dir: Path) -> None:
    from janito_mcp._taskstore import MemoryTaskStore

    class Unreachable(MemoryTaskStore):
        async def put(self, task_id: str, record: dict[str, Any], ttl: float) -> None:
            raise ConnectionError("the store is away")

    served = _served(workspace)
    served.tasks.store = Unreachable()

    async def main() -> Any:
        await served.tasks.start()
        async with Client(served.server, extensions=[Tasks()]) as client:
            result = await client.session.call_tool("DoWork", {"seconds": 2.5},
                                                    allow_claimed=True)
        await served.tasks.close(1.0)
        return result

    result = run_async(main)
    assert result.structured_content["success"] is True  # a result, not a task handle
    assert not served.running and not served.tasks.running
