"""GetUrl: fetch an http(s) URL and return its content as readable text."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from janito_core import BaseTool, failure, tool

from ._errors import guarded

if TYPE_CHECKING:
    from email.message import Message

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
#: The most ``max_bytes`` may ask for: the body, its text and the converted text are all
#: held in memory, so this bounds what one call can take.
MAX_BYTES_LIMIT = 50 * 1024 * 1024
MAX_REDIRECTS = 10
USER_AGENT = "janito-system/0.1 (GetUrl; +https://github.com/janito-dev/janito)"
_CHUNK = 65_536
_ERROR_BODY_BYTES = 65_536
_ERROR_BODY_CHARS = 1_000
_REDIRECT_CODES = (301, 302, 303, 307, 308)
_SOCKET_TIMEOUT_MAX = 86_400.0  # a socket timeout must fit a C timeval
_TEXT_TYPES = (
    "application/json", "application/xml", "application/javascript", "application/ecmascript",
    "application/x-javascript", "application/x-yaml", "application/yaml", "application/toml",
    "application/x-sh", "application/sql", "application/graphql", "application/x-ndjson",
    "image/svg+xml",
)
_HTML_TYPES = ("text/html", "application/xhtml+xml")
PRIVATE_NETWORK_HINT = ("loopback, private, link-local and metadata addresses are refused "
                        "when janito serves its tools; JANITO_PRIVATE_NETWORK=allow or "
                        "janito mcp serve --allow-private-network allows them")


class _Failure(Exception):
    """A fetch that ends in a failed result; carries its sentence, type and extra fields."""

    def __init__(self, error: str, error_type: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.error_type = error_type
        self.extra = extra


@tool(permissions="r")
class GetUrl(BaseTool):
    """Fetch a web page or file over http(s) and return its content as readable text.

    HTML is turned into plain text (scripts and styles dropped, headings, lists and tables
    kept readable); other text types are returned as they are. Redirects are followed up
    to a limit, the download stops at a size cap, and the text is cut to ``max_length``
    characters and ``max_lines`` lines with a visible marker.
    """

    open_world = True

    @guarded("url")
    def run(
        self,
        url: str,
        max_length: int | None = 5000,
        max_lines: int | None = 200,
        timeout: float = 10,
        follow_redirects: bool = True,
        max_bytes: int = DEFAULT_MAX_BYTES,
        raw: bool = False,
        include_links: bool = False,
    ) -> dict[str, Any]:
        """Fetch a URL and return its content as text.

        Args:
            url: The address to fetch; only http:// and https:// are accepted.
            max_length: Most characters of content to return (default 5000; null for no
                limit). Longer content is cut and ends with a truncation marker.
            max_lines: Most lines of content to return (default 200; null for no limit).
            timeout: Seconds allowed for the whole exchange, redirects included (default 10).
            follow_redirects: Follow HTTP redirects (at most 10), or report the first one.
            max_bytes: Stop downloading after this many bytes (default 5 MiB, at most
                50 MiB); what arrived so far is returned and marked as cut.
            raw: Return HTML source as it is instead of turning it into text.
            include_links: In text made from HTML, write each link as "text (url)".
        """
        echo: dict[str, Any] = {"url": url, "max_length": max_length, "max_lines": max_lines,
                                "timeout": timeout}
        for key, value, default in (("follow_redirects", follow_redirects, True),
                                    ("max_bytes", max_bytes, DEFAULT_MAX_BYTES),
                                    ("raw", raw, False), ("include_links", include_links, False)):
            if value != default:
                echo[key] = value
        problem = _check_arguments(url, max_length, max_lines, timeout, max_bytes)
        if problem is not None:
            return failure(problem[0], problem[1], **echo)
        self.report_start(f"Fetching {url}")
        started = time.monotonic()
        try:
            fetched = _fetch(url.strip(), timeout, follow_redirects, max_bytes)
        except _Failure as exc:
            self.report_error(exc.error)
            return failure(exc.error, exc.error_type, **echo, **exc.extra)
        except KeyboardInterrupt:
            return failure("the download was interrupted from the keyboard", "interrupted",
                           **echo)
        except Exception as exc:  # anything urllib or the server throws at us
            self.report_error(str(exc))
            return failure(f"fetching {url} failed: {type(exc).__name__}: {exc}",
                           "connection_failed", **echo)
        body, headers, status, final_url, redirects, cut = fetched
        content_type = headers.get_content_type() if headers.get("Content-Type") else None
        kind = _kind(content_type, body)
        base = {
            **echo,
            "final_url": final_url,
            "status_code": status,
            "content_type": content_type,
            "content_length": len(body),
            "redirects": redirects,
            "download_truncated": cut,
        }
        if kind == "binary":
            message = (f"{final_url} is {content_type or 'binary data'}, not text; "
                       "GetUrl returns text only")
            self.report_error(message)
            return failure(message, "unsupported_content_type", **base)
        text = _decode(body, headers, kind == "html")
        title = None
        if kind == "html" and not raw:
            from ._html_text import html_to_text

            limits = None if max_length is None and max_lines is None else (max_length, max_lines)
            text, title, complete = html_to_text(text, final_url, include_links, limits)
        else:
            complete = True
        content, info = truncate_text(text, max_length, max_lines, complete)
        if cut:
            content += (f"\n[... download stopped at {max_bytes} bytes (max_bytes); "
                        "the rest was not fetched]")
        result: dict[str, Any] = {"success": True, **base}
        if title is not None:
            result["title"] = title
        result.update({"content": content, **info})
        result["duration_ms"] = int((time.monotonic() - started) * 1000)
        self.report_result(f"{status} {content_type or ''}, {len(body)} bytes, "
                           f"{info['lines_returned']} lines returned")
        return result


def _check_arguments(url: str, max_length: int | None, max_lines: int | None, timeout: float,
                     max_bytes: int) -> tuple[str, str] | None:
    from urllib.parse import urlsplit

    if max_length is not None and max_length < 1:
        return f"max_length must be at least 1 (or null), got {max_length}", "invalid_arguments"
    if max_lines is not None and max_lines < 1:
        return f"max_lines must be at least 1 (or null), got {max_lines}", "invalid_arguments"
    if timeout <= 0:
        return f"timeout must be a positive number of seconds, got {timeout}", "invalid_arguments"
    if max_bytes < 1:
        return f"max_bytes must be at least 1, got {max_bytes}", "invalid_arguments"
    if max_bytes > MAX_BYTES_LIMIT:
        return (f"max_bytes may be at most {MAX_BYTES_LIMIT} ({MAX_BYTES_LIMIT // 2**20} MiB), "
                f"got {max_bytes}", "invalid_arguments")
    return _url_problem(url.strip(), urlsplit)


def _url_problem(url: str, urlsplit: Any) -> tuple[str, str] | None:
    if not url:
        return "the URL is empty", "invalid_url"
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        return "the URL contains spaces or control characters; percent-encode them", "invalid_url"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError as exc:
        return f"{url[:200]!r} is not a valid URL ({exc})", "invalid_url"
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"{scheme}:" if scheme else "no scheme"
        return (f"only http:// and https:// URLs can be fetched, not {shown} "
                f"({url[:200]!r})", "invalid_url")
    if not parts.hostname:
        return f"the URL {url[:200]!r} has no host name", "invalid_url"
    return None


def _fetch(url: str, timeout: float, follow: bool, max_bytes: int
           ) -> tuple[bytes, Message, int, str, list[dict[str, Any]], bool]:
    """(body, headers, status, final URL, redirects, cut) or raise _Failure.

    Every connection, redirects included, goes through one :class:`_http_guard.Exchange`:
    it applies the private-network policy to the address actually connected to and ends
    the exchange when ``timeout`` seconds are over, whatever the server is doing.
    """
    from janito_core.network import private_network_allowed

    from ._http_guard import Exchange

    with Exchange(time.monotonic() + timeout, private_network_allowed()) as exchange:
        try:
            fetched = _fetch_through(exchange, url, timeout, follow, max_bytes)
        except _Failure as exc:
            if exchange.expired and exc.error_type != "timeout":
                raise _timed_out(url, timeout, exc.extra.get("redirects", [])) from None
            raise
        if exchange.expired:  # the timer cut the body short: what arrived is not the whole
            raise _timed_out(url, timeout, fetched[4], bytes_received=len(fetched[0]))
        return fetched


def _timed_out(url: str, timeout: float, redirects: list[dict[str, Any]], **extra: Any
               ) -> _Failure:
    return _Failure(f"{url} did not complete within {timeout:g} seconds", "timeout",
                    redirects=redirects, **extra)


def _fetch_through(exchange: Any, url: str, timeout: float, follow: bool, max_bytes: int
                   ) -> tuple[bytes, Message, int, str, list[dict[str, Any]], bool]:
    import urllib.request
    from urllib.parse import urljoin, urlsplit

    from ._http_guard import handlers

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect, *handlers(exchange))
    deadline = exchange.deadline
    current = url
    seen = {url}
    redirects: list[dict[str, Any]] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Failure(f"{url} did not answer within {timeout:g} seconds", "timeout",
                           redirects=redirects)
        request = urllib.request.Request(current, headers={
            "User-Agent": USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            "Accept-Encoding": "identity",
        })
        try:
            response = opener.open(request, timeout=min(remaining, _SOCKET_TIMEOUT_MAX))
        except Exception as exc:
            import urllib.error

            if not isinstance(exc, urllib.error.HTTPError):
                raise _classify(exc, current, timeout, redirects) from None
            error = exc
            status = error.code
            location = error.headers.get("Location") if error.headers else None
            if status in _REDIRECT_CODES and location:
                error.close()
                target = urljoin(current, location.strip())
                if not follow:
                    raise _Failure(
                        f"{current} redirects ({status}) to {target}; call again with that URL "
                        "or with follow_redirects true",
                        "redirect_not_followed", status_code=status, location=target,
                        redirects=redirects) from None
                problem = _url_problem(target, urlsplit)
                if problem is not None:
                    raise _Failure(f"{current} redirects to a URL that cannot be fetched: "
                                   f"{problem[0]}", "invalid_redirect", status_code=status,
                                   location=target, redirects=redirects) from None
                redirects.append({"status_code": status, "url": target})
                if target in seen:
                    raise _Failure(f"redirect loop: {current} leads back to {target}",
                                   "redirect_loop", redirects=redirects) from None
                if len(redirects) > MAX_REDIRECTS:
                    raise _Failure(f"more than {MAX_REDIRECTS} redirects starting at {url}",
                                   "too_many_redirects", redirects=redirects) from None
                seen.add(target)
                current = target
                continue
            raise _http_failure(error, current, redirects) from None
        try:
            body, cut = _read_body(response, max_bytes, deadline, timeout, current,
                                   lambda: bool(exchange.expired))
            return body, response.headers, response.status, current, redirects, cut
        except _Failure as exc:
            exc.extra.setdefault("redirects", redirects)
            raise
        except Exception as exc:
            raise _classify(exc, current, timeout, redirects) from None
        finally:
            response.close()


def _read_body(response: Any, max_bytes: int, deadline: float, timeout: float, url: str,
               expired: Callable[[], bool] = lambda: False) -> tuple[bytes, bool]:
    """Read at most ``max_bytes`` (and learn whether there was more) before ``deadline``.

    ``expired`` says whether the exchange was cut off at its deadline, which makes a
    failed read a timeout.

    A gzip or deflate body (sent although only ``identity`` was asked for) is inflated as
    it arrives, and the cap applies to the inflated size, so a small bomb stays small.
    """
    import zlib

    encoding = (response.headers.get("Content-Encoding") or "").strip().lower()
    inflater = None
    if encoding in ("gzip", "x-gzip", "deflate"):
        inflater = zlib.decompressobj(31 if "gzip" in encoding else 15 + 32)
    elif encoding not in ("", "identity"):
        raise _Failure(f"{url} sent its content with the {encoding!r} encoding, which GetUrl "
                       "cannot decode", "unsupported_content_type")
    chunks: list[bytes] = []
    size = received = 0
    while size <= max_bytes:
        if time.monotonic() > deadline:
            raise _Failure(f"downloading {url} took longer than {timeout:g} seconds", "timeout",
                           bytes_received=received)
        try:
            raw = response.read1(_CHUNK if inflater else min(_CHUNK, max_bytes + 1 - size))
        except Exception:
            if expired():
                raise _Failure(f"downloading {url} took longer than {timeout:g} seconds",
                               "timeout", bytes_received=received) from None
            raise
        received += len(raw)
        if inflater is None:
            chunk = raw
        else:
            try:
                chunk = inflater.decompress(raw, max_bytes + 1 - size) if raw else inflater.flush()
            except zlib.error as exc:
                raise _Failure(f"{url} sent a corrupt {encoding} body ({exc})",
                               "connection_failed") from None
            if raw and not chunk:
                if inflater.eof:  # whatever follows the compressed stream is ignored
                    break
                continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if not raw:  # the inflater's last words after the end of the body
            break
    body = b"".join(chunks)
    return body[:max_bytes], len(body) > max_bytes


def _classify(exc: BaseException, url: str, timeout: float,
              redirects: list[dict[str, Any]]) -> _Failure:
    """The failure a network exception stands for: refused, DNS, timeout, TLS, other."""
    import socket
    import ssl
    import urllib.error
    from urllib.parse import urlsplit

    from ._http_guard import AddressRefused

    reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    parts = urlsplit(url)
    host = parts.hostname or url
    where = f"{host}:{parts.port}" if parts.port else host
    if isinstance(reason, AddressRefused):
        return _Failure(f"GetUrl does not connect to private network addresses here: {reason} "
                        f"({PRIVATE_NETWORK_HINT})", "address_refused", redirects=redirects)
    if isinstance(reason, socket.gaierror):
        return _Failure(f"the host name {host!r} could not be resolved (DNS: {reason.strerror})",
                        "dns_failure", redirects=redirects)
    if isinstance(reason, ConnectionRefusedError):
        return _Failure(f"connection refused by {where}: nothing is listening there",
                        "connection_refused", redirects=redirects)
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return _Failure(f"{url} did not answer within {timeout:g} seconds", "timeout",
                        redirects=redirects)
    if isinstance(reason, ssl.SSLError):
        return _Failure(f"the TLS connection to {where} failed: {reason}", "ssl_error",
                        redirects=redirects)
    if isinstance(reason, str):
        return _Failure(f"cannot fetch {url}: {reason}", "invalid_url", redirects=redirects)
    import http.client

    if isinstance(reason, http.client.InvalidURL):
        return _Failure(f"{url!r} is not a valid URL: {reason}", "invalid_url",
                        redirects=redirects)
    if isinstance(reason, http.client.RemoteDisconnected):
        return _Failure(f"{where} closed the connection without answering",
                        "connection_failed", redirects=redirects)
    if isinstance(reason, http.client.IncompleteRead):
        return _Failure(f"{where} closed the connection before the whole body arrived",
                        "connection_failed", redirects=redirects)
    text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
    return _Failure(f"cannot connect to {where}: {text}", "connection_failed",
                    redirects=redirects)


def _http_failure(error: Any, url: str, redirects: list[dict[str, Any]]) -> _Failure:
    """A 4xx/5xx answer: the status, its reason and the start of the error page."""
    status = int(error.code)
    reason = str(getattr(error, "reason", "") or "")
    snippet = ""
    try:
        body = error.read(_ERROR_BODY_BYTES) or b""
        headers = error.headers
        content_type = headers.get_content_type() if headers and headers.get("Content-Type") \
            else None
        kind = _kind(content_type, body)
        if kind != "binary" and body:
            snippet = _decode(body, headers, kind == "html")
            if kind == "html":
                from ._html_text import html_to_text

                snippet = html_to_text(snippet, None, False, (_ERROR_BODY_CHARS, None))[0]
            snippet, _ = truncate_text(snippet, _ERROR_BODY_CHARS, None)
    except Exception:
        snippet = ""
    finally:
        try:
            error.close()
        except Exception:
            pass
    if status >= 500:
        side = "server error: try again later"
    elif status >= 400:
        side = "client error: check the URL"
    else:
        side = "an answer without content"
    extra: dict[str, Any] = {"status_code": status, "reason": reason, "redirects": redirects}
    if snippet:
        extra["content"] = snippet
    return _Failure(f"{url} answered HTTP {status} {reason} ({side})".replace("  ", " "),
                    "http_error", **extra)


def _kind(content_type: str | None, body: bytes) -> str:
    """"html", "text" or "binary"."""
    if content_type is None:
        head = body[:2048]
        if b"\x00" in head:
            return "binary"
        return "html" if b"<html" in head.lower() or b"<!doctype html" in head.lower() else "text"
    if content_type in _HTML_TYPES:
        return "html"
    if (content_type.startswith("text/") or content_type in _TEXT_TYPES
            or content_type.endswith(("+json", "+xml"))):
        return "text"
    return "binary"


def _decode(body: bytes, headers: Message | None, html: bool) -> str:
    import codecs
    import re

    charset = headers.get_content_charset() if headers is not None else None
    if charset is None and html:
        match = re.search(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""",
                          body[:4096], re.IGNORECASE)
        if match:
            charset = match.group(1).decode("ascii", errors="replace")
    if charset is None and body.startswith(codecs.BOM_UTF8):
        charset = "utf-8-sig"
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def truncate_text(text: str, max_length: int | None, max_lines: int | None,
                  complete: bool = True) -> tuple[str, dict[str, Any]]:
    """``text`` cut to ``max_length`` characters and ``max_lines`` lines, with a marker.

    ``complete=False`` says ``text`` is only the start of a longer text (the HTML was not
    all converted): the totals are then unknown and reported as null.
    """
    total_length = len(text)
    total_lines = text.count("\n") + 1 if text else 0
    cut = text
    notes = []
    if max_length is not None and len(cut) > max_length:
        cut = cut[:max_length]
        notes.append(f"{max_length} of {total_length} characters" if complete
                     else f"the first {max_length} characters")
    if max_lines is not None:
        kept = cut.split("\n")
        if len(kept) > max_lines:
            cut = "\n".join(kept[:max_lines])
            notes.append(f"{max_lines} of {total_lines} lines" if complete
                         else f"the first {max_lines} lines")
    truncated = bool(notes) or not complete
    returned = cut.count("\n") + 1 if cut else 0
    if truncated:
        cut += f"\n[... truncated: showing {' and '.join(notes) or 'the start'}]"
    return cut, {
        "truncated": truncated,
        "total_length": total_length if complete else None,
        "total_lines": total_lines if complete else None,
        "lines_returned": returned,
    }


def main(argv: list[str] | None = None) -> int:
    """Run GetUrl from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(GetUrl, argv)


if __name__ == "__main__":
    raise SystemExit(main())
