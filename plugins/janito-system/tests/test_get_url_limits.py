"""GetUrl's address policy, its whole-exchange deadline and its size ceiling.

Every connection here goes to 127.0.0.1 (or 127.0.0.2, also this machine). Names that
would resolve elsewhere are answered by a patched resolver, and an address the policy
lets through but that is not on this machine is never connected to: the socket layer
is patched to refuse it first.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Handler, LoopbackServer, _serving
from janito_system.get_url import DEFAULT_MAX_BYTES, MAX_BYTES_LIMIT, MAX_REDIRECTS

from janito_core.network import private_network
from janito_core.testing import ToolsetTester


@pytest.fixture
def system(janito: ToolsetTester) -> ToolsetTester:
    janito.load("system", privileges="r")
    return janito


@pytest.fixture
def http_server() -> Iterator[LoopbackServer]:
    yield from _serving(LoopbackServer())


class _SecondServer(LoopbackServer):
    """A server on 127.0.0.2, for redirects to another address of this machine."""

    def __init__(self) -> None:
        super().__init__("127.0.0.2")


@pytest.fixture
def second_server() -> Iterator[LoopbackServer]:
    try:
        server = _SecondServer()
    except OSError as exc:
        pytest.skip(f"127.0.0.2 cannot be bound here: {exc}")
    yield from _serving(server)


class _Resolver:
    """``socket.getaddrinfo`` answering the names of a test; counts the look-ups."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.lookups: list[str] = []
        self.real = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in self.names:
            self.lookups.append(host)
            return self.real(self.names[host], port, *args, **kwargs)
        return self.real(host, port, *args, **kwargs)


# -- the private-network policy -----------------------------------------------------------


def test_a_local_call_may_reach_loopback(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/json")
    assert result["success"] is True, result


@pytest.mark.parametrize("how", ["host", "environment"])
def test_loopback_is_refused_when_the_policy_says_so(
        how: str, system: ToolsetTester, http_server: LoopbackServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "environment":
        monkeypatch.setenv("JANITO_PRIVATE_NETWORK", "refuse")
        result = system.call("GetUrl", url=http_server.base + "/json")
    else:
        with private_network(False):
            result = system.call("GetUrl", url=http_server.base + "/json")
    assert result["success"] is False
    assert result["error_type"] == "address_refused"
    assert "127.0.0.1 is a loopback address" in result["error"]
    assert "JANITO_PRIVATE_NETWORK=allow" in result["error"]
    assert http_server.paths == []


def test_the_host_s_choice_beats_the_environment(system: ToolsetTester, http_server: LoopbackServer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_PRIVATE_NETWORK", "refuse")
    with private_network(True):
        assert system.call("GetUrl", url=http_server.base + "/json")["success"] is True
    monkeypatch.setenv("JANITO_PRIVATE_NETWORK", "alow")  # a typo refuses rather than opens
    assert system.call("GetUrl", url=http_server.base + "/json")["error_type"] == "address_refused"


def test_a_name_is_resolved_once_and_the_checked_address_is_the_one_connected(
        system: ToolsetTester, http_server: LoopbackServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    port = http_server.server_address[1]
    resolver = _Resolver({"rebind.test": "127.0.0.1"})
    monkeypatch.setattr(socket, "getaddrinfo", resolver)

    def no_second_resolution(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("socket.create_connection resolves the name a second time")

    monkeypatch.setattr(socket, "create_connection", no_second_resolution)
    allowed = system.call("GetUrl", url=f"http://rebind.test:{port}/json")
    assert allowed["success"] is True, allowed
    assert resolver.lookups == ["rebind.test"]
    assert http_server.paths == ["/json"]

    with private_network(False):
        refused = system.call("GetUrl", url=f"http://rebind.test:{port}/json")
    assert refused["error_type"] == "address_refused"
    assert "rebind.test resolves to 127.0.0.1, a loopback address" in refused["error"]
    assert resolver.lookups == ["rebind.test"] * 2
    assert http_server.paths == ["/json"]


def test_a_public_address_is_let_through(system: ToolsetTester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy passes a public address on to connect (which is stopped right there)."""
    monkeypatch.setattr(socket, "getaddrinfo", _Resolver({"public.test": "192.0.43.10"}))
    attempts: list[Any] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if address[0] != "192.0.43.10":
            real_connect(self, address)
            return
        attempts.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(socket.socket, "connect", connect)
    with private_network(False):
        result = system.call("GetUrl", url="http://public.test:8080/")
    assert result["error_type"] == "connection_refused", result
    assert attempts == [("192.0.43.10", 8080)]


def test_redirects_are_checked_the_same_way(system: ToolsetTester, http_server: LoopbackServer,
                                            second_server: LoopbackServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """With 127.0.0.1 counted as public for the test, a redirect to 127.0.0.2 is refused."""
    from janito_system import _http_guard

    def policy(ip: str) -> str | None:
        return "a loopback address" if ip != "127.0.0.1" else None

    monkeypatch.setattr(_http_guard, "private_reason", policy)
    target = second_server.base + "/json"

    class Redirecting(Handler):
        def do_GET(self) -> None:
            self.server.paths.append(self.path)  # type: ignore[attr-defined]
            self._redirect(target)

    http_server.RequestHandlerClass = Redirecting
    with private_network(False):
        result = system.call("GetUrl", url=http_server.base + "/go")
    assert result["error_type"] == "address_refused", result
    assert "127.0.0.2 is a loopback address" in result["error"]
    assert result["redirects"] == [{"status_code": 302, "url": target}]
    assert http_server.paths == ["/go"] and second_server.paths == []
    allowed = system.call("GetUrl", url=http_server.base + "/go")
    assert allowed["success"] is True and second_server.paths == ["/json"]


def test_no_proxy_while_private_addresses_are_refused(
        system: ToolsetTester, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy would resolve and connect on its own: it is not used while the policy refuses."""
    monkeypatch.setattr(socket, "getaddrinfo", _Resolver({"far.test": "127.0.0.1"}))
    monkeypatch.setenv("http_proxy", http_server.base)
    monkeypatch.delenv("no_proxy", raising=False)
    with private_network(False):
        result = system.call("GetUrl", url="http://far.test:9/json")
    assert result["error_type"] == "address_refused", result
    assert http_server.paths == []


# -- one deadline for the whole exchange ---------------------------------------------------


class _Dripper:
    """A server on 127.0.0.1 that sends a valid answer one byte at a time, forever slow."""

    def __init__(self, head: bytes, interval: float = 0.05) -> None:
        self.head = head
        self.interval = interval
        self.stop = threading.Event()
        #: set once the request has arrived: from then on only the head is awaited
        self.asked = threading.Event()
        self.sent = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.recv(65536)
                    self.asked.set()
                    for byte in self.head:
                        if self.stop.wait(self.interval):
                            return
                        conn.sendall(bytes([byte]))
                        self.sent += 1
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(5)


@pytest.mark.parametrize("part", ["status line", "headers"])
def test_a_server_dripping_its_head_times_out(part: str, system: ToolsetTester) -> None:
    if part == "status line":
        head = b"HTTP/1.1 200 " + b"O" * 2000 + b"\r\n\r\n"
    else:
        head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Slow-%d: y\r\n" % i for i in range(90))
    # A first call imports what GetUrl needs (TLS, HTTP), which under load can take longer
    # than the call's second: the timed call then spends it on the server's head alone.
    system.call("GetUrl", url="http://127.0.0.1:1/", timeout=1)
    dripper = _Dripper(head)
    try:
        started = time.monotonic()
        result = system.call("GetUrl", url=f"http://127.0.0.1:{dripper.port}/", timeout=1)
        took = time.monotonic() - started
    finally:
        dripper.close()
    assert result["success"] is False
    assert result["error_type"] == "timeout", result
    assert "within 1 second" in result["error"]
    assert took < 3, took
    # The request arrived and the head had not ended: the time ran out while it dripped
    # (how many bytes came first is the scheduler's to decide on a loaded machine).
    assert dripper.asked.is_set()
    assert dripper.sent < len(head)


def test_the_deadline_spans_redirects(system: ToolsetTester, http_server: LoopbackServer) -> None:
    """Each hop takes 0.3 s, well within the 1 s timeout, and the chain never ends: a
    timeout per request would follow it to the redirect limit (11 requests, 3.3 s and
    "too_many_redirects"); one deadline for the whole exchange stops it in about 1 s."""
    hop = 0.3
    assert (MAX_REDIRECTS + 1) * hop > 3  # the chain outlasts the bound asserted below

    class SlowRedirects(Handler):
        def do_GET(self) -> None:
            self.server.paths.append(self.path)  # type: ignore[attr-defined]
            time.sleep(hop)
            try:
                self._redirect(self.path + "x")
            except OSError:  # the client gave up on this hop: its deadline had passed
                pass

    # The first GetUrl call of a process imports httpx and builds the TLS context inside
    # its deadline: 2-3 s on a loaded machine, which would spend the whole second before
    # the first request. A warm-up call does that first.
    system.call("GetUrl", url="http://127.0.0.1:1/", timeout=1)
    http_server.RequestHandlerClass = SlowRedirects
    started = time.monotonic()
    result = system.call("GetUrl", url=http_server.base + "/a", timeout=1)
    took = time.monotonic() - started
    assert result["error_type"] == "timeout", result
    assert took < 3, took
    # How many hops fit in the second is the scheduler's to decide on a loaded machine;
    # those reported are the chain's first ones, each the answer to a request that came.
    followed = result["redirects"]
    assert followed == [{"status_code": 302, "url": http_server.base + "/a" + "x" * n}
                        for n in range(1, len(followed) + 1)], followed
    assert len(followed) <= len(http_server.paths)


# -- the size ceiling ----------------------------------------------------------------------


def test_max_bytes_has_a_ceiling_checked_before_connecting(system: ToolsetTester,
                                                           http_server: LoopbackServer) -> None:
    assert DEFAULT_MAX_BYTES < MAX_BYTES_LIMIT == 50 * 1024 * 1024
    url = http_server.base + "/json"
    result = system.call("GetUrl", url=url, max_bytes=MAX_BYTES_LIMIT + 1)
    assert result["error_type"] == "invalid_arguments"
    assert result["details"] == [{"field": "max_bytes",
                                  "error": f"must be from 1 to {MAX_BYTES_LIMIT}, got {MAX_BYTES_LIMIT + 1}"}]
    assert http_server.paths == []
    assert system.call("GetUrl", url=url, max_bytes=MAX_BYTES_LIMIT)["success"] is True
