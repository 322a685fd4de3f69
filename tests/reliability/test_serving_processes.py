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


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def serve_args(mechanism: str) -> tuple[list[str], dict[str, str]]:
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
                await anyio.to_thread.run_sync(wait_for, workspace / f"started-{marker}")
                assert len(survivors(marker)) >= 4
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
        wait_for(workspace / f"started-{marker}")
        assert len(survivors(marker)) >= 4
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
