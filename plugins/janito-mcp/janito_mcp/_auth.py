"""Who may call over HTTP: a bearer token on every request to the MCP endpoint.

``BearerAuth`` is one piece that wraps any ASGI app serving MCP (``wrap``): a request
without a valid token never reaches the app, whatever its path (but the paths left open,
such as a health check's, and the metadata's). The token is checked by a
verifier in the shape of the MCP SDK's ``TokenVerifier``: ``StaticTokenVerifier`` (the
``mcp_serve_token`` secret, for a person on one machine) or ``_jwt.JWTVerifier`` (OAuth
2.1 access tokens from an authorization server). A request that passes carries the SDK's
``AuthenticatedUser`` in ``scope["user"]`` and its access token in the SDK's context
variable, exactly as the SDK's own middleware leaves them, so the SDK binds sessions and
sealed request state to that principal.

With OAuth, the server is a protected resource (RFC 9728): its metadata document is
served at ``/.well-known/oauth-protected-resource`` (bare, and followed by the resource's
path), and every refusal's ``WWW-Authenticate`` names it (``resource_metadata``) with the
scopes the server honours, as the MCP authorization specification asks. The scopes say
what a token may do here: ``janito:read``, ``janito:write`` and ``janito:execute`` grant
the permission letters r, w and x, within the privileges the server itself was given.

The SDK's own ``RequireAuthMiddleware`` is not used: it can neither advertise scopes it
does not require of every token, nor tell a token it refuses from an issuer it cannot
reach (503 here), nor put the scope in its challenges.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from janito_core import Privileges

#: The OAuth scope that grants each permission letter.
SCOPES = {"r": "janito:read", "w": "janito:write", "x": "janito:execute"}
#: RFC 9728's well-known path; the resource's own path may follow it.
METADATA_PATH = "/.well-known/oauth-protected-resource"
REALM = "janito"


class InvalidToken(Exception):
    """A bearer token refused; the message is one sentence the client may be shown."""


class KeysUnavailable(Exception):
    """No token can be checked now (the issuer's keys cannot be had); a server problem."""


class TokenVerifier(Protocol):
    """The MCP SDK's ``TokenVerifier``: the access token, or None for a refused one (a
    verifier may raise ``InvalidToken`` instead, to say why)."""

    async def verify_token(self, token: str) -> Any: ...


def scopes_of(privileges: Privileges) -> list[str]:
    """The scopes that grant what ``privileges`` allow, in r, w, x order."""
    return [scope for letter, scope in SCOPES.items() if privileges.allows(letter)]


def privileges_of(scopes: Iterable[str]) -> Privileges:
    """The privileges a token's scopes grant."""
    from janito_core import Privileges

    held = set(scopes)
    return Privileges(read=SCOPES["r"] in held, write=SCOPES["w"] in held,
                      execute=SCOPES["x"] in held)


def missing_scopes(permissions: str, scopes: Iterable[str]) -> list[str]:
    """The scopes a tool needing ``permissions`` lacks among ``scopes``."""
    held = set(scopes)
    return [SCOPES[letter] for letter in "rwx" if letter in permissions
            and SCOPES[letter] not in held]


class StaticTokenVerifier:
    """One shared secret, compared in constant time; it grants every scope (the server's
    own privileges still bound what is served).

    Both sides are hashed first, so neither the comparison's time nor its length check
    tells anything about the secret.
    """

    CLIENT_ID = "janito-mcp-serve"

    def __init__(self, token: str) -> None:
        import hashlib

        self._digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

    async def verify_token(self, token: str) -> Any:
        import hashlib
        import hmac

        offered = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        if not hmac.compare_digest(offered, self._digest):
            return None
        from mcp.server.auth.provider import AccessToken

        return AccessToken(token="(the mcp_serve_token secret)", client_id=self.CLIENT_ID,
                           scopes=list(SCOPES.values()))


@dataclass
class BearerAuth:
    """What HTTP requires of a request: a bearer token ``verifier`` accepts.

    ``scopes`` are the scopes this server honours (those of its privileges); a token
    holding none of them is refused (403). With ``resource`` and ``issuer`` (OAuth) the
    server publishes its protected-resource metadata and names it in every challenge.
    """

    verifier: TokenVerifier
    scopes: list[str] = field(default_factory=lambda: list(SCOPES.values()))
    resource: str | None = None
    issuer: str | None = None

    @property
    def metadata_url(self) -> str | None:
        """Where the resource's metadata is, as RFC 9728 builds it from the resource URL."""
        if self.resource is None:
            return None
        from urllib.parse import urlsplit

        parts = urlsplit(self.resource)
        path = parts.path.rstrip("/")
        return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{path}"

    def metadata(self) -> dict[str, Any]:
        """The protected-resource metadata document (RFC 9728 section 2)."""
        return {"resource": self.resource, "authorization_servers": [self.issuer],
                "scopes_supported": list(self.scopes), "bearer_methods_supported": ["header"],
                "resource_name": "janito"}

    def describe(self) -> str:
        """How requests authenticate, for the start-up line."""
        if self.resource is None:
            return "requests need 'Authorization: Bearer' with the mcp_serve_token secret"
        return (f"requests need an OAuth access token from {self.issuer} for {self.resource}"
                f" with a scope among {' '.join(self.scopes)}")

    def wrap(self, app: Any, path: str, open_paths: Iterable[str] = ()) -> Any:
        """``app`` (serving MCP at ``path``) with every request authenticated before it
        reaches ``app``, but those to ``open_paths`` (a health check's); the metadata is
        served at its well-known paths."""
        return _Gate(self, app, path, open_paths)


class _Gate:
    """The ASGI middleware of one ``BearerAuth``."""

    def __init__(self, auth: BearerAuth, app: Any, path: str, open_paths: Iterable[str]) -> None:
        from urllib.parse import urlsplit

        from mcp.server.auth.middleware.auth_context import AuthContextMiddleware

        self.auth = auth
        self.app = app
        # the access token reaches the SDK's context variable, as its own middleware does
        self.inner = AuthContextMiddleware(app)
        self.open_paths = set(open_paths)
        self.metadata_paths: set[str] = set()
        if auth.resource is not None:
            # RFC 9728 puts the resource's path after the well-known one; behind a proxy
            # that path may differ from the one served here, so both are answered
            own = urlsplit(auth.resource).path.rstrip("/")
            self.metadata_paths = {METADATA_PATH, METADATA_PATH + own,
                                   METADATA_PATH + path.rstrip("/")}
            self.document = json.dumps(auth.metadata()).encode("utf-8")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path.rstrip("/") in self.metadata_paths:
            await self._metadata(scope, send)
            return
        if path in self.open_paths:
            await self.app(scope, receive, send)
            return
        values = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        if len(values) > 1:
            await self._refuse(send, 400, "invalid_request",
                               "send one Authorization header, not several")
            return
        scheme, _, token = (values[0].decode("latin-1") if values else "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer":
            await self._refuse(send, 401, None, "this server needs a bearer token")
            return
        try:
            access = await self.auth.verifier.verify_token(token) if token else None
        except InvalidToken as exc:
            await self._refuse(send, 401, "invalid_token", str(exc))
            return
        except KeysUnavailable as exc:
            await _json(send, 503, {"error": "temporarily_unavailable",
                                    "error_description": str(exc)},
                        [(b"retry-after", b"30")])
            return
        if access is None:
            await self._refuse(send, 401, "invalid_token",
                               "the bearer token is not one this server accepts")
            return
        if not set(access.scopes) & set(self.auth.scopes):
            await self._refuse(send, 403, "insufficient_scope",
                               "the access token carries none of the scopes this server "
                               f"honours ({' '.join(self.auth.scopes)})")
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from starlette.authentication import AuthCredentials

        scope = dict(scope)
        scope["user"] = AuthenticatedUser(access)
        scope["auth"] = AuthCredentials(list(access.scopes))
        await self.inner(scope, receive, send)

    async def _metadata(self, scope: dict[str, Any], send: Any) -> None:
        # Browser-based clients read it from another origin, as the SDK's own route allows.
        cors = [(b"access-control-allow-origin", b"*"),
                (b"access-control-allow-methods", b"GET, OPTIONS")]
        method = scope.get("method", "GET")
        if method == "OPTIONS":
            await _send(send, 204, b"", cors)
        elif method in ("GET", "HEAD"):
            await _send(send, 200, b"" if method == "HEAD" else self.document,
                        [(b"content-type", b"application/json"),
                         (b"cache-control", b"max-age=3600"), *cors],
                        length=len(self.document))
        else:
            await _send(send, 405, b"", [(b"allow", b"GET, HEAD, OPTIONS")])

    async def _refuse(self, send: Any, status: int, error: str | None, description: str) -> None:
        """A refusal with the challenge RFC 6750 and the MCP authorization spec describe
        (no error code when no token was sent at all)."""
        params = [("realm", REALM)]
        if error is not None:
            params += [("error", error), ("error_description", description)]
        if self.auth.resource is not None:
            params.append(("resource_metadata", str(self.auth.metadata_url)))
            params.append(("scope", " ".join(self.auth.scopes)))
        challenge = "Bearer " + ", ".join(f'{name}="{_quotable(value)}"' for name, value in params)
        await _json(send, status, {"error": error or "unauthorized",
                                   "error_description": description},
                    [(b"www-authenticate", challenge.encode("ascii"))])


def _quotable(text: str) -> str:
    """``text`` in the characters RFC 6750 allows inside a challenge's quoted values."""
    return "".join(c if 0x20 <= ord(c) <= 0x7E and c not in '"\\' else "'" for c in text)


async def _json(send: Any, status: int, body: dict[str, Any],
                headers: list[tuple[bytes, bytes]]) -> None:
    data = json.dumps(body).encode("utf-8")
    await _send(send, status, data, [(b"content-type", b"application/json"), *headers])


async def _send(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]],
                length: int | None = None) -> None:
    size = len(body) if length is None else length
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(size).encode("ascii"))]})
    await send({"type": "http.response.body", "body": body})
