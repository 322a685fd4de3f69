"""``janito mcp serve --oauth-issuer``: an OAuth 2.1 resource server, against a real issuer.

``oauth_issuer.Issuer`` runs on 127.0.0.1 in this process: it publishes its keys (RSA and
EC) and signs JWTs with them, and runs the authorization code flow. The SDK's client
signs in through it and calls janito; the SDK's own parsers read janito's challenges and
metadata; raw requests bring the tokens no honest issuer makes.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import SERVE, HttpServer, child_env, run_async
from janito_mcp._jwt import MISS_COOLDOWN
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from oauth_issuer import Issuer, public_jwk, public_pem, rsa_key

ALL_SCOPES = "janito:read janito:write janito:execute"
READ_TOOLS = {"CountSteps", "EchoText", "FailAlways", "Ping", "RaiseError", "ReadFile"}
WRITE_TOOLS = {"WriteNote", "WaitForCancel"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}


def _request(url: str, token: str | None = None, method: str = "POST",
             body: Any = INITIALIZE) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if method == "POST" else None
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=120) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, \
                response.read(4000)
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def _challenge(headers: dict[str, str]) -> dict[str, str]:
    """The parameters of a ``WWW-Authenticate: Bearer ...`` challenge."""
    import re

    value = headers["www-authenticate"]
    assert value.startswith("Bearer "), value
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


def _client(url: str, token: str) -> Any:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http))


def _oauth_server(tmp_path: Path, issuer: str, *flags: str) -> HttpServer:
    workspace, config = tmp_path / "ws", tmp_path / "cfg"
    workspace.mkdir()
    config.mkdir()
    return HttpServer(workspace, config, "-w", "-x", "--oauth-issuer", issuer, *flags)


@pytest.fixture(scope="module")
def issuer() -> Any:
    with Issuer() as running:
        yield running


@pytest.fixture(scope="module")
def served(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = _oauth_server(tmp_path_factory.mktemp("oauth"), issuer.url)
    try:
        yield server
    finally:
        server.stop()


def _metadata_url(server: HttpServer) -> str:
    return f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp"


def test_the_protected_resource_metadata(served: HttpServer, issuer: Issuer) -> None:
    from mcp.shared.auth import ProtectedResourceMetadata

    banner = "\n".join(served.banner)
    assert f"OAuth access token from {issuer.url} for {served.url}" in banner
    assert "the mcp_serve_token secret is not accepted while OAuth is configured" in banner
    for url in (_metadata_url(served),
                f"http://127.0.0.1:{served.port}/.well-known/oauth-protected-resource"):
        status, headers, body = _request(url, method="GET")
        assert status == 200 and headers["content-type"] == "application/json"
        document = json.loads(body)
        assert document["resource"] == served.url  # the exact string tokens must name
        assert document["authorization_servers"] == [issuer.url]
        assert document["scopes_supported"] == ALL_SCOPES.split()
        parsed = ProtectedResourceMetadata.model_validate(document)
        assert parsed.bearer_methods_supported == ["header"]


def test_a_request_without_a_token_is_challenged(served: HttpServer) -> None:
    import httpx2
    from mcp.client.auth.utils import (
        extract_resource_metadata_from_www_auth,
        extract_scope_from_www_auth,
    )

    status, headers, body = _request(served.url)
    assert status == 401
    reply = httpx2.Response(status, headers=headers)
    assert extract_resource_metadata_from_www_auth(reply) == _metadata_url(served)
    assert extract_scope_from_www_auth(reply) == ALL_SCOPES
    assert "error" not in _challenge(headers)  # RFC 6750 3.1: no token, no error code
    assert json.loads(body)["error"] == "unauthorized"


def _names(url: str, token: str) -> set[str]:
    """The tools listed to ``token``; those the test toolset does not hold (the autoload
    toolsets, when installed) must be read-only ones if ``token`` may only read."""
    async def main() -> list[Any]:
        async with _client(url, token) as client:
            return list((await client.list_tools()).tools)

    return {tool.name if tool.name in READ_TOOLS | WRITE_TOOLS | {"ShoutText"} else
            ("other, read-only" if tool.annotations.read_only_hint else "other")
            for tool in run_async(main)}


def _call(url: str, token: str, name: str, arguments: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with _client(url, token) as client:
            return await client.call_tool(name, arguments)

    return run_async(main)


def _scopes_bound_the_tools(url: str, issuer: Issuer, workspace: Path) -> None:
    reader = issuer.token(url, "janito:read")
    assert _names(url, reader) - {"other, read-only"} == READ_TOOLS
    assert _call(url, reader, "EchoText", {"text": "hi"}).structured_content["text"] == "hi"
    for name, scope in (("WriteNote", "janito:write"), ("ShoutText", "janito:execute")):
        refused = _call(url, reader, name, {"text": "x"} if name == "ShoutText"
                        else {"filepath": "n.txt", "text": "x"})
        assert refused.is_error
        result = refused.structured_content
        assert result["error_type"] == "permission_denied"
        assert result["missing_scopes"] == [scope] and scope in result["error"]
    assert not (workspace / "n.txt").exists()
    # ES256, and a token that may also write
    writer = issuer.token(url, "janito:read janito:write", algorithm="ES256")
    assert _names(url, writer) - {"other", "other, read-only"} == READ_TOOLS | WRITE_TOOLS
    done = _call(url, writer, "WriteNote", {"filepath": "n.txt", "text": "x"})
    assert not done.is_error, done.structured_content
    assert (workspace / "n.txt").read_text() == "x"


def test_the_scopes_bound_the_tools_listed_and_callable(served: HttpServer,
                                                        issuer: Issuer) -> None:
    _scopes_bound_the_tools(served.url, issuer, served.workspace)


def test_the_scopes_bound_the_tools_when_stateless(issuer: Issuer, tmp_path: Path) -> None:
    server = _oauth_server(tmp_path, issuer.url, "--stateless")
    try:
        _scopes_bound_the_tools(server.url, issuer, server.workspace)
    finally:
        server.stop()


def _hostile(issuer: Issuer, url: str) -> dict[str, tuple[str, str]]:
    """Tokens no honest issuer makes for this server, and what the refusal says."""
    other = rsa_key()
    public = public_jwk(issuer.rsa, issuer.rsa_kid, "RS256")
    return {
        "expired": (issuer.token(url, exp=1_000_000_000, iat=999_999_000), "has expired"),
        "not yet valid": (issuer.token(url, nbf=4_000_000_000), "not valid yet"),
        "another audience": (issuer.token(url, aud="account"), "was not issued for"),
        "another resource": (issuer.token(url, aud="http://127.0.0.1:1/mcp"),
                             "was not issued for"),
        "another issuer": (issuer.token(url, iss="https://evil.example"),
                           "was not issued by"),
        "no audience": (issuer.token(url, aud=None), "no 'aud' claim"),
        "no expiry": (issuer.token(url, exp=None), "no 'exp' claim"),
        "another key": (issuer.token(url, key=other), "signature does not verify"),
        "alg none": (issuer.unsigned(url), "'none'"),
        "HS256 with the public key": (issuer.unsigned(url, algorithm="HS256",
                                                      secret=public_pem(issuer.rsa)), "'HS256'"),
        "HS256 with the public JWK": (issuer.unsigned(url, algorithm="HS256", secret=json.dumps(
            public).encode()), "'HS256'"),
        "critical extension": (issuer.token(url, headers={"crit": ["exp"]}),
                               "critical extension"),
        "ES256 key for RS256": (issuer.token(url, kid=issuer.ec_kid), "publishes no key"),
        "not a JWT": ("opaque-token-123", "not a well-formed JWT"),
    }


def test_hostile_tokens_are_refused(served: HttpServer, issuer: Issuer) -> None:
    for case, (token, said) in _hostile(issuer, served.url).items():
        status, headers, body = _request(served.url, token)
        assert status == 401, (case, status, body)
        challenge = _challenge(headers)
        assert challenge["error"] == "invalid_token", case
        assert challenge["resource_metadata"] == _metadata_url(served), case
        assert said in challenge["error_description"], (case, challenge)
        assert json.loads(body)["error_description"] == challenge["error_description"]
    # the same tokens never reach a tool through the SDK's client either
    token, _ = _hostile(issuer, served.url)["HS256 with the public key"]
    with pytest.raises(BaseException):  # noqa: B017 - the SDK wraps the 401 in groups
        _names(served.url, token)


def test_a_token_with_no_janito_scope_gets_403(served: HttpServer, issuer: Issuer) -> None:
    status, headers, _ = _request(served.url, issuer.token(served.url, "openid profile"))
    assert status == 403
    challenge = _challenge(headers)
    assert challenge["error"] == "insufficient_scope" and challenge["scope"] == ALL_SCOPES


def test_a_rotated_key_is_fetched_once_and_made_up_kids_are_not(issuer: Issuer,
                                                                tmp_path: Path) -> None:
    with Issuer() as own:
        server = _oauth_server(tmp_path, own.url)
        try:
            assert _request(server.url, own.token(server.url))[0] == 200
            assert own.jwks_fetches == 1
            old = own.token(server.url)
            own.rotate()
            assert _request(server.url, own.token(server.url))[0] == 200
            assert own.jwks_fetches == 2
            rotated = time.monotonic()
            # the old key is gone from the set the server holds now
            status, headers, _ = _request(server.url, old)
            assert status == 401 and "publishes no key" in _challenge(headers)["error_description"]
            for _ in range(3):  # a kid never published: refused without asking the issuer again
                assert _request(server.url, own.token(server.url, kid="made-up"))[0] == 401
            # once per MISS_COOLDOWN at most (a machine this slow may have let one go by)
            assert own.jwks_fetches <= 2 + int((time.monotonic() - rotated) // MISS_COOLDOWN)
        finally:
            server.stop()


def test_an_unreachable_issuer_is_a_503_not_a_bad_token(tmp_path: Path) -> None:
    with Issuer() as gone:
        url = gone.url
    server = _oauth_server(tmp_path, url)
    try:
        status, headers, body = _request(server.url, "a.b.c")
        assert status == 401  # not a JWT at all: refused before any key is needed
        with Issuer() as other:  # a token that would need the issuer's keys
            token = other.token(server.url, iss=url)
        status, headers, body = _request(server.url, token)
        assert status == 503 and headers["retry-after"] == "30"
        assert "cannot be fetched" in json.loads(body)["error_description"]
    finally:
        _, err = server.stop()
    assert f"the metadata of {url} cannot be used" in err


def test_the_sdk_client_signs_in_through_the_issuer(served: HttpServer, issuer: Issuer) -> None:
    """Discovery from the 401, metadata, registration, PKCE, the resource indicator."""
    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    class Memory:
        def __init__(self) -> None:
            self.tokens: Any = None
            self.client: Any = None

        async def get_tokens(self) -> Any:
            return self.tokens

        async def set_tokens(self, tokens: Any) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> Any:
            return self.client

        async def set_client_info(self, client_info: Any) -> None:
            self.client = client_info

    landed: list[dict[str, str]] = []

    async def browser(authorize_url: str) -> None:  # the person clicks "allow"
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            reply = await http.get(authorize_url)
        query = urllib.parse.urlsplit(reply.headers["location"]).query
        landed.append(dict(urllib.parse.parse_qsl(query)))

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=landed[-1]["code"], state=landed[-1]["state"])

    storage = Memory()
    provider = OAuthClientProvider(
        served.url, OAuthClientMetadata(client_name="test", redirect_uris=[
            "http://127.0.0.1:9/callback"]), storage, browser, callback)

    async def main() -> tuple[set[str], Any]:
        http = httpx2.AsyncClient(auth=provider, timeout=60)
        async with Client(streamable_http_client(served.url, http_client=http)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            return names, await client.call_tool("EchoText", {"text": "signed in"})

    names, result = run_async(main)
    assert result.structured_content["text"] == "signed in"
    assert READ_TOOLS | WRITE_TOOLS | {"ShoutText"} <= names
    assert issuer.issued[-1] == {"resource": served.url, "scope": ALL_SCOPES}


@pytest.mark.parametrize(("flags", "said"), [
    (["--oauth-issuer", "http://issuer.example.org"], "must be an https URL"),
    (["--oauth-resource", "https://tools.example.org/mcp"], "need --oauth-issuer"),
    (["--oauth-issuer", "https://issuer.example.org", "--no-auth"], "contradict"),
    (["--oauth-issuer", "https://issuer.example.org", "--oauth-resource", "mcp"],
     "--oauth-resource must be"),
])
def test_bad_oauth_settings_refuse_to_start(flags: list[str], said: str, tmp_path: Path) -> None:
    done = subprocess.run([*SERVE, "--transport", "http", "--port", "0", *flags],
                          cwd=tmp_path, env=child_env(tmp_path), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "listening" not in done.stderr
