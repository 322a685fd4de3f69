"""HTTP serving under hostile clients: slow headers and bodies, and too many connections.

Real servers (``janito mcp serve --transport http``) and real sockets on loopback. The
attacking sockets come from 127.0.0.2 (all of 127.0.0.0/8 is loopback), so the limit per
client address holds them back while a client from 127.0.0.1 is served. Nothing here
measures time: a short timeout is set through its option, and each wait is only bounded.
"""

from __future__ import annotations

import http.client
import json
import resource
import selectors
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import HttpServer, run_async
from test_serve_auth import TOKEN, TOKEN_ENV, _client

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="binds 127.0.0.2 and reads /proc")

ATTACKERS = 1100
#: What a half-open connection sends: the start of a request whose headers never end.
PARTIAL = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}).encode()


def _soft_descriptors(limit: int) -> Callable[[], None]:
    """A ``preexec_fn`` that starts the server with ``limit`` as its soft RLIMIT_NOFILE, the
    default of many systems, which 1,100 connections exceed."""
    def apply() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    return apply


@pytest.fixture(autouse=True)
def _descriptors_for_the_attack() -> Iterator[None]:
    """This process holds the attacking sockets: it needs more than 1,024 descriptors."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = ATTACKERS + 512
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the hard limit on descriptors ({hard}) is below {needed}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _connect(port: int, source: str = "127.0.0.1", data: bytes = b"") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    if data:
        sock.sendall(data)
    return sock


def _half_open(port: int, count: int, source: str = "127.0.0.2") -> list[socket.socket]:
    return [_connect(port, source, PARTIAL) for _ in range(count)]


def _initialize(port: int, token: str | None = None, source: str = "127.0.0.1") -> int:
    """The status of one raw ``initialize`` POST from ``source``."""
    sock = _connect(port, source)
    sock.settimeout(30)
    headers = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               f"Content-Length: {len(INITIALIZE)}\r\nConnection: close\r\n")
    if token is not None:
        headers += f"Authorization: Bearer {token}\r\n"
    sock.sendall(headers.encode() + b"\r\n" + INITIALIZE)
    response = http.client.HTTPResponse(sock)
    try:
        response.begin()
        return response.status
    finally:
        response.close()
        sock.close()


def _answers(sockets: list[socket.socket], seconds: float = 120) -> list[bytes | None]:
    """What the server wrote on each socket before closing it (None: reset); an
    AssertionError when some socket is still open after ``seconds``."""
    got = {sock: b"" for sock in sockets}
    ended: dict[socket.socket, bytes | None] = {}
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while len(ended) < len(sockets) and time.monotonic() < deadline:
            for key, _ in selector.select(1.0):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    chunk = sock.recv(65536)
                except ConnectionResetError:
                    ended[sock] = None
                    selector.unregister(sock)
                    continue
                if chunk:
                    got[sock] += chunk
                else:
                    ended[sock] = got[sock]
                    selector.unregister(sock)
    left = len(sockets) - len(ended)
    assert left == 0, f"{left} of {len(sockets)} connections were never closed by the server"
    return [ended[sock] for sock in sockets]


def _status(answer: bytes | None) -> int | None:
    if not answer:
        return None
    return int(answer.split(b" ", 2)[1])


def _close(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def _soft_limit_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text(encoding="utf-8").splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no 'Max open files' line")


def _plain(tmp_path: Path, *flags: str, env: dict[str, str] | None = None,
           preexec: Callable[[], None] | None = None) -> HttpServer:
    for name in ("ws", "cfg"):
        (tmp_path / name).mkdir(exist_ok=True)
    return HttpServer(tmp_path / "ws", tmp_path / "cfg", *flags, env=env, preexec=preexec)


def _server(tmp_path: Path, *flags: str) -> HttpServer:
    """``--host 0.0.0.0`` with a token (the exposed case), started with 1,024 descriptors."""
    return _plain(tmp_path, "--host", "0.0.0.0", *flags, env={TOKEN_ENV: TOKEN},
                  preexec=_soft_descriptors(1024))


def test_an_authenticated_client_is_served_beside_1100_half_open_connections(
        tmp_path: Path) -> None:
    """The timeout is out of reach here, so the attack holds its connections for the whole
    test: the per-client limit and the raised descriptor limit are what keep serving."""
    server = _server(tmp_path, "--header-timeout", "600")
    attackers: list[socket.socket] = []
    try:
        # serving lifted its soft limit above the cap and its own margin, so the cap decides
        assert _soft_limit_of(server.process.pid) >= 1024 + 256
        attackers = _half_open(server.port, ATTACKERS)
        url = f"http://127.0.0.1:{server.port}/mcp"

        async def served() -> tuple[set[str], Any, float]:
            started = time.monotonic()
            with anyio.fail_after(120):  # a bound on a hang, not a measure
                async with _client(url, TOKEN) as client:
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    echoed = await client.call_tool("EchoText", {"text": "through"})
            return names, echoed, time.monotonic() - started

        names, echoed, took = run_async(served)
        assert "EchoText" in names
        assert echoed.structured_content["text"] == "through"
        print(f"served beside {ATTACKERS} half-open connections in {took:.3f} s")
        # the attack is still there: nothing above timed it out
        assert _initialize(server.port, TOKEN) == 200
    finally:
        _close(attackers)
        server.stop()


def test_half_open_connections_are_closed_by_the_header_timeout(tmp_path: Path) -> None:
    server = _server(tmp_path, "--header-timeout", "1")
    attackers: list[socket.socket] = []
    try:
        attackers = _half_open(server.port, ATTACKERS)
        statuses = [_status(answer) for answer in _answers(attackers)]
        # held ones are answered 408 when their time is up; the limit per client (256 by
        # default) turned the others away at once (429, or a reset of what they sent)
        assert set(statuses) <= {408, 429, None}
        assert statuses.count(408) >= 256
        assert _initialize(server.port, TOKEN) == 200
    finally:
        _close(attackers)
        server.stop()


def test_a_second_request_whose_headers_never_end_is_timed_out(tmp_path: Path) -> None:
    """uvicorn's keep-alive timeout stops at the first byte of the next request; the
    header timeout covers every request of a connection, not only the first."""
    server = _plain(tmp_path, "--header-timeout", "1")
    try:
        sock = _connect(server.port)
        sock.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        first = http.client.HTTPResponse(sock)
        first.begin()
        first.read()
        assert first.status == 406  # no Accept: text/event-stream; the connection stays open
        sock.sendall(PARTIAL)
        (answer,) = _answers([sock])
        assert _status(answer) == 408
    finally:
        server.stop()


def test_a_body_that_never_ends_is_timed_out(tmp_path: Path) -> None:
    server = _plain(tmp_path, "--body-timeout", "1")
    try:
        sock = _connect(server.port)
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                     "Content-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\n"
                     f"Content-Length: {len(INITIALIZE)}\r\n\r\n".encode() + INITIALIZE[:10])
        (answer,) = _answers([sock])
        assert _status(answer) == 408
        assert _initialize(server.port) == 200
    finally:
        server.stop()


def test_the_limit_per_client_and_the_cap(tmp_path: Path) -> None:
    server = _plain(tmp_path, "--header-timeout", "600", "--max-connections", "4",
                    "--max-connections-per-client", "3")
    held: list[socket.socket] = []
    try:
        held = _half_open(server.port, 3)
        # a fourth from the same address is turned away; it sent nothing, so it reads why
        (answer,) = _answers([_connect(server.port, "127.0.0.2")])
        assert _status(answer) == 429 and answer is not None
        assert b"too many connections from 127.0.0.2" in answer
        # another address is served, and takes the last place under the cap
        assert _initialize(server.port) == 200
        held += _half_open(server.port, 1, source="127.0.0.3")
        (answer,) = _answers([_connect(server.port)])
        assert _status(answer) == 503
        # a place comes free when a connection closes
        held.pop().close()
        deadline = time.monotonic() + 60
        while True:
            try:
                if _initialize(server.port) == 200:
                    break
            except (ConnectionError, http.client.HTTPException):
                pass
            assert time.monotonic() < deadline, "a closed connection never freed its place"
            time.sleep(0.05)
    finally:
        _close(held)
        server.stop()


def test_a_cap_above_the_descriptors_available_is_lowered_and_said(tmp_path: Path) -> None:
    def low_hard_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1500))

    server = _plain(tmp_path, "--max-connections", "5000", preexec=low_hard_limit)
    try:
        banner = "\n".join(server.banner)
        assert _soft_limit_of(server.process.pid) == 1500
        assert "at most 1244 connections at once" in banner
        assert _initialize(server.port) == 200
    finally:
        server.stop()


@pytest.mark.parametrize("flag", ["--header-timeout", "--body-timeout", "--max-connections",
                                  "--max-connections-per-client"])
def test_the_options_are_documented_in_help(flag: str) -> None:
    import subprocess

    from conftest import SERVE

    done = subprocess.run([*SERVE, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert flag in text
    entry = text.split(flag, 1)[1][:300]
    assert "default" in entry
