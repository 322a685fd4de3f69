"""Small hostile servers on 127.0.0.1 that the gmail and onedrive toolsets talk to.

They exist so that those toolsets load (credentials configured) and their tools really
run, and so that the secret sweep has something to catch: each server echoes the
credentials it receives back into its error messages, as a careless or malicious server
might. A tool must never pass those on to the model, a log or a report.

- ``ImapServer``: enough IMAP4rev1 for imapclient (LOGIN, LIST, SELECT/EXAMINE, SEARCH,
  FETCH of one message with one attachment, STORE, COPY, MOVE, EXPUNGE, LOGOUT). The
  attachment's file name climbs out of the folder (``../../escape.txt``).
- ``SmtpServer``: EHLO then refuses AUTH with a 535 that quotes the credentials it got
  (base64 and decoded).
- ``IdentityServer``: an https OpenID authority (token endpoint echoing the refresh token)
  and an http Microsoft Graph stand-in (errors quoting the bearer token); ``expired`` in
  a path answers 401, which makes the client try its refresh token.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
import socket
import socketserver
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

# -- IMAP --------------------------------------------------------------------------------

ATTACHMENT_NAME = "../../escape.txt"
ATTACHMENT_DATA = b"ATTACHMENT-PAYLOAD-from-the-reliability-server\n"
TEXT_BODY = b"Hello from the reliability suite.\r\n"
_B64 = base64.encodebytes(ATTACHMENT_DATA).replace(b"\n", b"\r\n")
HEADERS = (
    b"From: Alice <alice@example.test>\r\n"
    b"To: reliability@example.test\r\n"
    b"Subject: Report\r\n"
    b"Date: Mon, 01 Jan 2024 10:00:00 +0000\r\n"
    b"Message-ID: <1@example.test>\r\n"
    b"MIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="b1"\r\n\r\n'
)
PART1_HEADERS = b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n"
PART2_HEADERS = (
    b'Content-Type: application/octet-stream; name="' + ATTACHMENT_NAME.encode() + b'"\r\n'
    b"Content-Transfer-Encoding: base64\r\n"
    b'Content-Disposition: attachment; filename="' + ATTACHMENT_NAME.encode() + b'"\r\n\r\n'
)
TEXT = (b"--b1\r\n" + PART1_HEADERS + TEXT_BODY + b"--b1\r\n" + PART2_HEADERS + _B64
        + b"--b1--\r\n")
MESSAGE = HEADERS + TEXT
BODYSTRUCTURE = (
    b'(("TEXT" "PLAIN" ("CHARSET" "utf-8") NIL NIL "7BIT" %d 1 NIL NIL NIL NIL)'
    b'("APPLICATION" "OCTET-STREAM" ("NAME" "%s") NIL NIL "BASE64" %d NIL '
    b'("ATTACHMENT" ("FILENAME" "%s")) NIL NIL) "MIXED" ("BOUNDARY" "b1") NIL NIL NIL)'
) % (len(TEXT_BODY), ATTACHMENT_NAME.encode(), len(_B64), ATTACHMENT_NAME.encode())
ENVELOPE = (
    b'("Mon, 01 Jan 2024 10:00:00 +0000" "Report" (("Alice" NIL "alice" "example.test")) '
    b'(("Alice" NIL "alice" "example.test")) (("Alice" NIL "alice" "example.test")) '
    b'((NIL NIL "reliability" "example.test")) NIL NIL NIL "<1@example.test>")'
)
FOLDERS = [("INBOX", ""), ("Trash", "\\Trash"), ("Sent", "\\Sent"), ("Archive", "\\Archive")]
CAPABILITIES = b"IMAP4rev1 UIDPLUS MOVE SPECIAL-USE ID ENABLE AUTH=PLAIN"


def _tokens(data: bytes) -> list[bytes]:
    """Atoms, quoted strings and parenthesised groups (kept whole) of an IMAP line."""
    out: list[bytes] = []
    i = 0
    while i < len(data):
        c = data[i:i + 1]
        if c in b" \r\n":
            i += 1
        elif c == b'"':
            j = i + 1
            buf = bytearray()
            while j < len(data) and data[j:j + 1] != b'"':
                if data[j:j + 1] == b"\\":
                    j += 1
                buf += data[j:j + 1]
                j += 1
            out.append(bytes(buf))
            i = j + 1
        elif c == b"(":
            depth, j = 0, i
            while j < len(data):
                if data[j:j + 1] == b"(":
                    depth += 1
                elif data[j:j + 1] == b")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            out.append(data[i:j + 1])
            i = j + 1
        elif c == b"\x00":  # a literal, inlined by the reader as NUL + length + data
            end = data.index(b":", i)
            size = int(data[i + 1:end])
            out.append(data[end + 1:end + 1 + size])
            i = end + 1 + size
        else:
            j = i
            depth = 0
            while j < len(data) and (data[j:j + 1] not in b" \r\n" or depth):
                if data[j:j + 1] == b"[":
                    depth += 1
                elif data[j:j + 1] == b"]":
                    depth -= 1
                j += 1
            out.append(data[i:j])
            i = j
    return out


def _covers_one(sequence: bytes) -> bool:
    for part in sequence.split(b","):
        low, _, high = part.partition(b":")
        try:
            lo = 1 if low == b"*" else int(low)
            hi = lo if not high else (10**9 if high == b"*" else int(high))
        except ValueError:
            continue
        if min(lo, hi) <= 1 <= max(lo, hi):
            return True
    return False


class _ImapHandler(socketserver.StreamRequestHandler):
    server: ImapServer

    def setup(self) -> None:
        super().setup()
        # one small write per response line: without this, Nagle and delayed ACKs add
        # tens of milliseconds to every round trip
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, line: bytes) -> None:
        self.wfile.write(line + b"\r\n")
        self.wfile.flush()

    def read_command(self) -> bytes | None:
        """One command with its literals inlined (NUL + size + ':' + data)."""
        line = self.rfile.readline(1 << 20)
        if not line:
            return None
        buf = bytearray()
        while True:
            match = re.search(rb"\{(\d+)(\+?)\}\r?\n$", line)
            if not match:
                buf += line
                return bytes(buf)
            buf += line[:match.start()]
            size = int(match.group(1))
            if size > 10 << 20:
                return None
            if not match.group(2):
                self.send(b"+ Ready for literal data")
            data = self.rfile.read(size)
            buf += b"\x00" + str(size).encode() + b":" + data
            line = self.rfile.readline(1 << 20)
            if not line:
                return None

    def handle(self) -> None:
        self.selected: str | None = None
        self.send(b"* OK [CAPABILITY " + CAPABILITIES + b"] reliability IMAP ready")
        while True:
            try:
                command = self.read_command()
            except (OSError, ValueError):
                return
            if command is None:
                return
            self.server.commands += 1
            parts = _tokens(command)
            if len(parts) < 2:
                self.send(b"* BAD empty command")
                continue
            tag, name, args = parts[0], parts[1].upper(), parts[2:]
            uid = False
            if name == b"UID" and args:
                uid, name, args = True, args[0].upper(), args[1:]
            try:
                if not self.dispatch(tag, name, args, uid):
                    return
            except (OSError, ValueError):
                return
            except Exception as exc:  # a server bug answers, it does not hang the client
                self.send(tag + b" BAD server error " + repr(exc).encode()[:200])

    def dispatch(self, tag: bytes, name: bytes, args: list[bytes], uid: bool) -> bool:
        if name == b"CAPABILITY":
            self.send(b"* CAPABILITY " + CAPABILITIES)
            self.send(tag + b" OK done")
        elif name == b"LOGIN":
            user = args[0].decode("utf-8", "replace") if args else ""
            password = args[1].decode("utf-8", "replace") if len(args) > 1 else ""
            self.server.logins.append((user, password))
            if self.server.echo_credentials or (user, password) != self.server.credentials:
                self.send(tag + f" NO [AUTHENTICATIONFAILED] Invalid credentials user={user} "
                                f"password={password}".encode())
            else:
                self.send(tag + b" OK [CAPABILITY " + CAPABILITIES + b"] logged in")
        elif name == b"AUTHENTICATE":
            self.send(b"+ ")
            answer = self.rfile.readline(1 << 16).strip()
            self.send(tag + b" NO [AUTHENTICATIONFAILED] rejected " + answer)
        elif name in (b"LOGOUT",):
            self.send(b"* BYE logging out")
            self.send(tag + b" OK bye")
            return False
        elif name in (b"NOOP", b"CHECK", b"ENABLE", b"UNSELECT", b"CLOSE", b"SUBSCRIBE",
                      b"UNSUBSCRIBE", b"EXPUNGE", b"CREATE", b"IDLE"):
            self.send(tag + b" OK done")
        elif name == b"ID":
            self.send(b'* ID ("name" "reliability")')
            self.send(tag + b" OK done")
        elif name in (b"LIST", b"LSUB", b"XLIST"):
            pattern = args[1].decode("utf-8", "replace") if len(args) > 1 else "*"
            for folder, flag in FOLDERS:
                if pattern in ("*", "%") or pattern == folder or pattern.rstrip("*%") == folder:
                    flags = ("\\HasNoChildren " + flag).strip()
                    self.send(f'* {name.decode()} ({flags}) "/" "{folder}"'.encode())
            self.send(tag + b" OK done")
        elif name in (b"SELECT", b"EXAMINE"):
            folder = args[0].decode("utf-8", "replace") if args else ""
            known = {f.upper() if f == "INBOX" else f for f, _ in FOLDERS}
            key = folder.upper() if folder.upper() == "INBOX" else folder
            if key not in known:
                self.send(tag + b" NO [NONEXISTENT] no such folder")
                return True
            self.selected = key
            count = 1 if key == "INBOX" else 0
            self.send(b"* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)")
            self.send(f"* {count} EXISTS".encode())
            self.send(b"* 0 RECENT")
            self.send(b"* OK [UIDVALIDITY 7] ok")
            self.send(b"* OK [UIDNEXT 2] ok")
            mode = b"READ-ONLY" if name == b"EXAMINE" else b"READ-WRITE"
            self.send(tag + b" OK [" + mode + b"] selected")
        elif name == b"STATUS":
            folder = args[0] if args else b"INBOX"
            self.send(b'* STATUS "' + folder + b'" (MESSAGES 1 UNSEEN 0 RECENT 0 UIDNEXT 2 '
                      b"UIDVALIDITY 7)")
            self.send(tag + b" OK done")
        elif name == b"SEARCH":
            hits = b" 1" if self.selected == "INBOX" else b""
            self.send(b"* SEARCH" + hits)
            self.send(tag + b" OK done")
        elif name == b"FETCH":
            if self.selected == "INBOX" and args and _covers_one(args[0]):
                self.send_fetch(args[1] if len(args) > 1 else b"", uid)
            self.send(tag + b" OK done")
        elif name in (b"STORE", b"COPY", b"MOVE"):
            if name == b"MOVE":
                self.send(b"* OK [COPYUID 7 1 1] moved")
                self.send(b"* 1 EXPUNGE")
            self.send(tag + b" OK done")
        elif name == b"APPEND":
            self.send(tag + b" OK [APPENDUID 7 2] appended")
        else:
            self.send(tag + b" BAD unknown command " + name[:40])
        return True

    def send_fetch(self, items: bytes, uid: bool) -> None:
        wanted = items.strip(b"()").upper()
        pieces: list[bytes] = [b"UID 1"]
        literals: list[tuple[bytes, bytes]] = []
        if b"FLAGS" in re.sub(rb"\[.*?\]", b"", wanted):
            pieces.append(b"FLAGS (\\Seen)")
        if b"INTERNALDATE" in wanted:
            pieces.append(b'INTERNALDATE "01-Jan-2024 10:00:00 +0000"')
        if b"RFC822.SIZE" in wanted:
            pieces.append(b"RFC822.SIZE %d" % len(MESSAGE))
        if b"BODYSTRUCTURE" in wanted:
            pieces.append(b"BODYSTRUCTURE " + BODYSTRUCTURE)
        if b"ENVELOPE" in wanted:
            pieces.append(b"ENVELOPE " + ENVELOPE)
        for match in re.finditer(rb"(?:BODY(?:\.PEEK)?|RFC822)(\[[^\]]*\])?(<\d+(?:\.\d+)?>)?",
                                 items, re.IGNORECASE):
            if match.group(0).upper() in (b"BODYSTRUCTURE",):
                continue
            section = (match.group(1) or b"").upper()
            if not section and not match.group(0).upper().startswith(b"RFC822"):
                continue
            data = self.section_data(section.strip(b"[]"))
            start = 0
            partial = b""
            if match.group(2):
                numbers = match.group(2).strip(b"<>").split(b".")
                start = int(numbers[0])
                length = int(numbers[1]) if len(numbers) > 1 else len(data)
                data = data[start:start + length]
                partial = b"<%d>" % start
            key = (b"BODY" + (match.group(1) or b"[]") + partial) if section or \
                not match.group(0).upper().startswith(b"RFC822") else match.group(0).upper()
            literals.append((key, data))
        head = b"* 1 FETCH (" + b" ".join(pieces)
        if not literals:
            self.send(head + b")")
            return
        out = head
        for key, data in literals:
            out += b" " + key + b" {%d}\r\n" % len(data) + data
        self.send(out + b")")

    @staticmethod
    def section_data(section: bytes) -> bytes:
        if section in (b"",):
            return MESSAGE
        if section.startswith(b"HEADER"):
            return HEADERS
        if section == b"TEXT":
            return TEXT
        if section == b"1":
            return TEXT_BODY
        if section == b"2":
            return _B64
        if section == b"1.MIME":
            return PART1_HEADERS
        if section == b"2.MIME":
            return PART2_HEADERS
        return b""


class ImapServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, credentials: tuple[str, str], *, echo_credentials: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _ImapHandler)
        self.credentials = credentials
        self.echo_credentials = echo_credentials
        self.logins: list[tuple[str, str]] = []
        self.commands = 0
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> ImapServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


# -- SMTP --------------------------------------------------------------------------------


class _SmtpHandler(socketserver.StreamRequestHandler):
    server: SmtpServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def handle(self) -> None:
        self.send("220 reliability ESMTP ready")
        while True:
            try:
                raw = self.rfile.readline(1 << 16)
            except OSError:
                return
            if not raw:
                return
            line = raw.decode("utf-8", "replace").strip()
            verb = line.split(" ", 1)[0].upper()
            if verb in ("EHLO", "HELO"):
                self.send("250-reliability")
                self.send("250-AUTH PLAIN LOGIN")
                self.send("250 8BITMIME")
            elif verb == "AUTH":
                self.server.auths.append(line)
                words = line.split()
                mechanism = words[1].upper() if len(words) > 1 else ""
                payload = words[2] if len(words) > 2 else ""
                if mechanism == "LOGIN":
                    self.send("334 UGFzc3dvcmQ6")
                    payload = self.rfile.readline(1 << 16).decode("utf-8", "replace").strip()
                try:
                    decoded = base64.b64decode(payload).decode("utf-8", "replace")
                except ValueError:
                    decoded = ""
                self.send(f"535 5.7.8 Authentication failed for {payload} "
                          f"({decoded.replace(chr(0), ' ')})")
            elif verb == "QUIT":
                self.send("221 bye")
                return
            elif verb in ("RSET", "NOOP"):
                self.send("250 ok")
            else:
                self.send("530 5.7.0 Authentication required")


class SmtpServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SmtpHandler)
        self.auths: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> SmtpServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


# -- Microsoft identity and Graph ------------------------------------------------------------

TENANT = "reliability-tenant"


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA): (certificate, key) PEM files."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost"),
        ]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class IdentityServer:
    """An https authority and an http Graph, both quoting the credentials they receive."""

    def __init__(self, tls_folder: Path) -> None:
        self.cert, key = make_certificate(tls_folder)
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[bytes] = []  # what the Graph stand-in received (uploads included)
        # Quote the refresh token in the token endpoint's error (off by default: msal logs
        # that error at DEBUG, which a dedicated test looks at).
        self.echo_refresh_token = False
        self.auth = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(self._authority))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(self.cert), str(key))
        self.auth.socket = context.wrap_socket(self.auth.socket, server_side=True)
        self.graph = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(self._graph))
        self.threads = [threading.Thread(target=s.serve_forever, daemon=True)
                        for s in (self.auth, self.graph)]

    def start(self) -> IdentityServer:
        for thread in self.threads:
            thread.start()
        return self

    def stop(self) -> None:
        for server in (self.auth, self.graph):
            server.shutdown()
            server.server_close()

    @property
    def authority(self) -> str:
        return f"https://127.0.0.1:{self.auth.server_address[1]}/{TENANT}"

    @property
    def graph_url(self) -> str:
        return f"http://127.0.0.1:{self.graph.server_address[1]}/v1.0"

    def token_cache(self, client_id: str, access_token: str, refresh_token: str) -> str:
        """A serialised msal cache holding one signed-in account and its tokens."""
        import msal

        claims = {"ver": "2.0", "iss": f"{self.authority}/v2.0", "sub": "s", "aud": client_id,
                  "exp": int(time.time()) + 86400, "iat": int(time.time()), "oid": "uid-1",
                  "tid": TENANT, "preferred_username": "reliability@example.test",
                  "name": "Reliability"}
        id_token = ".".join([_b64url(b'{"alg":"none","typ":"JWT"}'),
                             _b64url(json.dumps(claims).encode()), ""])
        cache = msal.SerializableTokenCache()
        cache.add({
            "client_id": client_id,
            "scope": ["Files.ReadWrite"],
            "token_endpoint": f"{self.authority}/oauth2/v2.0/token",
            "response": {
                "access_token": access_token, "refresh_token": refresh_token,
                "token_type": "Bearer", "expires_in": 86400, "ext_expires_in": 86400,
                "scope": "Files.ReadWrite openid profile", "id_token": id_token,
                "client_info": _b64url(json.dumps({"uid": "uid-1", "utid": TENANT}).encode()),
            },
            "data": {},
        })
        return str(cache.serialize())

    def _handler(self, route: Any) -> type[BaseHTTPRequestHandler]:

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def body(self) -> bytes:
                size = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(size) if size else b""

            def do_GET(self) -> None:
                route(self)

            def do_POST(self) -> None:
                route(self)

            def do_PUT(self) -> None:
                route(self)

            def do_PATCH(self) -> None:
                route(self)

            def do_DELETE(self) -> None:
                route(self)

        return Handler

    def _authority(self, h: Any) -> None:
        path = urlsplit(h.path).path
        self.requests.append((h.command, path))
        base = f"https://127.0.0.1:{self.auth.server_address[1]}/{TENANT}"
        if h.command == "GET" and path.endswith("/v2.0/.well-known/openid-configuration"):
            h.reply(200, {
                "issuer": f"{base}/v2.0",
                "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "token_endpoint": f"{base}/oauth2/v2.0/token",
                "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                "response_types_supported": ["code"],
                "subject_types_supported": ["pairwise"],
                "id_token_signing_alg_values_supported": ["RS256"],
            })
            return
        if h.command == "POST" and path.endswith("/oauth2/v2.0/token"):
            form = parse_qs(h.body().decode("utf-8", "replace"))
            echoed = form.get("refresh_token", [""])[0] if self.echo_refresh_token else "(hidden)"
            h.reply(400, {"error": "invalid_grant",
                          "error_description": f"AADSTS70000: the refresh token {echoed} "
                                               "was revoked",
                          "error_codes": [70000]})
            return
        h.reply(404, {"error": "not_found", "error_description": f"no route {path}"})

    def _graph(self, h: Any) -> None:
        path = urlsplit(h.path).path
        self.requests.append((h.command, path))
        self.bodies.append(h.body())
        auth = h.headers.get("Authorization", "")
        if "expired" in path:
            h.reply(401, {"error": {"code": "InvalidAuthenticationToken",
                                    "message": f"Access token has expired: {auth}"}})
        elif h.command == "GET" and path.endswith("/children"):
            h.reply(200, {"value": [{"id": "1", "name": "a.txt", "size": 3, "file": {},
                                     "lastModifiedDateTime": "2024-01-01T00:00:00Z"}]})
        else:
            h.reply(404, {"error": {"code": "itemNotFound",
                                    "message": f"The resource could not be found (request "
                                               f"made with {auth})"}})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
