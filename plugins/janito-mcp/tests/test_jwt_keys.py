"""Fetching the issuer's keys (``janito_mcp._jwt.KeySet``) from an issuer that misbehaves:
one that sends its key set a byte at a time, one whose key set nests without end."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from conftest import run_async
from janito_mcp import _jwt
from janito_mcp._auth import KeysUnavailable


class BadIssuer:
    """A loopback HTTP server: ``/drip`` answers 200 and then one byte of a never-ending
    body every 50 ms; ``/deep`` a complete body of 200,000 brackets."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            request = connection.recv(4096)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            try:
                if request.startswith(b"GET /deep "):
                    body = b"[" * 100_000 + b"]" * 100_000
                    connection.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
                    return
                connection.sendall(head + b"Content-Length: 1000000\r\n\r\n")
                while not self.stop.wait(0.05):
                    connection.sendall(b" ")
            except OSError:
                return  # the client gave up


@pytest.fixture
def bad_issuer() -> Iterator[BadIssuer]:
    issuer = BadIssuer()
    yield issuer
    issuer.stop.set()
    issuer.listener.close()


def _key(issuer: BadIssuer, path: str) -> None:
    import anyio

    async def main() -> None:
        with anyio.fail_after(30):  # a fetch that never ends fails the test, not the run
            await _jwt.KeySet(issuer.url, issuer.url + path).key_for("k", "RS256")

    run_async(main)


def test_a_key_set_sent_a_byte_at_a_time_is_given_up_on_at_the_timeout(
        bad_issuer: BadIssuer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every byte comes before the read timeout: the fetch as a whole has one too (every
    request waits on a fetch of the keys)."""
    monkeypatch.setattr(_jwt, "FETCH_TIMEOUT", 0.5)
    with pytest.raises(KeysUnavailable, match="cannot be fetched"):
        _key(bad_issuer, "/drip")


def test_a_key_set_nested_without_end_is_unusable_not_a_crash(bad_issuer: BadIssuer) -> None:
    with pytest.raises(KeysUnavailable, match="cannot be fetched"):
        _key(bad_issuer, "/deep")
