"""OAuth for mounted remote servers: the SDK's client provider, with tokens in janito's secrets.

A server entry with ``"oauth"`` is reached through the MCP SDK's ``OAuthClientProvider``
(discovery of the protected resource and its authorization server, dynamic client
registration, authorization code with PKCE, refresh). What it must remember (the tokens,
when the access token expires, and the client registration) is one JSON value in the
secret ``mcp_oauth_<server>`` of janito's secrets store.

Signing in needs a person and a browser, so it happens only in ``janito mcp login
SERVER``: the authorization page is opened (or its address printed) and the browser comes
back to a listener on 127.0.0.1. Mounting never asks anyone: it uses the stored tokens,
refreshes them when they have expired, and a server that wants a new sign-in fails to
mount with a message that says to run ``janito mcp login``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import TYPE_CHECKING, Any, Callable

from ._config import ServerConfig

if TYPE_CHECKING:
    from janito_core.scrub import Scrubber

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT = 300.0


class LoginRequired(Exception):
    """The server wants a person to sign in, and nobody is there to do it."""


def login_hint(config: ServerConfig) -> str:
    return (f"MCP server {config.name!r} needs you to sign in: run `janito mcp login "
            f"{config.name}`")


class SecretTokenStorage:
    """The SDK's ``TokenStorage`` on one secret of janito's secrets store.

    Every token read or written is added to ``scrubber``, so no result or error of the
    server ever shows one.
    """

    def __init__(self, config: ServerConfig, scrubber: Scrubber | None = None) -> None:
        self.config = config
        self.scrubber = scrubber

    def _read(self) -> dict[str, Any]:
        from janito_core.secrets import get_secret

        raw = get_secret(self.config.token_secret)
        if not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return {}
        if not isinstance(data, dict) or data.get("url") not in (None, self.config.url):
            # Tokens of another address: the entry was pointed elsewhere since the sign-in.
            return {}
        return data

    def _write(self, **changes: Any) -> None:
        from janito_core.secrets import set_secret

        data = self._read()
        data.update(changes, url=self.config.url)
        set_secret(self.config.token_secret, json.dumps(data))

    def _remember(self, tokens: dict[str, Any] | None) -> None:
        if self.scrubber is not None and tokens:
            self.scrubber.add(tokens.get("access_token"), tokens.get("refresh_token"))

    @property
    def expires_at(self) -> float | None:
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    def has_tokens(self) -> bool:
        return isinstance(self._read().get("tokens"), dict)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self._read().get("tokens")
        if not isinstance(tokens, dict):
            return None
        self._remember(tokens)
        return OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: Any) -> None:
        data = tokens.model_dump(mode="json", exclude_none=True)
        self._remember(data)
        expires_in = data.get("expires_in")
        self._write(tokens=data, expires_at=time.time() + expires_in if expires_in else None)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        info = self._read().get("client")
        if not isinstance(info, dict):
            return None
        if self.scrubber is not None and info.get("client_secret"):
            self.scrubber.add(info["client_secret"])
        return OAuthClientInformationFull.model_validate(info)

    async def set_client_info(self, client_info: Any) -> None:
        info = client_info.model_dump(mode="json", exclude_none=True)
        if self.scrubber is not None and info.get("client_secret"):
            self.scrubber.add(info["client_secret"])
        self._write(client=info)

    def forget_client_unless(self, redirect_uri: str) -> None:
        """Drop a stored registration that does not list ``redirect_uri``: the authorization
        server would refuse to send the browser back to this listener."""
        info = self._read().get("client")
        if isinstance(info, dict) and redirect_uri not in (info.get("redirect_uris") or []):
            self._write(client=None)


def provider(config: ServerConfig, url: str, scrubber: Scrubber | None = None, *,
             redirect_uri: str | None = None,
             on_authorize: Callable[[str], Any] | None = None,
             wait_for_code: Callable[[], Any] | None = None) -> Any:
    """The SDK's ``OAuthClientProvider`` for ``config``.

    Without ``on_authorize`` the provider never starts a sign-in: a server that asks for
    one raises :class:`LoginRequired`.
    """
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    assert config.oauth is not None
    storage = SecretTokenStorage(config, scrubber)
    if redirect_uri is None:
        known = storage._read().get("client")
        uris = known.get("redirect_uris") if isinstance(known, dict) else None
        redirect_uri = uris[0] if uris else f"http://127.0.0.1{CALLBACK_PATH}"
    metadata = OAuthClientMetadata(
        client_name=config.oauth.client_name,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=config.oauth.scope,
    )

    async def refuse() -> None:
        raise LoginRequired(login_hint(config))

    async def redirect(address: str) -> None:
        if on_authorize is None:
            raise LoginRequired(login_hint(config))
        on_authorize(address)

    async def callback() -> Any:
        import anyio.to_thread

        if wait_for_code is None:
            raise LoginRequired(login_hint(config))
        return await anyio.to_thread.run_sync(wait_for_code, abandon_on_cancel=True)

    auth = OAuthClientProvider(url, metadata, storage, redirect_handler=redirect,
                               callback_handler=callback)
    # The SDK knows when a token expires only from the answer that brought it; after a
    # restart it would send an expired token, get 401 and start a sign-in instead of
    # refreshing. The stored expiry tells it.
    auth.context.token_expiry_time = storage.expires_at
    _quiet_sdk_login_errors()
    return auth


_quieted = False


def _quiet_sdk_login_errors() -> None:
    """The SDK logs every failed OAuth flow with its traceback; a mount that needs a sign-in
    is reported as a load error already, so that log record says nothing new."""
    global _quieted
    if _quieted:
        return
    _quieted = True

    def keep(record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None and not isinstance(exc, LoginRequired):
            exc = exc.__cause__ or exc.__context__
        return exc is None

    logging.getLogger("mcp.client.auth.oauth2").addFilter(keep)


class CallbackListener:
    """The loopback address the authorization server sends the browser back to."""

    def __init__(self, port: int = 0) -> None:
        self.result: dict[str, str] | None = None
        self._done = threading.Event()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urllib.parse.urlsplit(self.path)
                if parts.path != CALLBACK_PATH:
                    self.send_error(404)
                    return
                query = {k: v[0] for k, v in urllib.parse.parse_qs(parts.query).items()}
                listener.result = query
                ok = "code" in query
                body = ("Signed in: you can close this window and go back to janito." if ok else
                        "The sign-in did not succeed: " + query.get("error_description",
                                                                   query.get("error", "no code")))
                data = body.encode("utf-8")
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                listener._done.set()

        self.server = HTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True,
                                       name="janito-mcp-oauth-callback")
        self.thread.start()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{CALLBACK_PATH}"

    def wait(self, timeout: float = LOGIN_TIMEOUT) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        if not self._done.wait(timeout):
            raise TimeoutError(f"no answer from the browser within {timeout:g} s")
        result = self.result or {}
        if "code" not in result:
            raise PermissionError("the authorization server refused: "
                                  + result.get("error_description", result.get("error", "no code")))
        return AuthorizationCodeResult(code=result["code"], state=result.get("state"),
                                       iss=result.get("iss"))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
