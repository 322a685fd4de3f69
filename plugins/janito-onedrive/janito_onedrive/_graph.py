"""A small Microsoft Graph client on the standard library (urllib).

Why urllib rather than httpx or requests: the toolset makes a handful of sequential
requests per call, needs no connection pool or async, and must control two details
exactly: the bearer token is never carried to another host (pre-authenticated download
URLs and upload-session URLs must not receive it, so redirects are followed by hand),
and request bodies are sent from byte ranges of a file. urllib does both, costs no
dependency and is imported only when a tool runs.

Retries: a 401 gets one silent token refresh and one more try; 429 and 503 are tried
again after the ``Retry-After`` the service sent (bounded by a setting; a longer wait
becomes a ``throttled`` result instead of a stall), or after a short backoff when it
sent none.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from email.message import Message
from typing import Any, Callable, Iterable

from . import _settings
from ._auth import TokenProvider
from ._errors import GraphError, redact, remember_secret
from ._items import DriveItem

_sleep: Callable[[float], None] = time.sleep

RETRY_STATUSES = (429, 503)

_ERROR_TYPES = {
    400: "invalid_request",
    401: "auth_failed",
    403: "permission_denied",
    404: "not_found",
    405: "invalid_request",
    409: "conflict",
    411: "invalid_request",
    412: "precondition_failed",
    413: "too_large",
    415: "invalid_request",
    416: "range_not_satisfiable",
    422: "invalid_request",
    423: "locked",
    429: "throttled",
    500: "service_error",
    501: "not_supported",
    502: "service_error",
    503: "service_unavailable",
    504: "timeout",
    507: "quota_exceeded",
    509: "throttled",
}


#: What some statuses mean for the person, said before Graph's own words.
_PLAIN = {
    423: "the item is locked (open for editing by someone, or checked out); try again once it "
         "is closed, or work on a copy",
    507: "the drive is full (insufficient storage); free some space, empty the recycle bin, or "
         "use a smaller file",
}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects come back as responses; the client follows them without credentials."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect())


class Response:
    """Status, headers and either the whole body or the open stream (``stream=True``)."""

    def __init__(self, status: int, headers: Message, body: bytes = b"",
                 raw: Any = None) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.raw = raw

    def json(self) -> Any:
        if not self.body:
            return {}
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise GraphError("Microsoft Graph sent a response that is not JSON",
                             "invalid_response", status=self.status) from None

    def close(self) -> None:
        if self.raw is not None:
            try:
                self.raw.close()
            except Exception:
                pass
            self.raw = None


def retry_after(headers: Message) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        from email.utils import parsedate_to_datetime

        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def graph_error(response: Response, what: str = "the request") -> GraphError:
    """A GraphError from an error response, with Graph's error code and message."""
    code = None
    message = ""
    try:
        data = json.loads(response.body.decode("utf-8")) if response.body else {}
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            code = error.get("code")
            message = str(error.get("message") or "")
        elif isinstance(error, str):
            code = error
            message = str(data.get("error_description") or "")
    except (UnicodeDecodeError, ValueError, AttributeError):
        pass
    status = response.status
    error_type = _ERROR_TYPES.get(status, "service_error" if status >= 500 else "graph_error")
    detail = f"{code}: {message}" if code and message else (code or message or "no details")
    text = f"Microsoft Graph answered {status} to {what} ({detail})"
    plain = _PLAIN.get(status)
    if plain is not None:
        text = f"{plain}: Microsoft Graph answered {status} to {what} ({detail})"
    extra: dict[str, Any] = {}
    if code:
        extra["graph_code"] = str(code)
    wait = retry_after(response.headers)
    if status in RETRY_STATUSES and wait is not None:
        extra["retry_after"] = wait
    return GraphError(redact(text), error_type, status=status, code=code, **extra)


class GraphClient:
    """Requests to Microsoft Graph with the signed-in user's token."""

    def __init__(self, tokens: TokenProvider, base_url: str | None = None) -> None:
        self.tokens = tokens
        self.base_url = (base_url or _settings.graph_url()).rstrip("/")
        self.timeout = _settings.timeout()
        self.max_retries = _settings.max_retries()
        self.max_wait = _settings.max_retry_wait()
        self._token: str | None = None
        base = urllib.parse.urlsplit(self.base_url)
        self._origin = (base.scheme, base.netloc)

    # -- URLs -----------------------------------------------------------------------

    def url(self, target: str, params: dict[str, Any] | None = None) -> str:
        if target.startswith(("http://", "https://")):
            full = target
        else:
            full = self.base_url + ("" if target.startswith("/") else "/") + target
        if params:
            query = urllib.parse.urlencode(
                {k: v for k, v in params.items() if v is not None}, safe="$@',()")
            full += ("&" if "?" in full else "?") + query
        return full

    def same_origin(self, url: str) -> bool:
        parts = urllib.parse.urlsplit(url)
        return (parts.scheme, parts.netloc) == self._origin

    # -- sending --------------------------------------------------------------------

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes | None,
              stream: bool) -> Response:
        request = urllib.request.Request(url, data=body, method=method)
        for key, value in headers.items():
            if key.lower() == "authorization":
                request.add_unredirected_header(key, value)
            else:
                request.add_header(key, value)
        try:
            raw = _opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            try:
                data = exc.read()
            except Exception:
                data = b""
            finally:
                exc.close()
            return Response(exc.code, exc.headers, data)
        except TimeoutError:
            raise GraphError(f"Microsoft Graph did not answer within {self.timeout:g} s",
                             "timeout") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise GraphError(f"Microsoft Graph did not answer within {self.timeout:g} s",
                                 "timeout") from None
            raise GraphError(f"Microsoft Graph could not be reached ({redact(_describe(reason))})",
                             "connection_failed") from None
        except Exception as exc:  # http.client errors that are not OSError
            raise GraphError(f"the connection to Microsoft Graph failed ({redact(_describe(exc))})",
                             "connection_failed") from None
        if stream:
            return Response(raw.status, raw.headers, raw=raw)
        try:
            data = raw.read()
        except TimeoutError:
            raise GraphError(f"Microsoft Graph did not answer within {self.timeout:g} s",
                             "timeout") from None
        except Exception as exc:
            raise GraphError(f"the connection to Microsoft Graph broke ({redact(_describe(exc))})",
                             "connection_failed") from None
        finally:
            raw.close()
        return Response(raw.status, raw.headers, data)

    def _bearer(self, force_refresh: bool = False) -> str:
        if self._token is None or force_refresh:
            self._token = self.tokens.token(force_refresh=force_refresh)
            remember_secret(self._token)
        return self._token

    def request(self, method: str, target: str, *, params: dict[str, Any] | None = None,
                json_body: Any = None, data: bytes | None = None,
                headers: dict[str, str] | None = None, authenticated: bool = True,
                stream: bool = False) -> Response:
        """Send one request, refreshing the token once on 401 and waiting out 429/503.

        ``authenticated=False`` sends no token (upload-session and pre-authenticated
        URLs). An authenticated request only ever goes to the Graph base URL's origin.
        """
        url = self.url(target, params)
        if authenticated and not self.same_origin(url):
            raise GraphError("Microsoft Graph pointed to another host; the request was not sent "
                             "with credentials", "invalid_response")
        send_headers = {"Accept": "application/json"}
        send_headers.update(headers or {})
        body = data
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            send_headers["Content-Type"] = "application/json"
        refreshed = False
        attempt = 0
        while True:
            if authenticated:
                send_headers["Authorization"] = "Bearer " + self._bearer()
            response = self._send(method, url, send_headers, body, stream)
            if response.status == 401 and authenticated and not refreshed:
                response.close()
                refreshed = True
                self._bearer(force_refresh=True)
                continue
            if response.status in RETRY_STATUSES and attempt < self.max_retries:
                wait = retry_after(response.headers)
                if wait is None:
                    wait = min(2.0 ** attempt, self.max_wait)
                if wait > self.max_wait:
                    response.close()
                    if stream:
                        response = Response(response.status, response.headers)
                    return response
                response.close()
                attempt += 1
                _sleep(wait)
                continue
            if response.status == 401 and authenticated:
                response.close()
                raise GraphError(
                    "Microsoft Graph refused the token even after a refresh; "
                    f"{_settings.LOGIN_HINT} again", "auth_failed", status=401)
            if stream and response.status >= 300:
                # Error bodies are small; read them so the caller can report Graph's message.
                raw = response.raw
                try:
                    body_read = raw.read(65536) if raw is not None else b""
                except Exception:
                    body_read = b""
                response.close()
                response = Response(response.status, response.headers, body_read)
            return response

    def call(self, method: str, target: str, what: str, *, ok: Iterable[int] = (200,),
             **kwargs: Any) -> Response:
        """``request`` that raises a GraphError unless the status is in ``ok``."""
        response = self.request(method, target, **kwargs)
        if response.status not in tuple(ok):
            raise graph_error(response, what)
        return response

    def get_json(self, target: str, what: str, *, params: dict[str, Any] | None = None) -> Any:
        return self.call("GET", target, what, params=params).json()

    def collect(self, target: str, what: str, *, params: dict[str, Any] | None, limit: int,
                keep: Callable[[dict[str, Any]], bool] | None = None,
                max_pages: int = 200) -> tuple[list[dict[str, Any]], bool]:
        """Items of a collection, following ``@odata.nextLink`` until ``limit`` are kept.

        Returns the items and whether more remain on the server.
        """
        items: list[dict[str, Any]] = []
        next_target: str | None = target
        next_params = params
        pages = 0
        while next_target and len(items) <= limit and pages < max_pages:
            page = self.get_json(next_target, what, params=next_params)
            pages += 1
            values = page.get("value") if isinstance(page, dict) else None
            if not isinstance(values, list):
                raise GraphError(f"Microsoft Graph sent no item list for {what}",
                                 "invalid_response")
            for value in values:
                if isinstance(value, dict) and (keep is None or keep(value)):
                    items.append(value)
            link = page.get("@odata.nextLink")
            next_target = str(link) if link else None
            next_params = None
            if next_target and not self.same_origin(next_target):
                raise GraphError("Microsoft Graph sent a next-page link to another host; "
                                 "it was not followed", "invalid_response")
        more = len(items) > limit or bool(next_target)
        return items[:limit], more

    def download(self, target: str, what: str, *, headers: dict[str, str] | None = None) -> Response:
        """GET a content endpoint and follow its redirect to the pre-authenticated URL.

        Returns the open stream (status 200 or 206); the caller reads and closes it.
        """
        response = self.request("GET", target, headers=headers, stream=True)
        hops = 0
        while response.status in (301, 302, 303, 307, 308) and hops < 5:
            location = response.headers.get("Location")
            response.close()
            if not location:
                raise GraphError(f"Microsoft Graph redirected {what} nowhere", "invalid_response")
            location = urllib.parse.urljoin(self.url(target), location)
            remember_secret(location)
            hops += 1
            response = self.request("GET", location, headers=headers, stream=True,
                                    authenticated=False)
        if response.status not in (200, 206):
            raise graph_error(response, what)
        return response


def _describe(exc: object) -> str:
    text = str(exc).strip()
    name = type(exc).__name__ if isinstance(exc, BaseException) else ""
    if name and text:
        return f"{name}: {text}"
    return name or text or "unknown error"


# -- paths ------------------------------------------------------------------------------


def clean_path(path: object, *, allow_root: bool = True) -> str:
    """A OneDrive path as ``folder/sub/name`` (no leading or trailing slash).

    Raises ValueError for what is not a plain path: ``.`` or ``..`` segments, control
    characters, or the root where it is not allowed.
    """
    if path is None:
        path = ""
    if not isinstance(path, str):
        raise ValueError("path must be a string")
    text = path.replace("\\", "/").strip()
    if not is_unicode(text):
        raise ValueError("path must be valid Unicode text")
    if any(ord(ch) < 32 for ch in text):
        raise ValueError("path must not contain control characters")
    parts = [part for part in text.split("/") if part]
    for part in parts:
        if part in (".", ".."):
            raise ValueError("path must not contain '.' or '..' segments")
        if part != part.strip():
            raise ValueError("path segments must not start or end with spaces")
    if not parts and not allow_root:
        raise ValueError("path must name an item, not the root folder")
    return "/".join(parts)


def is_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (JSON can carry lone surrogates that do not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _encoded(path: str) -> str:
    return "/".join(urllib.parse.quote(part, safe="") for part in path.split("/"))


def drive_root(drive_id: str | None = None) -> str:
    """The address of a drive: the signed-in user's, or another (a SharePoint document
    library, a drive shared with the user) by its id."""
    if not drive_id:
        return "/me/drive"
    return "/drives/" + urllib.parse.quote(drive_id, safe="!")


def item_target(path: str, drive_id: str | None = None) -> str:
    """The Graph address of the item at ``path`` (path-based addressing)."""
    if not path:
        return f"{drive_root(drive_id)}/root"
    return f"{drive_root(drive_id)}/root:/{_encoded(path)}"


def item_action(path: str, action: str, drive_id: str | None = None) -> str:
    """The address of ``action`` (children, content, createLink, ...) on the item at ``path``."""
    if not path:
        return f"{drive_root(drive_id)}/root/{action}"
    return f"{drive_root(drive_id)}/root:/{_encoded(path)}:/{action}"


def check_drive_id(drive_id: str | None) -> str | None:
    """``drive_id`` as given, or ValueError when it cannot be a drive id."""
    if drive_id is None or drive_id == "":
        return None
    if not isinstance(drive_id, str) or not all(ch.isalnum() or ch in "!-_" for ch in drive_id) \
            or len(drive_id) > 200:
        raise ValueError("drive_id must be a drive id such as 'b!Q2xp...' (letters, digits, "
                         "'!', '-', '_')")
    return drive_id




def conflict_query(behavior: str) -> dict[str, str]:
    return {"@microsoft.graph.conflictBehavior": behavior}


def split_parent(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    return parent, name


def parent_path(item: dict[str, Any]) -> str:
    reference = item.get("parentReference")
    raw = reference.get("path") if isinstance(reference, dict) else None
    if not isinstance(raw, str):
        return ""
    _, sep, after = raw.partition("root:")
    value = after if sep else ""
    return urllib.parse.unquote(value).strip("/")


def format_item(item: dict[str, Any]) -> DriveItem:
    """The fields of a driveItem a model needs; never its pre-authenticated download URL.

    A value of the wrong type is null, so every answer is what the tools declare."""
    parent = parent_path(item)
    name = str(item.get("name") or "")
    is_folder = isinstance(item.get("folder"), dict) or isinstance(item.get("package"), dict)
    out: DriveItem = {
        "id": text(item.get("id")),
        "name": name,
        "path": f"{parent}/{name}" if parent else name,
        "type": "folder" if is_folder else "file",
        "size": _count(item.get("size")),
        "created": text(item.get("createdDateTime")),
        "modified": text(item.get("lastModifiedDateTime")),
        "web_url": text(item.get("webUrl")),
    }
    folder = item.get("folder")
    if isinstance(folder, dict):
        out["child_count"] = _count(folder.get("childCount"))
    file = item.get("file")
    if isinstance(file, dict):
        out["mime_type"] = text(file.get("mimeType"))
    return out


def text(value: Any) -> str | None:
    """``value`` when Microsoft Graph sent a string, else None."""
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_folder(item: dict[str, Any]) -> bool:
    return isinstance(item.get("folder"), dict) or isinstance(item.get("package"), dict)
