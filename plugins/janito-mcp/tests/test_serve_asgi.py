"""``janito_mcp.asgi:create_app`` under the ASGI servers people run, the health endpoints,
and the drain on SIGTERM.

uvicorn (its factory mode, two workers, janito's guarded h11), gunicorn with two uvicorn
workers, and hypercorn each start the application from ``JANITO_MCP_SERVE`` and answer
the SDK's client. ``janito mcp serve`` answers the Kubernetes probes, and on SIGTERM a
call still running past ``--shutdown-grace`` answers ``cancelled`` instead of a dropped
connection.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import HttpServer, child_env, run_async
from mcp.client import Client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str) -> tuple[int, dict[str, Any]]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def wait_ready(base: str, process: subprocess.Popen[Any], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            if get(base + "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the server never became ready")


def asgi_servers(port: int) -> dict[str, list[str]]:
    bind = f"127.0.0.1:{port}"
    return {
        "uvicorn": [sys.executable, "-m", "uvicorn", "--factory", "janito_mcp.asgi:create_app",
                    "--host", "127.0.0.1", "--port", str(port), "--workers", "2",
                    "--http", "janito_mcp.asgi:GuardedH11Protocol", "--log-level", "warning"],
        "gunicorn": [sys.executable, "-m", "gunicorn", "-k", "uvicorn_worker.UvicornWorker",
                     "-w", "2", "-b", bind, "--log-level", "warning",
                     "janito_mcp.asgi:create_app()"],
        "hypercorn": [sys.executable, "-m", "hypercorn", "-b", bind, "--log-level", "warning",
                      "janito_mcp.asgi:create_app()"],
    }


@pytest.mark.parametrize("server", ["uvicorn", "gunicorn", "hypercorn"])
def test_asgi_servers_run_the_application(server: str, workspace: Path,
                                          config_dir: Path) -> None:
    port = free_port()
    env = child_env(config_dir, JANITO_MCP_SERVE=f"-t mcptest --stateless --workspace {workspace}")
    process = subprocess.Popen(asgi_servers(port)[server], cwd=workspace, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, process)
        assert get(base + "/healthz") == (200, {"status": "alive"})

        async def main() -> Any:
            async with Client(base + "/mcp") as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                result = await client.call_tool("EchoText", {"text": "hi"})
                return names, result.structured_content

        names, result = run_async(main)
        assert "DoWork" in names and "WriteNote" not in names  # read-only by default
        assert result == {"success": True, "text": "hi", "times": 1}
    finally:
        process.terminate()
        try:
            _, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
    assert "Traceback" not in err, err


def test_options_janito_mcp_serve_would_refuse_stop_the_application(workspace: Path,
                                                                    config_dir: Path) -> None:
    env = child_env(config_dir, JANITO_MCP_SERVE="--host 0.0.0.0 --bogus")
    done = subprocess.run([sys.executable, "-c", "from janito_mcp.asgi import create_app; "
                           "create_app()"], cwd=workspace, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and "JANITO_MCP_SERVE: unrecognized arguments: --bogus" in done.stderr
    env = child_env(config_dir, JANITO_MCP_SERVE="--host 0.0.0.0")
    done = subprocess.run([sys.executable, "-c", "from janito_mcp.asgi import create_app; "
                           "create_app()"], cwd=workspace, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and "refusing to serve on 0.0.0.0" in done.stderr


def test_readiness_says_draining_once_shutdown_began(workspace: Path, config_dir: Path) -> None:
    from janito_mcp._serve import ServeOptions, build_app

    app = build_app(ServeOptions(transport="http", toolsets=("mcptest",),
                                 workspace=str(workspace)))
    assert anyio.run(app.readiness) == (200, {"status": "ready"})
    app.drain.begin()
    assert anyio.run(app.readiness)[0] == 503


def test_sigterm_lets_calls_finish_then_cancels_them(workspace: Path, config_dir: Path) -> None:
    server = HttpServer(workspace, config_dir, "--stateless", "--shutdown-grace", "3",
                        "--task-store", "off")
    assert get(server.url.rsplit("/", 1)[0] + "/readyz") == (200, {"status": "ready"})

    async def main() -> Any:
        results: dict[str, Any] = {}
        started = {"short": anyio.Event(), "long": anyio.Event()}

        async def call(name: str, seconds: float) -> None:
            async def progress(value: float, total: float | None, message: str | None) -> None:
                started[name].set()

            async with Client(server.url) as client:
                # listed first: the client checks a result against the listed schemas, and
                # would list them after the answer, when the server no longer listens
                await client.list_tools()
                result = await client.call_tool("DoWork", {"seconds": seconds,
                                                           "steps": int(seconds * 4)},
                                                progress_callback=progress)
                results[name] = result.structured_content

        async with anyio.create_task_group() as group:
            group.start_soon(call, "short", 1.0)
            group.start_soon(call, "long", 60.0)
            for event in started.values():
                await event.wait()
            os.kill(server.process.pid, signal.SIGTERM)
        return results

    began = time.monotonic()
    results = run_async(main)
    assert time.monotonic() - began < 30
    assert results["short"]["success"] is True  # finished within the grace
    assert results["long"]["success"] is False
    assert results["long"]["error_type"] == "cancelled"
    assert "the server is shutting down" in results["long"]["error"]
    server.process.wait(30)
