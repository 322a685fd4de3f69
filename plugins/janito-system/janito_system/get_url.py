"""GetUrl: fetch an http(s) URL and return its content as Markdown (HTML) or as it is (text)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal

from janito_core import BaseTool, Failure, failure, tool
from janito_core.constraints import Ge, Gt, Interval
from janito_core.results import counted

from ._common import NotRequired, TypedDict
from ._errors import guarded

if TYPE_CHECKING:
    from email.message import Message

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
#: The most ``max_bytes`` may ask for: the body, its text and the converted text are all
#: held in memory, so this bounds what one call can take.
MAX_BYTES_LIMIT = 50 * 1024 * 1024
MAX_REDIRECTS = 10
#: Where a site keeps its llms.txt (https://llmstxt.org), in the order they are asked.
LLMS_TXT_PATHS = ("/llms.txt", "/.well-known/llms.txt")
#: Characters of Markdown made from one page at most, when max_length is null: a call's
#: answer is capped at 100,000 characters anyway, and converting costs about a second per
#: megabyte of HTML. Past it the totals are unknown and the marker says where to go on.
MAX_CONVERTED = 1_000_000
USER_AGENT = "janito-system/0.1 (GetUrl; +https://github.com/janito-dev/janito)"
_ERROR_BODY_BYTES = 65_536
_ERROR_BODY_CHARS = 1_000
_REDIRECT_CODES = (301, 302, 303, 307, 308)
_TEXT_TYPES = (
    "application/json", "application/xml", "application/javascript", "application/ecmascript",
    "application/x-javascript", "application/x-yaml", "application/yaml", "application/toml",
    "application/x-sh", "application/sql", "application/graphql", "application/x-ndjson",
    "image/svg+xml",
)
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,*/*;q=0.5",
    # Compressed bodies are inflated here, under the size cap (see _read_body).
    "Accept-Encoding": "identity",
}
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


class Redirect(TypedDict):
    """One redirect followed.

    Attributes:
        status_code: The redirecting status (301, 302, ...).
        url: Where it pointed.
    """

    status_code: int
    url: str


class Fetched(TypedDict):
    """What GetUrl answers.

    Attributes:
        url: The address as given.
        max_length: The most characters asked for.
        max_lines: The most lines asked for.
        timeout: The time limit, in seconds.
        start_index: Where the content starts, when not 0.
        follow_redirects: False when redirects were not followed.
        max_bytes: The download limit, when not the default.
        raw: True when HTML was returned as it is.
        include_links: False when links were dropped.
        check_llms_txt: True when the site's llms.txt was looked for.
        threshold: janito 4.50's threshold, when given (it changes nothing).
        llms_txt: Whether the site's llms.txt was found and is the content (only with
            check_llms_txt).
        final_url: Where the content came from, after redirects.
        status_code: The HTTP status.
        content_type: The media type, when the server said.
        content_length: Bytes downloaded.
        redirects: The redirects followed, in order.
        download_truncated: Whether the download stopped at max_bytes.
        title: The HTML page's title.
        content: The text (Markdown for HTML), ending with a marker saying how to go on when cut.
        truncated: Whether more content is left.
        total_length: Characters in all (null when not all were converted).
        total_lines: Lines in all (likewise).
        lines_returned: Lines in content.
        next_start_index: Where to go on.
        duration_ms: How long it took.
    """

    success: Literal[True]
    url: str
    max_length: int | None
    max_lines: int | None
    timeout: float
    start_index: NotRequired[int]
    follow_redirects: NotRequired[bool]
    max_bytes: NotRequired[int]
    raw: NotRequired[bool]
    include_links: NotRequired[bool]
    check_llms_txt: NotRequired[bool]
    threshold: NotRequired[int]
    llms_txt: NotRequired[bool]
    final_url: str
    status_code: int
    content_type: str | None
    content_length: int
    redirects: list[Redirect]
    download_truncated: bool
    title: NotRequired[str]
    content: str
    truncated: bool
    total_length: int | None
    total_lines: int | None
    lines_returned: int
    next_start_index: NotRequired[int]
    duration_ms: int


@tool(permissions="r")
class GetUrl(BaseTool):
    """Fetch a web page or file over http(s): HTML as Markdown, other text as it is.

    Page furniture (navigation, banners, footers, scripts, cookie notices, ads) is left out
    of the Markdown. Long content comes a page at a time: the text is cut at max_length
    characters (and max_lines lines) with a marker giving the start_index that continues
    it. Redirects are followed up to a limit and the download stops at a size cap.
    """

    open_world = True

    @guarded("url")
    def run(
        self,
        url: str,
        max_length: Annotated[int, Ge(1)] | None = 5000,
        max_lines: Annotated[int, Ge(1)] | None = 200,
        start_index: Annotated[int, Ge(0)] = 0,
        timeout: Annotated[float, Gt(0)] = 10,
        follow_redirects: bool = True,
        max_bytes: Annotated[int, Interval(ge=1, le=MAX_BYTES_LIMIT)] = DEFAULT_MAX_BYTES,
        raw: bool = False,
        include_links: bool = True,
        check_llms_txt: bool = False,
        threshold: int | None = None,
    ) -> Fetched | Failure:
        """Fetch a URL and return its content as text.

        Args:
            url: The address to fetch; only http:// and https:// are accepted.
            max_length: Most characters of content to return (default 5000; null for no
                limit). Longer content is cut and ends with a marker saying where to go on.
            max_lines: Most lines of content to return (default 200; null for no limit).
            start_index: Character of the content to start at, to read on where a cut
                answer stopped (its next_start_index); 0 is the start.
            timeout: Seconds allowed for the whole exchange, redirects included (default 10).
            follow_redirects: Follow HTTP redirects (at most 10), or report the first one.
            max_bytes: Stop downloading after this many bytes (default 5 MiB, at most
                50 MiB); what arrived so far is returned and marked as cut.
            raw: Return HTML source as it is instead of turning it into Markdown.
            include_links: Keep links in the Markdown as [text](url), made absolute; false
                keeps only their text.
            check_llms_txt: First look for the site's llms.txt (its map for language models)
                at /llms.txt, then /.well-known/llms.txt, and return that instead of the
                page when one is there (as janito 4.50 did).
            threshold: Not used: taken for janito 4.50's calls, where content longer than
                this went to a temporary file. Nothing is written anywhere here; long
                content comes a page at a time (start_index).
        """
        echo: dict[str, Any] = {"url": url, "max_length": max_length, "max_lines": max_lines,
                                "timeout": timeout}
        for key, value, default in (("start_index", start_index, 0),
                                    ("follow_redirects", follow_redirects, True),
                                    ("max_bytes", max_bytes, DEFAULT_MAX_BYTES),
                                    ("raw", raw, False), ("include_links", include_links, True),
                                    ("check_llms_txt", check_llms_txt, False),
                                    ("threshold", threshold, None)):
            if value != default:
                echo[key] = value
        problem = _check_arguments(url, max_length, max_lines, start_index, timeout, max_bytes)
        if problem is not None:
            return failure(problem[0], problem[1], **echo)
        started = time.monotonic()
        found = None
        try:
            if check_llms_txt:
                found = _llms_txt(url.strip(), timeout, started + timeout, follow_redirects,
                                  max_bytes)
                if found is not None:
                    self.report_start(f"Fetched the llms.txt of {url}: {found[3]}")
            if found is None:
                self.report_start(f"Fetching {url}")
                fetched = _fetch(url.strip(), timeout, follow_redirects, max_bytes,
                                 started + timeout if check_llms_txt else None)
            else:
                fetched = found
        except _Failure as exc:
            self.report_error(exc.error)
            return failure(exc.error, exc.error_type, **echo, **exc.extra)
        except KeyboardInterrupt:
            return failure("the download was interrupted from the keyboard", "interrupted",
                           **echo)
        body, headers, status, final_url, redirects, cut = fetched
        content_type = headers.get_content_type() if headers.get("Content-Type") else None
        kind = _kind(content_type, body)
        base = {
            **echo,
            **({"llms_txt": found is not None} if check_llms_txt else {}),
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
        complete = True
        if kind == "html" and not raw:
            from ._markdown import html_to_markdown

            limit = start_index + (MAX_CONVERTED if max_length is None else max_length)
            text, title, complete = html_to_markdown(text, final_url, limit, include_links)
        if start_index and start_index >= len(text) and (complete or not text):
            return failure(f"start_index {start_index} is past the end of the content, which "
                           f"has {len(text)} characters", "invalid_arguments", **base,
                           total_length=len(text))
        content, info = paginate(text, start_index, max_length, max_lines, complete)
        if cut:
            content += (f"\n[... download stopped at {counted(max_bytes, 'byte')} (max_bytes); "
                        "the rest was not fetched]")
        result: dict[str, Any] = {"success": True, **base}
        if title is not None:
            result["title"] = title
        result.update({"content": content, **info})
        result["duration_ms"] = int((time.monotonic() - started) * 1000)
        self.report_result(f"{status} {content_type or ''}, {counted(len(body), 'byte')}, "
                           f"{counted(info['lines_returned'], 'line')} returned")
        return result


def _llms_txt(url: str, timeout: float, deadline: float, follow: bool, max_bytes: int
              ) -> tuple[bytes, Message, int, str, list[dict[str, Any]], bool] | None:
    """What ``_fetch`` returns for the site's llms.txt (at ``/llms.txt``, else at
    ``/.well-known/llms.txt``), or None when it has none.

    Only a text answer counts: a site that answers every path with its HTML page (a "soft
    404") has no llms.txt. Asking costs a GET per place, within the call's deadline.
    """
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.path.rstrip("/") in LLMS_TXT_PATHS:
        return None  # the llms.txt itself was asked for
    for path in LLMS_TXT_PATHS:
        if deadline <= time.monotonic():
            return None
        candidate = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        try:
            fetched = _fetch(candidate, timeout, follow, max_bytes, deadline)
        except _Failure:
            continue
        body, headers = fetched[0], fetched[1]
        content_type = headers.get_content_type() if headers.get("Content-Type") else None
        if body.strip() and _kind(content_type, body) == "text":
            return fetched
    return None


def _check_arguments(url: str, max_length: int | None, max_lines: int | None,
                     start_index: int, timeout: float, max_bytes: int
                     ) -> tuple[str, str] | None:
    from urllib.parse import urlsplit

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


def _fetch(url: str, timeout: float, follow: bool, max_bytes: int,
           deadline: float | None = None
           ) -> tuple[bytes, Message, int, str, list[dict[str, Any]], bool]:
    """(body, headers, status, final URL, redirects, cut) or raise _Failure.

    Every connection, redirects included, goes through one :class:`_http_guard.Exchange`:
    it applies the private-network policy to the address actually connected to and ends
    the exchange when ``timeout`` seconds are over, whatever the server is doing.
    """
    from janito_core.network import private_network_allowed

    from ._http_guard import Exchange, open_client

    if deadline is None:  # the call's: ``timeout`` seconds from now
        deadline = time.monotonic() + min(timeout, 1e9)
    with Exchange(deadline, private_network_allowed()) as exchange:
        client = open_client(exchange)
        try:
            fetched = _fetch_through(client, exchange, url, timeout, follow, max_bytes)
        except _Failure as exc:
            if exchange.expired and exc.error_type != "timeout":
                raise _timed_out(url, timeout, exc.extra.get("redirects", [])) from None
            raise
        finally:
            client.close()
        if exchange.expired:  # the timer cut the body short: what arrived is not the whole
            raise _timed_out(url, timeout, fetched[4], bytes_received=len(fetched[0]))
        return fetched


def _timed_out(url: str, timeout: float, redirects: list[dict[str, Any]], **extra: Any
               ) -> _Failure:
    return _Failure(f"{url} did not complete within {counted(timeout, 'second')}", "timeout",
                    redirects=redirects, **extra)


def _fetch_through(client: Any, exchange: Any, url: str, timeout: float, follow: bool,
                   max_bytes: int) -> tuple[bytes, Message, int, str, list[dict[str, Any]], bool]:
    from urllib.parse import urljoin, urlsplit

    import httpx

    current = url
    seen = {url}
    redirects: list[dict[str, Any]] = []
    while True:
        try:
            timeouts = httpx.Timeout(**exchange.timeouts())
        except TimeoutError:
            raise _Failure(f"{url} did not answer within {counted(timeout, 'second')}", "timeout",
                           redirects=redirects) from None
        try:
            request = client.build_request("GET", current, headers=_HEADERS, timeout=timeouts)
            response = client.send(request, stream=True)
        except Exception as exc:
            raise _classify(exc, current, timeout, redirects) from None
        try:
            status = response.status_code
            location = response.headers.get("Location")
            if status in _REDIRECT_CODES and location:
                target = urljoin(current, location.strip())
                if not follow:
                    raise _Failure(
                        f"{current} redirects ({status}) to {target}; call again with that URL "
                        "or with follow_redirects true",
                        "redirect_not_followed", status_code=status, location=target,
                        redirects=redirects)
                problem = _url_problem(target, urlsplit)
                if problem is not None:
                    raise _Failure(f"{current} redirects to a URL that cannot be fetched: "
                                   f"{problem[0]}", "invalid_redirect", status_code=status,
                                   location=target, redirects=redirects)
                redirects.append({"status_code": status, "url": target})
                if target in seen:
                    raise _Failure(f"redirect loop: {current} leads back to {target}",
                                   "redirect_loop", redirects=redirects)
                if len(redirects) > MAX_REDIRECTS:
                    raise _Failure(f"more than {MAX_REDIRECTS} redirects starting at {url}",
                                   "too_many_redirects", redirects=redirects)
                seen.add(target)
                current = target
                continue
            if status >= 400:
                raise _http_failure(response, exchange, current, redirects)
            headers = _message(response.headers)
            declared = headers.get_content_type() if headers.get("Content-Type") else None
            if declared is not None and _kind(declared, b"") == "binary":
                # refused as it is declared, without downloading it
                return b"", headers, status, current, redirects, False
            body, cut = _read_body(response, max_bytes, exchange, timeout, current)
            return body, headers, status, current, redirects, cut
        except _Failure as exc:
            exc.extra.setdefault("redirects", redirects)
            raise
        except Exception as exc:
            raise _classify(exc, current, timeout, redirects) from None
        finally:
            response.close()


def _message(headers: Any) -> Message:
    """httpx's headers as an ``email.message.Message`` (its content-type parsing)."""
    from email.message import Message

    message = Message()
    for key, value in headers.multi_items():
        message[key] = value
    return message


def _read_body(response: Any, max_bytes: int, exchange: Any, timeout: float,
               url: str) -> tuple[bytes, bool]:
    """Read at most ``max_bytes`` (and learn whether there was more) before the deadline.

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
    pieces = response.iter_raw()  # each piece as it arrives, not gathered into chunks
    while size <= max_bytes:
        if time.monotonic() > exchange.deadline:
            raise _Failure(f"downloading {url} took longer than {counted(timeout, 'second')}", "timeout",
                           bytes_received=received)
        try:
            raw = next(pieces, b"")
        except Exception:
            if exchange.expired:
                raise _Failure(f"downloading {url} took longer than {counted(timeout, 'second')}",
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
            while inflater.unconsumed_tail and size + len(chunk) <= max_bytes:
                # the room left was filled: the rest of this piece waits its turn
                more = inflater.decompress(inflater.unconsumed_tail, max_bytes + 1 - size - len(chunk))
                if not more:
                    break
                chunk += more
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


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (httpx wraps httpcore wraps the socket's)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _classify(exc: BaseException, url: str, timeout: float,
              redirects: list[dict[str, Any]]) -> _Failure:
    """The failure a network exception stands for: refused, DNS, timeout, TLS, other."""
    import socket
    import ssl
    from urllib.parse import urlsplit

    import httpx

    from ._http_guard import AddressRefused

    chain = _causes(exc)
    parts = urlsplit(url)
    host = parts.hostname or url
    try:
        where = f"{host}:{parts.port}" if parts.port else host
    except ValueError:
        where = host

    def first(*kinds: type) -> BaseException | None:
        return next((e for e in chain if isinstance(e, kinds)), None)

    refused = first(AddressRefused)
    if refused is not None:
        return _Failure(f"GetUrl does not connect to private network addresses here: {refused} "
                        f"({PRIVATE_NETWORK_HINT})", "address_refused", redirects=redirects)
    lookup = first(socket.gaierror)
    if lookup is not None:
        reason = getattr(lookup, "strerror", None) or str(lookup)
        return _Failure(f"the host name {host!r} could not be resolved (DNS: {reason})",
                        "dns_failure", redirects=redirects)
    if first(ConnectionRefusedError) is not None:
        return _Failure(f"connection refused by {where}: nothing is listening there",
                        "connection_refused", redirects=redirects)
    tls = first(ssl.SSLError, ssl.CertificateError)
    if tls is not None:
        return _Failure(f"the TLS connection to {where} failed: {tls}", "ssl_error",
                        redirects=redirects)
    if first(httpx.TimeoutException, TimeoutError, socket.timeout) is not None:
        return _Failure(f"{url} did not answer within {counted(timeout, 'second')}", "timeout",
                        redirects=redirects)
    if first(httpx.InvalidURL, httpx.UnsupportedProtocol) is not None:
        return _Failure(f"{url!r} is not a valid URL: {exc}", "invalid_url", redirects=redirects)
    if first(httpx.RemoteProtocolError) is not None:
        return _Failure(f"{where} closed the connection or broke the HTTP protocol ({exc})",
                        "connection_failed", redirects=redirects)
    if first(httpx.ProxyError) is not None:
        return _Failure(f"the proxy for {url} failed: {exc}", "connection_failed",
                        redirects=redirects)
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return _Failure(f"cannot connect to {where}: {text}", "connection_failed",
                    redirects=redirects)


def _http_failure(response: Any, exchange: Any, url: str,
                  redirects: list[dict[str, Any]]) -> _Failure:
    """A 4xx/5xx answer: the status, its reason and the start of the error page."""
    status = int(response.status_code)
    reason = str(response.reason_phrase or "")
    snippet = ""
    try:
        body = bytearray()
        for piece in response.iter_raw():
            body += piece
            if len(body) >= _ERROR_BODY_BYTES or time.monotonic() > exchange.deadline:
                break
        headers = _message(response.headers)
        content_type = headers.get_content_type() if headers.get("Content-Type") else None
        data = bytes(body[:_ERROR_BODY_BYTES])
        kind = _kind(content_type, data)
        encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
        if kind != "binary" and data and encoding == "identity":
            snippet = _decode(data, headers, kind == "html")
            if kind == "html":
                from ._markdown import html_to_markdown

                snippet = html_to_markdown(snippet, None, _ERROR_BODY_CHARS, False)[0]
            snippet, _ = paginate(snippet, 0, _ERROR_BODY_CHARS, None)
    except Exception:
        snippet = ""
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


def paginate(text: str, start_index: int, max_length: int | None, max_lines: int | None,
             complete: bool = True) -> tuple[str, dict[str, Any]]:
    """The part of ``text`` from character ``start_index``, cut to ``max_length`` characters
    and ``max_lines`` lines, with a marker saying where the next part starts.

    ``complete=False`` says ``text`` is only the start of a longer text (the HTML was not
    all converted): the totals are then unknown and reported as null.
    """
    total_length = len(text)
    total_lines = text.count("\n") + 1 if text else 0
    part = text[start_index:]
    limit = ""  # the limit that made the last cut
    if max_length is not None and len(part) > max_length:
        part = part[:max_length]
        limit = f"max_length={max_length}"
    if max_lines is not None:
        kept = part.split("\n")
        if len(kept) > max_lines:
            part = "\n".join(kept[:max_lines])
            limit = f"max_lines={max_lines}"
    end = start_index + len(part)
    more = end < total_length or not complete
    returned = part.count("\n") + 1 if part else 0
    info: dict[str, Any] = {
        "truncated": more or start_index > 0,
        "total_length": total_length if complete else None,
        "total_lines": total_lines if complete else None,
        "lines_returned": returned,
    }
    if more:
        if end < total_length and text[end] == "\n" and limit.startswith("max_lines"):
            end += 1  # the line break the cut fell on starts nothing
        of = f"of {total_length}" if complete else "of more"
        why = f" ({limit})" if limit else ""
        part += (f"\n[... truncated: showing characters {start_index}-{start_index + len(part)} "
                 f"{of}{why}; call GetUrl again with start_index={end} for the rest]")
        info["next_start_index"] = end
    return part, info


def main(argv: list[str] | None = None) -> int:
    """Run GetUrl from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(GetUrl, argv)


if __name__ == "__main__":
    raise SystemExit(main())
