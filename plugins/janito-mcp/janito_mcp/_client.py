"""One mounted MCP server: an SDK client session kept open on a background event loop.

janito calls tools synchronously; the SDK is asynchronous. Each server gets its own
event-loop thread; the session lives in one task on that loop (the SDK's transports are
entered and left in the same task), and every call is a coroutine submitted to the loop
from the calling thread, which waits for it while relaying the server's progress and log
messages as janito reports. A server whose connection ends is marked broken: the call
that finds it so fails with a structured error and the next call starts it again.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import queue
import threading
import time
from contextlib import AsyncExitStack
from typing import Any, Callable

from janito_core import failure
from janito_core.scrub import Scrubber

from ._config import DEPTH_ENV, ServerConfig, expand

CONNECTION_FAILED = "connection_failed"
REMOTE_ERROR = "remote_error"
TIMEOUT = "timeout"
STDERR_LINES = 20
STDERR_LINE_CHARS = 500  # shown per line; lines are kept longer so a secret is never cut in two
CLOSE_TIMEOUT = 6.0

Reporter = Callable[[str, str], None]
"""``report(level, message)``: how a call relays the server's progress and log lines."""

_DONE = object()


def depth() -> int:
    """How many janito processes up the chain mount this one (0: none)."""
    try:
        return max(0, int(os.environ.get(DEPTH_ENV, "0")))
    except ValueError:
        return 0


class StartError(Exception):
    """The server could not be started or did not complete the MCP handshake."""


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups for the real cause."""
    while True:
        inner = getattr(exc, "exceptions", None)
        if isinstance(inner, (list, tuple)) and inner:
            exc = inner[0]
            continue
        break
    message = getattr(exc, "message", None) if type(exc).__name__ == "MCPError" else None
    text = str(message or exc).strip()
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    if isinstance(exc, (TimeoutError, concurrent.futures.TimeoutError, asyncio.TimeoutError)):
        return text or "timed out"
    return f"{type(exc).__name__}: {text}" if text and type(exc).__name__ != "MCPError" else (
        text or type(exc).__name__
    )


class _StderrTail:
    """The last lines a server wrote on stderr, read from a pipe by a daemon thread."""

    def __init__(self) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.count = 0
        read_fd, self.write_fd = os.pipe()
        self._thread = threading.Thread(target=self._read, args=(read_fd,), daemon=True,
                                        name="janito-mcp-stderr")
        self._thread.start()

    def _read(self, fd: int) -> None:
        with open(fd, "rb") as stream:
            for raw in stream:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    self.lines.append(line[:8 * STDERR_LINE_CHARS])
                    self.count += 1

    def close_writer(self) -> None:
        if self.write_fd >= 0:
            try:
                os.close(self.write_fd)
            except OSError:
                pass
            self.write_fd = -1

    def text(self, clean: Callable[[str], str], wait: float = 0.5, since: int = 0) -> str:
        """The last lines (written after line ``since``), once the pipe is drained (bounded
        wait), each passed through ``clean`` before it is cut to its shown length."""
        self._thread.join(wait)
        lines = list(self.lines)
        fresh = max(0, min(self.count - since, len(lines)))
        return " | ".join(clean(line)[:STDERR_LINE_CHARS] for line in lines[len(lines) - fresh:][-3:])


class RemoteServer:
    """A mounted MCP server, started on demand and restarted after it dies."""

    def __init__(self, config: ServerConfig, client_version: str = "0") -> None:
        self.config = config
        self.name = config.name
        self.client_version = client_version
        self.tools: list[Any] = []
        self.starts = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stderr: _StderrTail | None = None
        self._broken: str | None = None
        self._lock = threading.Lock()
        self._listeners: set[queue.SimpleQueue[Any]] = set()
        #: the secret values substituted into this server's configuration
        self.secrets = Scrubber()

    def __repr__(self) -> str:
        state = "connected" if self.connected else "not connected"
        return f"<RemoteServer {self.name} ({self.config.transport}, {state})>"

    @property
    def connected(self) -> bool:
        return self._client is not None and self._broken is None

    # -- the event loop ---------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=self._run_loop, args=(loop,), daemon=True,
                                      name=f"janito-mcp-{self.name}")
            self._loop, self._thread = loop, thread
            thread.start()
        return self._loop

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    # -- starting and stopping --------------------------------------------------------

    def begin_start(self) -> concurrent.futures.Future[Any]:
        """Start connecting in the background; ``finish_start`` waits for the outcome."""
        self.starts += 1
        self._broken = None
        return self._submit(self._open())

    def finish_start(self, future: concurrent.futures.Future[Any], timeout: float | None = None) -> None:
        """Wait for ``begin_start``; raises StartError saying why the server is unusable."""
        limit = self.config.startup_timeout if timeout is None else timeout
        try:
            self.tools = list(future.result(timeout=max(limit, 0.0)))
        except concurrent.futures.TimeoutError:
            future.cancel()
            self._broken = "did not start"
            raise StartError(self.clean(f"no answer to the MCP handshake within {limit:g} s"
                                        f"{self._stderr_note()}")) from None
        except Exception as exc:
            self._broken = "did not start"
            raise StartError(self.clean(f"{describe(exc)}{self._stderr_note()}")) from None

    def clean(self, text: str) -> str:
        """``text`` without the secret values this server was started with, in any of the
        forms they may come back in (``janito_core.scrub``)."""
        return self.secrets.text(text) if self.secrets else text

    def scrubbed(self, value: Any) -> Any:
        """``value`` (a result, a tool definition's schema) with :meth:`clean` applied to
        every string in it: what the server sends back never carries those secrets on."""
        return self.secrets.value(value)

    def start(self) -> None:
        """Connect (blocking) and list the server's tools."""
        self.finish_start(self.begin_start())

    def _stderr_note(self, since: int = 0) -> str:
        tail = self._stderr.text(self.clean, since=since) if self._stderr is not None else ""
        return f" (stderr: {tail})" if tail else ""

    async def _open(self) -> list[Any]:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[Any]] = loop.create_future()
        self._stop = asyncio.Event()
        self._holder = loop.create_task(self._hold(ready, self._stop))
        try:
            return await ready
        except asyncio.CancelledError:
            self._stop.set()
            self._holder.cancel()
            raise

    async def _hold(self, ready: asyncio.Future[list[Any]], stop: asyncio.Event) -> None:
        """The task that owns the session: open it, list tools, keep it until told to stop."""
        self._stderr = _StderrTail() if not self.config.url else None
        try:
            async with AsyncExitStack() as stack:
                client = await self._connect(stack)
                if self._stderr is not None:
                    self._stderr.close_writer()
                tools = await self._list_tools(client)
                self._client = client
                if not ready.done():
                    ready.set_result(tools)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                else:
                    ready.cancel()
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None
            if self._stderr is not None:
                self._stderr.close_writer()

    async def _connect(self, stack: AsyncExitStack) -> Any:
        import mcp_types
        from mcp.client import Client

        config = self.config
        if config.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            secrets = self.secrets
            headers = {key: expand(value, secrets) for key, value in config.headers.items()}
            http = await stack.enter_async_context(create_mcp_http_client(headers=headers or None))
            transport: Any = streamable_http_client(expand(config.url, secrets), http_client=http)
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            assert config.command is not None and self._stderr is not None
            secrets = self.secrets
            env = {key: expand(value, secrets) for key, value in config.env.items()}
            env[DEPTH_ENV] = str(depth() + 1)
            params = StdioServerParameters(
                command=expand(config.command, secrets),
                args=[expand(arg, secrets) for arg in config.args],
                env=env,
                cwd=config.cwd,
            )
            transport = stdio_client(params, errlog=self._stderr.write_fd)  # type: ignore[arg-type]
        client = Client(
            transport,
            client_info=mcp_types.Implementation(name="janito", version=self.client_version),
            logging_callback=self._on_log,
            log_level="info",
            cache=None,
        )
        return await stack.enter_async_context(client)

    @staticmethod
    async def _list_tools(client: Any) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """End the session (the server process is stopped) and the loop thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            self._submit(self._close()).result(timeout)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)
        self._loop = None

    async def _close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        holder = self._holder
        if holder is not None and not holder.done():
            try:
                await asyncio.wait_for(asyncio.shield(holder), CLOSE_TIMEOUT - 1)
            except (asyncio.TimeoutError, Exception):
                holder.cancel()
        self._holder = None

    def _restart(self) -> None:
        self._submit(self._close()).result(CLOSE_TIMEOUT)
        self.start()

    # -- calls ------------------------------------------------------------------------

    async def _on_log(self, params: Any) -> None:
        data = params.data
        # cleaned before it is cut, so that no secret is ever cut in two and half shown
        text = self.clean(data if isinstance(data, str) else _compact(data))[:2000]
        for listener in list(self._listeners):
            listener.put((str(params.level), text))

    async def _call(self, client: Any, tool: str, arguments: dict[str, Any],
                    messages: queue.SimpleQueue[Any]) -> Any:
        async def progress(value: float, total: float | None, message: str | None) -> None:
            shown = message or (f"{value:g}/{total:g}" if total else f"{value:g}")
            messages.put(("progress", shown))

        self._listeners.add(messages)
        try:
            return await client.call_tool(tool, arguments, progress_callback=progress)
        finally:
            self._listeners.discard(messages)

    def call(self, tool: str, arguments: dict[str, Any], report: Reporter | None = None,
             *, local_name: str | None = None) -> dict[str, Any]:
        """Call remote ``tool`` and return janito's result dict; never raises.

        The result, success or failure, structured data and text alike, and every progress
        or log message reported on the way, are cleaned of the secret values substituted
        into this server's configuration: a server that echoes its token passes it no further.
        """
        shown = None if report is None else _cleaned(report, self.clean)
        result: dict[str, Any] = self.scrubbed(self._call_once(tool, arguments, shown, local_name))
        return result

    def _call_once(self, tool: str, arguments: dict[str, Any], report: Reporter | None,
                   local_name: str | None) -> dict[str, Any]:
        where = {"server": self.name, "tool": local_name or tool}
        with self._lock:
            if not self.connected:
                reason = self._broken
                try:
                    self._restart()
                except StartError as exc:
                    return failure(
                        f"MCP server {self.name!r} could not be {'re' if reason else ''}started: "
                        f"{exc}; the next call tries again",
                        CONNECTION_FAILED, **where,
                    )
                except Exception as exc:
                    return failure(self.clean(f"MCP server {self.name!r} could not be started: "
                                              f"{describe(exc)}"), CONNECTION_FAILED, **where)
            client = self._client
            stderr_mark = self._stderr.count if self._stderr is not None else 0
        messages: queue.SimpleQueue[Any] = queue.SimpleQueue()
        future = self._submit(self._call(client, tool, arguments, messages))
        future.add_done_callback(lambda _: messages.put(_DONE))
        deadline = time.monotonic() + self.config.timeout
        while True:
            try:
                item = messages.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                future.cancel()
                return failure(
                    f"MCP server {self.name!r} did not answer {tool} within "
                    f"{self.config.timeout:g} s; the call was cancelled",
                    TIMEOUT, **where,
                )
            if item is _DONE:
                break
            if report is not None:
                try:
                    report(*item)
                except Exception:
                    pass
        try:
            result = future.result()
        except Exception as exc:
            return self._call_failed(exc, tool, where, stderr_mark)
        from ._remote import result_dict

        return result_dict(result, self.name, tool, local_name, self.clean)

    def _call_failed(self, exc: BaseException, tool: str, where: dict[str, str],
                     stderr_mark: int = 0) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, INVALID_PARAMS

        if isinstance(exc, MCPError) and exc.code == INVALID_PARAMS:
            return failure(self.clean(f"MCP server {self.name!r} rejected the arguments of {tool}: "
                                      f"{exc.message}"), "invalid_arguments", **where)
        if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
            return failure(self.clean(f"MCP server {self.name!r} answered {tool} with an error: "
                                      f"{exc.message}"), REMOTE_ERROR, **where)
        self._broken = describe(exc)
        note = self._stderr_note(stderr_mark)
        return failure(
            self.clean(f"MCP server {self.name!r} stopped during the call to {tool} "
                       f"({describe(exc)}){note}; it is restarted on the next call"),
            CONNECTION_FAILED, **where,
        )


def _cleaned(report: Reporter, clean: Callable[[str], str]) -> Reporter:
    """``report`` with ``clean`` applied to each message first."""
    return lambda level, message: report(level, clean(message))


def _compact(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
