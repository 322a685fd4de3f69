"""A local stand-in for Microsoft Graph (OneDrive) and the Microsoft identity platform.

Microsoft Graph cannot be reached from the test machines, so the tests run the toolset
against this server on 127.0.0.1. It implements only what janito-onedrive uses, with
the request and response shapes of Microsoft's published documentation:

Microsoft Graph (served over plain HTTP, base ``http://127.0.0.1:PORT/v1.0``)
- path-based addressing (``/me/drive/root:/{path}:/{action}``):
  https://learn.microsoft.com/en-us/graph/onedrive-addressing-driveitems
- get a driveItem: https://learn.microsoft.com/en-us/graph/api/driveitem-get
- list children ($top, $orderby, $skipToken): https://learn.microsoft.com/en-us/graph/api/driveitem-list-children
- paging with ``@odata.nextLink``: https://learn.microsoft.com/en-us/graph/paging
- search (``search(q='...')``, quotes doubled): https://learn.microsoft.com/en-us/graph/api/driveitem-search
- download (302 to a pre-authenticated URL, Range requests):
  https://learn.microsoft.com/en-us/graph/api/driveitem-get-content
- small upload (PUT content, ``@microsoft.graph.conflictBehavior`` in the query):
  https://learn.microsoft.com/en-us/graph/api/driveitem-put-content
- upload sessions (createUploadSession with ``item.@microsoft.graph.conflictBehavior``;
  PUT fragments to ``uploadUrl`` without Authorization, ``Content-Range``, fragments in
  order and multiples of 320 KiB; 202 with ``nextExpectedRanges``; 200/201 with the
  driveItem at the end; GET ``uploadUrl`` for the status when resuming; 416 for bytes
  already received; 404 once the session is gone; DELETE to cancel):
  https://learn.microsoft.com/en-us/graph/api/driveitem-createuploadsession
  https://learn.microsoft.com/en-us/graph/api/resources/uploadsession
- create a folder (POST children, conflict behaviour, 201/409):
  https://learn.microsoft.com/en-us/graph/api/driveitem-post-children
- delete (204): https://learn.microsoft.com/en-us/graph/api/driveitem-delete
- sharing links (createLink; 201 new, 200 existing; permission with ``link``):
  https://learn.microsoft.com/en-us/graph/api/driveitem-createlink
- move and rename (PATCH with ``parentReference`` and ``name``, conflict behaviour in the
  query): https://learn.microsoft.com/en-us/graph/api/driveitem-move
  https://learn.microsoft.com/en-us/graph/api/driveitem-update
- copy (POST copy, 202 Accepted with a ``Location`` monitor URL that answers without
  Authorization: status ``inProgress``/``completed``/``failed``, ``resourceId``):
  https://learn.microsoft.com/en-us/graph/api/driveitem-copy
  https://learn.microsoft.com/en-us/graph/long-running-actions-overview
- items shared with me: https://learn.microsoft.com/en-us/graph/api/drive-sharedwithme
- another drive (a SharePoint document library) by id, ``/drives/{drive-id}/root:/path``:
  https://learn.microsoft.com/en-us/graph/api/drive-get
- getting an item by id (``/me/drive/items/{id}``), whose ``parentReference.path`` search
  results may lack: https://learn.microsoft.com/en-us/graph/api/driveitem-search
  (OneDrive for Business and SharePoint: "parentReference.path is not returned")
- OneDrive for Business: ``$orderby`` on children supports only ``name`` (others: 400),
  423 ``resourceLocked``, 507 ``insufficientStorage``:
  https://learn.microsoft.com/en-us/graph/api/driveitem-list-children (optional query
  parameters), https://learn.microsoft.com/en-us/graph/errors
- sharing links with ``expirationDateTime`` and ``password``, and a tenant that disables
  anonymous links: https://learn.microsoft.com/en-us/graph/api/driveitem-createlink
- throttling (429/503 with Retry-After): https://learn.microsoft.com/en-us/graph/throttling
- error bodies and status codes: https://learn.microsoft.com/en-us/graph/errors

Microsoft identity platform (served over HTTPS with a throw-away CA, because msal only
accepts an https authority; base ``https://127.0.0.1:PORT/{tenant}``)
- OpenID configuration: https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc
- device code flow (``/devicecode``, ``authorization_pending``):
  https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-device-code
- refresh tokens and ``invalid_grant``:
  https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow#refresh-the-access-token
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import ipaddress
import json
import re
import secrets
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

FRAGMENT_UNIT = 320 * 1024
ME_DRIVE = "b!fake"
TENANT_ID = "9188040d-6c67-4c5b-b112-36a304b66dad"
USER_ID = "00000000-0000-0000-66f3-3332eca7ea81"


# -- TLS for the identity endpoints ------------------------------------------------------


def make_tls_files(folder: Path) -> tuple[Path, Path, Path]:
    """A CA certificate and a server certificate for 127.0.0.1 signed by it (EC keys)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "janito-onedrive test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = folder / "ca.pem"
    cert_path = folder / "server.pem"
    key_path = folder / "server.key"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return ca_path, cert_path, key_path


# -- the drive ---------------------------------------------------------------------------


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass
class Node:
    id: str
    path: str  # "" for the root, "a/b.txt" otherwise
    folder: bool
    content: bytes = b""
    created: str = field(default_factory=_now)
    modified: str = field(default_factory=_now)
    mime: str = "application/octet-stream"

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] if self.path else "root"

    @property
    def parent(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


MIME_TYPES = {"txt": "text/plain", "md": "text/markdown", "csv": "text/csv",
              "json": "application/json", "pdf": "application/pdf", "png": "image/png",
              "bin": "application/octet-stream", "docx": "application/vnd.openxmlformats-"
              "officedocument.wordprocessingml.document"}


@dataclass
class Session:
    id: str
    path: str
    behavior: str
    tempauth: str
    size: int | None = None
    data: bytearray = field(default_factory=bytearray)
    received: int = 0  # fragments arrive in order: bytes [0, received) are held
    expires: str = field(default_factory=lambda: (dt.datetime.now(dt.timezone.utc)
                                                  + dt.timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%S.000Z"))

    def next_expected(self) -> list[str]:
        return [f"{self.received}-"] if self.size is None or self.received < self.size else []


@dataclass
class Fault:
    """One scripted misbehaviour, consumed when ``match`` accepts a request."""

    kind: str
    match: Callable[[str, str], bool]
    times: int = 1
    status: int = 429
    retry_after: str | None = "0"
    store: bool = True


class FakeGraph:
    """The state of the fake service and its two listeners."""

    def __init__(self, tls: tuple[Path, Path, Path], tenant: str = "consumers") -> None:
        self.tenant = tenant
        self.lock = threading.RLock()
        self.drives: dict[str, dict[str, Node]] = {ME_DRIVE: {"": Node("root", "", True)}}
        self._current = threading.local()
        #: OneDrive for Business behaviours (see business())
        self.business_mode = False
        self.anonymous_links_allowed = True
        self.shared_with_me: list[dict[str, Any]] = []
        self.copies: dict[str, dict[str, Any]] = {}
        self.copy_polls_before_done = 1
        self.sessions: dict[str, Session] = {}
        self.links: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.access_tokens: dict[str, float] = {}
        self.refresh_tokens: dict[str, bool] = {}  # token -> revoked
        self.device_codes: dict[str, dict[str, Any]] = {}
        self.faults: list[Fault] = []
        self.log: list[dict[str, Any]] = []
        self.token_log: list[dict[str, str]] = []
        self.page_size = 200
        self.access_token_ttl = 3600
        self.pending_polls = 0
        self.quote_refused_refresh_token = False  # quote it in the invalid_grant error
        self.fragment_puts = 0
        self.username = "ada@example.com"
        self.issued: list[str] = []  # every token and upload-session secret handed out
        self._ids = 0
        FakeGraph.current = self  # type: ignore[attr-defined]
        handler = _make_handler(self)
        self.graph_server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.graph_server.daemon_threads = True
        self.auth_server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.auth_server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls[1]), str(tls[2]))
        self.auth_server.socket = context.wrap_socket(self.auth_server.socket, server_side=True)
        self.ca_path = tls[0]
        self._threads = [
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for s in (self.graph_server, self.auth_server)
        ]

    @property
    def nodes(self) -> dict[str, Node]:
        """The items of the drive the current request addresses (the user's by default)."""
        return self.drives[getattr(self._current, "drive", ME_DRIVE)]

    def use_drive(self, drive_id: str) -> None:
        self._current.drive = drive_id

    def add_drive(self, drive_id: str) -> None:
        """Another drive (a SharePoint document library) reachable by ``/drives/{id}``."""
        with self.lock:
            self.drives.setdefault(drive_id, {"": Node(self.new_id(), "", True)})

    def business(self, *, anonymous_links: bool = False) -> None:
        """Behave as OneDrive for Business: children sort by name only, search results
        carry no ``parentReference.path``, and (unless allowed) no anonymous links."""
        self.business_mode = True
        self.anonymous_links_allowed = anonymous_links

    # -- lifecycle and addresses --------------------------------------------------------

    def start(self) -> FakeGraph:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        for server in (self.graph_server, self.auth_server):
            server.shutdown()
            server.server_close()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.graph_server.server_address[1]}"

    @property
    def graph_url(self) -> str:
        return self.origin + "/v1.0"

    @property
    def authority(self) -> str:
        return f"https://127.0.0.1:{self.auth_server.server_address[1]}/{self.tenant}"

    # -- drive helpers used by tests ----------------------------------------------------

    def new_id(self) -> str:
        with self.lock:
            self._ids += 1
            return f"F00D{self._ids:012d}!{self._ids}"

    def add_folder(self, path: str) -> Node:
        with self.lock:
            parts = path.strip("/").split("/")
            for i in range(1, len(parts) + 1):
                sub = "/".join(parts[:i])
                if sub not in self.nodes:
                    self.nodes[sub] = Node(self.new_id(), sub, True)
            return self.nodes[path.strip("/")]

    def add_file(self, path: str, content: bytes | str, mime: str | None = None) -> Node:
        with self.lock:
            path = path.strip("/")
            if "/" in path:
                self.add_folder(path.rsplit("/", 1)[0])
            data = content.encode("utf-8") if isinstance(content, str) else content
            ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
            node = Node(self.new_id(), path, False, data,
                        mime=mime or MIME_TYPES.get(ext, "application/octet-stream"))
            self.nodes[path] = node
            return node

    def children(self, path: str) -> list[Node]:
        return [n for p, n in self.nodes.items() if p and n.parent == path]

    def item_json(self, node: Node, with_path: bool = True) -> dict[str, Any]:
        parent_path = "/drive/root:" + ("/" + urllib.parse.quote(node.parent) if node.parent else "")
        item: dict[str, Any] = {
            "id": node.id,
            "name": node.name,
            "createdDateTime": node.created,
            "lastModifiedDateTime": node.modified,
            "eTag": f"\"{{{node.id}}},1\"",
            "cTag": f"\"c:{{{node.id}}},1\"",
            "webUrl": "https://onedrive.live.com/?id=" + urllib.parse.quote(node.id),
            "size": len(node.content) if not node.folder else sum(
                len(n.content) for p, n in self.nodes.items()
                if p.startswith(node.path + "/") or (not node.path and p)),
        }
        if node.path:
            parent = self.nodes.get(node.parent)
            drive = getattr(self._current, "drive", ME_DRIVE)
            item["parentReference"] = {"driveId": drive,
                                       "driveType": "business" if self.business_mode else "personal",
                                       "id": parent.id if parent else "root"}
            if with_path:
                item["parentReference"]["path"] = parent_path
        else:
            item["root"] = {}
        if node.folder:
            item["folder"] = {"childCount": len(self.children(node.path))}
        else:
            item["file"] = {"mimeType": node.mime,
                            "hashes": {"sha1Hash": hashlib.sha1(node.content).hexdigest().upper()}}
            item["@microsoft.graph.downloadUrl"] = (
                f"{self.origin}/download/{urllib.parse.quote(node.id)}?tempauth="
                + self._tempauth(node.id))
        return item

    def _tempauth(self, item_id: str) -> str:
        return "tA" + base64.urlsafe_b64encode(f"fake:{item_id}".encode()).decode().rstrip("=")

    # -- identity helpers used by tests ---------------------------------------------------

    def expire_access_tokens(self) -> None:
        with self.lock:
            self.access_tokens.clear()

    def revoke_refresh_tokens(self) -> None:
        with self.lock:
            for token in self.refresh_tokens:
                self.refresh_tokens[token] = True

    def issued_secrets(self) -> list[str]:
        """Every access token, refresh token and upload-session secret handed out."""
        with self.lock:
            return list(self.issued)

    def add_fault(self, kind: str, match: Callable[[str, str], bool] | str = "", **options: Any) -> Fault:
        if isinstance(match, str):
            prefix = match
            match = lambda method, path: path.startswith(prefix)  # noqa: E731
        fault = Fault(kind, match, **options)
        with self.lock:
            self.faults.append(fault)
        return fault

    def take_fault(self, kind: str, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.kind == kind and fault.times > 0 and fault.match(method, path):
                    fault.times -= 1
                    return fault
        return None

    def requests(self, method: str | None = None, contains: str = "") -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.log
                    if (method is None or r["method"] == method) and contains in r["path"]]

    # -- token issuing --------------------------------------------------------------------

    def issue_tokens(self, client_id: str, scope: str) -> dict[str, Any]:
        with self.lock:
            access = "EwA" + secrets.token_urlsafe(48)
            refresh = "M.C5" + secrets.token_urlsafe(64)
            self.access_tokens[access] = time.time() + self.access_token_ttl
            self.refresh_tokens[refresh] = False
            self.issued += [access, refresh]
        now = int(time.time())
        claims = {"ver": "2.0", "iss": f"{self.authority.rsplit('/', 1)[0]}/{TENANT_ID}/v2.0",
                  "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", "aud": client_id,
                  "exp": now + 3600, "iat": now, "nbf": now, "name": "Ada Lovelace",
                  "preferred_username": self.username, "oid": USER_ID, "tid": TENANT_ID}
        id_token = ".".join([_b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode()),
                             _b64url(json.dumps(claims).encode()), ""])
        client_info = _b64url(json.dumps({"uid": USER_ID, "utid": TENANT_ID}).encode())
        return {
            "token_type": "Bearer",
            "scope": " ".join(s for s in scope.split() if s not in ("openid", "profile",
                                                                     "offline_access"))
            + " openid profile",
            "expires_in": self.access_token_ttl,
            "ext_expires_in": self.access_token_ttl,
            "access_token": access,
            "refresh_token": refresh,
            "id_token": id_token,
            "client_info": client_info,
        }


def _graph_error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "innerError": {
        "date": _now(), "request-id": secrets.token_hex(8), "client-request-id": secrets.token_hex(8)}}}


def _make_handler(state: FakeGraph) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "FakeGraph/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        # -- plumbing ---------------------------------------------------------------------

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(self, status: int, body: Any = None, headers: dict[str, str] | None = None,
                  raw: bytes | None = None) -> None:
            data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
            self.send_response(status)
            if raw is None and body is not None:
                self.send_header("Content-Type", "application/json")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if data and self.command != "HEAD":
                self.wfile.write(data)

        def _record(self) -> None:
            with state.lock:
                state.log.append({"method": self.command, "path": self.path,
                                  "headers": {k.lower(): v for k, v in self.headers.items()},
                                  "server": "auth" if self._is_auth() else "graph"})

        def _is_auth(self) -> bool:
            return self.server is state.auth_server

        def do_GET(self) -> None:
            self._dispatch()

        def do_POST(self) -> None:
            self._dispatch()

        def do_PUT(self) -> None:
            self._dispatch()

        def do_DELETE(self) -> None:
            self._dispatch()

        def do_PATCH(self) -> None:
            self._dispatch()

        def _dispatch(self) -> None:
            self._record()
            try:
                if self._is_auth():
                    self._auth()
                else:
                    self._graph()
            except _Dropped:
                self.close_connection = True
            except BrokenPipeError:
                self.close_connection = True

        # -- identity platform ------------------------------------------------------------

        def _auth(self) -> None:
            path = urllib.parse.urlsplit(self.path).path
            prefix = "/" + state.tenant
            if self.command == "GET" and path == prefix + "/v2.0/.well-known/openid-configuration":
                base = f"https://127.0.0.1:{state.auth_server.server_address[1]}"
                self._send(200, {
                    "issuer": f"{base}/{TENANT_ID}/v2.0",
                    "authorization_endpoint": f"{base}{prefix}/oauth2/v2.0/authorize",
                    "token_endpoint": f"{base}{prefix}/oauth2/v2.0/token",
                    "device_authorization_endpoint": f"{base}{prefix}/oauth2/v2.0/devicecode",
                    "end_session_endpoint": f"{base}{prefix}/oauth2/v2.0/logout",
                    "response_types_supported": ["code", "id_token", "code id_token"],
                    "scopes_supported": ["openid", "profile", "email", "offline_access"],
                    "subject_types_supported": ["pairwise"],
                    "id_token_signing_alg_values_supported": ["RS256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                    "tenant_region_scope": None,
                })
                return
            form = {k: v[0] for k, v in urllib.parse.parse_qs(self._body().decode()).items()}
            if self.command == "POST" and path == prefix + "/oauth2/v2.0/devicecode":
                code = "DAQABAAEAAAD" + secrets.token_urlsafe(40)
                user_code = secrets.token_hex(4).upper()
                with state.lock:
                    state.device_codes[code] = {"client_id": form.get("client_id", ""),
                                                "scope": form.get("scope", ""),
                                                "pending": state.pending_polls}
                self._send(200, {
                    "device_code": code, "user_code": user_code,
                    "verification_uri": "https://microsoft.com/devicelogin",
                    "expires_in": 900, "interval": 1,
                    "message": "To sign in, use a web browser to open the page "
                               "https://microsoft.com/devicelogin and enter the code "
                               f"{user_code} to authenticate.",
                })
                return
            if self.command == "POST" and path == prefix + "/oauth2/v2.0/token":
                grant = form.get("grant_type", "")
                with state.lock:
                    state.token_log.append({"grant_type": grant})
                if grant == "urn:ietf:params:oauth:grant-type:device_code":
                    with state.lock:
                        entry = state.device_codes.get(form.get("device_code", ""))
                        if entry and entry["pending"] > 0:
                            entry["pending"] -= 1
                            pending = True
                        else:
                            pending = False
                    if entry is None:
                        self._send(400, {"error": "expired_token",
                                         "error_description": "AADSTS70019: Verification code expired."})
                    elif pending:
                        self._send(400, {"error": "authorization_pending",
                                         "error_description": "AADSTS70016: OAuth 2.0 device flow "
                                         "error. Authorization is pending. Continue polling."})
                    else:
                        with state.lock:
                            del state.device_codes[form["device_code"]]
                        self._send(200, state.issue_tokens(entry["client_id"], entry["scope"]))
                    return
                if grant == "refresh_token":
                    token = form.get("refresh_token", "")
                    with state.lock:
                        revoked = state.refresh_tokens.get(token)
                    if revoked is None or revoked:
                        quoted = f" ({token})" if state.quote_refused_refresh_token else ""
                        self._send(400, {"error": "invalid_grant",
                                         "error_description": "AADSTS70000: The provided value for "
                                         f"the input parameter 'refresh_token'{quoted} is not "
                                         "valid.", "error_codes": [70000]})
                        return
                    with state.lock:
                        state.refresh_tokens[token] = True  # rotated: single use
                    self._send(200, state.issue_tokens(form.get("client_id", ""),
                                                       form.get("scope", "")))
                    return
                self._send(400, {"error": "unsupported_grant_type",
                                 "error_description": f"grant {grant!r} is not supported here"})
                return
            self._send(404, {"error": "not_found", "error_description": path})

        # -- Microsoft Graph --------------------------------------------------------------

        def _graph(self) -> None:
            split = urllib.parse.urlsplit(self.path)
            path = split.path
            query = {k: v[0] for k, v in urllib.parse.parse_qs(split.query).items()}
            if path.startswith("/download/"):
                self._download(urllib.parse.unquote(path[len("/download/"):]), query)
                return
            if path.startswith("/upload/"):
                self._upload(path[len("/upload/"):], query)
                return
            if path.startswith("/monitor/"):
                self._monitor(path[len("/monitor/"):])
                return
            if not path.startswith("/v1.0/"):
                self._send(404, _graph_error("itemNotFound", "The resource could not be found."))
                return
            fault = state.take_fault("slow", self.command, path)
            if fault is not None:
                time.sleep(float(fault.retry_after or 0))
            fault = state.take_fault("throttle", self.command, path)
            if fault is not None:
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                code = "activityLimitReached" if fault.status == 429 else "serviceNotAvailable"
                self._send(fault.status, _graph_error(code, "The request has been throttled"),
                           headers)
                return
            if not self._authorized():
                return
            fault = state.take_fault("echo", self.command, path)
            if fault is not None:
                # A misbehaving service that quotes credentials back in its error message.
                some_url = next((s for s in state.sessions.values()), None)
                leak = self.headers.get("Authorization", "")
                if some_url is not None:
                    leak += f" {state.origin}/upload/{some_url.id}?tempauth={some_url.tempauth}"
                self._send(fault.status, _graph_error("invalidRequest", f"Bad header: {leak}"))
                return
            rest = path[len("/v1.0"):]
            state.use_drive(ME_DRIVE)
            drive_match = re.match(r"/drives/([^/]+)(/.*)$", rest)
            if drive_match:
                drive_id = urllib.parse.unquote(drive_match.group(1))
                if drive_id not in state.drives:
                    self._send(404, _graph_error("itemNotFound", "The drive could not be found."))
                    return
                state.use_drive(drive_id)
                rest = "/me/drive" + drive_match.group(2)
            fault = state.take_fault("status", self.command, rest)
            if fault is not None:
                code = {423: "resourceLocked", 507: "insufficientStorage"}.get(
                    fault.status, "generalException")
                text = {423: "The resource you are attempting to access is locked",
                        507: "Insufficient Storage"}.get(fault.status, "Failed")
                self._send(fault.status, _graph_error(code, text))
                return
            if rest == "/me/drive/sharedWithMe" and self.command == "GET":
                self._send(200, {"value": state.shared_with_me})
                return
            by_id = re.fullmatch(r"/me/drive/items/([^/:]+)", rest)
            if by_id and self.command == "GET":
                wanted = urllib.parse.unquote(by_id.group(1))
                with state.lock:
                    found = next((n for n in state.nodes.values() if n.id == wanted), None)
                if found is None:
                    self._not_found()
                else:
                    self._send(200, state.item_json(found))
                return
            if not rest.startswith("/me/drive/root"):
                self._send(400, _graph_error("invalidRequest", "Unsupported segment"))
                return
            rest = rest[len("/me/drive/root"):]
            if rest == "" or rest == ":":
                item_path, action = "", None
            elif rest.startswith("/"):
                item_path, action = "", rest[1:]
            elif rest.startswith(":/"):
                inner = rest[2:]
                if ":/" in inner:
                    item_path, action = inner.split(":/", 1)
                else:
                    item_path, action = inner.rstrip(":"), None
            else:
                self._send(400, _graph_error("invalidRequest", "Invalid path"))
                return
            item_path = "/".join(urllib.parse.unquote(p) for p in item_path.split("/") if p)
            self._route(item_path, action, query)

        def _authorized(self) -> bool:
            header = self.headers.get("Authorization", "")
            token = header[len("Bearer "):] if header.startswith("Bearer ") else ""
            with state.lock:
                expiry = state.access_tokens.get(token)
            if expiry is None or expiry < time.time():
                self._send(401, _graph_error("InvalidAuthenticationToken",
                                             "Access token has expired or is not yet valid."),
                           {"WWW-Authenticate": 'Bearer realm="", error="invalid_token"'})
                return False
            return True

        def _route(self, item_path: str, action: str | None, query: dict[str, str]) -> None:
            method = self.command
            with state.lock:
                node = state.nodes.get(item_path)
            if action is None:
                if method == "GET":
                    if node is None:
                        self._not_found()
                    else:
                        self._send(200, state.item_json(node))
                elif method == "PATCH":
                    self._move(node, item_path, query)
                elif method == "DELETE":
                    if node is None:
                        self._not_found()
                        return
                    with state.lock:
                        for p in [p for p in state.nodes if p == item_path
                                  or p.startswith(item_path + "/")]:
                            del state.nodes[p]
                    self._send(204)
                else:
                    self._send(405, _graph_error("invalidRequest", "Method not allowed"))
                return
            if action == "children" and method == "GET":
                self._children(node, item_path, query)
            elif action == "children" and method == "POST":
                self._create_folder(node, item_path)
            elif action.startswith("search(") and method == "GET":
                self._search(node, item_path, action, query)
            elif action == "content" and method == "GET":
                if node is None:
                    self._not_found()
                elif node.folder:
                    self._send(400, _graph_error("notSupported", "Cannot download a folder"))
                else:
                    location = (f"{state.origin}/download/{urllib.parse.quote(node.id)}"
                                f"?tempauth={state._tempauth(node.id)}")
                    self._send(302, None, {"Location": location})
            elif action == "content" and method == "PUT":
                self._put_content(item_path, query)
            elif action == "createUploadSession" and method == "POST":
                self._create_session(item_path)
            elif action == "copy" and method == "POST":
                self._copy(node, item_path, query)
            elif action == "createLink" and method == "POST":
                self._create_link(node, item_path)
            else:
                self._send(400, _graph_error("invalidRequest", f"Unsupported action {action}"))

        def _not_found(self) -> None:
            self._send(404, _graph_error("itemNotFound", "The resource could not be found."))

        def _page(self, nodes: list[Node], query: dict[str, str], with_path: bool = True) -> None:
            order = query.get("$orderby", "name")
            field_name, _, direction = order.partition(" ")
            keys = {"name": lambda n: n.name.lower(), "size": lambda n: len(n.content),
                    "lastModifiedDateTime": lambda n: n.modified}
            if field_name not in keys:
                self._send(400, _graph_error("invalidRequest", f"Invalid $orderby {order}"))
                return
            nodes = sorted(nodes, key=keys[field_name], reverse=direction == "desc")
            top = min(int(query.get("$top", state.page_size)), state.page_size)
            skip = int(query.get("$skiptoken", "0") or 0)
            page = nodes[skip:skip + top]
            body: dict[str, Any] = {"value": [state.item_json(n, with_path) for n in page]}
            if skip + top < len(nodes):
                next_query = dict(query)
                next_query["$skiptoken"] = str(skip + top)
                origin = state.origin
                fault = state.take_fault("foreign_next_link", self.command,
                                         urllib.parse.urlsplit(self.path).path)
                if fault is not None:
                    origin = "http://127.0.0.2:9"
                body["@odata.nextLink"] = (origin + urllib.parse.urlsplit(self.path).path + "?"
                                           + urllib.parse.urlencode(next_query, safe="$@',()"))
            self._send(200, body)

        def _children(self, node: Node | None, item_path: str, query: dict[str, str]) -> None:
            if node is None:
                self._not_found()
            elif not node.folder:
                self._send(200, {"value": []})
            else:
                order = query.get("$orderby", "name")
                if state.business_mode and order.split(" ")[0] != "name":
                    # OneDrive for Business sorts children by name only.
                    self._send(400, _graph_error("invalidRequest",
                                                 f"$orderby={order} is not supported"))
                    return
                self._page(state.children(item_path), query)

        def _search(self, node: Node | None, item_path: str, action: str,
                    query: dict[str, str]) -> None:
            match = re.fullmatch(r"search\(q='(.*)'\)", action)
            if match is None:
                self._send(400, _graph_error("invalidRequest", "Malformed search"))
                return
            literal = urllib.parse.unquote(match.group(1))
            if re.search(r"(?<!')'(?!')", literal.replace("''", "")):
                self._send(400, _graph_error("invalidRequest", "Unescaped quote in q"))
                return
            text = literal.replace("''", "'").lower()
            if node is None:
                self._not_found()
                return
            with state.lock:
                found = [n for p, n in state.nodes.items() if p
                         and (not item_path or p.startswith(item_path + "/"))
                         and (text in n.name.lower()
                              or (not n.folder and text.encode() in n.content.lower()))]
            self._page(found, query, with_path=not state.business_mode)

        def _create_folder(self, parent: Node | None, parent_path: str) -> None:
            try:
                body = json.loads(self._body() or b"{}")
            except ValueError:
                self._send(400, _graph_error("invalidRequest", "Invalid JSON"))
                return
            if parent is None or not parent.folder:
                self._not_found()
                return
            name = str(body.get("name") or "")
            behavior = body.get("@microsoft.graph.conflictBehavior", "fail")
            if not name or "folder" not in body:
                self._send(400, _graph_error("invalidRequest", "name and folder are required"))
                return
            path = f"{parent_path}/{name}" if parent_path else name
            with state.lock:
                existing = state.nodes.get(path)
                if existing is not None:
                    if behavior == "fail":
                        self._send(409, _graph_error("nameAlreadyExists",
                                                     "Name already exists"))
                        return
                    if behavior == "replace" and existing.folder:
                        self._send(200, state.item_json(existing))
                        return
                    if behavior == "rename":
                        n = 1
                        while f"{path} {n}" in state.nodes:
                            n += 1
                        path = f"{path} {n}"
                node = Node(state.new_id(), path, True)
                state.nodes[path] = node
            self._send(201, state.item_json(node))

        def _store(self, path: str, data: bytes) -> tuple[int, Node]:
            with state.lock:
                existed = path in state.nodes
                ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
                node = Node(state.nodes[path].id if existed else state.new_id(), path, False,
                            bytes(data), mime=MIME_TYPES.get(ext, "application/octet-stream"))
                if existed:
                    node.created = state.nodes[path].created
                state.nodes[path] = node
                return (200 if existed else 201), node

        def _parent_ok(self, path: str) -> bool:
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            with state.lock:
                node = state.nodes.get(parent)
            return node is not None and node.folder

        def _put_content(self, path: str, query: dict[str, str]) -> None:
            data = self._body()
            behavior = query.get("@microsoft.graph.conflictBehavior", "replace")
            if not path or not self._parent_ok(path):
                self._not_found()
                return
            with state.lock:
                existing = state.nodes.get(path)
            if existing is not None and existing.folder:
                self._send(409, _graph_error("nameAlreadyExists", "A folder has this name"))
                return
            if existing is not None and behavior == "fail":
                self._send(409, _graph_error("nameAlreadyExists",
                                             "The specified item name already exists."))
                return
            if existing is not None and behavior == "rename":
                path = _renamed(path)
            status, node = self._store(path, data)
            self._send(status, state.item_json(node))

        def _create_session(self, path: str) -> None:
            try:
                body = json.loads(self._body() or b"{}")
            except ValueError:
                self._send(400, _graph_error("invalidRequest", "Invalid JSON"))
                return
            item = body.get("item") or {}
            behavior = item.get("@microsoft.graph.conflictBehavior", "replace")
            if not path or not self._parent_ok(path):
                self._not_found()
                return
            with state.lock:
                if path in state.nodes and behavior == "fail":
                    self._send(409, _graph_error("nameAlreadyExists",
                                                 "The specified item name already exists."))
                    return
                session = Session(secrets.token_hex(12), path, behavior, secrets.token_urlsafe(24))
                state.sessions[session.id] = session
                state.issued.append(session.tempauth)
            self._send(200, {
                "uploadUrl": f"{state.origin}/upload/{session.id}?tempauth={session.tempauth}",
                "expirationDateTime": session.expires,
                "nextExpectedRanges": ["0-"],
            })

        def _session(self, sid: str, query: dict[str, str]) -> Session | None:
            with state.lock:
                session = state.sessions.get(sid)
            if session is None or query.get("tempauth") != session.tempauth:
                self._send(404, _graph_error("itemNotFound", "The upload session was not found"))
                return None
            return session

        def _upload(self, sid: str, query: dict[str, str]) -> None:
            if self.headers.get("Authorization"):
                # The docs: sending Authorization to uploadUrl may fail with 401.
                self._body()
                self._send(401, _graph_error("unauthenticated",
                                             "Do not send Authorization to the upload URL"))
                return
            if self.command == "GET":
                session = self._session(sid, query)
                if session is not None:
                    self._send(200, {"expirationDateTime": session.expires,
                                     "nextExpectedRanges": session.next_expected()})
                return
            if self.command == "DELETE":
                with state.lock:
                    existed = state.sessions.pop(sid, None)
                self._send(204 if existed else 404)
                return
            if self.command != "PUT":
                self._send(405, _graph_error("invalidRequest", "Method not allowed"))
                return
            with state.lock:
                index = state.fragment_puts
                state.fragment_puts += 1
            length = int(self.headers.get("Content-Length") or 0)
            drop = state.take_fault("drop_fragment", "PUT", str(index))
            if drop is not None and not drop.store:
                self.rfile.read(length // 2)
                raise _Dropped()
            data = self.rfile.read(length) if length else b""
            fail = state.take_fault("fail_fragment", "PUT", str(index))
            if fail is not None:
                headers = {"Retry-After": fail.retry_after} if fail.retry_after is not None else {}
                if fail.status == 404:
                    with state.lock:
                        state.sessions.pop(sid, None)
                code = ("serviceNotAvailable" if fail.status >= 500 else
                        "itemNotFound" if fail.status == 404 else "invalidRequest")
                # The message quotes the upload URL, as a careless service might.
                self._send(fail.status, _graph_error(
                    code, f"The fragment was not accepted at {state.origin}{self.path}"), headers)
                return
            session = self._session(sid, query)
            if session is None:
                return
            match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", self.headers.get("Content-Range", ""))
            if match is None:
                self._send(400, _graph_error("invalidRange", "Content-Range is required"))
                return
            start, end, total = (int(g) for g in match.groups())
            if end - start + 1 != len(data) or end >= total:
                self._send(400, _graph_error("invalidRange", "Content-Range does not match the body"))
                return
            with state.lock:
                if session.size is None:
                    session.size = total
                    session.data = bytearray(total)
                if total != session.size:
                    self._send(400, _graph_error("invalidRange", "The file size changed"))
                    return
                if start != session.received:
                    self._send(416, _graph_error("invalidRange",
                                                 "The uploaded fragment overlaps data already "
                                                 "received" if start < session.received
                                                 else "Fragments must be uploaded in order"))
                    return
                if end + 1 < total and len(data) % FRAGMENT_UNIT:
                    self._send(400, _graph_error("invalidRange",
                                                 "Fragments must be multiples of 320 KiB"))
                    return
                session.data[start:end + 1] = data
                session.received = end + 1
                complete = session.received == total
            if drop is not None and drop.store and not complete:
                raise _Dropped()
            if not complete:
                self._send(202, {"expirationDateTime": session.expires,
                                 "nextExpectedRanges": session.next_expected()})
                return
            with state.lock:
                state.sessions.pop(sid, None)
                if session.path in state.nodes and session.behavior == "fail":
                    self._send(409, _graph_error("nameAlreadyExists",
                                                 "The specified item name already exists."))
                    return
                if session.path in state.nodes and session.behavior == "rename":
                    session.path = _renamed(session.path)
            status, node = self._store(session.path, bytes(session.data))
            if drop is not None and drop.store:
                raise _Dropped()
            self._send(status, state.item_json(node))

        def _download(self, item_id: str, query: dict[str, str]) -> None:
            if self.headers.get("Authorization"):
                self._send(400, _graph_error("invalidRequest",
                                             "The pre-authenticated URL takes no Authorization"))
                return
            with state.lock:
                node = next((n for nodes in state.drives.values() for n in nodes.values()
                             if n.id == item_id), None)
            if node is None or query.get("tempauth") != state._tempauth(item_id):
                self._send(404, _graph_error("itemNotFound", "The resource could not be found."))
                return
            data = node.content
            if state.take_fault("short_download", "GET", node.path) is not None:
                # The connection ends early yet cleanly: only the item's size tells.
                self._send(200, raw=data[:len(data) // 2], headers={"Content-Type": node.mime})
                return
            header = self.headers.get("Range")
            match = re.fullmatch(r"bytes=(\d+)-(\d*)", header or "")
            if match and data:
                start = int(match.group(1))
                end = min(int(match.group(2)) if match.group(2) else len(data) - 1, len(data) - 1)
                if start >= len(data):
                    self._send(416, raw=b"", headers={"Content-Range": f"bytes */{len(data)}"})
                    return
                self._send(206, raw=data[start:end + 1],
                           headers={"Content-Range": f"bytes {start}-{end}/{len(data)}",
                                    "Content-Type": node.mime})
                return
            self._send(200, raw=data, headers={"Content-Type": node.mime})

        def _create_link(self, node: Node | None, item_path: str) -> None:
            try:
                body = json.loads(self._body() or b"{}")
            except ValueError:
                self._send(400, _graph_error("invalidRequest", "Invalid JSON"))
                return
            if node is None:
                self._not_found()
                return
            link_type = body.get("type")
            scope = body.get("scope", "anonymous")
            if link_type not in ("view", "edit", "embed"):
                self._send(400, _graph_error("invalidRequest", "Invalid link type"))
                return
            if scope == "anonymous" and not state.anonymous_links_allowed:
                self._send(403, _graph_error(
                    "accessDenied", "Anonymous sharing links are disabled by the sharing "
                    "policy of this organization."))
                return
            password = body.get("password")
            if password is not None and state.business_mode:
                # The docs: password is for OneDrive Personal only.
                self._send(400, _graph_error("invalidRequest",
                                             "The password property is not supported."))
                return
            expiry = body.get("expirationDateTime")
            if expiry is not None:
                try:
                    dt.datetime.fromisoformat(str(expiry).replace("Z", "+00:00"))
                except ValueError:
                    self._send(400, _graph_error("invalidRequest", "Invalid expirationDateTime"))
                    return
            key = (node.id, link_type, scope)
            with state.lock:
                existing = None if (password or expiry) else state.links.get(key)
                if existing is None:
                    permission = {
                        "id": secrets.token_hex(8),
                        "roles": ["write" if link_type == "edit" else "read"],
                        "link": {"type": link_type, "scope": scope,
                                 "webUrl": "https://1drv.ms/f/s!" + secrets.token_urlsafe(12),
                                 "application": {"id": "1234", "displayName": "Sample App"}},
                    }
                    if expiry is not None:
                        permission["expirationDateTime"] = expiry
                    if password is not None:
                        permission["hasPassword"] = True
                        state.issued.append(str(password))
                    if not (password or expiry):
                        state.links[key] = permission
            if existing is None:
                self._send(201, permission)
            else:
                self._send(200, existing)

        def _destination(self, body: dict[str, Any], node: Node) -> tuple[str, str] | None:
            """(parent path, name) a move or copy body names; None after an answer."""
            reference = body.get("parentReference")
            parent = node.parent
            if isinstance(reference, dict):
                if isinstance(reference.get("path"), str):
                    raw = reference["path"]
                    _, sep, after = raw.partition("root:")
                    if not sep:
                        self._send(400, _graph_error("invalidRequest", "Invalid parent path"))
                        return None
                    parent = urllib.parse.unquote(after).strip("/")
                elif isinstance(reference.get("id"), str):
                    with state.lock:
                        found = next((n for n in state.nodes.values()
                                      if n.id == reference["id"]), None)
                    if found is None:
                        self._not_found()
                        return None
                    parent = found.path
            with state.lock:
                target = state.nodes.get(parent)
            if target is None or not target.folder:
                self._not_found()
                return None
            name = body.get("name") or node.name
            if not isinstance(name, str) or "/" in name:
                self._send(400, _graph_error("invalidRequest", "Invalid name"))
                return None
            return parent, name

        def _free(self, path: str, behavior: str) -> str | None:
            """The path to use under ``behavior``, or None after a 409 answer."""
            with state.lock:
                if path not in state.nodes:
                    return path
                if behavior == "replace":
                    for p in [p for p in state.nodes if p == path or p.startswith(path + "/")]:
                        del state.nodes[p]
                    return path
                if behavior == "rename":
                    stem, dot, ext = path.rpartition(".") if "." in path.rsplit("/", 1)[-1] \
                        else (path, "", "")
                    n = 1
                    while f"{stem} {n}{dot}{ext}" in state.nodes:
                        n += 1
                    return f"{stem} {n}{dot}{ext}"
            self._send(409, _graph_error("nameAlreadyExists", "Name already exists"))
            return None

        def _move(self, node: Node | None, item_path: str, query: dict[str, str]) -> None:
            try:
                body = json.loads(self._body() or b"{}")
            except ValueError:
                self._send(400, _graph_error("invalidRequest", "Invalid JSON"))
                return
            if node is None or not item_path:
                self._not_found()
                return
            where = self._destination(body, node)
            if where is None:
                return
            parent, name = where
            new_path = f"{parent}/{name}" if parent else name
            if new_path == item_path or new_path.startswith(item_path + "/"):
                if new_path != item_path:
                    self._send(400, _graph_error("invalidRequest",
                                                 "An item cannot move into itself"))
                    return
                self._send(200, state.item_json(node))
                return
            behavior = query.get("@microsoft.graph.conflictBehavior", "fail")
            target = self._free(new_path, behavior)
            if target is None:
                return
            with state.lock:
                for p in sorted([p for p in state.nodes if p == item_path
                                 or p.startswith(item_path + "/")]):
                    moved = state.nodes.pop(p)
                    moved.path = target + p[len(item_path):]
                    state.nodes[moved.path] = moved
                moved_node = state.nodes[target]
            self._send(200, state.item_json(moved_node))

        def _copy(self, node: Node | None, item_path: str, query: dict[str, str]) -> None:
            try:
                body = json.loads(self._body() or b"{}")
            except ValueError:
                self._send(400, _graph_error("invalidRequest", "Invalid JSON"))
                return
            if node is None or not item_path:
                self._not_found()
                return
            where = self._destination(body, node)
            if where is None:
                return
            parent, name = where
            behavior = query.get("@microsoft.graph.conflictBehavior", "fail")
            target = self._free(f"{parent}/{name}" if parent else name, behavior)
            if target is None:
                return
            with state.lock:
                for p in sorted([p for p in state.nodes if p == item_path
                                 or p.startswith(item_path + "/")]):
                    source = state.nodes[p]
                    path = target + p[len(item_path):]
                    state.nodes[path] = Node(state.new_id(), path, source.folder,
                                             source.content, mime=source.mime)
                job = secrets.token_hex(8)
                state.copies[job] = {"polls": 0, "resourceId": state.nodes[target].id}
            self._send(202, None, {"Location": f"{state.origin}/monitor/{job}"})

        def _monitor(self, job: str) -> None:
            if self.headers.get("Authorization"):
                self._send(400, _graph_error("invalidRequest",
                                             "The monitor URL takes no Authorization"))
                return
            with state.lock:
                entry = state.copies.get(job)
                if entry is not None:
                    entry["polls"] += 1
            if entry is None:
                self._not_found()
            elif entry["polls"] <= state.copy_polls_before_done:
                self._send(202, {"operation": "itemCopy", "status": "inProgress",
                                 "percentageComplete": 50.0})
            else:
                self._send(200, {"operation": "itemCopy", "status": "completed",
                                 "percentageComplete": 100.0,
                                 "resourceId": entry["resourceId"]})

    return Handler


def _renamed(path: str) -> str:
    """``a/b 1.txt`` for a taken ``a/b.txt``: OneDrive's "rename" conflict behaviour."""
    head, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
    n = 1
    while True:
        candidate = f"{stem} {n}{dot}{ext}"
        full = f"{head}/{candidate}" if head else candidate
        if full not in FakeGraph.current.nodes:  # type: ignore[attr-defined]
            return full
        n += 1


class _Dropped(Exception):
    """Close the connection without answering (a dropped fragment)."""
