"""Two janito instances behind HAProxy, tasks in Redis: what a deployment at scale does.

The test starts Redis (Debian's ``redis-server``) and HAProxy (Debian's ``haproxy``) on
loopback, and two ``janito mcp serve --stateless`` on two ports, both requiring the same
token and keeping tasks in that Redis; HAProxy spreads requests over them round-robin and
checks each one's ``/readyz``. The SDK's client talks to HAProxy; killing one instance
loses only the calls it was running; a plain HTTP client through HAProxy meets the same
authentication and limits; a task started through one instance is polled, cancelled and
fetched through the other; the answer to a policy ask is taken once across both.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import HttpServer, run_async
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from tasks_client import Tasks, cancel_task, wait_until_done
from test_serve_auth import TOKEN, TOKEN_ENV

HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
REDIS = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin")
pytestmark = pytest.mark.skipif(not (HAPROXY and REDIS),
                                reason="needs haproxy and redis-server (.ci/run installs them)")
POLICY = '[[rules]]\naction = "ask"\ntools = ["WriteNote"]\nreason = "notes need a yes"\n'
YES = {"janito.approve": types.ElicitResult(action="accept", content={"approve": True})}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} never listened on {port}")


def stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


HAPROXY_CONFIG = """
global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout http-request 10s
    timeout check 5s
    retries 2
    option redispatch
frontend mcp
    bind 127.0.0.1:{port}
    default_backend janito
backend janito
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 500ms fall 3 rise 1
    server a 127.0.0.1:{a} check
    server b 127.0.0.1:{b} check
"""


class Cluster:
    """Redis, two janito instances on fixed ports, HAProxy in front."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.redis_port = free_port()
        self.redis = subprocess.Popen(
            [str(REDIS), "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(root)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.redis_port, self.redis, "redis-server")
        self.ports = {"a": free_port(), "b": free_port()}
        self.instances = {name: self.start(name) for name in self.ports}
        self.port = free_port()
        config = root / "haproxy.cfg"
        config.write_text(HAPROXY_CONFIG.format(port=self.port, **self.ports), encoding="utf-8")
        self.haproxy = subprocess.Popen([str(HAPROXY), "-f", str(config), "-db"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.haproxy, "haproxy")
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def start(self, name: str) -> HttpServer:
        folder = self.root / name
        (folder / "ws" / ".janito").mkdir(parents=True, exist_ok=True)
        (folder / "ws" / ".janito" / "policy.toml").write_text(POLICY, encoding="utf-8")
        (folder / "cfg").mkdir(exist_ok=True)
        return HttpServer(folder / "ws", folder / "cfg", "-w", "--stateless",
                          "--port", str(self.ports[name]),
                          "--task-store", f"redis://127.0.0.1:{self.redis_port}/0",
                          "--task-after", "0.5", env={TOKEN_ENV: TOKEN})

    def pid(self, name: str) -> int:
        return self.instances[name].process.pid

    def direct(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}/mcp"

    def close(self) -> None:
        stop(self.haproxy)
        for instance in self.instances.values():
            instance.stop()
        stop(self.redis)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    running = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield running
    finally:
        running.close()


def client(url: str, token: str = TOKEN, tasks: bool = False) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

    async def never_asked(context: Any, params: Any) -> Any:
        raise AssertionError("janito asks through input-required results on this era")

    return Client(streamable_http_client(url, http_client=http),
                  extensions=[Tasks()] if tasks else None, elicitation_callback=never_asked)


def raw_post(url: str, body: bytes, authorization: str | None) -> int:
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_calls_through_the_balancer_spread_over_both_instances(cluster: Cluster) -> None:
    both = {cluster.pid("a"), cluster.pid("b")}

    async def main() -> list[int]:
        pids: list[int] = []
        async with client(cluster.url) as session:
            await session.list_tools()
            # round-robin alternates once HAProxy's checks have seen both instances ready
            while set(pids) != both and len(pids) < 40:
                pids.append((await session.call_tool("DoWork", {})).structured_content["pid"])
        return pids

    pids = run_async(main)
    assert set(pids) == both, pids


def test_an_http_client_meets_the_same_auth_and_limits(cluster: Cluster) -> None:
    body = json.dumps(INITIALIZE).encode()
    for _ in range(2):  # once on each instance
        assert raw_post(cluster.url, body, None) == 401
        assert raw_post(cluster.url, body, "Bearer wrong") == 401
        assert raw_post(cluster.url, body, f"Bearer {TOKEN}") == 200
    # the body limit of the MCP endpoint (4 MiB) holds through the balancer
    padded = json.dumps(dict(INITIALIZE, pad="x" * (5 * 1024 * 1024))).encode()
    assert raw_post(cluster.url, padded, f"Bearer {TOKEN}") == 413

    async def refused() -> str:
        try:
            async with client(cluster.url, token="wrong") as session:
                await session.list_tools()
        except BaseException as exc:  # the SDK's client raises a group of what it met
            return repr(exc)
        return "listed"

    assert run_async(refused) != "listed"


def test_a_task_is_polled_cancelled_and_fetched_through_the_other_instance(
        cluster: Cluster) -> None:
    async def main() -> Any:
        async with client(cluster.direct("a"), tasks=True) as on_a, \
                client(cluster.direct("b"), tasks=True) as on_b:
            await on_a.list_tools()
            done = await on_a.session.call_tool("DoWork", {"seconds": 2, "steps": 4},
                                                allow_claimed=True)
            doomed = await on_a.session.call_tool("DoWork", {"seconds": 60, "steps": 60},
                                                  allow_claimed=True)
            seen: list[str] = []
            finished = await wait_until_done(on_b.session, done.task_id, seen)
            started = time.monotonic()
            await cancel_task(on_b.session, doomed.task_id)
            cancelled = await wait_until_done(on_b.session, doomed.task_id, timeout=30)
            return finished, seen, cancelled, time.monotonic() - started

    finished, seen, cancelled, took = run_async(main)
    assert finished.status == "completed" and finished.result is not None
    assert finished.result["structuredContent"]["pid"] == cluster.pid("a")
    assert any(message.startswith("step ") for message in seen), seen
    assert cancelled.status == "cancelled"
    assert cancelled.status_message == "the client cancelled the task"
    assert took < 30  # the tool saw its token: it would have run 60 s


def test_one_yes_runs_one_call_whichever_instance_it_reaches(cluster: Cluster) -> None:
    """Both instances open the state (its key comes from the token they share); the nonce
    taken by one is in Redis, so the same yes replayed to the other runs nothing."""
    note = {"filepath": "asked.txt", "text": "written"}

    async def main() -> list[Any]:
        async with client(cluster.direct("a")) as on_a, client(cluster.direct("b")) as on_b:
            await on_a.list_tools()
            await on_b.list_tools()
            asked = await on_a.session.call_tool("WriteNote", note, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult), asked
            runs = []
            for session in (on_b.session, on_a.session):
                runs.append(await session.call_tool(
                    "WriteNote", note, input_responses=YES, request_state=asked.request_state,
                    allow_input_required=True))
            return [run.structured_content for run in runs]

    on_b, on_a = run_async(main)
    assert on_b["success"] is True, on_b
    assert (cluster.root / "b" / "ws" / "asked.txt").exists()
    assert on_a["success"] is False and "used already" in on_a["error"], on_a
    assert not (cluster.root / "a" / "ws" / "asked.txt").exists()


def test_killing_one_instance_loses_only_its_calls(cluster: Cluster) -> None:
    """Runs last in this module: it kills instance b, then starts it again."""

    async def main() -> tuple[list[Any], list[int]]:
        outcomes: list[Any] = [None] * 8
        started = [anyio.Event() for _ in outcomes]

        async def call(index: int) -> None:
            async def progress(value: float, total: float | None, message: str | None) -> None:
                started[index].set()

            try:
                async with client(cluster.url) as session:
                    await session.list_tools()
                    result = await session.call_tool("DoWork", {"seconds": 3, "steps": 12},
                                                     progress_callback=progress)
                    outcomes[index] = result.structured_content
            except Exception as exc:  # the cut connection of a killed instance
                started[index].set()
                outcomes[index] = exc

        with anyio.fail_after(90):
            async with anyio.create_task_group() as group:
                for index in range(len(outcomes)):
                    group.start_soon(call, index)
                for event in started:
                    await event.wait()
                os.kill(cluster.pid("b"), signal.SIGKILL)
        after: list[int] = []
        async with client(cluster.url) as session:
            await session.list_tools()
            for _ in range(4):
                after.append((await session.call_tool("DoWork", {})).structured_content["pid"])
        return outcomes, after

    killed = cluster.pid("b")
    outcomes, after = run_async(main)
    cluster.instances["b"].process.wait(10)
    served = [o for o in outcomes if isinstance(o, dict)]
    failed = [o for o in outcomes if not isinstance(o, dict)]
    assert all(o["success"] and o["pid"] == cluster.pid("a") for o in served), outcomes
    assert served and failed, outcomes  # round-robin put calls on both
    assert all(isinstance(o, Exception) for o in failed), outcomes
    assert set(after) == {cluster.pid("a")}  # the balancer took b out
    cluster.instances["b"] = cluster.start("b")
    assert cluster.pid("b") != killed
