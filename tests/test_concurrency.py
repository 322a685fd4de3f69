"""The calls of one turn at the same time, async tools, and how both are stopped.

Concurrency is shown with barriers rather than stopwatches: four calls that each wait at a
barrier for four parties can only all succeed if they run at the same time, whatever the
load of the machine.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from janito_core import BaseTool, CancelToken, Registry, Workspace, hookimpl, tool
from janito_core.dispatch import (
    acall_tool,
    aexecute_tool_calls,
    call_tool,
    execute_tool_calls,
)

WAIT = 20  # seconds a barrier waits at most: far longer than any test needs

flag: contextvars.ContextVar[str] = contextvars.ContextVar("test_concurrency_flag", default="")


class Meeting:
    """A barrier for threads and coroutines alike, plus a log of what happened."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.lock = threading.Lock()
        self.log: list[tuple[str, str]] = []
        self.active = 0
        self.most = 0

    def enter(self, who: str) -> None:
        with self.lock:
            self.arrived += 1
            self.active += 1
            self.most = max(self.most, self.active)
            self.log.append(("start", who))

    def leave(self, who: str) -> None:
        with self.lock:
            self.active -= 1
            self.log.append(("end", who))

    def wait_all(self) -> bool:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.arrived >= self.parties:
                return True
            time.sleep(0.005)
        return False

    async def await_all(self) -> bool:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.arrived >= self.parties:
                return True
            await asyncio.sleep(0.005)
        return False


meeting = Meeting(0)


@tool(permissions="r")
class Gather(BaseTool):
    """Wait until every party has arrived (synchronous)."""

    def run(self, who: str, pause: float = 0.0) -> dict[str, Any]:
        """Meet.

        Args:
            who: Name of the party.
            pause: Seconds to stay once everybody is there.
        """
        meeting.enter(who)
        try:
            met = meeting.wait_all()
            time.sleep(pause)
            return {"success": met, "who": who, "thread": threading.current_thread().name,
                    "flag": flag.get()}
        finally:
            meeting.leave(who)


@tool(permissions="r")
class AsyncGather(BaseTool):
    """Wait until every party has arrived (asynchronous)."""

    async def run(self, who: str) -> dict[str, Any]:
        """Meet.

        Args:
            who: Name of the party.
        """
        meeting.enter(who)
        try:
            met = await meeting.await_all()
            return {"success": met, "who": who, "thread": threading.current_thread().name,
                    "flag": flag.get()}
        finally:
            meeting.leave(who)


@tool(permissions="r")
async def async_echo(text: str, cancel_token: CancelToken) -> dict[str, Any]:
    """Echo a text after a pause of the event loop.

    Args:
        text: What to echo.
    """
    await asyncio.sleep(0)
    return {"success": True, "text": text, "cancellable": cancel_token is not None}


@tool(permissions="r")
class Pause(BaseTool):
    """Pause (synchronous), keeping count of how many pause at once."""

    def run(self, seconds: float) -> dict[str, Any]:
        """Pause.

        Args:
            seconds: How long.
        """
        meeting.enter("pause")
        try:
            time.sleep(seconds)
        finally:
            meeting.leave("pause")
        return {"success": True}


@tool(permissions="w")
class Write(BaseTool):
    """Pretend to write a path, slowly."""

    writes_paths = ("path",)

    def run(self, path: str, seconds: float = 0.15) -> dict[str, Any]:
        """Write.

        Args:
            path: The path written.
            seconds: How long the write takes.
        """
        meeting.enter(path)
        time.sleep(seconds)
        meeting.leave(path)
        return {"success": True, "path": path}


@tool(permissions="r")
class Look(BaseTool):
    """Pretend to read a path, slowly."""

    def run(self, path: str, seconds: float = 0.15) -> dict[str, Any]:
        """Read.

        Args:
            path: The path read.
            seconds: How long the read takes.
        """
        meeting.enter(f"look {path}")
        time.sleep(seconds)
        meeting.leave(f"look {path}")
        return {"success": True, "path": path}


@tool(permissions="w")
class WriteAnything(BaseTool):
    """A writing tool that does not say what it writes."""

    def run(self, seconds: float = 0.15) -> dict[str, Any]:
        """Write anywhere.

        Args:
            seconds: How long.
        """
        meeting.enter("anything")
        time.sleep(seconds)
        meeting.leave("anything")
        return {"success": True}


@tool(permissions="r")
class Explode(BaseTool):
    """Raise."""

    def run(self) -> dict[str, Any]:
        """Raise."""
        raise RuntimeError("boom")


@tool(permissions="r")
class AsyncExplode(BaseTool):
    """Raise, asynchronously."""

    async def run(self) -> dict[str, Any]:
        """Raise."""
        await asyncio.sleep(0)
        raise ValueError("async boom")


@tool(permissions="r")
class Patient(BaseTool):
    """Wait on the cancellation token (synchronous)."""

    stopped: ClassVar[list[str]] = []

    def run(self, seconds: float = 30) -> dict[str, Any]:
        """Wait.

        Args:
            seconds: Longest wait.
        """
        token = self.cancel_token
        assert token is not None
        meeting.enter("patient")
        if token.wait(seconds):
            type(self).stopped.append(token.reason or "")
        token.check()
        return {"success": True, "waited": seconds}


@tool(permissions="r")
class AsyncPatient(BaseTool):
    """Sleep on the event loop until cancelled."""

    stopped: ClassVar[list[str]] = []

    async def run(self, seconds: float = 30) -> dict[str, Any]:
        """Sleep.

        Args:
            seconds: Longest sleep.
        """
        meeting.enter("async patient")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            type(self).stopped.append("CancelledError")
            raise
        return {"success": True, "waited": seconds}


@tool(permissions="r")
class Stubborn(BaseTool):
    """Ignore the cancellation and finish."""

    def run(self, seconds: float = 0.3) -> dict[str, Any]:
        """Sleep.

        Args:
            seconds: How long.
        """
        time.sleep(seconds)
        return {"success": True, "late": True}


TOOLS = (Gather, AsyncGather, async_echo, Pause, Write, Look, WriteAnything, Explode, AsyncExplode,
         Patient, AsyncPatient, Stubborn)


@pytest.fixture
def reg(tmp_path: Path) -> Registry:
    global meeting
    meeting = Meeting(0)
    Patient.stopped = []
    AsyncPatient.stopped = []
    registry = Registry(autoload=(), workspace=Workspace(tmp_path))
    for item in TOOLS:
        registry.add_tool(item)
    return registry


def chat(name: str, arguments: dict[str, Any], index: int) -> dict[str, Any]:
    return {"id": f"call_{index}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def contents(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(item["content"]) for item in items]


# -- one turn at the same time ---------------------------------------------------------


def test_the_calls_of_a_turn_run_at_the_same_time(reg: Registry) -> None:
    global meeting
    meeting = Meeting(4)
    turn = [chat("Gather", {"who": "a"}, 0), chat("AsyncGather", {"who": "b"}, 1),
            chat("Gather", {"who": "c"}, 2), chat("AsyncGather", {"who": "d"}, 3)]
    token = flag.set("the caller's")
    try:
        items = execute_tool_calls(turn, registry=reg)
    finally:
        flag.reset(token)
    assert [item["tool_call_id"] for item in items] == ["call_0", "call_1", "call_2", "call_3"]
    results = contents(items)
    assert [r["who"] for r in results] == ["a", "b", "c", "d"]
    assert all(r["success"] for r in results), results
    assert {r["flag"] for r in results} == {"the caller's"}  # each call runs in its context
    assert results[0]["thread"].startswith("janito-turn")
    assert results[1]["thread"] == "janito-async"  # async tools: janito's background loop


def test_sequential_runs_one_call_after_the_other(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Pause", {"seconds": 0.05}, i) for i in range(4)]
    items = execute_tool_calls(turn, registry=reg, sequential=True)
    assert all(r["success"] for r in contents(items))
    assert meeting.most == 1


def test_at_most_max_concurrency_calls_at_once(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Pause", {"seconds": 0.2}, i) for i in range(5)]
    items = execute_tool_calls(turn, registry=reg, max_concurrency=2)
    assert all(r["success"] for r in contents(items))
    assert meeting.most == 2


def test_writes_of_one_path_run_in_the_order_of_the_calls(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Write", {"path": "a.txt"}, 0), chat("Write", {"path": "./sub/../a.txt"}, 1),
            chat("Write", {"path": "a.txt"}, 2)]
    execute_tool_calls(turn, registry=reg)
    assert meeting.most == 1
    assert [who for _, who in meeting.log] == ["a.txt", "a.txt", "./sub/../a.txt",
                                               "./sub/../a.txt", "a.txt", "a.txt"]


def test_a_folder_and_a_path_inside_it_are_one_conflict(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Write", {"path": "src"}, 0), chat("Write", {"path": "src/a.py"}, 1)]
    execute_tool_calls(turn, registry=reg)
    assert meeting.log == [("start", "src"), ("end", "src"), ("start", "src/a.py"),
                           ("end", "src/a.py")]


def test_writes_of_different_paths_and_reads_run_together(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Write", {"path": "a.txt", "seconds": 0.4}, 0),
            chat("Write", {"path": "b.txt", "seconds": 0.4}, 1),
            chat("Pause", {"seconds": 0.4}, 2)]
    execute_tool_calls(turn, registry=reg)
    assert meeting.most == 3


def test_a_writer_that_names_no_path_waits_for_every_writer(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Write", {"path": "a.txt"}, 0), chat("WriteAnything", {}, 1),
            chat("Write", {"path": "b.txt"}, 2)]
    execute_tool_calls(turn, registry=reg)
    assert [entry for entry in meeting.log] == [
        ("start", "a.txt"), ("end", "a.txt"), ("start", "anything"), ("end", "anything"),
        ("start", "b.txt"), ("end", "b.txt")]


def test_a_read_waits_for_the_write_of_what_it_reads(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Write", {"path": "a.txt"}, 0), chat("Look", {"path": "./a.txt"}, 1),
            chat("Look", {"path": "b.txt"}, 2), chat("Write", {"path": "b.txt"}, 3)]
    execute_tool_calls(turn, registry=reg)
    log = meeting.log
    assert log.index(("end", "a.txt")) < log.index(("start", "look ./a.txt"))
    # reading b.txt and then writing it: the write waits for the read
    assert log.index(("end", "look b.txt")) < log.index(("start", "b.txt"))
    # the unrelated ones ran together
    assert log.index(("start", "look b.txt")) < log.index(("end", "a.txt"))


def test_a_tool_that_raises_fails_alone(reg: Registry) -> None:
    turn = [chat("Explode", {}, 0), chat("AsyncExplode", {}, 1), chat("AsyncEcho", {"text": "x"}, 2),
            chat("Nope", {}, 3), chat("AsyncEcho", {"text": 5, "extra": 1}, 4)]
    results = contents(execute_tool_calls(turn, registry=reg))
    assert results[0]["error_type"] == "tool_exception"
    assert results[0]["error"] == "Explode raised RuntimeError: boom"
    assert results[1]["error_type"] == "tool_exception"
    assert results[1]["error"] == "AsyncExplode raised ValueError: async boom"
    assert results[2] == {"success": True, "text": "x", "cancellable": True}
    assert results[3]["error_type"] == "unknown_tool"
    assert results[4]["error_type"] == "invalid_arguments"


def test_each_call_of_a_turn_has_its_timeout(reg: Registry) -> None:
    turn = [chat("Patient", {}, 0), chat("AsyncPatient", {}, 1), chat("AsyncEcho", {"text": "x"}, 2),
            chat("Stubborn", {"seconds": 0.6}, 3)]
    started = time.monotonic()
    results = contents(execute_tool_calls(turn, registry=reg, timeout=0.3))
    assert time.monotonic() - started < WAIT
    assert results[0]["error_type"] == "timeout"
    assert results[0]["error"] == "Patient did not finish within 0.3 s and was stopped"
    assert results[1]["error_type"] == "timeout"
    assert AsyncPatient.stopped == ["CancelledError"]
    assert results[2]["success"] is True
    assert results[3] == {"success": True, "late": True}  # it finished anyway: its answer stands


def test_cancelling_a_turn_stops_what_runs_and_what_waits(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    token = CancelToken()
    turn = [chat("Patient", {}, 0), chat("AsyncPatient", {}, 1),
            chat("Write", {"path": "a"}, 2), chat("WriteAnything", {"seconds": 30}, 3)]

    def cancel_when_running() -> None:
        deadline = time.monotonic() + WAIT
        while meeting.arrived < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        token.cancel("the person pressed stop")

    threading.Thread(target=cancel_when_running).start()
    started = time.monotonic()
    results = contents(execute_tool_calls(turn, registry=reg, cancel_token=token))
    assert time.monotonic() - started < WAIT
    assert results[0]["error_type"] == "cancelled"
    assert "the person pressed stop" in results[0]["error"]
    assert Patient.stopped == ["the person pressed stop"]
    assert results[1]["error_type"] == "cancelled"
    assert AsyncPatient.stopped == ["CancelledError"]
    assert results[2]["success"] is True  # it was running, and finished
    assert results[3] == {"success": False, "error": "WriteAnything was not run: the person "
                          "pressed stop", "error_type": "cancelled", "tool": "WriteAnything"}
    assert not token.cancelled or token.reason == "the person pressed stop"


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt, as at a terminal, even in a run started with SIGINT
    ignored (a background job of a non-interactive shell), where Python sets no handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_raises")
def test_an_interrupt_returns_at_once_and_tells_the_running_tools(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    turn = [chat("Patient", {}, 0), chat("Stubborn", {"seconds": 3}, 1)]

    def interrupt_when_running() -> None:
        deadline = time.monotonic() + WAIT
        while meeting.arrived < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_when_running).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        execute_tool_calls(turn, registry=reg)
    # Stubborn does not listen to its token and sleeps on: the interrupt does not wait
    assert time.monotonic() - started < 2.5
    deadline = time.monotonic() + WAIT
    while not Patient.stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert Patient.stopped == ["the turn was interrupted"]


def test_a_call_in_no_known_shape_raises_before_any_call_runs(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)
    with pytest.raises(TypeError, match="unrecognised tool call shape"):
        execute_tool_calls([chat("Pause", {"seconds": 0}, 0), {"tool": "Pause"}], registry=reg)
    assert meeting.arrived == 0


def test_every_provider_shape_runs_concurrently(reg: Registry) -> None:
    global meeting
    meeting = Meeting(4)
    responses = [{"type": "function_call", "call_id": f"r{i}", "name": "Gather",
                  "arguments": json.dumps({"who": str(i)})} for i in range(2)]
    anthropic = [{"type": "tool_use", "id": f"t{i}", "name": "Gather", "input": {"who": str(i)}}
                 for i in range(2, 4)]
    items = execute_tool_calls(responses + anthropic, registry=reg)
    assert [item.get("call_id") or item.get("tool_use_id") for item in items] == [
        "r0", "r1", "t2", "t3"]
    assert all(json.loads(item.get("output") or item["content"])["success"] for item in items)
    meeting = Meeting(2)
    gemini = {"role": "model", "parts": [{"functionCall": {"name": "Gather", "args": {"who": w}}}
                                         for w in "xy"]}
    items = execute_tool_calls(gemini, registry=reg)
    assert [item["functionResponse"]["response"]["who"] for item in items] == ["x", "y"]


# -- async tools -------------------------------------------------------------------------


def test_async_tools_run_to_completion_from_synchronous_code(reg: Registry) -> None:
    assert call_tool("AsyncEcho", {"text": "hi"}, registry=reg) == {
        "success": True, "text": "hi", "cancellable": True}
    result = call_tool("AsyncPatient", {"seconds": 0.01}, registry=reg)
    assert result == {"success": True, "waited": 0.01}


def test_each_registry_has_its_loop_which_stops_with_it(tmp_path: Path) -> None:
    import gc

    def used_registry() -> Registry:
        registry = Registry(autoload=(), workspace=Workspace(tmp_path))
        for item in TOOLS:
            registry.add_tool(item)
        assert call_tool("AsyncEcho", {"text": "hi"}, registry=registry)["success"] is True
        return registry

    first, second = used_registry(), used_registry()
    loops = [first.async_runner().loop(), second.async_runner().loop()]
    assert loops[0] is not loops[1]
    assert first.async_runner().loop() is loops[0]  # the next call finds the same loop
    del first, second
    gc.collect()
    deadline = time.monotonic() + WAIT
    while not all(loop.is_closed() for loop in loops) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert all(loop.is_closed() for loop in loops)


def test_call_tool_works_inside_a_running_loop(reg: Registry) -> None:
    async def main() -> dict[str, Any]:
        return call_tool("AsyncEcho", {"text": "inside"}, registry=reg)

    assert asyncio.run(main())["text"] == "inside"


def test_an_async_tool_may_call_call_tool_on_another(reg: Registry) -> None:
    @tool(permissions="r")
    async def nested(text: str) -> dict[str, Any]:
        """Call another async tool synchronously, from janito's own loop.

        Args:
            text: What to pass on.
        """
        return {"success": True, "inner": call_tool("AsyncEcho", {"text": text}, registry=reg)}

    reg.add_tool(nested)
    result = call_tool("Nested", {"text": "deep"}, registry=reg, timeout=WAIT)
    assert result["inner"]["text"] == "deep"


def test_acall_tool_awaits_async_tools_on_the_callers_loop(reg: Registry) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any], str]:
        global meeting
        meeting = Meeting(1)
        here = threading.current_thread().name
        token = flag.set("from the task")
        try:
            async_result = await acall_tool("AsyncGather", {"who": "a"}, registry=reg)
            meeting = Meeting(1)
            sync_result = await acall_tool("Gather", {"who": "b"}, registry=reg)
        finally:
            flag.reset(token)
        return async_result, sync_result, here

    async_result, sync_result, here = asyncio.run(main())
    assert async_result["thread"] == here
    assert sync_result["thread"].startswith("janito-call")
    assert async_result["flag"] == sync_result["flag"] == "from the task"


def test_acall_tool_timeouts_and_tokens(reg: Registry) -> None:
    async def main() -> list[dict[str, Any]]:
        results = [await acall_tool("AsyncPatient", {}, registry=reg, timeout=0.2),
                   await acall_tool("Patient", {}, registry=reg, timeout=0.2)]
        token = CancelToken()
        asyncio.get_running_loop().call_later(0.2, token.cancel, "stop now")
        results.append(await acall_tool("AsyncPatient", {}, registry=reg, cancel_token=token))
        results.append(await acall_tool("Patient", {}, registry=reg, cancel_token=token))
        results.append(await acall_tool("Explode", {}, registry=reg))
        results.append(await acall_tool("AsyncExplode", {}, registry=reg))
        return results

    results = asyncio.run(main())
    assert [r["error_type"] for r in results] == ["timeout", "timeout", "cancelled", "cancelled",
                                                  "tool_exception", "tool_exception"]
    assert "was not run: stop now" in results[3]["error"]  # cancelled before it started
    assert "AsyncPatient stopped: stop now" == results[2]["error"]


def test_cancelling_the_awaiting_task_reaches_async_and_sync_tools(reg: Registry) -> None:
    global meeting
    meeting = Meeting(99)

    async def main() -> None:
        turn = [chat("AsyncPatient", {}, 0), chat("Patient", {}, 1), chat("AsyncEcho", {"text": "x"}, 2)]
        task = asyncio.ensure_future(aexecute_tool_calls(turn, registry=reg))
        while meeting.arrived < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert AsyncPatient.stopped == ["CancelledError"]
    deadline = time.monotonic() + WAIT
    while not Patient.stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert Patient.stopped == ["the caller stopped waiting for the call"]


def test_aexecute_tool_calls_runs_the_turn_together_and_in_order(reg: Registry) -> None:
    global meeting
    meeting = Meeting(4)

    async def main() -> list[dict[str, Any]]:
        turn = [chat("AsyncGather", {"who": "a"}, 0), chat("Gather", {"who": "b"}, 1),
                chat("AsyncGather", {"who": "c"}, 2), chat("Gather", {"who": "d"}, 3),
                chat("Explode", {}, 4)]
        return await aexecute_tool_calls(turn, registry=reg)

    items = asyncio.run(main())
    results = contents(items)
    assert [r.get("who") for r in results] == ["a", "b", "c", "d", None]
    assert all(r["success"] for r in results[:4])
    assert results[4]["error_type"] == "tool_exception"
    meeting = Meeting(99)

    async def writes() -> list[dict[str, Any]]:
        turn = [chat("Write", {"path": "a"}, 0), chat("Write", {"path": "a"}, 1)]
        return await aexecute_tool_calls(turn, registry=reg, max_concurrency=4)

    asyncio.run(writes())
    assert meeting.most == 1

    meeting = Meeting(99)

    async def one_by_one() -> list[dict[str, Any]]:
        turn = [chat("Pause", {"seconds": 0.05}, i) for i in range(3)]
        return await aexecute_tool_calls(turn, registry=reg, sequential=True)

    asyncio.run(one_by_one())
    assert meeting.most == 1


def test_hooks_see_async_tools_like_any_other(reg: Registry) -> None:
    seen: list[tuple[str, bool, Any]] = []

    class Audit:
        @hookimpl(wrapper=True)
        def janito_tool_call(self, call: Any) -> Any:
            result = yield
            seen.append((call.name, call.is_async, result.get("text")))
            return result

    class Gate:
        @hookimpl(tryfirst=True)
        def janito_tool_call(self, call: Any) -> Any:
            if call.arguments.get("text") == "forbidden":
                return call.refuse("not that")
            return None

    reg.plugins.register(Audit(), "tests:audit", None)
    reg.plugins.register(Gate(), "tests:gate", None)
    assert call_tool("AsyncEcho", {"text": "sync caller"}, registry=reg)["success"]

    async def main() -> list[dict[str, Any]]:
        return [await acall_tool("AsyncEcho", {"text": "async caller"}, registry=reg),
                await acall_tool("AsyncEcho", {"text": "forbidden"}, registry=reg),
                await acall_tool("AsyncPatient", {}, registry=reg, timeout=0.2)]

    results = asyncio.run(main())
    assert results[1] == {"success": False, "error": "not that", "error_type": "refused",
                          "tool": "AsyncEcho"}
    assert results[2]["error_type"] == "timeout"
    # the refusal passes through the wrapper too, as it does for a synchronous tool
    assert seen == [("AsyncEcho", True, "sync caller"), ("AsyncEcho", True, "async caller"),
                    ("AsyncEcho", True, None), ("AsyncPatient", True, None)]


def test_reports_of_an_async_tool_carry_its_call(reg: Registry) -> None:
    from janito_core.reporter import ReportEvent

    events: list[ReportEvent] = []

    class Capture:
        @hookimpl
        def janito_report(self, event: ReportEvent) -> None:
            events.append(event)

    @tool(permissions="r")
    class Chatty(BaseTool):
        """Report, asynchronously."""

        async def run(self) -> dict[str, Any]:
            """Report."""
            await asyncio.sleep(0)
            self.report_progress("half way")
            return {"success": True}

    reg.add_tool(Chatty)
    reg.plugins.register(Capture(), "tests:capture", None)
    call_tool("Chatty", {}, registry=reg, call_id="sync-1")

    async def main() -> None:
        await acall_tool("Chatty", {}, registry=reg, call_id="async-1")

    asyncio.run(main())
    assert [(e.message, e.call_id, e.tool) for e in events] == [
        ("half way", "sync-1", "Chatty"), ("half way", "async-1", "Chatty")]


def test_the_wrapper_of_an_async_tool_returns_its_coroutine(reg: Registry) -> None:
    wrapper = reg.get("AsyncEcho")
    assert wrapper is not None
    coroutine = wrapper(text="direct", cancel_token=CancelToken())
    assert asyncio.iscoroutine(coroutine)
    assert asyncio.run(coroutine)["text"] == "direct"


def test_a_function_returning_an_awaitable_is_awaited(reg: Registry) -> None:
    async def later(text: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"success": True, "text": text}

    @tool(permissions="r")
    def hands_back(text: str) -> Any:
        """Return a coroutine from a plain function.

        Args:
            text: What to echo.
        """
        return later(text)

    reg.add_tool(hands_back)
    assert call_tool("HandsBack", {"text": "t"}, registry=reg) == {"success": True, "text": "t"}


def test_writes_paths_must_name_parameters() -> None:
    with pytest.raises(TypeError, match="'nope'"):

        @tool(permissions="w", writes_paths=["nope"])
        class Bad(BaseTool):
            def run(self, path: str) -> dict[str, Any]:
                return {"success": True}

    with pytest.raises(TypeError, match="'nope'"):

        @tool(permissions="w", writes_paths="nope")
        def bad(path: str) -> dict[str, Any]:
            return {"success": True}

    @tool(permissions="w", writes_paths="path")
    def good(path: str) -> dict[str, Any]:
        """Write.

        Args:
            path: Where.
        """
        return {"success": True}

    from janito_core.decorator import tool_class

    assert tool_class(good).writes_paths == ("path",)


def test_which_calls_wait_for_which() -> None:
    from janito_core._writes import paths_named, paths_written, waits

    class Mover:
        writes_paths = ("source", "destination")

    class Reader:
        writes_paths = None

    root = "/ws"
    moved = paths_written(Mover, "w", {"source": "a/b.txt", "destination": ["c", "/ws/d/"]}, root)
    assert moved == (("ws", "a", "b.txt"), ("ws", "c"), ("ws", "d"))
    assert paths_written(Reader, "r", {}, root) == ()
    assert paths_written(Reader, "rx", {}, root) is None
    writes = [(("ws", "a"),), (), (("ws", "a", "b"),), None, (("ws", "z"),)]
    assert waits(writes) == [(), (), (0,), (0, 1, 2), (3,)]  # None: a barrier
    # reading what an earlier call writes, and writing what an earlier call read
    writes = [(("ws", "a"),), (), (), (("ws", "b"),)]
    named = [(("ws", "a"),), (("ws", "a"),), (("ws", "b"),), (("ws", "b"),)]
    assert waits(writes, named) == [(), (0,), (), (2,)]
    assert paths_named({"pattern": "def", "paths": ["x", "y/../z"], "count": 3}, root) == (
        ("ws", "def"), ("ws", "x"), ("ws", "z"))
