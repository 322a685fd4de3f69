"""The connections GetUrl makes: each name resolved once, each address checked, one deadline.

GetUrl talks HTTP with httpx (and httpcore under it), which open their connections through
a *network backend*. The backend here is what makes the exchange safe:

- the address policy of ``janito_core.network``: a name is resolved once, every address
  is checked, and the socket is connected to the very address that was checked (never
  resolved again), so a name that answers differently the second time (DNS rebinding)
  gains nothing. Each redirect is a new request whose connection is checked the same way.
  Proxies from the environment are not used while private addresses are refused: a proxy
  would resolve and connect on its own.
- one deadline for the whole exchange: resolving, connecting, TLS, the status line, the
  headers and the body. httpx's connect, read, write and pool timeouts bound each wait,
  but a server that sends its headers a byte at a time restarts a read timeout forever;
  here a timer also shuts every socket of the exchange down when the time is up.

httpx is imported only when GetUrl runs (``open_client``), so listing the tools stays fast.
"""

from __future__ import annotations

import functools
import os
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

from janito_core.network import private_reason

#: The longest wait a socket or a timer accepts (a C timeval); a longer timeout means "no limit".
LONGEST_WAIT = 86_400.0

#: httpx's per-step timeouts (seconds), each also bounded by what is left of the deadline.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
WRITE_TIMEOUT = 10.0
POOL_TIMEOUT = 5.0


class AddressRefused(OSError):
    """A connection the address policy does not allow; ``str()`` is the sentence to show."""


class Exchange:
    """One fetch, with its redirects: the deadline, the policy, the sockets to stop at the end."""

    def __init__(self, deadline: float, allow_private: bool) -> None:
        self.deadline = deadline
        self.allow_private = allow_private
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._done = False
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Exchange:
        wait = self.deadline - time.monotonic()
        if wait < LONGEST_WAIT:
            self._timer = threading.Timer(max(wait, 0.0), self._expire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()

    def remaining(self) -> float:
        """Seconds left (at most :data:`LONGEST_WAIT`); TimeoutError once none are."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.expired = True
            raise TimeoutError("the time allowed for the exchange is over")
        return min(left, LONGEST_WAIT)

    def timeouts(self) -> dict[str, float]:
        """httpx's four timeouts for the next request, none past the deadline."""
        left = self.remaining()
        return {"connect": min(CONNECT_TIMEOUT, left), "read": min(READ_TIMEOUT, left),
                "write": min(WRITE_TIMEOUT, left), "pool": min(POOL_TIMEOUT, left)}

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def track(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the deadline passes (at once if it already has)."""
        with self._lock:
            self._sockets.append(sock)
            late = self.expired
        if late:
            _shut(sock)

    def connect(self, host: str, port: int, timeout: float | None = None) -> socket.socket:
        """A socket connected to ``host``: resolved once, each address checked against the
        policy, connected to the address that was checked. ``timeout`` bounds each connect
        attempt (the deadline bounds them all)."""
        refused: tuple[str, str] | None = None
        error: OSError | None = None
        for family, kind, proto, _, sockaddr in self._resolve(host, port):
            ip = str(sockaddr[0])
            if not self.allow_private:
                reason = private_reason(ip)
                if reason is not None:
                    refused = refused or (ip, reason)
                    continue
            sock = socket.socket(family, kind, proto)
            self.track(sock)
            try:
                left = self.remaining()
                sock.settimeout(left if timeout is None else min(timeout, left))
                sock.connect(sockaddr)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
        if error is not None:
            raise error
        if refused is not None:
            ip, reason = refused
            where = f"{ip} is {reason}" if ip == host.strip("[]") else \
                f"{host} resolves to {ip}, {reason}"
            raise AddressRefused(where)
        raise OSError(f"no address found for {host}")

    def _resolve(self, host: str, port: int) -> list[Any]:
        """``getaddrinfo`` within the deadline (the resolver cannot be interrupted, so it runs
        in a thread that is left behind if it is too slow)."""
        try:
            return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
        except (socket.gaierror, UnicodeError):
            pass
        outcome: dict[str, Any] = {}

        def resolve() -> None:
            try:
                outcome["infos"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
            except BaseException as exc:  # handed to the waiting thread
                outcome["error"] = exc

        worker = threading.Thread(target=resolve, daemon=True, name="janito-geturl-resolve")
        worker.start()
        worker.join(self.remaining())
        if worker.is_alive():
            self.expired = True
            raise TimeoutError(f"resolving {host} took too long")
        if "error" in outcome:
            raise outcome["error"]
        return list(outcome["infos"])


def _shut(sock: socket.socket) -> None:
    # The base class's shutdown, also for a TLS socket: it only wakes a blocked read
    # (which then sees the end of the stream) and leaves closing to the owner.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


@functools.lru_cache(maxsize=4)
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The TLS settings of GetUrl's connections: certifi's bundle, or SSL_CERT_FILE /
    SSL_CERT_DIR when they are set (the arguments, so that a change of them is seen).

    Loading a bundle costs tens of milliseconds, most of a call to a nearby server; a
    context is never changed once made and may wrap sockets on any thread, so the calls
    share one.
    """
    import httpx

    context: ssl.SSLContext = httpx.create_ssl_context(trust_env=True)
    return context


def open_client(exchange: Exchange) -> Any:
    """An ``httpx.Client`` whose every connection goes through ``exchange``: checked
    addresses, one deadline, and proxies from the environment only while private
    addresses are allowed. Redirects are left to the caller (each target is checked)."""
    import httpcore
    import httpx

    context = _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    backend = _make_backend(exchange, httpcore)
    transport = _make_transport(backend, context, httpcore, httpx,
                                use_proxies=exchange.allow_private)
    return httpx.Client(transport=transport, follow_redirects=False, trust_env=False)


def _make_backend(exchange: Exchange, httpcore: Any) -> Any:
    """An httpcore network backend that connects through ``exchange``."""

    class Stream(httpcore.NetworkStream):  # type: ignore[misc]
        """A socket of the exchange, as httpcore reads and writes it."""

        def __init__(self, sock: socket.socket) -> None:
            self.sock = sock

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            try:
                self.sock.settimeout(_bounded(exchange, timeout))
                return self.sock.recv(max_bytes)
            except TimeoutError as exc:
                _note_deadline(exchange)
                raise httpcore.ReadTimeout(str(exc) or "no data arrived in time") from exc
            except OSError as exc:
                raise httpcore.ReadError(str(exc)) from exc

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            try:
                while buffer:
                    self.sock.settimeout(_bounded(exchange, timeout))
                    buffer = buffer[self.sock.send(buffer):]
            except TimeoutError as exc:
                _note_deadline(exchange)
                raise httpcore.WriteTimeout(str(exc) or "the request could not be sent in "
                                            "time") from exc
            except OSError as exc:
                raise httpcore.WriteError(str(exc)) from exc

        def close(self) -> None:
            self.sock.close()

        def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                      timeout: float | None = None) -> Any:
            try:
                self.sock.settimeout(_bounded(exchange, timeout))
                # The name checked in the certificate is the URL's, not the address
                # connected to.
                secure = ssl_context.wrap_socket(self.sock, server_hostname=server_hostname)
            except TimeoutError as exc:
                self.sock.close()
                raise httpcore.ConnectTimeout(str(exc) or "the TLS handshake took too long") \
                    from exc
            except OSError as exc:
                self.sock.close()
                raise httpcore.ConnectError(str(exc)) from exc
            exchange.track(secure)
            return Stream(secure)

        def get_extra_info(self, info: str) -> Any:
            if info == "socket":
                return self.sock
            if info == "ssl_object":
                return getattr(self.sock, "_sslobj", None)
            if info == "server_addr":
                return self.sock.getpeername()
            if info == "client_addr":
                return self.sock.getsockname()
            if info == "is_readable":  # an idle kept-alive connection the server closed
                try:
                    return bool(select.select([self.sock], [], [], 0)[0])
                except (OSError, ValueError):
                    return True
            return None

    class Backend(httpcore.NetworkBackend):  # type: ignore[misc]
        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None,
                        socket_options: Any = None) -> Any:
            try:
                return Stream(exchange.connect(host, port, timeout))
            except AddressRefused:
                raise
            except TimeoutError as exc:
                raise httpcore.ConnectTimeout(str(exc) or "the connection took too long") \
                    from exc
            except OSError as exc:
                raise httpcore.ConnectError(str(exc)) from exc

        def connect_unix_socket(self, path: str, timeout: float | None = None,
                                socket_options: Any = None) -> Any:
            raise httpcore.ConnectError("GetUrl does not connect to Unix sockets")

        def sleep(self, seconds: float) -> None:
            time.sleep(min(seconds, exchange.remaining()))

    return Backend()


def _bounded(exchange: Exchange, timeout: float | None) -> float:
    left = exchange.remaining()
    return left if timeout is None else min(timeout, left)


def _note_deadline(exchange: Exchange) -> None:
    """After a wait timed out: when it was the deadline that ran out (the wait was bounded
    by what was left of it), the exchange has expired."""
    if time.monotonic() >= exchange.deadline - 0.01:
        exchange.expired = True


def _make_transport(backend: Any, context: ssl.SSLContext, httpcore: Any, httpx: Any,
                    use_proxies: bool) -> Any:
    """An httpx transport over httpcore pools built on ``backend`` (one direct, one per
    proxy from the environment when ``use_proxies``)."""
    import urllib.request

    proxies = urllib.request.getproxies() if use_proxies else {}

    class Body(httpx.SyncByteStream):  # type: ignore[misc]
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def __iter__(self) -> Iterator[bytes]:
            with _mapped(httpcore, httpx):
                yield from self.stream

        def close(self) -> None:
            close = getattr(self.stream, "close", None)
            if close is not None:
                close()

    class Transport(httpx.BaseTransport):  # type: ignore[misc]
        def __init__(self) -> None:
            self.pools: dict[str | None, Any] = {}

        def pool(self, url: Any) -> Any:
            proxy = None
            if proxies and not urllib.request.proxy_bypass(url.host):
                proxy = proxies.get(url.scheme) or proxies.get("all")
            if proxy not in self.pools:
                if proxy is None:
                    self.pools[None] = httpcore.ConnectionPool(
                        ssl_context=context, network_backend=backend, max_connections=4)
                else:
                    proxy_url = httpx.URL(proxy if "://" in proxy else f"http://{proxy}")
                    if proxy_url.scheme not in ("http", "https"):
                        raise httpx.ProxyError(f"the proxy {proxy_url.scheme}:// from the "
                                               "environment is not supported")
                    self.pools[proxy] = httpcore.HTTPProxy(
                        proxy_url=httpcore.URL(scheme=proxy_url.raw_scheme,
                                               host=proxy_url.raw_host, port=proxy_url.port,
                                               target=proxy_url.raw_path),
                        ssl_context=context, network_backend=backend, max_connections=4)
            return self.pools[proxy]

        def handle_request(self, request: Any) -> Any:
            core = httpcore.Request(
                method=request.method,
                url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                                 port=request.url.port, target=request.url.raw_path),
                headers=request.headers.raw, content=request.stream,
                extensions=request.extensions)
            with _mapped(httpcore, httpx):
                answer = self.pool(request.url).handle_request(core)
            return httpx.Response(status_code=answer.status, headers=answer.headers,
                                  stream=Body(answer.stream), extensions=answer.extensions)

        def close(self) -> None:
            for pool in self.pools.values():
                pool.close()

    return Transport()


class _mapped:
    """httpcore's exceptions as httpx's (the original kept as the cause)."""

    def __init__(self, httpcore: Any, httpx: Any) -> None:
        self.table = [
            (httpcore.ConnectTimeout, httpx.ConnectTimeout),
            (httpcore.ReadTimeout, httpx.ReadTimeout),
            (httpcore.WriteTimeout, httpx.WriteTimeout),
            (httpcore.PoolTimeout, httpx.PoolTimeout),
            (httpcore.ConnectError, httpx.ConnectError),
            (httpcore.ReadError, httpx.ReadError),
            (httpcore.WriteError, httpx.WriteError),
            (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
            (httpcore.LocalProtocolError, httpx.LocalProtocolError),
            (httpcore.ProxyError, httpx.ProxyError),
            (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
        ]

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> Literal[False]:
        if exc is None:
            return False
        for source, target in self.table:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        return False
