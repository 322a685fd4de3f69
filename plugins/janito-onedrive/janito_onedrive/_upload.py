"""Uploads: one PUT for small files, a resumable upload session for large ones.

The upload session follows Microsoft Graph's protocol: ``createUploadSession`` returns
an ``uploadUrl``; each fragment is PUT there (without the bearer token) with a
``Content-Range`` header; the service answers 202 with ``nextExpectedRanges`` until the
last fragment, which gets 200 or 201 and the new driveItem. When a fragment is lost
(the connection drops, the service answers 5xx) the client asks the session
(``GET uploadUrl``) which ranges it still expects and sends those, so bytes the service
already holds are not sent again. A session that expired (404) is started once more.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from janito_core.results import counted

from . import _settings
from ._errors import GraphError, remember_secret
from ._graph import GraphClient, graph_error, item_action, item_target

MAX_STALLS = 5


class Source:
    """The bytes to upload: text in memory, or a file opened for reading.

    A file is given as an open descriptor and read range by range at its offsets
    (``pread``): the file is the one opened, whatever its path names meanwhile. The caller
    closes the descriptor; ``size`` is the file's size when it was opened.
    """

    def __init__(self, data: bytes | None = None, fd: int | None = None,
                 size: int | None = None) -> None:
        if (data is None) == (fd is None):
            raise ValueError("a Source holds either data or a file descriptor")
        self.data = data
        self.fd = fd
        if data is not None:
            self.size = len(data)
        else:
            self.size = size if size is not None else os.fstat(fd or 0).st_size

    def read(self, start: int, length: int) -> bytes:
        if self.data is not None:
            return self.data[start:start + length]
        assert self.fd is not None
        chunks: list[bytes] = []
        while length > 0:
            chunk = os.pread(self.fd, length, start)
            if not chunk:
                break
            chunks.append(chunk)
            start += len(chunk)
            length -= len(chunk)
        return b"".join(chunks)


def conflict_behavior(overwrite: bool | str) -> str:
    """The behaviour to send: one of fail, rename, replace (a bool: replace or fail)."""
    if isinstance(overwrite, str):
        return overwrite
    return "replace" if overwrite else "fail"


def upload(graph: GraphClient, path: str, source: Source, overwrite: bool | str,
           progress: Callable[[str], None]) -> dict[str, Any]:
    """Upload ``source`` to ``path``; returns the driveItem and how it went."""
    if source.size <= _settings.simple_upload_limit():
        item = simple_upload(graph, path, source, overwrite)
        return {"item": item, "method": "simple", "fragments": 1, "resumed": 0, "sessions": 0}
    return session_upload(graph, path, source, overwrite, progress)


def simple_upload(graph: GraphClient, path: str, source: Source, overwrite: bool | str) -> dict[str, Any]:
    response = graph.call(
        "PUT", item_action(path, "content"), f"uploading '/{path}'", ok=(200, 201),
        params={"@microsoft.graph.conflictBehavior": conflict_behavior(overwrite)},
        data=source.read(0, source.size),
        headers={"Content-Type": "application/octet-stream"},
    )
    return dict(response.json())


def _first_range(ranges: Any, size: int) -> tuple[int, int] | None:
    """The first missing range ``(start, end inclusive)`` from ``nextExpectedRanges``."""
    if not isinstance(ranges, list) or not ranges:
        return None
    first = str(ranges[0]).strip()
    head, _, tail = first.partition("-")
    try:
        start = int(head)
        end = int(tail) if tail.strip() else size - 1
    except ValueError:
        raise GraphError(f"the upload session sent an unreadable range {first!r}",
                         "invalid_response") from None
    if not 0 <= start < size or end < start:
        raise GraphError(f"the upload session asked for bytes {first} of a {size}-byte file",
                         "invalid_response")
    return start, min(end, size - 1)


def _create_session(graph: GraphClient, path: str, overwrite: bool | str) -> tuple[str, Any]:
    body = {"item": {"@microsoft.graph.conflictBehavior": conflict_behavior(overwrite)}}
    session = graph.call("POST", item_action(path, "createUploadSession"),
                         f"starting an upload session for '/{path}'", ok=(200,),
                         json_body=body).json()
    url = session.get("uploadUrl") if isinstance(session, dict) else None
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise GraphError("Microsoft Graph started an upload session without an upload URL",
                         "invalid_response")
    remember_secret(url)
    return url, session.get("nextExpectedRanges") or ["0-"]


def _status(graph: GraphClient, url: str, path: str) -> Any:
    """The session's ``nextExpectedRanges``, or None when the session is gone (404)."""
    response = graph.request("GET", url, authenticated=False)
    if response.status == 404:
        return None
    if response.status != 200:
        raise graph_error(response, f"asking the upload session of '/{path}' for its progress")
    return response.json().get("nextExpectedRanges") or []


def _finished_item(graph: GraphClient, path: str, size: int) -> dict[str, Any] | None:
    response = graph.request("GET", item_target(path))
    if response.status != 200:
        return None
    item = response.json()
    if isinstance(item, dict) and item.get("size") == size and isinstance(item.get("file"), dict):
        return dict(item)
    return None


def _cancel(graph: GraphClient, url: str) -> None:
    try:
        graph.request("DELETE", url, authenticated=False)
    except Exception:
        pass


def session_upload(graph: GraphClient, path: str, source: Source, overwrite: bool | str,
                   progress: Callable[[str], None]) -> dict[str, Any]:
    size = source.size
    chunk = _settings.chunk_size()
    url, ranges = _create_session(graph, path, overwrite)
    sessions = 1
    fragments = 0
    resumed = 0
    stalls = 0
    while True:
        wanted = _first_range(ranges, size)
        if wanted is None:
            # The service expects nothing more: the last fragment arrived but its answer
            # was lost. The file exists now; read it back.
            item = graph.get_json(item_target(path), f"reading '/{path}' after its upload")
            return {"item": dict(item), "method": "session", "fragments": fragments,
                    "resumed": resumed, "sessions": sessions}
        start, last = wanted
        end = min(start + chunk, last + 1)
        payload = source.read(start, end - start)
        headers = {
            "Content-Range": f"bytes {start}-{end - 1}/{size}",
            "Content-Type": "application/octet-stream",
        }
        failure: GraphError | None = None
        response = None
        try:
            response = graph.request("PUT", url, data=payload, headers=headers,
                                     authenticated=False)
        except GraphError as exc:
            if exc.error_type not in ("connection_failed", "timeout"):
                raise
            failure = exc
        if response is not None and response.status in (200, 201):
            fragments += 1
            progress(f"Uploaded {size} of {counted(size, 'byte')}")
            return {"item": dict(response.json()), "method": "session",
                    "fragments": fragments, "resumed": resumed, "sessions": sessions}
        if response is not None and response.status == 202:
            fragments += 1
            stalls = 0
            ranges = response.json().get("nextExpectedRanges") or []
            progress(f"Uploaded {end} of {counted(size, 'byte')}")
            continue
        if response is not None and response.status == 409:
            _cancel(graph, url)
            raise graph_error(response, f"uploading '/{path}'")
        if response is not None and response.status == 404:
            # The session expired or was lost: start again, once.
            if sessions >= 2:
                raise graph_error(response, f"uploading '/{path}'")
            url, ranges = _create_session(graph, path, overwrite)
            sessions += 1
            resumed += 1
            continue
        if response is not None and response.status < 500 and response.status != 416:
            _cancel(graph, url)
            raise graph_error(response, f"uploading bytes {start}-{end - 1} of '/{path}'")
        # Dropped connection, 5xx, or 416 (the service already holds some of these bytes):
        # ask the session what it still expects and carry on from there.
        stalls += 1
        if stalls > MAX_STALLS:
            _cancel(graph, url)
            if failure is not None:
                raise GraphError(f"the upload of '/{path}' failed {stalls} times in a row at byte "
                                 f"{start} ({failure.message})", failure.error_type)
            raise graph_error(response, f"uploading bytes {start}-{end - 1} of '/{path}'")  # type: ignore[arg-type]
        resumed += 1
        progress(f"Fragment at byte {start} was not confirmed; resuming")
        status = _status(graph, url, path)
        if status is None and end == size:
            # The session is gone after the last fragment: it may have completed.
            done = _finished_item(graph, path, size)
            if done is not None:
                return {"item": done, "method": "session", "fragments": fragments + 1,
                        "resumed": resumed, "sessions": sessions}
        if status is None:
            if sessions >= 2:
                raise GraphError(f"the upload session of '/{path}' expired twice", "service_error")
            url, ranges = _create_session(graph, path, overwrite)
            sessions += 1
            continue
        ranges = status
