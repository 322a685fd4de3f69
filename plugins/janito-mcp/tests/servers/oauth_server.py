"""An MCP server that requires OAuth, with its own authorization server, on 127.0.0.1.

Written with the SDK: ``MCPServer`` serves the MCP endpoint (streamable HTTP, or SSE with
``--sse``) as a protected resource, its protected-resource metadata, and the authorization
server (metadata, dynamic client registration, ``/authorize``, ``/token``) through an
in-memory ``OAuthAuthorizationServerProvider`` that approves every request at once, as a
person clicking "allow" would. Access tokens live ``OAUTH_TOKEN_TTL`` seconds (default
3600), and one listed in the file ``OAUTH_EXPIRED`` names has expired already, so a test
ends a token's life when it chooses rather than by waiting on the clock; every grant is
appended to the file ``OAUTH_LOG`` names, so a test sees whether a token was refreshed.

    python oauth_server.py PORT [--sse]
"""

from __future__ import annotations

import os
import secrets
import sys
import time
import warnings

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

warnings.simplefilter("ignore")

TTL = int(os.environ.get("OAUTH_TOKEN_TTL", "3600"))


def _expired() -> set[str]:
    path = os.environ.get("OAUTH_EXPIRED")
    if not path or not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as listed:
        return set(listed.read().split())


def _log(line: str) -> None:
    path = os.environ.get("OAUTH_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(line + "\n")


class Approving:
    """Every authorization request is granted; tokens and codes live in memory."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        _log("register")

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + TTL, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=TTL,
                          refresh_token=refresh, scope=" ".join(scopes) or None)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        _log("authorization_code")
        return self._issue(authorization_code.client_id, authorization_code.scopes,
                           authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        _log("refresh_token")
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes,
                           refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        if token in _expired():
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(port: int, sse: bool) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    resource = f"{base}/sse" if sse else f"{base}/mcp"
    server = MCPServer(
        "guarded", auth_server_provider=Approving(),
        auth=AuthSettings(issuer_url=base, resource_server_url=resource,
                          client_registration_options=ClientRegistrationOptions(enabled=True),
                          validate_token_resource=False),
    )

    @server.tool(description="Say who is asking.")
    def whoami() -> str:
        return "a signed-in janito"

    return server


if __name__ == "__main__":
    port = int(sys.argv[1])
    sse = "--sse" in sys.argv[2:]
    build(port, sse).run("sse" if sse else "streamable-http", host="127.0.0.1", port=port)
