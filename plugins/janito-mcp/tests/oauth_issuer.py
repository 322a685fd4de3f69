"""A real OAuth 2.1 authorization server on 127.0.0.1, in a thread of the test process.

It signs JWT access tokens with real keys (an RSA 2048 key and an EC P-256 key) and
publishes them at ``/jwks``; its RFC 8414 metadata names it. It also runs the flow an MCP
client goes through: dynamic client registration (``/register``), an authorization
endpoint that approves at once and sends the browser back with a code (as a person
clicking "allow" would), and a token endpoint that checks PKCE and issues a JWT whose
audience is the ``resource`` the client asked for (RFC 8707) with the scopes asked for.

``rotate()`` replaces the RSA key by a new one with a new ``kid``; ``jwks_fetches`` counts
the requests for the key set. ``token(...)`` signs any claims a test wants, with the
issuer's keys or another.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa


def rsa_key() -> Any:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(private: Any, kid: str, algorithm: str) -> dict[str, Any]:
    jwk: dict[str, Any] = json.loads(jwt.get_algorithm_by_name(algorithm).to_jwk(
        private.public_key()))
    return {**jwk, "kid": kid, "use": "sig", "alg": algorithm}


def public_pem(private: Any) -> bytes:
    return private.public_key().public_bytes(serialization.Encoding.PEM,
                                             serialization.PublicFormat.SubjectPublicKeyInfo)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Issuer:
    """The authorization server; ``url`` is its issuer identifier."""

    def __init__(self) -> None:
        self.rsa = rsa_key()
        self.rsa_kid = "rsa-1"
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.ec_kid = "ec-1"
        self.jwks_fetches = 0
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.issued: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Issuer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- keys and tokens ------------------------------------------------------------------

    def jwks(self) -> dict[str, Any]:
        return {"keys": [public_jwk(self.rsa, self.rsa_kid, "RS256"),
                         public_jwk(self.ec, self.ec_kid, "ES256")]}

    def rotate(self) -> None:
        with self.lock:
            self.rsa = rsa_key()
            self.rsa_kid = f"rsa-{int(self.rsa_kid.split('-')[1]) + 1}"

    def claims(self, audience: str, scope: str, **changes: Any) -> dict[str, Any]:
        """The claims of a good token for ``audience``; ``changes`` replace some (a value
        of None removes that claim)."""
        now = int(time.time())
        claims = {"iss": self.url, "sub": "someone", "aud": audience, "client_id": "tests",
                  "scope": scope, "iat": now, "exp": now + 600}
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, audience: str, scope: str = "janito:read", *, algorithm: str = "RS256",
              key: Any = None, kid: str | None = None, headers: dict[str, Any] | None = None,
              **changes: Any) -> str:
        """A JWT signed by the issuer's key for ``algorithm`` (or by ``key``)."""
        own, own_kid = (self.ec, self.ec_kid) if algorithm.startswith("ES") else \
            (self.rsa, self.rsa_kid)
        return jwt.encode(self.claims(audience, scope, **changes), key or own,
                          algorithm=algorithm,
                          headers={"kid": kid or own_kid, **(headers or {})})

    def unsigned(self, audience: str, scope: str = "janito:read", algorithm: str = "none",
                 secret: bytes | None = None) -> str:
        """A token whose header says ``algorithm`` and whose signature is an HMAC with
        ``secret`` (SHA-256), or empty: what no honest issuer makes."""
        header = b64url(json.dumps({"alg": algorithm, "typ": "JWT",
                                    "kid": self.rsa_kid}).encode())
        payload = b64url(json.dumps(self.claims(audience, scope)).encode())
        signing_input = f"{header}.{payload}".encode("ascii")
        signature = "" if secret is None else b64url(
            hmac.new(secret, signing_input, hashlib.sha256).digest())
        return f"{header}.{payload}.{signature}"

    # -- the authorization code flow ------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        return {"issuer": self.url, "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.url}/token",
                "registration_endpoint": f"{self.url}/register", "jwks_uri": f"{self.url}/jwks",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
                "scopes_supported": ["janito:read", "janito:write", "janito:execute"]}

    def register(self, body: dict[str, Any]) -> dict[str, Any]:
        client_id = "client-" + secrets.token_hex(4)
        info = {**body, "client_id": client_id, "client_id_issued_at": int(time.time()),
                "token_endpoint_auth_method": "none"}
        self.clients[client_id] = info
        return info

    def authorize(self, query: dict[str, str]) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = query
        target = query["redirect_uri"]
        glue = "&" if "?" in target else "?"
        return target + glue + urllib.parse.urlencode({"code": code, "state": query["state"]})

    def exchange(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        asked = self.codes.pop(form.get("code", ""), None)
        if asked is None or form.get("grant_type") != "authorization_code":
            return 400, {"error": "invalid_grant"}
        challenge = b64url(hashlib.sha256(form.get("code_verifier", "").encode()).digest())
        if challenge != asked.get("code_challenge"):
            return 400, {"error": "invalid_grant", "error_description": "PKCE"}
        resource = form.get("resource") or asked.get("resource")
        scope = asked.get("scope", "")
        self.issued.append({"resource": resource, "scope": scope})
        token = self.token(resource or "", scope, client_id=asked["client_id"])
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": 600,
                     "scope": scope}


def _handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            if path == "/.well-known/oauth-authorization-server":
                self._json(200, issuer.metadata())
            elif path == "/jwks":
                with issuer.lock:
                    issuer.jwks_fetches += 1
                    keys = issuer.jwks()
                self._json(200, keys)
            elif path == "/authorize":
                asked = dict(urllib.parse.parse_qsl(query))
                self.send_response(302)
                self.send_header("Location", issuer.authorize(asked))
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/register":
                self._json(201, issuer.register(json.loads(body)))
            elif self.path == "/token":
                status, answer = issuer.exchange(dict(urllib.parse.parse_qsl(body.decode())))
                self._json(status, answer, {"Cache-Control": "no-store"})
            else:
                self._json(404, {"error": "not_found"})

    return Handler
