"""Real mail servers for the janito-gmail tests and benchmark.

``DovecotServer`` runs the Debian ``dovecot`` binary from a private configuration in a
temporary folder: IMAP with implicit TLS on 127.0.0.1, a self-signed certificate made
here, a passwd-file passdb, a static userdb (a non-root uid, since Dovecot refuses to
run mail processes as root) and Maildir storage. Every session's raw protocol is
written to a rawlog folder so a test can count what the client sent. Given an
OAuthServer, XOAUTH2 goes to Dovecot's own ``oauth2`` passdb, which asks that server
about each access token (introspection); given ``GMAIL_LAYOUT``, the special-use folders
are named as Gmail names them.

``SmtpServer`` runs aiosmtpd on loopback with STARTTLS and AUTH, keeping what arrives;
its XOAUTH2 asks the OAuthServer too.

Imported by ``conftest.py`` and by ``bench/bench_read_emails.py``; nothing here is
collected as a test.
"""

from __future__ import annotations

import base64
import datetime
import email.parser
import email.policy
import grp
import ipaddress
import os
import pwd
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

USER = "alice@example.test"
PASSWORD = "Pw-7f3c-Zq!secret-imap"
OAUTH_USER = "oauth@example.test"
OAUTH_TOKEN = "ya29.tok-9d8e7f-oauth-secret"
MAIL_UID = 65534


class ServerUnavailable(RuntimeError):
    """The server binary is missing or would not start; the message says why."""


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports nothing listens on. The sockets are held until
    all are chosen: released one at a time, the kernel may hand the same port out twice."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


# A port released by free_ports can be taken by another process before dovecot binds it.
_PORT_TROUBLE = ("duplicate listener", "Address already in use")


def dovecot_binary() -> str | None:
    """The dovecot executable, or None when the dovecot-imapd package is not installed.

    ``JANITO_GMAIL_TEST_DOVECOT`` names another binary (the tests use a missing one to
    check what happens without Dovecot).
    """
    explicit = os.environ.get("JANITO_GMAIL_TEST_DOVECOT")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for candidate in (shutil.which("dovecot"), "/usr/sbin/dovecot"):
        if candidate and os.access(candidate, os.X_OK):
            if os.path.exists("/usr/lib/dovecot/imap") or shutil.which("doveconf"):
                return candidate
    return None


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for the address 127.0.0.1 only: (cert.pem, key.pem).

    The name "localhost" is deliberately left out, so connecting by that name shows
    that host names are checked. Made with the ``cryptography`` package (the test extra),
    else with the openssl command, which Dovecot's Debian package depends on.
    """
    cert_path = folder / "cert.pem"
    key_path = folder / "key.pem"
    try:
        _certificate_with_cryptography(cert_path, key_path)
    except ImportError:
        openssl = shutil.which("openssl")
        if openssl is None:
            raise ServerUnavailable("neither the cryptography package nor the openssl "
                                    "command is available to make a test certificate") from None
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", str(key_path), "-out", str(cert_path), "-days", "30",
             "-subj", "/CN=janito-gmail test server", "-addext", "subjectAltName=IP:127.0.0.1",
             "-addext", "basicConstraints=critical,CA:TRUE"],
            check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=60,
        )
    os.chmod(key_path, 0o600)
    return cert_path, key_path


def _certificate_with_cryptography(cert_path: Path, key_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "janito-gmail test server")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )


_CONFIG = """\
base_dir = {root}/run
state_dir = {root}/state
instance_name = janito-gmail-test-{port}
log_path = {root}/dovecot.log
info_log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
shutdown_clients = yes
{users}
ssl = required
ssl_cert = <{root}/cert.pem
ssl_key = <{root}/key.pem
ssl_min_protocol = TLSv1.2
auth_mechanisms = plain login xoauth2
auth_failure_delay = 0
auth_cache_size = 0
mail_location = maildir:~/Maildir
mail_fsync = never
rawlog_dir = {root}/rawlog/%u

{passdbs}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}

namespace inbox {{
  inbox = yes
  separator = /
{mailboxes}
}}

service imap-login {{
  inet_listener imap {{
    port = 0
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {port}
    ssl = yes
  }}
  inet_listener imap_starttls {{
    address = 127.0.0.1
    port = {starttls_port}
  }}
}}
service imap {{
  process_limit = 64
}}
# No slowing down of repeated failed logins: the tests fail logins on purpose.
service anvil {{
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
service pop3-login {{
  inet_listener pop3 {{
    port = 0
  }}
  inet_listener pop3s {{
    port = 0
  }}
}}
service submission-login {{
  inet_listener submission {{
    port = 0
  }}
}}
service lmtp {{
  unix_listener lmtp {{
    mode = 0600
  }}
}}
"""


# Where Dovecot's own default layout keeps its special-use folders.
PLAIN_LAYOUT = {"Trash": "\\Trash", "Sent": "\\Sent", "Drafts": "\\Drafts",
                "Junk": "\\Junk", "Archive": "\\Archive"}
# The folders Gmail shows over IMAP (English account), with their special uses.
GMAIL_LAYOUT = {"[Gmail]/All Mail": "\\All", "[Gmail]/Drafts": "\\Drafts",
                "[Gmail]/Sent Mail": "\\Sent", "[Gmail]/Spam": "\\Junk",
                "[Gmail]/Starred": "\\Flagged", "[Gmail]/Trash": "\\Trash"}


def _mailboxes(layout: dict[str, str]) -> str:
    return "\n".join(
        f'  mailbox "{name}" {{\n    special_use = {use}\n    auto = subscribe\n  }}'
        for name, use in layout.items()
    )


def _passdbs(root: Path, oauth: Any) -> str:
    """passwd-file for passwords; with ``oauth``, Dovecot's oauth2 passdb for XOAUTH2,
    asking the test OAuth server whether each access token is live (introspection)."""
    plain = (f"passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u "
             f"{root}/passwd\n")
    if oauth is None:
        return plain + "}\n"
    (root / "oauth2.conf").write_text(
        f"introspection_mode = auth\nintrospection_url = {oauth.introspection_url}\n"
        "force_introspection = yes\nusername_attribute = email\n"
        "active_attribute = active\nactive_value = true\n",
        encoding="utf-8",
    )
    return (f"passdb {{\n  driver = oauth2\n  mechanisms = xoauth2 oauthbearer\n"
            f"  args = {root}/oauth2.conf\n}}\n"
            + plain + "  mechanisms = plain login\n}\n")


def _server_parent() -> str:
    """Where the server folder goes: the temporary folder if the unprivileged mail
    processes can reach it and its socket paths stay short, else /tmp."""
    candidate = os.path.realpath(tempfile.gettempdir())
    if len(candidate) > 40:
        return "/tmp"
    path = candidate
    while True:
        try:
            if not os.stat(path).st_mode & 0o001:  # others may not traverse it
                return "/tmp"
        except OSError:
            return "/tmp"
        parent = os.path.dirname(path)
        if parent == path:
            return candidate
        path = parent


@dataclass
class DovecotServer:
    """A running private Dovecot; ``stop()`` ends it and removes its folder."""

    root: Path
    port: int
    starttls_port: int
    cert: Path
    binary: str
    config: Path
    users: dict[str, str] = field(default_factory=dict)

    @classmethod
    def start(cls, *, extra_users: dict[str, str] | None = None, oauth: Any = None,
              layout: dict[str, str] | None = None,
              certificate: tuple[Path, Path] | None = None) -> DovecotServer:
        """Start one; ``oauth`` (an OAuthServer) makes XOAUTH2 ask it about each token,
        ``layout`` names the special-use folders (Dovecot's own by default), and
        ``certificate`` (cert.pem, key.pem) is used instead of a new one."""
        binary = dovecot_binary()
        if binary is None:
            raise ServerUnavailable(
                "dovecot is not installed (Debian package dovecot-imapd); "
                "install it with `apt-get install -y dovecot-imapd`"
            )
        root = Path(tempfile.mkdtemp(prefix="janito-gmail-dovecot-", dir=_server_parent()))
        # Mail processes run as an unprivileged uid and must reach the home folders.
        os.chmod(root, 0o755)
        for sub in ("run", "state", "home", "rawlog"):
            (root / sub).mkdir()
        users = {USER: PASSWORD, OAUTH_USER: OAUTH_TOKEN, **(extra_users or {})}
        if oauth is not None:
            oauth.issue(OAUTH_USER, OAUTH_TOKEN, lifetime=10 * 365 * 86400.0)
        if os.geteuid() == 0:
            uid = gid = MAIL_UID
            user_lines = ""
        else:
            uid, gid = os.getuid(), os.getgid()
            me = pwd.getpwuid(uid).pw_name
            group = grp.getgrgid(gid).gr_name
            user_lines = (
                f"default_internal_user = {me}\ndefault_login_user = {me}\n"
                f"default_internal_group = {group}\n"
                "service anvil {\n  chroot =\n}\nservice imap-login {\n  chroot =\n}\n"
            )
        for name in users:
            home = root / "home" / name
            home.mkdir(parents=True)
            os.chown(home, uid, gid)
        rawlog = root / "rawlog"
        os.chmod(rawlog, 0o777)
        (root / "passwd").write_text(
            "".join(f"{name}:{{PLAIN}}{secret}::::::nodelay=y\n"
                    for name, secret in users.items()),
            encoding="utf-8",
        )
        os.chmod(root / "passwd", 0o600)
        if os.geteuid() == 0:
            # The auth process runs as Dovecot's internal user; it alone may read the file.
            try:
                internal = pwd.getpwnam("dovecot")
                os.chown(root / "passwd", internal.pw_uid, internal.pw_gid)
            except KeyError:
                os.chmod(root / "passwd", 0o644)
        if certificate is not None:
            cert, key = root / "cert.pem", root / "key.pem"
            shutil.copyfile(certificate[0], cert)
            shutil.copyfile(certificate[1], key)
            os.chmod(key, 0o600)
        else:
            cert, _key = make_certificate(root)
        # One rawlog folder per user, writable by the mail processes.
        for name in users:
            target = rawlog / name
            target.mkdir()
            os.chown(target, uid, gid)
        for attempt in range(3):
            port, starttls_port = free_ports(2)
            config = root / "dovecot.conf"
            config.write_text(
                _CONFIG.format(
                    root=root, port=port, starttls_port=starttls_port, uid=uid, gid=gid,
                    users=user_lines, passdbs=_passdbs(root, oauth),
                    mailboxes=_mailboxes(PLAIN_LAYOUT if layout is None else layout),
                ),
                encoding="utf-8",
            )
            server = cls(root, port, starttls_port, cert, binary, config, users)
            with open(root / "dovecot.stdout", "wb") as out:
                proc = subprocess.run(
                    [binary, "-c", str(config)],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    timeout=30, check=False,
                )
            if proc.returncode == 0:
                break
            detail = server.log_tail()
            if attempt == 2 or not any(sign in detail for sign in _PORT_TROUBLE):
                shutil.rmtree(root, ignore_errors=True)
                raise ServerUnavailable(
                    f"dovecot would not start (exit {proc.returncode}): {detail}"
                )
        try:
            server.wait_ready()
        except ServerUnavailable:
            server.stop()
            raise
        return server

    def log_tail(self, lines: int = 20) -> str:
        text = ""
        for name in ("dovecot.stdout", "dovecot.log"):
            path = self.root / name
            if path.exists():
                text += path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def wait_ready(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise ServerUnavailable(f"dovecot did not listen on port {self.port}: {self.log_tail()}")

    def stop(self) -> None:
        with open(self.root / "dovecot.stop", "wb") as out:
            subprocess.run(
                [self.binary, "-c", str(self.config), "stop"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                timeout=30, check=False,
            )
        pidfile = self.root / "run" / "master.pid"
        deadline = time.monotonic() + 10
        while pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- what the tests read ---------------------------------------------------------

    def env(self, *, user: str = USER) -> dict[str, str]:
        """The environment that points janito-gmail at this server as ``user``."""
        values = {
            "JANITO_GMAIL_IMAP_HOST": "127.0.0.1",
            "JANITO_GMAIL_IMAP_PORT": str(self.port),
            "JANITO_GMAIL_IMAP_TLS": "ssl",
            "JANITO_GMAIL_CA_FILE": str(self.cert),
            "JANITO_GMAIL_TIMEOUT": "10",
            "JANITO_SECRET_GMAIL_USERNAME": user,
        }
        if user == OAUTH_USER:
            values["JANITO_SECRET_GMAIL_OAUTH_TOKEN"] = self.users[user]
        else:
            values["JANITO_SECRET_GMAIL_PASSWORD"] = self.users[user]
        return values

    def client(self, user: str = USER) -> Any:
        """A logged-in IMAPClient for seeding and checking (not the code under test)."""
        from imapclient import IMAPClient

        context = ssl.create_default_context(cafile=str(self.cert))
        client = IMAPClient("127.0.0.1", port=self.port, ssl=True, ssl_context=context,
                            timeout=10)
        client.login(user, self.users[user])
        return client

    def wait_for_sessions(self, count: int, user: str = USER,
                          timeout: float = 5.0) -> list[Path]:
        """The rawlogs once ``count`` sessions have logged out (their LOGOUT is written)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.sessions(user)
            done = [p for p in found if "LOGOUT" in self.tagged_commands(p)]
            if len(done) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.02)

    def sessions(self, user: str = USER) -> list[Path]:
        """The rawlog files of what clients sent, one per IMAP session, oldest first."""
        folder = self.root / "rawlog" / user
        return sorted(folder.glob("*.in"), key=lambda p: (p.stat().st_mtime_ns, p.name))

    @staticmethod
    def tagged_commands(rawlog_in: Path) -> list[str]:
        """The tagged commands in one session's client-to-server log, one round trip each.

        Dovecot writes the session after login (LOGIN itself is handled by imap-login);
        every line starts with a timestamp. Tags are those imaplib makes (four capitals and
        a number), which keeps message text sent as a literal from being miscounted.
        """
        commands = []
        for raw in rawlog_in.read_bytes().split(b"\r\n"):
            match = _TAGGED.match(raw.decode("utf-8", "replace"))
            if match:
                commands.append(" ".join(w for w in (match.group(1), match.group(2)) if w))
        return commands


_TAGGED = re.compile(r"^(?:\d+\.\d+ )?[A-Z]{4}\d+ (?:(UID) )?([A-Za-z]+)")


# -- SMTP ---------------------------------------------------------------------------


@dataclass
class Arrived:
    """One message the SMTP server accepted."""

    mail_from: str
    recipients: list[str]
    message: EmailMessage
    raw: bytes


class SmtpServer:
    """aiosmtpd on loopback: STARTTLS with the test certificate, AUTH PLAIN/LOGIN/XOAUTH2."""

    def __init__(self, cert: Path, key: Path, username: str, password: str,
                 oauth: tuple[str, str] | Any = (OAUTH_USER, OAUTH_TOKEN), *,
                 implicit_tls: bool = False, size_limit: int | None = None) -> None:
        """``oauth``: the one (user, token) XOAUTH2 accepts, or an OAuthServer to ask."""
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        self.messages: list[Arrived] = []
        self._lock = threading.Lock()
        server = self

        class Handler:
            async def handle_DATA(self, smtp: Any, session: Any, envelope: Any) -> str:
                raw = bytes(envelope.original_content or envelope.content)
                parsed = email.parser.BytesParser(policy=email.policy.default).parsebytes(
                    raw.replace(b"\r\n", b"\n")
                )
                with server._lock:
                    server.messages.append(
                        Arrived(envelope.mail_from, list(envelope.rcpt_tos), parsed, raw)  # type: ignore[arg-type]
                    )
                return "250 Message accepted for delivery"

            async def auth_XOAUTH2(self, smtp: Any, args: list[str]) -> Any:
                if len(args) < 2:
                    blob = await smtp.challenge_auth("")
                else:
                    blob = base64.b64decode(args[1])
                fields = dict(
                    item.split("=", 1) for item in bytes(blob).decode().split("\1") if "=" in item
                )
                user, auth = fields.get("user", ""), fields.get("auth", "")
                if isinstance(oauth, tuple):
                    good = (user, auth) == (oauth[0], f"Bearer {oauth[1]}")
                else:
                    good = auth.startswith("Bearer ") and oauth.valid(auth[7:], user)
                if good:
                    return AuthResult(success=True, handled=False)
                # as Gmail: a challenge carrying the error, answered empty, then 535
                await smtp.challenge_auth(b'{"status":"401","schemes":"Bearer",'
                                          b'"scope":"https://mail.google.com/"}')
                return AuthResult(success=False, handled=False)

        def authenticator(smtp: Any, session: Any, envelope: Any, mechanism: str,
                          auth_data: Any) -> Any:
            login = getattr(auth_data, "login", None)
            secret = getattr(auth_data, "password", None)
            if isinstance(login, bytes):
                login = login.decode()
            if isinstance(secret, bytes):
                secret = secret.decode()
            ok = login == username and secret == password
            return AuthResult(success=ok, handled=False)

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(cert), str(key))
        self.port = free_port()
        self.implicit_tls = implicit_tls
        options: dict[str, Any] = {"data_size_limit": size_limit} if size_limit else {}
        if implicit_tls:  # SMTPS: TLS from the first byte, as on port 465
            self.controller = Controller(
                Handler(), hostname="127.0.0.1", port=self.port, ssl_context=context,
                authenticator=authenticator, auth_require_tls=False,
                auth_exclude_mechanism=["CRAM-MD5"], ready_timeout=10, **options,
            )
        else:
            self.controller = Controller(
                Handler(), hostname="127.0.0.1", port=self.port, tls_context=context,
                require_starttls=True, authenticator=authenticator, auth_require_tls=True,
                auth_exclude_mechanism=["CRAM-MD5"], ready_timeout=10, **options,
            )
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()

    def env(self) -> dict[str, str]:
        return {
            "JANITO_GMAIL_SMTP_HOST": "127.0.0.1",
            "JANITO_GMAIL_SMTP_PORT": str(self.port),
            "JANITO_GMAIL_SMTP_TLS": "ssl" if self.implicit_tls else "starttls",
        }

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Arrived]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.messages) >= count:
                    return list(self.messages)
            time.sleep(0.02)
        with self._lock:
            return list(self.messages)


# -- seeding ------------------------------------------------------------------------


def plain_message(number: int, *, sender: str = "bob@example.test",
                  subject: str | None = None, body: str | None = None,
                  date: datetime.datetime | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"Bob Sender <{sender}>"
    msg["To"] = USER
    msg["Subject"] = subject if subject is not None else f"Message number {number}"
    msg["Date"] = date or datetime.datetime(2024, 3, 1, 12, 0, tzinfo=datetime.timezone.utc) \
        + datetime.timedelta(minutes=number)
    msg["Message-ID"] = f"<msg-{number}@example.test>"
    msg.set_content(body if body is not None else f"Hello, this is message {number}.\n")
    return msg.as_bytes()


def html_message(number: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Newsletter <news@example.test>"
    msg["To"] = USER
    msg["Subject"] = f"Newsletter {number}"
    msg["Date"] = datetime.datetime(2024, 3, 2, 9, 30, tzinfo=datetime.timezone.utc)
    msg["Message-ID"] = f"<html-{number}@example.test>"
    msg.set_content(
        "<html><head><style>p {color: red}</style><script>var x = 1;</script></head>"
        "<body><h1>Big&nbsp;news</h1><p>First paragraph with <b>bold</b> text.</p>"
        "<p>Second &amp; last paragraph.</p><ul><li>one</li><li>two</li></ul></body></html>",
        subtype="html",
    )
    return msg.as_bytes()


def attachment_message(number: int, payload: bytes, filename: str = "report.pdf") -> bytes:
    msg = EmailMessage()
    msg["From"] = "Carol <carol@example.test>"
    msg["To"] = USER
    msg["Cc"] = "dave@example.test"
    msg["Subject"] = f"Report {number} attached"
    msg["Date"] = datetime.datetime(2024, 3, 3, 8, 0, tzinfo=datetime.timezone.utc)
    msg["Message-ID"] = f"<att-{number}@example.test>"
    msg.set_content("Please find the report attached.\n")
    msg.add_alternative("<p>Please find the <i>report</i> attached.</p>", subtype="html")
    msg.add_attachment(payload, maintype="application", subtype="pdf", filename=filename)
    msg.add_attachment(b"a,b\n1,2\n", maintype="text", subtype="csv", filename="data.csv")
    return msg.as_bytes()


def seed(server: DovecotServer, folder: str, messages: list[bytes], *, user: str = USER,
         seen: bool = False) -> list[int]:
    """APPEND ``messages`` to ``folder`` (created if needed); return their UIDs in order."""
    client = server.client(user)
    try:
        if not client.folder_exists(folder):
            client.create_folder(folder)
        uids: list[int] = []
        flags = (b"\\Seen",) if seen else ()
        for raw in messages:
            # like delivery: the arrival time (INTERNALDATE) is the Date header's
            parsed = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(raw)
            when = parsed["Date"].datetime if parsed["Date"] else None
            response = client.append(folder, raw, flags=flags, msg_time=when)
            uids.append(_appended_uid(response))
        return uids
    finally:
        client.logout()


def mixed_messages(count: int) -> list[bytes]:
    """``count`` messages cycling through plain, HTML-only and with-attachments kinds."""
    makers = (
        lambda n: plain_message(n),
        lambda n: html_message(n),
        lambda n: attachment_message(n, b"%PDF-1.4 " * 200),
    )
    return [makers[n % 3](n) for n in range(count)]


def seed_many(server: DovecotServer, folder: str, messages: list[bytes], *,
              user: str = USER) -> None:
    """APPEND many messages in one MULTIAPPEND command (folder created if needed)."""
    client = server.client(user)
    try:
        if not client.folder_exists(folder):
            client.create_folder(folder)
        client.multiappend(folder, messages)
    finally:
        client.logout()


def _appended_uid(response: bytes) -> int:
    # "[APPENDUID <uidvalidity> <uid>] Append completed."
    text = response.decode() if isinstance(response, bytes) else str(response)
    inside = text[text.index("[APPENDUID ") + len("[APPENDUID "):text.index("]")]
    return int(inside.split()[1])
