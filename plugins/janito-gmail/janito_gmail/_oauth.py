"""Google sign-in for the mail tools: OAuth 2.0 for installed applications.

``janito gmail login`` runs the authorization-code flow with PKCE (RFC 7636) and a
loopback redirect, with the person's own client id and secret, and keeps the refresh
token in janito's secrets store. Each tool call then needs an access token for XOAUTH2:
``AccessTokens`` hands out the one kept in this process or in the store while it has more
than a minute left, and otherwise asks the token endpoint for a new one (RFC 6749 §6).

Written on the standard library rather than google-auth: docs/decisions/0010 gives the
measurements. Nothing here is imported when the toolset loads.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import ssl
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

GOOGLE_AUTH_URL = "https://accounts.google.com/o/oauth2/v2/auth"
GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
GOOGLE_REVOKE_URL = "https://oauth2.googleapis.com/revoke"
# Full IMAP and SMTP access is only granted with this scope; "openid email" adds an
# id_token naming the account that signed in, so the person need not type the address.
SCOPES = ("https://mail.google.com/", "openid", "email")
# A token this close to its end is renewed first: it could expire between check and login.
EXPIRY_MARGIN = 60.0
ACCESS_CACHE_SECRET = "gmail_oauth_access_token"
LOGIN_COMMAND = "janito gmail login"
MAX_RESPONSE = 1 << 20
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


class OAuthError(Exception):
    """The token endpoint answered with an error (RFC 6749 §5.2), or with no usable answer.

    ``error`` is the endpoint's code (``invalid_grant``, ``invalid_client``, ...) or
    ``http_<status>`` when it sent no JSON error; ``description`` its explanation.
    """

    def __init__(self, error: str, description: str = "", status: int | None = None) -> None:
        self.error = error
        self.description = description
        self.status = status
        super().__init__(f"{error}: {description}" if description else error)

    @property
    def needs_login(self) -> bool:
        """True when only a new sign-in can help: the grant or the client was refused."""
        return self.error in ("invalid_grant", "invalid_client", "unauthorized_client")


@dataclass(frozen=True)
class Client:
    """The person's OAuth client (a "Desktop app" client of their Google Cloud project)
    and the endpoints it talks to (Google's unless a setting names others)."""

    client_id: str
    client_secret: str = field(repr=False)
    auth_url: str = GOOGLE_AUTH_URL
    token_url: str = GOOGLE_TOKEN_URL
    revoke_url: str = GOOGLE_REVOKE_URL


@dataclass(frozen=True)
class Tokens:
    """What a successful code exchange gives."""

    access_token: str = field(repr=False)
    expires_at: float
    refresh_token: str | None = field(repr=False)
    email: str | None
    scope: str


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge) for one sign-in."""
    verifier = secrets.token_urlsafe(64)  # 86 characters, within RFC 7636's 43-128
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def authorization_url(client: Client, redirect_uri: str, *, state: str, challenge: str,
                      login_hint: str | None = None) -> str:
    """The page where the person signs in and allows janito to use the mailbox."""
    params = {
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "scope": " ".join(SCOPES),
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        # offline: a refresh token; consent: sent again on every sign-in, not only the first
        "access_type": "offline",
        "prompt": "consent",
    }
    if login_hint:
        params["login_hint"] = login_hint
    joiner = "&" if "?" in client.auth_url else "?"
    return client.auth_url + joiner + urlencode(params)


def post_form(url: str, fields: dict[str, str], *, context: ssl.SSLContext | None,
              timeout: float) -> dict[str, Any]:
    """POST ``fields`` form-encoded to ``url``; the JSON object answered.

    OAuthError for an error answer; OSError (URLError, timeouts) when the endpoint
    cannot be reached. Only https is used, except to a server on this machine.
    """
    _require_https(url)
    body = urlencode(fields).encode("ascii")
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json",
    })
    handlers: list[Any] = [_NoRedirect()]
    if urlsplit(url).hostname in _LOOPBACK:
        handlers.append(urllib.request.ProxyHandler({}))  # no proxy can reach our loopback
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as response:
            status = response.status
            raw = response.read(MAX_RESPONSE)
    except urllib.error.HTTPError as exc:
        status = exc.code
        try:
            raw = exc.read(MAX_RESPONSE)
        except OSError:
            raw = b""
        finally:
            exc.close()
    data = _json_object(raw)
    if status >= 400 or "error" in data:
        error = str(data.get("error") or f"http_{status}")
        description = str(data.get("error_description") or "")
        if not description and not data:
            description = f"the endpoint answered HTTP {status}"
        raise OAuthError(error, description, status)
    return data


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A token endpoint that redirects is misconfigured; following would resend the grant."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _require_https(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and parts.hostname in _LOOPBACK:
        return  # a server on this machine: nothing travels over a network
    raise OAuthError("insecure_endpoint", f"{url} is not an https address; tokens are sent "
                                          "only over https")


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _expiry(data: dict[str, Any]) -> float:
    try:
        lifetime = float(data.get("expires_in", 3600))
    except (TypeError, ValueError):
        lifetime = 3600.0
    return time.time() + max(0.0, lifetime)


def exchange_code(client: Client, code: str, verifier: str, redirect_uri: str, *,
                  context: ssl.SSLContext | None, timeout: float) -> Tokens:
    """Trade the authorization code for tokens (RFC 6749 §4.1.3, with the PKCE verifier)."""
    data, access = _token_request(client, {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
    }, context=context, timeout=timeout)
    refresh = data.get("refresh_token")
    return Tokens(
        access_token=access,
        expires_at=_expiry(data),
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        email=email_from_id_token(data.get("id_token")),
        scope=str(data.get("scope") or ""),
    )


def refresh(client: Client, refresh_token: str, *, context: ssl.SSLContext | None,
            timeout: float) -> tuple[str, float]:
    """A new access token and the time it expires (RFC 6749 §6)."""
    data, access = _token_request(client, {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
    }, context=context, timeout=timeout)
    return access, _expiry(data)


def _token_request(client: Client, form: dict[str, str], *, context: ssl.SSLContext | None,
                   timeout: float) -> tuple[dict[str, Any], str]:
    """POST ``form`` with the client's credentials to the token endpoint: its answer and
    the access token in it (an answer without one is an error)."""
    data = post_form(client.token_url, {**form, "client_id": client.client_id,
                                        "client_secret": client.client_secret},
                     context=context, timeout=timeout)
    access = data.get("access_token")
    if not isinstance(access, str) or not access:
        raise OAuthError("invalid_response", "the token endpoint sent no access token")
    return data, access


def revoke(client: Client, token: str, *, context: ssl.SSLContext | None,
           timeout: float) -> None:
    """Ask Google to forget the grant (RFC 7009); revoking a refresh token ends its access
    tokens too."""
    post_form(client.revoke_url, {"token": token}, context=context, timeout=timeout)


def email_from_id_token(id_token: Any) -> str | None:
    """The verified address an OpenID id_token names, read without checking its signature.

    That is allowed here (OpenID Connect Core §3.1.3.7): the token came straight from the
    token endpoint over TLS. It only fills in the account name; the mail servers decide
    what the access token may reach.
    """
    if not isinstance(id_token, str) or id_token.count(".") != 2:
        return None
    payload = id_token.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, TypeError):
        return None
    if not isinstance(claims, dict):
        return None
    email = claims.get("email")
    verified = claims.get("email_verified", True)
    if isinstance(email, str) and "@" in email and verified not in (False, "false"):
        return email
    return None


# -- access tokens for the tools ----------------------------------------------------------

_CACHE: dict[str, tuple[str, float]] = {}
_CACHE_LOCK = threading.Lock()
# One refresh at a time per grant: threads serving calls in parallel wait for it and then
# use its token instead of each asking the endpoint.
_REFRESH_LOCKS: dict[str, threading.Lock] = {}


def _grant_key(client: Client, refresh_token: str) -> str:
    material = f"{client.token_url}\0{client.client_id}\0{refresh_token}".encode()
    return hashlib.sha256(material).hexdigest()[:32]


class AccessTokens:
    """The access tokens of one tool call, from one stored refresh token.

    ``current()`` gives a token with more than ``EXPIRY_MARGIN`` seconds left, from this
    process, else from the store (``gmail_oauth_access_token``), else from the token
    endpoint. When a server refuses a token that came from a cache (revoked early, say),
    ``renew()`` fetches a new one once. ``seen`` holds every token handed out, for scrubbing.
    """

    def __init__(self, client: Client, refresh_token: str, *,
                 context: ssl.SSLContext | None, timeout: float,
                 stored: str | None = None) -> None:
        """``stored``: the value of the secret gmail_oauth_access_token, read already."""
        self.client = client
        self.refresh_token = refresh_token
        self.context = context
        self.timeout = timeout
        self.key = _grant_key(client, refresh_token)
        self.seen: list[str] = []
        self.fresh = False  # the last token handed out came from the endpoint in this call
        self._stored_value = _cached_entry(stored, self.key)

    def known(self) -> list[str]:
        """Every access token this call could use or has used, for scrubbing: even one not
        handed out yet may be quoted back (a model can pass any text as a folder name)."""
        with _CACHE_LOCK:
            cached = _CACHE.get(self.key)
        candidates = [*self.seen, cached[0] if cached else None,
                      self._stored_value[0] if self._stored_value else None]
        return [token for token in dict.fromkeys(candidates) if token]

    def current(self) -> str:
        now = time.time()
        with _CACHE_LOCK:
            cached = _CACHE.get(self.key)
        if cached is None:
            cached = self._stored()
        if cached is not None and cached[1] - now > EXPIRY_MARGIN:
            return self._hand_out(cached[0], fresh=False)
        return self._refresh(stale=cached[0] if cached else None)

    def renew(self) -> str | None:
        """A new token after a refusal; None when the refused one was new already."""
        if self.fresh:
            return None
        return self._refresh(stale=self.seen[-1] if self.seen else None)

    def _hand_out(self, token: str, *, fresh: bool) -> str:
        if token not in self.seen:
            self.seen.append(token)
        self.fresh = fresh
        return token

    def _refresh(self, *, stale: str | None) -> str:
        with _CACHE_LOCK:
            lock = _REFRESH_LOCKS.setdefault(self.key, threading.Lock())
        with lock:
            with _CACHE_LOCK:
                cached = _CACHE.get(self.key)
            if cached is not None and cached[0] != stale \
                    and cached[1] - time.time() > EXPIRY_MARGIN:
                return self._hand_out(cached[0], fresh=True)  # renewed while this one waited
            token, expires_at = refresh(self.client, self.refresh_token,
                                        context=self.context, timeout=self.timeout)
            with _CACHE_LOCK:
                _CACHE[self.key] = (token, expires_at)
            self._store(token, expires_at)
            return self._hand_out(token, fresh=True)

    def forget(self) -> None:
        """Drop the cached token (after the endpoint refused the grant)."""
        with _CACHE_LOCK:
            _CACHE.pop(self.key, None)
        self._stored_value = None
        forget_stored_access_token()

    def _stored(self) -> tuple[str, float] | None:
        found = self._stored_value
        if found is not None:
            with _CACHE_LOCK:
                _CACHE.setdefault(self.key, found)
        return found

    def _store(self, token: str, expires_at: float) -> None:
        store_access_token(self.key, token, expires_at)


def _cached_entry(raw: str | None, key: str) -> tuple[str, float] | None:
    """(token, expiry) from the stored cache value, if it belongs to the grant ``key``."""
    data = _json_object(raw.encode("utf-8")) if raw else {}
    token, expires_at = data.get("access_token"), data.get("expires_at")
    if data.get("grant") != key or not isinstance(token, str) or \
            not isinstance(expires_at, (int, float)):
        return None
    return token, float(expires_at)


def store_access_token(key: str, token: str, expires_at: float) -> None:
    """Keep ``token`` for later processes (a command-line call lasts one tool call)."""
    from janito_core.secrets import set_secret

    value = json.dumps({"access_token": token, "expires_at": round(expires_at),
                        "grant": key})
    try:
        set_secret(ACCESS_CACHE_SECRET, value)
    except Exception:  # the next process refreshes once more; nothing else is lost
        pass


def forget_stored_access_token() -> None:
    from janito_core.secrets import delete_secret

    try:
        delete_secret(ACCESS_CACHE_SECRET)
    except Exception:
        pass


def cache_tokens(client: Client, refresh_token: str, token: str, expires_at: float) -> None:
    """Remember the access token a sign-in gave, so the first tool call needs no refresh."""
    key = _grant_key(client, refresh_token)
    with _CACHE_LOCK:
        _CACHE[key] = (token, expires_at)
    store_access_token(key, token, expires_at)


def clear_process_cache() -> None:
    """Forget every access token kept in this process (tests, and a sign-out)."""
    with _CACHE_LOCK:
        _CACHE.clear()
