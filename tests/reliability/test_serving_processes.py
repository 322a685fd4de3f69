"""A served RunBashCode whose client cancels or goes away: every process it started ends.

The real ``janito mcp serve -x`` over stdio, driven by the MCP SDK's own client. The code
starts processes meant to outlive it (a ``setsid`` child, a ``nohup`` child, a background
job of a background subshell), each named by a marker unique to the test, writes
``started`` and sleeps. The client then cancels the request (the SDK sends
``notifications/cancelled``) or is killed outright; afterwards no process carrying the
marker may be left, whichever sandbox mechanism runs the code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
import rel_support as rel

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="counts processes through /proc")


def survivors(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def wait_for_none(marker: str, seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = survivors(marker)
        if not left:
            return []
        time.sleep(0.1)
    return survivors(marker)


def escaping_code(marker: str) -> str:
    """Shell code whose processes all carry ``marker`` and try every way to outlive it."""
    sleeper = f"exec -a {marker} sleep 300"
    return (f"setsid bash -c '{sleeper}' & nohup bash -c '{sleeper}' >/dev/null 2>&1 & "
            f"( ( bash -c '{sleeper}' & ) & ) ; "
            f"echo started > started-{marker}; exec -a {marker} sleep 300")


def wait_for_survivors(marker: str, count: int, seconds: float = 60) -> None:
    """Wait until ``count`` processes carry ``marker``. The escapes are started with "&",
    each becoming its sleeper when the scheduler runs it; and the code's files are not
    seen outside before the call ends, when a journaled call shows the code an overlay."""
    deadline = time.monotonic() + seconds
    while len(survivors(marker)) < count:
        assert time.monotonic() < deadline, f"fewer than {count} processes named {marker} ran"
        time.sleep(0.05)


def serve_args(mechanism: str) -> tuple[list[str], dict[str, str]]:
    problem = rel.mechanism_problem(mechanism)
    if problem is not None:
        pytest.skip(f"{mechanism} cannot run here: {problem}")
    command = rel.janito_command()
    env = dict(os.environ)
    env["JANITO_SANDBOX_MECHANISM"] = mechanism
    return [*command, "mcp", "serve", "-x", "-w"], env


MECHANISMS = ("bubblewrap", "supervisor")


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_cancelled_served_call_leaves_no_process(mechanism: str, tmp_path: Path) -> None:
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    args, env = serve_args(mechanism)
    params = StdioServerParameters(command=args[0], args=args[1:], cwd=str(workspace), env=env)

    async def main() -> None:
        async with Client(stdio_client(params)) as client:
            async with anyio.create_task_group() as group:
                async def call() -> None:
                    await client.call_tool("RunBashCode", {"code": escaping_code(marker),
                                                           "timeout": 600})

                group.start_soon(call)
                await anyio.to_thread.run_sync(wait_for_survivors, marker, 4)
                group.cancel_scope.cancel()
            left = await anyio.to_thread.run_sync(wait_for_none, marker)
            assert left == [], f"processes outlived the cancelled call: {left}"
            after = await client.call_tool("RunBashCode", {"code": "echo still serving"})
            assert after.structured_content["stdout"] == "still serving\n"

    try:
        anyio.run(main)
    finally:
        for pid in survivors(marker):
            os.kill(pid, 9)
    rel.count("served calls cancelled with escaping processes, none left")


KILLED_CLIENT = textwrap.dedent('''
    import json, os, sys
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main():
        args = json.loads(sys.argv[2])
        params = StdioServerParameters(command=args[0], args=args[1:], cwd=os.getcwd(),
                                       env=dict(os.environ))
        async with Client(stdio_client(params)) as client:
            await client.call_tool("RunBashCode", {"code": sys.argv[1], "timeout": 600})

    anyio.run(main)
''')


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_client_killed_mid_call_leaves_no_process(mechanism: str, tmp_path: Path) -> None:
    import json

    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "client.py"
    script.write_text(KILLED_CLIENT, encoding="utf-8")
    args, env = serve_args(mechanism)
    client = subprocess.Popen([sys.executable, str(script), escaping_code(marker), json.dumps(args)],
                              cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        wait_for_survivors(marker, 4)
        client.kill()  # no goodbye, no cancellation: the server only sees its input end
        client.wait(20)
        left = wait_for_none(marker)
        assert left == [], f"processes outlived the client: {left}"
    finally:
        if client.poll() is None:
            client.kill()
        for pid in survivors(marker):
            os.kill(pid, 9)
    rel.count("served calls whose client was killed, none left")


KILLED_HTTP_CLIENT = textwrap.dedent('''
    import sys
    import anyio
    from mcp.client import Client

    async def main():
        async with Client(sys.argv[1], mode=sys.argv[2]) as client:
            await client.call_tool("RunBashCode", {"code": sys.argv[3], "timeout": 600})

    anyio.run(main)
''')


def serve_http(workspace: Path, log: Path, *flags: str) -> tuple[subprocess.Popen[bytes], str]:
    """``janito mcp serve -x -w --transport http --port 0``, and the URL it printed."""
    import re

    command = rel.janito_command()
    with log.open("wb") as err:
        server = subprocess.Popen([*command, "mcp", "serve", "-x", "-w", "--transport", "http",
                                   "--port", "0", *flags], cwd=workspace,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        found = re.search(r"listening on (http://\S+)", log.read_text(encoding="utf-8", errors="replace"))
        if found:
            return server, found.group(1)
        time.sleep(0.05)
    server.kill()
    raise AssertionError("the HTTP server did not start:\n" + log.read_text(errors="replace"))


@pytest.mark.parametrize(("mode", "flags"), [("legacy", ()), ("legacy", ("--stateless",)),
                                             ("auto", ())],
                         ids=["session", "stateless", "per-request"])
def test_a_dropped_http_connection_stops_its_served_call(mode: str, flags: tuple[str, ...],
                                                         tmp_path: Path) -> None:
    """The MCP SDK's client over streamable HTTP, killed while RunBashCode sleeps: the
    connection that carried the call closes, and every process of the call ends, in the
    session mode of the handshake era as in the stateless and per-request ones."""
    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "client.py"
    script.write_text(KILLED_HTTP_CLIENT, encoding="utf-8")
    server, url = serve_http(workspace, tmp_path / "server.log", *flags)
    client = None
    try:
        client = subprocess.Popen([sys.executable, str(script), url, mode, escaping_code(marker)],
                                  cwd=workspace, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        wait_for_survivors(marker, 4)
        client.kill()  # no goodbye, no cancellation, no DELETE of the session
        client.wait(20)
        left = wait_for_none(marker)
        assert left == [], f"processes outlived the dropped connection: {left}"
        assert server.poll() is None, "the server went down with its client"
    finally:
        if client is not None and client.poll() is None:
            client.kill()
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        for pid in survivors(marker):
            os.kill(pid, 9)
    rel.count("served HTTP calls whose connection dropped, none left")
