"""A local stand-in for Google's OAuth endpoints, which the tests start (no real Google).

Over HTTPS with the test certificate it serves what ``janito gmail login`` and the tools
talk to: the authorization page (which consents at once and redirects, as a browser
would after the person clicks "Allow"), the token endpoint (authorization code with PKCE,
and refresh), and revocation. Over plain HTTP on loopback it serves token introspection
(RFC 7662) for Dovecot's ``oauth2`` passdb, so the IMAP server accepts exactly the access
tokens this server issued and has not expired or revoked. Errors are answered the way
Google answers them (``invalid_grant``: "Token has been expired or revoked.").
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

CLIENT_ID = "1234567890-janitotest.apps.googleusercontent.com"
CLIENT_SECRET = "GOCSPX-test-client-secret-5c1e"


@dataclass
class Grant:
    """One refresh token and the account it acts for."""

    account: str
    client_id: str
    revoked: bool = False


@dataclass
class Access:
    account: str
    expires_at: float
    refresh_token: str | None


@dataclass
class Code:
    client_id: str
    redirect_uri: str
    challenge: str
    account: str
    used: bool = False


@dataclass
class OAuthState:
    grants: dict[str, Grant] = field(default_factory=dict)
    access: dict[str, Access] = field(default_factory=dict)
    codes: dict[str, Code] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)  # (path, grant_type or "")
    introspections: int = 0


class OAuthServer:
    """The endpoints, their state and the knobs tests turn (revoke, expire, fail next)."""

    def __init__(self, cert: Path, key: Path, *, account: str,
                 client_id: str = CLIENT_ID, client_secret: str = CLIENT_SECRET,
                 lifetime: float = 3600.0) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.account = account  # who "signs in" at the authorization page
        self.lifetime = lifetime
        self.state = OAuthState()
        self.lock = threading.Lock()
        self.failures: list[tuple[int, dict[str, Any]]] = []  # answered instead, in order
        self.deny_next = False  # the person clicks "Cancel" on the consent page
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(cert), str(key))
        self._https = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(public=True))
        self._https.socket = context.wrap_socket(self._https.socket, server_side=True)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(public=False))
        self._threads = [threading.Thread(target=s.serve_forever, daemon=True)
                         for s in (self._https, self._http)]
        for thread in self._threads:
            thread.start()

    # -- addresses -------------------------------------------------------------------

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self._https.server_address[1]}"

    @property
    def introspection_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/introspect"

    def env(self) -> dict[str, str]:
        return {
            "JANITO_GMAIL_OAUTH_AUTH_URL": f"{self.base}/o/oauth2/v2/auth",
            "JANITO_GMAIL_OAUTH_TOKEN_URL": f"{self.base}/token",
            "JANITO_GMAIL_OAUTH_REVOKE_URL": f"{self.base}/revoke",
        }

    def stop(self) -> None:
        for server in (self._https, self._http):
            server.shutdown()
            server.server_close()

    # -- what tests do ---------------------------------------------------------------

    def grant(self, account: str | None = None) -> str:
        """A refresh token for ``account``, as an earlier sign-in would have left."""
        token = "1//0g-refresh-" + secrets.token_urlsafe(24)
        with self.lock:
            self.state.grants[token] = Grant(account or self.account, self.client_id)
        return token

    def issue(self, account: str, token: str | None = None, *,
              lifetime: float | None = None, refresh_token: str | None = None) -> str:
        """An access token the servers accept for ``account`` (``lifetime`` seconds)."""
        token = token or "ya29.a0-test-" + secrets.token_urlsafe(24)
        with self.lock:
            self.state.access[token] = Access(
                account, time.time() + (self.lifetime if lifetime is None else lifetime),
                refresh_token)
        return token

    def revoke_grant(self, refresh_token: str) -> None:
        """As when the person removes janito's access in their Google account."""
        with self.lock:
            self.state.grants[refresh_token].revoked = True
            for token, access in list(self.state.access.items()):
                if access.refresh_token == refresh_token:
                    del self.state.access[token]

    def expire_access_tokens(self) -> None:
        """Every access token issued so far stops working now."""
        with self.lock:
            for access in self.state.access.values():
                if access.refresh_token is not None:
                    access.expires_at = 0.0

    def fail_next(self, status: int, body: dict[str, Any]) -> None:
        with self.lock:
            self.failures.append((status, body))

    def refreshes(self) -> int:
        with self.lock:
            return sum(1 for path, kind in self.state.log
                       if path == "/token" and kind == "refresh_token")

    def valid(self, token: str, account: str) -> bool:
        with self.lock:
            access = self.state.access.get(token)
            return bool(access and access.account == account and access.expires_at > time.time())

    # -- the HTTP side ---------------------------------------------------------------

    def _handler(self, *, public: bool) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any] | None = None,
                      headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if body is not None:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if not public and parts.path == "/introspect":
                    self._send(200, server._introspect(self.headers.get("Authorization", "")))
                elif public and parts.path == "/o/oauth2/v2/auth":
                    status, location, body = server._authorize(parse_qs(parts.query))
                    self._send(status, body, {"Location": location} if location else None)
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                path = urlsplit(self.path).path
                if not public:
                    self._send(404, {"error": "not_found"})
                    return
                with server.lock:
                    server.state.log.append((path, form.get("grant_type", "")))
                    failure = server.failures.pop(0) if server.failures else None
                if failure is not None:
                    self._send(*failure)
                elif path == "/token":
                    self._send(*server._token(form))
                elif path == "/revoke":
                    self._send(*server._revoke(form))
                else:
                    self._send(404, {"error": "not_found"})

        return Handler

    def _authorize(self, query: dict[str, list[str]]) -> tuple[int, str | None, Any]:
        one = {k: v[0] for k, v in query.items()}
        problems = []
        if one.get("client_id") != self.client_id:
            problems.append("client_id")
        if one.get("response_type") != "code":
            problems.append("response_type")
        redirect = one.get("redirect_uri", "")
        if urlsplit(redirect).hostname not in ("127.0.0.1", "localhost"):
            problems.append("redirect_uri")
        if one.get("code_challenge_method") != "S256" or not one.get("code_challenge"):
            problems.append("code_challenge")
        if "https://mail.google.com/" not in one.get("scope", "").split():
            problems.append("scope")
        if one.get("access_type") != "offline":
            problems.append("access_type")
        if problems:
            return 400, None, {"error": "invalid_request", "fields": problems}
        with self.lock:
            deny, self.deny_next = self.deny_next, False
        if deny:
            answer = {"error": "access_denied", "state": one.get("state", "")}
            return 302, f"{redirect}?{urlencode(answer)}", None
        code = "4/0Ad-code-" + secrets.token_urlsafe(16)
        with self.lock:
            self.state.codes[code] = Code(self.client_id, redirect, one["code_challenge"],
                                          self.account)
        answer = {"code": code, "state": one.get("state", ""), "scope": one["scope"]}
        return 302, f"{redirect}?{urlencode(answer)}", None

    def _client_ok(self, form: dict[str, str]) -> bool:
        return (form.get("client_id"), form.get("client_secret")) == (self.client_id,
                                                                       self.client_secret)

    def _token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if not self._client_ok(form):
            return 401, {"error": "invalid_client", "error_description": "Unauthorized"}
        kind = form.get("grant_type")
        if kind == "authorization_code":
            with self.lock:
                code = self.state.codes.get(form.get("code", ""))
                if code is None or code.used:
                    return 400, {"error": "invalid_grant", "error_description": "Bad Request"}
                code.used = True
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if challenge != code.challenge or form.get("redirect_uri") != code.redirect_uri:
                return 400, {"error": "invalid_grant", "error_description": "Bad Request"}
            refresh = self.grant(code.account)
            access = self.issue(code.account, refresh_token=refresh)
            return 200, {"access_token": access, "expires_in": int(self.lifetime),
                         "refresh_token": refresh, "token_type": "Bearer",
                         "scope": "https://mail.google.com/ openid "
                                  "https://www.googleapis.com/auth/userinfo.email",
                         "id_token": _id_token(code.account, self.client_id)}
        if kind == "refresh_token":
            refresh = form.get("refresh_token", "")
            with self.lock:
                grant = self.state.grants.get(refresh)
            if grant is None or grant.revoked:
                return 400, {"error": "invalid_grant",
                             "error_description": "Token has been expired or revoked."}
            access = self.issue(grant.account, refresh_token=refresh)
            return 200, {"access_token": access, "expires_in": int(self.lifetime),
                         "token_type": "Bearer", "scope": "https://mail.google.com/"}
        return 400, {"error": "unsupported_grant_type"}

    def _revoke(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        token = form.get("token", "")
        with self.lock:
            grant = self.state.grants.get(token)
        if grant is not None:
            self.revoke_grant(token)
            return 200, {}
        with self.lock:
            if self.state.access.pop(token, None) is not None:
                return 200, {}
        return 400, {"error": "invalid_token", "error_description": "Token expired or revoked"}

    def _introspect(self, authorization: str) -> dict[str, Any]:
        token = authorization[7:] if authorization.startswith("Bearer ") else ""
        with self.lock:
            self.state.introspections += 1
            access = self.state.access.get(token)
            if access is None or access.expires_at <= time.time():
                return {"active": False}
            return {"active": True, "email": access.account,
                    "exp": int(access.expires_at)}


def _id_token(account: str, audience: str) -> str:
    """An id_token as Google sends it: header, claims, signature (not checked by janito)."""
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    claims = {"iss": "https://accounts.google.com", "aud": audience, "sub": "1077",
              "email": account, "email_verified": True, "iat": int(time.time()),
              "exp": int(time.time()) + 3600}
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"
