"""The connections GetUrl makes: each name resolved once, each address checked, one deadline.

urllib and http.client resolve a name and connect in one step (``socket.create_connection``)
and time out each read on its own. GetUrl needs more:

- the address policy of ``janito_core.network``: a name is resolved once, every address
  is checked, and the connection goes to the very address that was checked, so a name
  that answers differently the second time (DNS rebinding) gains nothing. Each redirect
  is a new connection, checked the same way. Proxies from the environment are not used
  while private addresses are refused: a proxy would resolve and connect on its own.
- one deadline for the whole exchange: resolving, connecting, TLS, the status line, the
  headers and the body. A server that sends its headers a byte at a time restarts a
  per-read timeout forever; here a timer shuts the connection down when the time is up.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.request
from typing import Any

from janito_core.network import private_reason

#: The longest wait a socket or a timer accepts (a C timeval); a longer timeout means "no limit".
LONGEST_WAIT = 86_400.0


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

    def connect(self, address: tuple[str, int], timeout: object = None,
                source_address: tuple[str, int] | None = None) -> socket.socket:
        """What http.client calls instead of ``socket.create_connection``.

        ``timeout`` is ignored: the exchange's deadline governs.
        """
        host, port = address[0], address[1]
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
                sock.settimeout(self.remaining())
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)
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


class _Connection(http.client.HTTPConnection):
    def __init__(self, *args: Any, exchange: Exchange, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = exchange.connect  # type: ignore[method-assign,assignment]


class _TLSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, exchange: Exchange, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._exchange = exchange
        self._create_connection = exchange.connect  # type: ignore[method-assign,assignment]

    def connect(self) -> None:
        super().connect()
        if self.sock is not None:  # the TLS socket that replaced the tracked plain one
            self._exchange.track(self.sock)


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, exchange: Exchange) -> None:
        super().__init__()
        self.exchange = exchange

    def http_open(self, req: Any) -> Any:
        return self.do_open(_Connection, req, exchange=self.exchange)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, exchange: Exchange) -> None:
        super().__init__()
        self.exchange = exchange

    def https_open(self, req: Any) -> Any:
        return self.do_open(_TLSConnection, req, context=getattr(self, "_context", None),
                            exchange=self.exchange)


def handlers(exchange: Exchange) -> list[urllib.request.BaseHandler]:
    """The urllib handlers that connect through ``exchange`` (no proxy unless private
    addresses are allowed)."""
    found: list[urllib.request.BaseHandler] = [_HTTPHandler(exchange), _HTTPSHandler(exchange)]
    if not exchange.allow_private:
        found.append(urllib.request.ProxyHandler({}))
    return found
