"""HTTP serving under hostile clients: connection limits, read timeouts, Host and Origin.

uvicorn times out an idle keep-alive connection, but not one that has sent part of its
headers, nor a body that stops arriving: a client can hold a connection (and a descriptor)
for ever by sending a byte now and then, and a thousand such clients starve everyone
else. So each accepted connection goes through ``GuardedProtocol``, which wraps uvicorn's
own protocol, and each request through ``GuardMiddleware``, which sees what that protocol
parsed:

- a connection whose headers are not complete ``header_timeout`` seconds after it opened,
  or after its previous response ended, is answered 408 and closed;
- a body not complete ``body_timeout`` seconds after its headers is answered 408 too
  (a total, not an idle time: a body dripped one byte at a time is still bounded);
- at most ``max_connections`` connections are held at once (503 past that) and at most
  ``max_connections_per_client`` from one client address (429), so one address cannot
  take every place;
- the process's soft limit on descriptors is raised to cover the cap plus a margin for
  everything else the server opens, or the cap is lowered to what the hard limit allows.

A server on a loopback address also checks Host and Origin (``LoopbackHostCheck``): a
page whose name a hostile resolver points at the server's address (DNS rebinding) sends
its own name as Host and Origin, and is refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import resource
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._limits import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
)

#: Descriptors kept for what is not a client connection: the listening socket, the event
#: loop, imported modules' files, the pipes of tools and of mounted MCP servers.
DESCRIPTOR_MARGIN = 256
#: Where the ASGI scope carries the ``Connection`` a request arrived on.
SCOPE_KEY = "janito.connection"
#: Where the lifespan state (uvicorn hands it to each connection's protocol too) keeps
#: the ``Table`` of one server process.
STATE_KEY = "janito.connections"


@dataclass(frozen=True)
class Limits:
    """What one HTTP server holds to; ``max_connections`` is the cap after ``fit``."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_connections_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT

    def problems(self) -> list[str]:
        found = []
        for name, value in (("--header-timeout", self.header_timeout),
                            ("--body-timeout", self.body_timeout)):
            if not value > 0:
                found.append(f"{name} must be a positive number of seconds")
        for name, count in (("--max-connections", self.max_connections),
                            ("--max-connections-per-client", self.max_connections_per_client)):
            if count < 1:
                found.append(f"{name} must be at least 1")
        return found


def fit_descriptors(limits: Limits) -> tuple[Limits, str | None]:
    """Raise the soft RLIMIT_NOFILE to hold the cap and the margin, as far as the hard
    limit allows; the limits with the cap that fits, and a sentence when it was lowered."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = limits.max_connections + DESCRIPTOR_MARGIN
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return limits, None
    cap = max(1, soft - DESCRIPTOR_MARGIN)
    note = (f"--max-connections {limits.max_connections} lowered to {cap}: this process may "
            f"open {soft} descriptors (RLIMIT_NOFILE) and keeps {DESCRIPTOR_MARGIN} for itself")
    return Limits(limits.header_timeout, limits.body_timeout, cap,
                  min(limits.max_connections_per_client, cap)), note


def describe(limits: Limits) -> str:
    return (f"at most {limits.max_connections} connections at once, "
            f"{limits.max_connections_per_client} from one client address; headers within "
            f"{limits.header_timeout:g} s, bodies within {limits.body_timeout:g} s")


def _response(status: int, reason: str, text: str) -> bytes:
    body = (text + "\n").encode("utf-8")
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode("ascii") + body


@dataclass(eq=False)
class Connection:
    """One accepted connection: the client's address and the timer of what it owes."""

    table: Table
    host: str
    transport: asyncio.Transport
    timer: asyncio.TimerHandle | None = None
    #: The request the connection is on (counted from 1); 0 before its first.
    request: int = 0
    responding: bool = False
    closed: bool = False
    on_close: list[Callable[[], None]] = field(default_factory=list)

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(seconds, self._expire, what)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expire(self, what: str) -> None:
        self.timer = None
        if self.closed or self.responding or self.transport.is_closing():
            return
        self.transport.write(_response(408, "Request Timeout", f"the request's {what} did not "
                                       "arrive in time"))
        self.transport.close()

    def wait_for_headers(self) -> None:
        self._arm(self.table.limits.header_timeout, "headers")

    def headers_done(self, has_body: bool) -> int:
        self.request += 1
        self.responding = False
        if has_body:
            self._arm(self.table.limits.body_timeout, "body")
        else:
            self._disarm()
        return self.request

    def body_done(self, request: int) -> None:
        if request == self.request:
            self._disarm()

    def response_started(self, request: int) -> None:
        if request == self.request:
            self.responding = True
            self._disarm()

    def response_done(self, request: int) -> None:
        # the next request's headers are owed from now on, unless it has already begun
        if request == self.request and not self.closed:
            self.responding = False
            self.wait_for_headers()

    def lost(self) -> None:
        self.closed = True
        self._disarm()
        callbacks, self.on_close = self.on_close, []
        for callback in callbacks:
            callback()


@dataclass(eq=False)
class Table:
    """The connections one server holds, by client address and by peer (host, port)."""

    limits: Limits
    total: int = 0
    per_host: dict[str, int] = field(default_factory=dict)
    by_peer: dict[tuple[str, int], Connection] = field(default_factory=dict)

    def refusal(self, host: str) -> bytes | None:
        if self.per_host.get(host, 0) >= self.limits.max_connections_per_client:
            return _response(429, "Too Many Requests", f"too many connections from {host}: at "
                             f"most {self.limits.max_connections_per_client} at once")
        if self.total >= self.limits.max_connections:
            return _response(503, "Service Unavailable", "the server holds its limit of "
                             f"{self.limits.max_connections} connections; try again later")
        return None

    def add(self, peer: tuple[str, int], connection: Connection) -> None:
        self.total += 1
        self.per_host[connection.host] = self.per_host.get(connection.host, 0) + 1
        self.by_peer[peer] = connection

    def remove(self, peer: tuple[str, int], connection: Connection) -> None:
        self.total -= 1
        left = self.per_host.get(connection.host, 1) - 1
        if left > 0:
            self.per_host[connection.host] = left
        else:
            self.per_host.pop(connection.host, None)
        if self.by_peer.get(peer) is connection:
            del self.by_peer[peer]

    def find(self, client: Any) -> Connection | None:
        if not client:
            return None
        return self.by_peer.get((str(client[0]), int(client[1])))


def _peer(transport: asyncio.BaseTransport) -> tuple[str, int]:
    peer = transport.get_extra_info("peername")
    if isinstance(peer, (tuple, list)) and len(peer) >= 2:
        return str(peer[0]), int(peer[1])
    return "unknown", id(transport)


class GuardedProtocol(asyncio.Protocol):
    """uvicorn's protocol for one connection, behind the limits of ``table``."""

    def __init__(self, inner: Any, table: Table | None) -> None:
        self.inner = inner
        self.table = table
        self.connection: Connection | None = None
        self.peer: tuple[str, int] = ("unknown", 0)
        self.unguarded = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport) and self.table is not None
        self.peer = _peer(transport)
        refusal = self.table.refusal(self.peer[0])
        if refusal is not None:
            transport.write(refusal)
            transport.close()
            return
        self.connection = Connection(self.table, self.peer[0], transport)
        self.table.add(self.peer, self.connection)
        self.connection.wait_for_headers()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.connection is not None or self.unguarded:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.connection is None and not self.unguarded:
            return None
        result: bool | None = self.inner.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        if self.unguarded:
            self.inner.connection_lost(exc)
            return
        if self.connection is None or self.table is None:
            return
        self.table.remove(self.peer, self.connection)
        self.connection.lost()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.connection is not None or self.unguarded:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.connection is not None or self.unguarded:
            self.inner.resume_writing()


class GuardedH11Protocol(GuardedProtocol):
    """uvicorn's h11 protocol behind the limits janito's application keeps in the lifespan
    state: what ``uvicorn --http janito_mcp.asgi:GuardedH11Protocol`` (and ``janito mcp
    serve``) runs. Without janito's application behind it, it is uvicorn's h11 unchanged.

    h11, not httptools: the guard wraps the one protocol whose behaviour it was measured
    with; h11 also bounds the size of a request's headers (16 KiB by default).
    """

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: Any = None) -> None:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        super().__init__(H11Protocol(config, server_state, app_state, _loop),
                         app_state.get(STATE_KEY))

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.table is None:
            self.inner.connection_made(transport)
            self.unguarded = True
            return
        super().connection_made(transport)


def _has_body(scope: dict[str, Any]) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"transfer-encoding":
            return True
        if name == b"content-length":
            return value.strip() not in (b"", b"0")
    return False


class GuardMiddleware:
    """Tells each request's ``Connection`` when its headers, body and response are done,
    and puts it in the scope, where a call finds the connection it must answer on.

    The connections are those of the ``Table`` in the lifespan state: under a server
    that does not run ``GuardedH11Protocol`` there is none, and requests pass as they are.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        table = scope.get("state", {}).get(STATE_KEY) if scope["type"] == "http" else None
        connection = table.find(scope.get("client")) if isinstance(table, Table) else None
        if connection is None:
            await self.app(scope, receive, send)
            return
        scope[SCOPE_KEY] = connection
        request = connection.headers_done(_has_body(scope))

        async def guarded_receive() -> Any:
            message = await receive()
            if message.get("type") == "http.request" and not message.get("more_body", False):
                connection.body_done(request)
            return message

        async def guarded_send(message: Any) -> None:
            kind = message.get("type")
            if kind == "http.response.start":
                connection.response_started(request)
            await send(message)
            if kind == "http.response.body" and not message.get("more_body", False):
                connection.response_done(request)

        try:
            await self.app(scope, guarded_receive, guarded_send)
        finally:
            connection.response_done(request)


def connection_of(request: Any) -> Connection | None:
    """The connection an HTTP request (the SDK's ``ctx.request``) arrived on, if guarded."""
    scope = getattr(request, "scope", None)
    found = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Connection) else None


# -- Host and Origin on loopback ---------------------------------------------------------

_PORT = re.compile(r"[0-9]*")
_ORIGIN = re.compile(r"(?i)(https?)://(\[[0-9a-f:.]+\]|[^/:@\[\]?#]+)(?::([0-9]+))?")


def _name(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | str | None:
    """An address, or ``localhost``, as a Host or Origin names it; None for anything else."""
    if text.startswith("["):
        if not text.endswith("]"):
            return None
        try:
            return ipaddress.IPv6Address(text[1:-1])
        except ValueError:
            return None
    lowered = text.lower()
    if lowered.endswith("."):
        lowered = lowered[:-1]
    if lowered == "localhost":
        return "localhost"
    try:
        return ipaddress.IPv4Address(lowered)
    except ValueError:
        return None


def _split_host(value: str) -> str | None:
    """The name part of a Host header (``name``, ``name:port``, ``[v6]:port``), or None."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[:end + 1], value[end + 1:]
        if rest and not (rest.startswith(":") and _PORT.fullmatch(rest[1:])):
            return None
        return name
    name, _, port = value.partition(":")
    return name if _PORT.fullmatch(port) else None


def _plain(status: int, text: str) -> list[Any]:
    body = (text + "\n").encode("utf-8")
    start = {"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode("ascii"))]}
    return [start, {"type": "http.response.body", "body": body}]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (what ``--host`` names) is only reachable from this machine."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def served_address(scope: dict[str, Any]) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The local address a request arrived on (the ASGI ``server``), or None (a Unix socket)."""
    server = scope.get("server")
    if not server:
        return None
    try:
        return ipaddress.ip_address(str(server[0]).strip("[]"))
    except ValueError:
        return None


class LoopbackHostCheck:
    """For a server on a loopback address, answers only requests whose Host names the
    address the connection arrived on (any spelling of it) or ``localhost`` (any case),
    and whose Origin, when sent, is http or https on a loopback address or ``localhost``:
    421 for another Host, 403 for another Origin. A server on another address (0.0.0.0)
    is reached by names janito cannot know: its token is the guard, and requests pass."""

    def __init__(self, app: Any, loopback: bool = True) -> None:
        self.app = app
        self.loopback = loopback

    @staticmethod
    def host_ok(value: str, served: Any) -> bool:
        name = _split_host(value)
        found = _name(name) if name else None
        return found == "localhost" or (found is not None and found == served)

    @staticmethod
    def origin_ok(value: str) -> bool:
        match = _ORIGIN.fullmatch(value)
        if match is None:
            return False
        found = _name(match.group(2))
        return found == "localhost" or (not isinstance(found, str) and found is not None
                                        and found.is_loopback)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        served = served_address(scope) if scope["type"] == "http" and self.loopback else None
        if served is None or not served.is_loopback:
            await self.app(scope, receive, send)
            return
        hosts = [v for k, v in scope.get("headers", ()) if k == b"host"]
        origins = [v for k, v in scope.get("headers", ()) if k == b"origin"]
        refusal = None
        if len(hosts) != 1 or not self.host_ok(hosts[0].decode("latin-1"), served):
            refusal = _plain(421, "this server answers only its own loopback name in Host "
                             "(a request naming another is refused against DNS rebinding)")
        elif len(origins) > 1 or (origins and not self.origin_ok(origins[0].decode("latin-1"))):
            refusal = _plain(403, "this server answers only pages from a loopback origin")
        if refusal is None:
            await self.app(scope, receive, send)
            return
        for message in refusal:
            await send(message)
