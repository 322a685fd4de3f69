"""DNS rebinding: a loopback server answers only its own names, whatever the spelling.

A page on ``evil.example`` whose name a hostile resolver points at 127.0.0.2 reaches
``janito mcp serve --host 127.0.0.2`` from the victim's browser with ``Host:
evil.example`` (and, for a fetch, ``Origin: http://evil.example``). Each server below is
the real command on one loopback address, spelled as an operator might (``LOCALHOST``,
``[::1]``, ``::1``); each request is one raw ``initialize`` POST with the exact Host and
Origin lines given, so no client library normalises them first.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import HttpServer, run_async
from mcp.client import Client

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="binds 127.0.0.2")

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}).encode()

#: --host as given -> the address the server is reached at
SERVED = {"127.0.0.2": "127.0.0.2", "127.0.0.1": "127.0.0.1", "LOCALHOST": "127.0.0.1",
          "[::1]": "::1", "::1": "::1"}


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, HttpServer]]:
    started: dict[str, HttpServer] = {}

    class Lazy(dict[str, HttpServer]):
        def __missing__(self, host: str) -> HttpServer:
            if ":" in host and not _ipv6_loopback():
                pytest.skip("no IPv6 loopback here")
            server = HttpServer(tmp_path_factory.mktemp("origins-ws"),
                                tmp_path_factory.mktemp("origins-cfg"), "--host", host)
            started[host] = self[host] = server
            return server

    try:
        yield Lazy()
    finally:
        for server in started.values():
            server.stop()


def _status(server: HttpServer, address: str, host: str | None, origin: str | None) -> int:
    """The status of an ``initialize`` POST carrying exactly these Host and Origin lines."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    lines = ["POST /mcp HTTP/1.1", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"Content-Length: {len(INITIALIZE)}",
             "Connection: close"]
    if host is not None:
        lines.append(f"Host: {host}")
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect((address, server.port))
        sock.sendall("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + INITIALIZE)
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
    return int(head.split(b" ", 2)[1])


def _spell(template: str, address: str, port: int) -> str:
    bracketed = f"[{address}]" if ":" in address else address
    return template.format(addr=bracketed, port=port)


# Host lines every server answers: its own address and localhost, in any case, with or
# without a port, with the trailing dot of a fully qualified name.
GOOD_HOSTS = ["{addr}:{port}", "{addr}", "localhost:{port}", "LOCALHOST:{port}", "LocalHost",
              "localhost", "localhost.:{port}", "localhost:"]
# Host lines no server answers: another name, a name that only starts like its own, a
# loopback address it does not serve, garbage where the port goes, nothing at all.
BAD_HOSTS = ["evil.example", "evil.example:{port}", "EVIL.example:{port}",
             "localhost.evil.example:{port}", "{addr}.evil.example:{port}", "127.0.0.9:{port}",
             "localhost:{port}@evil.example", "localhost:x{port}", "localhost:{port}:{port}",
             "", "[::2]:{port}", "evil.example#localhost:{port}"]
GOOD_ORIGINS = [None, "http://localhost:{port}", "http://LOCALHOST:{port}", "https://localhost",
                "http://127.0.0.1:{port}", "http://127.0.0.2", "http://127.1.2.3:9",
                "http://[::1]:{port}", "HTTP://[0:0:0:0:0:0:0:1]"]
BAD_ORIGINS = ["http://evil.example", "http://evil.example:{port}", "null",
               "http://localhost.evil.example:{port}", "http://127.0.0.1.evil.example",
               "http://evil.example@localhost:{port}", "http://localhost:{port}/path",
               "file://", "ftp://localhost:{port}", "http://10.0.0.1:{port}", ""]


@pytest.mark.parametrize("served", list(SERVED))
@pytest.mark.parametrize("host", GOOD_HOSTS)
def test_its_own_names_are_answered(servers: dict[str, HttpServer], served: str,
                                    host: str) -> None:
    server, address = servers[served], SERVED[served]
    assert _status(server, address, _spell(host, address, server.port), None) == 200


@pytest.mark.parametrize("served", list(SERVED))
@pytest.mark.parametrize("host", BAD_HOSTS)
def test_another_host_is_refused(servers: dict[str, HttpServer], served: str, host: str) -> None:
    server, address = servers[served], SERVED[served]
    assert _status(server, address, _spell(host, address, server.port), None) in (400, 421)


@pytest.mark.parametrize("served", ["127.0.0.2", "[::1]"])
def test_other_spellings_of_the_address_itself(servers: dict[str, HttpServer],
                                               served: str) -> None:
    server, address = servers[served], SERVED[served]
    spellings = {"127.0.0.2": ["127.0.0.2:{port}"],
                 "[::1]": ["[0:0:0:0:0:0:0:1]:{port}", "[0::1]", "[::0001]:{port}"]}[served]
    for spelling in spellings:
        assert _status(server, address, spelling.format(port=server.port), None) == 200
    # an address served elsewhere on loopback is not this one's
    assert _status(server, address, f"127.0.0.1:{server.port}", None) == 421


@pytest.mark.parametrize("served", list(SERVED))
@pytest.mark.parametrize("origin", GOOD_ORIGINS)
def test_a_loopback_origin_is_answered(servers: dict[str, HttpServer], served: str,
                                       origin: str | None) -> None:
    server, address = servers[served], SERVED[served]
    spelled = None if origin is None else origin.format(port=server.port)
    assert _status(server, address, _spell("{addr}:{port}", address, server.port), spelled) == 200


@pytest.mark.parametrize("served", list(SERVED))
@pytest.mark.parametrize("origin", BAD_ORIGINS)
def test_another_origin_is_refused(servers: dict[str, HttpServer], served: str,
                                   origin: str) -> None:
    server, address = servers[served], SERVED[served]
    spelled = origin.format(port=server.port)
    assert _status(server, address, _spell("{addr}:{port}", address, server.port), spelled) == 403


def test_the_rebinding_attack_of_the_finding(servers: dict[str, HttpServer]) -> None:
    """``--host 127.0.0.2`` and ``Host: evil.example``: refused, and no tool runs."""
    server = servers["127.0.0.2"]
    (server.workspace / "secret.txt").write_text("file contents", encoding="utf-8")
    assert _status(server, "127.0.0.2", "evil.example", None) == 421
    assert _status(server, "127.0.0.2", f"evil.example:{server.port}",
                   "http://evil.example") == 421
    assert _status(server, "127.0.0.2", f"127.0.0.2:{server.port}", "http://evil.example") == 403


def test_the_sdk_client_is_served_on_another_loopback_address(
        servers: dict[str, HttpServer]) -> None:
    server = servers["127.0.0.2"]
    assert server.url.startswith("http://127.0.0.2:")

    async def main() -> Any:
        async with Client(server.url) as client:
            return await client.call_tool("EchoText", {"text": "near"})

    assert run_async(main).structured_content["text"] == "near"


def test_a_non_loopback_address_keeps_its_token_as_the_guard(tmp_path: Path) -> None:
    """No Host rule where the names a server is reached by are not known (0.0.0.0): the
    token guards it, and a browser does not have the token."""
    from test_serve_auth import TOKEN, TOKEN_ENV

    (tmp_path / "ws").mkdir()
    server = HttpServer(tmp_path / "ws", tmp_path, "--host", "0.0.0.0", env={TOKEN_ENV: TOKEN})
    try:
        assert _status(server, "127.0.0.1", "tools.example.org", None) == 401
    finally:
        server.stop()
