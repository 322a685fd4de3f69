"""OAuth 2.1 access tokens as JWTs, checked against the issuer's published keys (JWKS).

``JWTVerifier.verify_token`` accepts a token only when all of these hold:

- it is signed with an asymmetric algorithm (RS, PS, ES or EdDSA): ``none`` and the HMAC
  algorithms are refused whatever key is at hand, so the issuer's public key can never
  serve as an HMAC secret (algorithm confusion);
- the key is one of the issuer's, found by ``kid``, of the family the algorithm needs
  (RSA for RS/PS, the named curve for ES, OKP for EdDSA), meant for signatures, and not
  bound by its own ``alg`` to another algorithm;
- the signature verifies, ``exp`` is in the future and ``nbf``/``iat`` are not (30 s of
  clock skew allowed), ``iss`` is the configured issuer exactly, and ``aud`` names this
  server's resource URL (RFC 8707: a token issued for another server is refused).

The scopes come from ``scope`` (RFC 9068, space-separated) or ``scp`` (a list, as some
providers write it). PyJWT does the cryptography (docs/decisions/0017); it is imported
when the first verifier is made, so a server without OAuth never loads it.

Keys are fetched from the issuer's ``jwks_uri`` (given, or read from its RFC 8414 or
OpenID Connect metadata, whose ``issuer`` must be the configured one) on the first token,
kept ``REFRESH_AFTER`` seconds, and fetched again at once for a ``kid`` not known yet (a
rotation), at most once every ``MISS_COOLDOWN`` seconds so that made-up ``kid``s cannot
make the server hammer the issuer. While the issuer cannot be reached the keys already
fetched stay in use; with none at all, ``KeysUnavailable`` (the request gets 503).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from ._auth import InvalidToken, KeysUnavailable

#: Signature algorithms accepted, with the key type (and curve) each needs.
ALGORITHMS: dict[str, tuple[str, frozenset[str]]] = {
    **{f"{family}{bits}": ("RSA", frozenset()) for family in ("RS", "PS")
       for bits in (256, 384, 512)},
    "ES256": ("EC", frozenset({"P-256"})),
    "ES384": ("EC", frozenset({"P-384"})),
    "ES512": ("EC", frozenset({"P-521"})),
    "EdDSA": ("OKP", frozenset({"Ed25519", "Ed448"})),
}
LEEWAY = 30.0
REFRESH_AFTER = 600.0
MISS_COOLDOWN = 30.0
FETCH_TIMEOUT = 10.0
MAX_DOCUMENT = 1 << 20


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is only reachable from this machine."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").rstrip(".")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_problem(name: str, url: str) -> str | None:
    """Why ``url`` cannot be an issuer or key URL: https is required, except on loopback."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return f"{name} must be an https URL, got {url!r}"
    if parts.scheme == "http" and not is_loopback_url(url):
        return (f"{name} must be an https URL ({url!r} would fetch the keys that decide who "
                "may call in clear); plain http is accepted on loopback only")
    if parts.query or parts.fragment:
        return f"{name} must have no query or fragment, got {url!r}"
    return None


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: RFC 8414's well-known URL, then OpenID
    Connect's (appended to the issuer, then inserted before its path)."""
    from urllib.parse import urlsplit

    parts = urlsplit(issuer)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    urls = [f"{base}/.well-known/oauth-authorization-server{path}",
            f"{base}{path}/.well-known/openid-configuration"]
    if path:
        urls.append(f"{base}/.well-known/openid-configuration{path}")
    return urls


class KeySet:
    """The issuer's signing keys, fetched on demand and kept (see the module's text)."""

    def __init__(self, issuer: str, jwks_uri: str | None = None) -> None:
        import anyio

        self.issuer = issuer
        self.jwks_uri = jwks_uri
        self.keys: list[dict[str, Any]] = []
        self.fetched_at: float | None = None
        self.last_miss_fetch = -MISS_COOLDOWN
        self.last_failure: float | None = None
        self.lock = anyio.Lock()
        self._prepared: dict[tuple[int, str], Any] = {}

    async def key_for(self, kid: str | None, algorithm: str) -> Any:
        """The public key that may check a token with this ``kid`` and ``algorithm``;
        InvalidToken when the issuer has none, KeysUnavailable when no key can be had."""
        now = time.monotonic()
        stale = self.fetched_at is None or now - self.fetched_at > REFRESH_AFTER
        if stale:
            await self._refresh(forced=False)
        found = self._match(kid, algorithm)
        if found is None and kid is not None and not stale \
                and time.monotonic() - self.last_miss_fetch >= MISS_COOLDOWN:
            # a key not seen yet: the issuer may have rotated its keys since the last fetch
            self.last_miss_fetch = time.monotonic()
            await self._refresh(forced=True)
            found = self._match(kid, algorithm)
        if found is None:
            if not self.keys and self.last_failure is not None:
                raise KeysUnavailable(f"the signing keys of {self.issuer} cannot be fetched now")
            named = f"key {kid!r}" if kid is not None else "key"
            raise InvalidToken(f"the issuer {self.issuer} publishes no {named} for {algorithm} "
                               "signatures")
        return found

    def _match(self, kid: str | None, algorithm: str) -> Any:
        kty, curves = ALGORITHMS[algorithm]
        for index, jwk in enumerate(self.keys):
            if kid is not None and jwk.get("kid") != kid:
                continue
            if jwk.get("kty") != kty or (curves and jwk.get("crv") not in curves):
                continue
            if jwk.get("use", "sig") != "sig" or jwk.get("alg", algorithm) != algorithm:
                continue
            if "verify" not in jwk.get("key_ops", ["verify"]):
                continue
            prepared = self._prepared.get((index, algorithm))
            if prepared is None:
                prepared = self._prepare(jwk, algorithm)
                if prepared is None:
                    continue
                self._prepared[(index, algorithm)] = prepared
            return prepared
        return None

    @staticmethod
    def _prepare(jwk: dict[str, Any], algorithm: str) -> Any:
        import jwt

        if "d" in jwk:  # an issuer publishing a private key is broken: never use it
            return None
        try:
            return jwt.PyJWK(jwk, algorithm=algorithm).key
        except jwt.PyJWTError:
            return None

    async def _refresh(self, *, forced: bool) -> None:
        async with self.lock:
            now = time.monotonic()
            if not forced and self.fetched_at is not None and now - self.fetched_at <= REFRESH_AFTER:
                return  # another request refreshed them while this one waited
            if self.last_failure is not None and now - self.last_failure < MISS_COOLDOWN \
                    and not forced:
                return  # the issuer failed a moment ago: do not ask again on every request
            try:
                keys = await self._fetch()
            except KeysUnavailable as exc:
                self.last_failure = time.monotonic()
                print(f"janito mcp: {exc}" + ("; the keys fetched before stay in use"
                                              if self.keys else ""), file=sys.stderr)
                return
            self.keys, self._prepared = keys, {}
            self.fetched_at, self.last_failure = time.monotonic(), None

    async def _fetch(self) -> list[dict[str, Any]]:
        if self.jwks_uri is None:
            self.jwks_uri = await self._discover()
        document = await _get_json(self.jwks_uri)
        keys = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(keys, list):
            raise KeysUnavailable(f"{self.jwks_uri} is not a JWK set (no 'keys' list)")
        return [key for key in keys if isinstance(key, dict)]

    async def _discover(self) -> str:
        problems = []
        for url in metadata_urls(self.issuer):
            try:
                document = await _get_json(url)
            except KeysUnavailable as exc:
                problems.append(str(exc))
                continue
            if not isinstance(document, dict):
                problems.append(f"{url} is not a JSON object")
                continue
            if document.get("issuer") != self.issuer:
                # RFC 8414 section 3.3: metadata naming another issuer must not be used
                problems.append(f"{url} names the issuer {document.get('issuer')!r}, "
                                f"not {self.issuer!r}")
                continue
            jwks_uri = document.get("jwks_uri")
            problem = "it has no jwks_uri" if not isinstance(jwks_uri, str) else \
                url_problem("its jwks_uri", jwks_uri)
            if problem:
                problems.append(f"{url}: {problem}")
                continue
            return str(jwks_uri)
        raise KeysUnavailable(f"the metadata of {self.issuer} cannot be used: "
                              + "; ".join(problems))


async def _get_json(url: str) -> Any:
    """The JSON document at ``url`` (at most ``MAX_DOCUMENT`` bytes, no redirects, all of
    it within ``FETCH_TIMEOUT``: requests wait on a fetch of the keys, and a server that
    drips a byte before each read times out would otherwise hold them without end)."""
    import anyio
    import httpx2

    try:
        with anyio.fail_after(FETCH_TIMEOUT):
            return await _fetched_json(url, httpx2)
    except TimeoutError:
        raise KeysUnavailable(f"{url} cannot be fetched (no complete answer within "
                              f"{FETCH_TIMEOUT:g} s)") from None


async def _fetched_json(url: str, httpx2: Any) -> Any:
    try:
        async with httpx2.AsyncClient(timeout=FETCH_TIMEOUT, follow_redirects=False) as client:
            async with client.stream("GET", url, headers={"Accept": "application/json"}) as reply:
                if reply.status_code != 200:
                    raise KeysUnavailable(f"{url} answered HTTP {reply.status_code}")
                body = b""
                async for chunk in reply.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT:
                        raise KeysUnavailable(f"{url} sent more than {MAX_DOCUMENT} bytes")
    except httpx2.HTTPError as exc:
        raise KeysUnavailable(f"{url} cannot be fetched ({type(exc).__name__}: {exc})") from None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # nested deeper than the parser goes: unusable too
        raise KeysUnavailable(f"{url} did not send usable JSON") from None


class JWTVerifier:
    """The MCP SDK's ``TokenVerifier`` for JWT access tokens of one issuer, for one
    resource (this server's URL)."""

    def __init__(self, issuer: str, resource: str, jwks_uri: str | None = None) -> None:
        import jwt

        self.jwt = jwt
        self.issuer = issuer
        self.resource = resource
        # the resource URL with and without a trailing slash: the same server either way
        self.audiences = sorted({resource, resource.rstrip("/"), resource.rstrip("/") + "/"})
        self.keys = KeySet(issuer, jwks_uri)

    async def verify_token(self, token: str) -> Any:
        """The SDK's ``AccessToken`` for ``token``; InvalidToken saying why it is refused."""
        jwt = self.jwt
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"the bearer token is not a well-formed JWT ({exc})") from None
        if "crit" in header:  # PyJWT refuses those it does not know; janito implements none
            raise InvalidToken("the access token names critical header extensions, which "
                               "this server does not implement")
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise InvalidToken(f"the access token is signed with {algorithm!r}, which this "
                               f"server does not accept (only {', '.join(ALGORITHMS)})")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the access token's 'kid' is not a string")
        key = await self.keys.key_for(kid, algorithm)
        try:
            claims = jwt.decode(token, key, algorithms=[algorithm], audience=self.audiences,
                                issuer=self.issuer, leeway=LEEWAY,
                                options={"require": ["exp", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the access token has expired") from None
        except jwt.ImmatureSignatureError:
            raise InvalidToken("the access token is not valid yet (nbf or iat is in the "
                               "future)") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken(f"the access token was not issued for {self.resource} (its "
                               "audience names another resource)") from None
        except jwt.InvalidIssuerError:
            raise InvalidToken(f"the access token was not issued by {self.issuer}") from None
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidToken(f"the access token has no '{exc.claim}' claim") from None
        except jwt.InvalidSignatureError:
            raise InvalidToken("the access token's signature does not verify with the "
                               "issuer's key") from None
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"the access token cannot be used ({exc})") from None
        from mcp.server.auth.provider import AccessToken

        audience = claims["aud"]
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims.get("sub")
                          or "unknown"),
            scopes=_scopes(claims),
            expires_at=int(claims["exp"]),
            resource=self.resource if isinstance(audience, list) else str(audience),
            subject=str(claims["sub"]) if claims.get("sub") is not None else None,
            claims={"iss": claims["iss"]},
        )


def _scopes(claims: dict[str, Any]) -> list[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    scp = claims.get("scp")
    if isinstance(scp, str):
        return scp.split()
    if isinstance(scp, list):
        return [s for s in scp if isinstance(s, str)]
    return []
