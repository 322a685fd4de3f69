"""A cancelled call stops: ``notifications/cancelled`` and a client that goes away.

``WaitForCancel`` (tests/site) writes ``M.started`` when it begins, then waits on its
``cancel_token``: ``M.cancelled`` says the token reached it, ``M`` that the wait ran out
without a cancellation. The SDK's own client calls it over stdio and over HTTP, and then
cancels the request (cancelling the task that awaits the call sends
``notifications/cancelled``), or goes away in the middle of the call.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import SERVE, HttpServer, child_env, run_async, stdio_params
from mcp.client import Client
from mcp.client.stdio import stdio_client

WAIT = 30  # the tool's own wait: far longer than any test may take


def _wait_for(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never appeared")
        time.sleep(0.02)


async def _await_file(path: Path, seconds: float = 30) -> None:
    await anyio.to_thread.run_sync(_wait_for, path, seconds)


def _assert_cancelled(workspace: Path, marker: str) -> None:
    _wait_for(workspace / f"{marker}.cancelled", 60)
    # The tool creates the file, then writes its reason: wait for the reason too.
    deadline = time.monotonic() + 60
    reason = ""
    while not reason and time.monotonic() < deadline:
        reason = (workspace / f"{marker}.cancelled").read_text(encoding="utf-8")
        if not reason:
            time.sleep(0.02)
    assert "cancelled the call or disconnected" in reason
    assert not (workspace / marker).exists(), "the tool ran to its end: it was not cancelled"


async def _cancel_one_call(client: Client, workspace: Path, marker: str) -> None:
    """Start the call, cancel it once it runs, and check the session still serves."""
    async with anyio.create_task_group() as group:
        async def call() -> None:
            await client.call_tool("WaitForCancel", {"marker": marker, "seconds": WAIT})
            raise AssertionError("a cancelled call returned a result")

        group.start_soon(call)
        await _await_file(workspace / f"{marker}.started")
        group.cancel_scope.cancel()
    await anyio.to_thread.run_sync(_assert_cancelled, workspace, marker)
    echoed = await client.call_tool("EchoText", {"text": "after"})
    assert echoed.structured_content == {"success": True, "text": "after", "times": 1}


def test_cancelled_over_stdio(workspace: Path, config_dir: Path) -> None:
    async def main() -> None:
        async with Client(stdio_client(stdio_params(workspace, config_dir, "-w"))) as client:
            await _cancel_one_call(client, workspace, "one")
            await _cancel_one_call(client, workspace, "two")

    run_async(main)


def test_cancelled_over_http(workspace: Path, config_dir: Path) -> None:
    server = HttpServer(workspace, config_dir, "-w")
    try:
        async def main() -> None:
            async with Client(server.url) as client:
                await _cancel_one_call(client, workspace, "one")

        run_async(main)
    finally:
        server.stop()


def test_uncancelled_call_runs_to_its_end(workspace: Path, config_dir: Path) -> None:
    """The control: without a cancellation the tool writes its marker and answers."""
    async def main() -> None:
        async with Client(stdio_client(stdio_params(workspace, config_dir, "-w"))) as client:
            result = await client.call_tool("WaitForCancel", {"marker": "m", "seconds": 0.2})
            assert result.structured_content == {"success": True, "waited": 0.2}

    run_async(main)
    assert (workspace / "m").exists() and not (workspace / "m.cancelled").exists()


KILLED_CLIENT = textwrap.dedent('''
    import os, sys, time
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main():
        transport, mode, marker = sys.argv[1:4]
        if transport == "stdio":
            params = StdioServerParameters(command=sys.executable, args=sys.argv[4:],
                                           cwd=os.getcwd(), env=dict(os.environ))
            target = stdio_client(params)
        else:
            target = sys.argv[4]
        async with Client(target, mode=mode) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "WaitForCancel",
                                 {"marker": marker, "seconds": 30})
                await anyio.sleep(60)

    anyio.run(main)
''')


@pytest.mark.parametrize(("transport", "mode", "flags"), [
    ("stdio", "auto", ()),
    ("http", "auto", ()),
    ("http", "legacy", ()),
    ("http", "legacy", ("--stateless",)),
], ids=["stdio", "http-per-request", "http-session", "http-stateless"])
def test_client_killed_in_the_middle_of_a_call(transport: str, mode: str, flags: tuple[str, ...],
                                               workspace: Path, config_dir: Path,
                                               tmp_path: Path) -> None:
    """A client process that dies (SIGKILL: no goodbye, no cancellation) cancels its call:
    over stdio the server sees its input end, over HTTP the stream of the call's request
    close. In session mode (the handshake era's ``Mcp-Session-Id``) the session outlives
    the connection, and the call is still stopped: with no event store, nothing the
    call answered could reach a client again."""
    script = tmp_path / "client.py"
    script.write_text(KILLED_CLIENT, encoding="utf-8")
    server = HttpServer(workspace, config_dir, "-w", *flags) if transport == "http" else None
    client = None
    try:
        args = [sys.executable, str(script), transport, mode, "killed"]
        args += [server.url] if server is not None else [*SERVE[1:], "-t", "mcptest", "-w"]
        client = subprocess.Popen(args, cwd=workspace, env=child_env(config_dir),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        _wait_for(workspace / "killed.started")
        client.kill()  # the client only: a stdio server is left with a closed input
        client.wait(20)
        _assert_cancelled(workspace, "killed")
        if server is not None:
            async def still_serving() -> Any:
                async with Client(server.url, mode=mode) as again:
                    return await again.call_tool("EchoText", {"text": "after"})

            assert run_async(still_serving).structured_content["text"] == "after"
    finally:
        if client is not None:
            try:
                os.killpg(client.pid, signal.SIGKILL)  # whatever the client started
            except ProcessLookupError:
                pass
        if server is not None:
            server.stop()


def test_a_tool_that_ignores_its_token_does_not_hold_the_session(
        workspace: Path, config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In process: a cancelled call whose tool never looks at the token lets the handler go
    after the grace period, and the tool's thread finishes on its own later."""
    import threading

    from janito_mcp import _serve

    from janito_core import BaseTool, Privileges, Registry, Workspace, tool

    release = threading.Event()
    finished: list[bool] = []

    @tool(permissions="r")
    class Stubborn(BaseTool):
        """Ignore cancellation."""

        def run(self) -> dict[str, Any]:
            """Block."""
            release.wait(30)
            finished.append(True)
            return {"success": True}

    monkeypatch.setattr(_serve, "CANCEL_GRACE", 0.3)
    registry = Registry(privileges=Privileges(read=True, write=False, execute=False), autoload=(),
                        workspace=Workspace(workspace))
    registry.add_tool(Stubborn, toolset="t", distribution="t")
    served = _serve.JanitoServer(registry)

    async def main() -> None:
        async with Client(served.server) as client:
            with anyio.move_on_after(0.5):
                await client.call_tool("Stubborn", {})
            started = time.monotonic()
            assert (await client.call_tool("Stubborn", {"x": 1})).is_error  # still answers
            assert time.monotonic() - started < 5

    try:
        run_async(main)
    finally:
        release.set()
    deadline = time.monotonic() + 10
    while not finished and time.monotonic() < deadline:
        time.sleep(0.02)
    assert finished == [True]
    assert not served.forwarder.channels
