"""Shared fixtures: a real HTTP server on 127.0.0.1, a port nobody listens on, and each
sandbox mechanism this machine has (``mechanism``)."""

from __future__ import annotations

import functools
import gzip
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from system_helpers import mechanism_problem

#: Pages as sites serve them (documentation, news, encyclopedia, blog, Q&A), with their
#: navigation, banners, scripts and footers; also what bench/bench_html_markdown.py reads.
PAGES = Path(__file__).parent / "pages"

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Test  page</title>
<style>body { color: red }</style><script>document.write("<p>hidden</p>")</script></head>
<body>
<h1>Welcome</h1>
<p>First paragraph with <b>bold</b> text
and a <a href="/next">relative link</a>.</p>
<ul><li>apple</li><li>pear</li></ul>
<pre>keep   this
  layout</pre>
<p>Caf\u00e9 &amp; cr\u00e8me</p>
</body></html>
"""


@functools.cache
def gzip_bomb() -> bytes:
    """16 MiB of zeros, gzip-compressed to a few kilobytes."""
    return gzip.compress(bytes(16 * 1024 * 1024), compresslevel=9)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LoopbackServer

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, content_type: str | None = "text/plain",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str, status: int = 302) -> None:
        self._send(status, b"", headers={"Location": location})

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        path = self.path
        if path in self.server.files:
            status, body, content_type = self.server.files[path]
            self._send(status, body, content_type)
        elif path == "/page":
            self._send(200, PAGE.encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/text":
            body = "".join(f"line {i}\n" for i in range(1, 1001))
            self._send(200, body.encode(), "text/plain; charset=utf-8")
        elif path == "/json":
            self._send(200, b'{"answer": 42}', "application/json")
        elif path == "/latin1":
            self._send(200, "na\u00efve caf\u00e9".encode("latin-1"),
                       "text/plain; charset=iso-8859-1")
        elif path == "/meta-charset":
            body = ('<html><head><meta charset="windows-1252"></head><body><p>'
                    "\u201cquoted\u201d</p></body></html>").encode("cp1252")
            self._send(200, body, "text/html")
        elif path == "/no-type":
            self._send(200, b"plain words without a content type", None)
        elif path == "/binary":
            self._send(200, bytes(range(256)) * 4, "application/octet-stream")
        elif path == "/redirect":
            self._redirect("/page")
        elif path == "/redirect-absolute":
            host, port = self.server.server_address[:2]
            self._redirect(f"http://{host}:{port}/text", 301)
        elif path.startswith("/chain/"):
            left = int(path.rsplit("/", 1)[1])
            if left:
                self._redirect(f"/chain/{left - 1}", 307)
            else:
                self._send(200, b"end of the chain")
        elif path == "/loop-a":
            self._redirect("/loop-b")
        elif path == "/loop-b":
            self._redirect("/loop-a")
        elif path == "/to-file":
            self._redirect("file:///etc/passwd")
        elif path == "/not-found":
            self._send(404, b"<html><body><h1>Nothing here</h1><p>Try /page.</p></body></html>",
                       "text/html")
        elif path == "/broken":
            self._send(500, b"database on fire", "text/plain")
        elif path == "/slow":
            self.server.release.wait(30)
            self._send(200, b"finally")
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            try:
                for _ in range(1000):
                    if self.server.release.wait(0.05):
                        break
                    self.wfile.write(b"x")
                    self.wfile.flush()
            except OSError:
                pass
        elif path == "/huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(1024 * 1024 * 1024))
            self.end_headers()
            chunk = b"0123456789abcdef" * 4096
            sent = 0
            try:
                while sent < 1024 * 1024 * 1024 and not self.server.release.is_set():
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except OSError:
                pass
            self.server.huge_sent.append(sent)
            self.close_connection = True
        elif path == "/gzip":
            body = gzip.compress(b"compressed words\n" * 3)
            self._send(200, body, "text/plain", headers={"Content-Encoding": "gzip"})
        elif path == "/gzip-bomb":
            self._send(200, gzip_bomb(), "text/plain", headers={"Content-Encoding": "gzip"})
        elif path == "/brotli":
            self._send(200, b"\x0b\x02\x80hi\x03", "text/plain",
                       headers={"Content-Encoding": "br"})
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(1, 6):
                data = f"chunk {i}\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/big-html":
            rows = "".join(f"<p>Paragraph number {i}.</p>\n" for i in range(20_000))
            self._send(200, f"<html><body>{rows}</body></html>".encode(), "text/html")
        elif path.startswith("/pages/"):
            page = PAGES / (path.rsplit("/", 1)[1] + ".html")
            if page.is_file():
                self._send(200, page.read_bytes(), "text/html; charset=utf-8")
            else:
                self._send(404, b"no such page")
        elif path == "/hang-up":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            self._send(404, b"no such route")


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__((host, 0), Handler)
        self.paths: list[str] = []
        #: Answers a test adds: {path: (status, body, content type)}, before the routes.
        self.files: dict[str, tuple[int, bytes, str | None]] = {}
        self.release = threading.Event()
        self.huge_sent: list[int] = []

    @property
    def base(self) -> str:
        host, port = self.server_address[:2]
        scheme = "https" if hasattr(self.socket, "context") else "http"
        return f"{scheme}://{host}:{port}"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loopback requests must not go through a proxy configured for the machine."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "*")


def _serving(server: LoopbackServer) -> Iterator[LoopbackServer]:
    """Serve from a thread for the length of a test, then shut the server down."""
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def http_server() -> Iterator[LoopbackServer]:
    yield from _serving(LoopbackServer())


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1: (certificate file, key file)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


@pytest.fixture
def https_server(certificate: tuple[str, str]) -> Iterator[LoopbackServer]:
    import ssl

    server = LoopbackServer()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    yield from _serving(server)


@pytest.fixture
def free_port() -> int:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=("bubblewrap", "supervisor"))
def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each sandbox mechanism in turn, pinned with JANITO_SANDBOX_MECHANISM; one this
    machine lacks is skipped with the reason."""
    name = str(request.param)
    why = mechanism_problem(name)
    if why is not None:
        pytest.skip(f"{name} is not available here: {why}")
    monkeypatch.setenv("JANITO_SANDBOX_MECHANISM", name)
    return name
