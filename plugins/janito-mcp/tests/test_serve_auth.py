"""HTTP authentication: the ``mcp_serve_token`` secret makes every request carry it.

The SDK's own client talks to ``janito mcp serve --transport http`` with the right token,
a wrong one and none; plain HTTP requests check the 401 and its ``WWW-Authenticate``
header. A non-loopback ``--host`` without a token refuses to start unless ``--no-auth``
is given (those servers listen on 0.0.0.0 for a moment and are reached through
127.0.0.1 only).
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import SERVE, HttpServer, child_env, run_async
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = 'serve-tok-"quoted"+/=-0123456789'
TOKEN_ENV = "JANITO_SECRET_MCP_SERVE_TOKEN"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}


def _post(url: str, authorization: str | None) -> tuple[int, dict[str, str], bytes]:
    """One raw ``initialize`` POST; (status, headers, body)."""
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    request = urllib.request.Request(url, data=json.dumps(INITIALIZE).encode(), headers=headers,
                                     method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        # A worker of --workers may still be starting (the socket is bound before it is
        # ready, so the connection waits in the queue): generous, for a loaded machine.
        with opener.open(request, timeout=120) as response:
            return response.status, dict(response.headers), response.read(200)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def _client(url: str, token: str | None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)))


async def _lists_tools(url: str, token: str | None) -> set[str]:
    async with _client(url, token) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def _local_url(server: HttpServer) -> str:
    port = server.url.rsplit(":", 1)[1].split("/", 1)[0]
    return f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server whose token comes from the environment."""
    server = HttpServer(tmp_path_factory.mktemp("auth-ws"), tmp_path_factory.mktemp("auth-cfg"),
                        env={TOKEN_ENV: TOKEN})
    try:
        yield server
    finally:
        server.stop()


def test_the_right_token_works(guarded: HttpServer) -> None:
    assert "need 'Authorization: Bearer' with the mcp_serve_token secret" in guarded.banner[-1]
    names = run_async(lambda: _lists_tools(guarded.url, TOKEN))
    assert "EchoText" in names

    async def call() -> Any:
        async with _client(guarded.url, TOKEN) as client:
            return await client.call_tool("EchoText", {"text": "ok"})

    assert run_async(call).structured_content["text"] == "ok"


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Bearer {TOKEN}x",
                                           f"Bearer {TOKEN[:-1]}", "Basic dXNlcjpwYXNz",
                                           f"Token {TOKEN}", "Bearer "])
def test_a_wrong_or_missing_token_gets_401(guarded: HttpServer, authorization: str | None) -> None:
    status, headers, body = _post(guarded.url, authorization)
    assert status == 401
    challenge = {k.lower(): v for k, v in headers.items()}["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert TOKEN not in body.decode("utf-8", "replace") and TOKEN not in challenge


def test_the_sdk_client_without_the_token_is_refused(guarded: HttpServer) -> None:
    import httpx2

    for token in (None, "wrong"):
        statuses: list[int] = []
        failures: list[BaseException] = []

        async def attempt(token: str | None = token, statuses: list[int] = statuses,
                          failures: list[BaseException] = failures) -> None:
            async def record(response: Any) -> None:
                statuses.append(response.status_code)

            headers = {"Authorization": f"Bearer {token}"} if token else {}
            http = httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]})
            try:
                async with Client(streamable_http_client(guarded.url, http_client=http)) as client:
                    await client.list_tools()
            except BaseException as exc:  # the SDK wraps the refusal in exception groups
                failures.append(exc)

        run_async(attempt)
        assert failures, "the client was served without the token"
        assert statuses and set(statuses) == {401}, statuses


def test_raw_request_with_the_token_is_served(guarded: HttpServer) -> None:
    status, _, _ = _post(guarded.url, f"Bearer {TOKEN}")
    assert status == 200


def test_the_token_from_janito_s_secrets_store(tmp_path: Path, config_dir: Path,
                                               workspace: Path) -> None:
    from janito_core.secrets import set_secret

    set_secret("mcp_serve_token", "stored-token-abcdef")
    server = HttpServer(workspace, config_dir)
    try:
        assert _post(server.url, None)[0] == 401
        assert "EchoText" in run_async(lambda: _lists_tools(server.url, "stored-token-abcdef"))
    finally:
        server.stop()


def test_a_non_loopback_address_without_a_token_refuses_to_start(workspace: Path,
                                                                 config_dir: Path) -> None:
    done = subprocess.run([*SERVE, "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
                          cwd=workspace, env=child_env(config_dir), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0" in done.stderr
    assert "mcp_serve_token" in done.stderr and "--no-auth" in done.stderr
    assert "listening" not in done.stderr


def test_no_auth_serves_a_non_loopback_address_open(workspace: Path, config_dir: Path) -> None:
    server = HttpServer(workspace, config_dir, "--host", "0.0.0.0", "--no-auth")
    try:
        banner = "\n".join(server.banner)
        assert "0.0.0.0 is not a loopback address and --no-auth turned authentication off" in banner
        assert "(no authentication)" in banner
        assert "EchoText" in run_async(lambda: _lists_tools(_local_url(server), None))
    finally:
        server.stop()


def test_a_non_loopback_address_with_a_token_requires_it(workspace: Path, config_dir: Path) -> None:
    server = HttpServer(workspace, config_dir, "--host", "0.0.0.0", env={TOKEN_ENV: TOKEN})
    try:
        url = _local_url(server)
        assert _post(url, None)[0] == 401
        assert "EchoText" in run_async(lambda: _lists_tools(url, TOKEN))
    finally:
        server.stop()


def test_loopback_without_a_token_stays_open(http_server: HttpServer) -> None:
    assert "(no authentication)" in http_server.banner[-1]
    assert _post(http_server.url, None)[0] == 200


def test_stdio_ignores_the_token(workspace: Path, config_dir: Path) -> None:
    from conftest import stdio_params
    from mcp.client.stdio import stdio_client

    params = stdio_params(workspace, config_dir)
    params.env[TOKEN_ENV] = TOKEN

    async def main() -> set[str]:
        async with Client(stdio_client(params)) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert "EchoText" in run_async(main)
