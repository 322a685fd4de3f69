"""One mounted MCP server: an SDK client session kept open on a background event loop.

Each server gets its own event-loop thread, and the session lives in one task on that
loop: the SDK's transports must be entered and left in one task, and the session outlives
every caller, whose loops differ (``janito mcp serve``'s, a registry's background loop for a
synchronous ``call_tool``, a host's own). A mounted tool is an ``async def run()`` tool:
its call awaits, from the caller's loop, the coroutine submitted to the session's loop,
and the server's progress and log messages come back to the caller's loop as janito
reports, in order, before the answer. Cancelling the awaiting task (a timeout, a
cancelled call) cancels the remote call, which the SDK passes on to the server. A server
whose connection ends is marked broken: the call that finds it so fails with a structured
error and the next call starts it again.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextvars
import os
import threading
from contextlib import AsyncExitStack
from typing import Any, Callable, TypeVar

from janito_core import failure
from janito_core.scrub import Scrubber

from ._config import DEPTH_ENV, ServerConfig, expand

CONNECTION_FAILED = "connection_failed"
REMOTE_ERROR = "remote_error"
INVALID_RESULT = "invalid_result"
TIMEOUT = "timeout"
STDERR_LINES = 20
STDERR_LINE_CHARS = 500  # shown per line; lines are kept longer so a secret is never cut in two
CLOSE_TIMEOUT = 6.0

Reporter = Callable[[str, str], None]
"""``report(level, message)``: how a call relays the server's progress and log lines."""


def depth() -> int:
    """How many janito processes up the chain mount this one (0: none)."""
    try:
        return max(0, int(os.environ.get(DEPTH_ENV, "0")))
    except ValueError:
        return 0


T = TypeVar("T")


def _in_empty_context(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a new, empty context.

    The session's loop and every task submitted to it keep the context they are made in
    (a loop's wake-up handle does; a task copies the context it is scheduled from). The
    caller's context names the registry that happened to start the server or make the
    call, and the server outlives it: nothing of it may stay. Reports reach the caller in
    its own context through the relay of :meth:`RemoteServer.call`.
    """
    return contextvars.Context().run(function, *args)

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


async def remote_transport(config: ServerConfig, stack: AsyncExitStack, secrets: Scrubber,
                           auth: Any = None) -> Any:
    """The SDK transport (streamable HTTP or SSE) for a remote server entry.

    Headers are expanded here, and the values substituted into them join ``secrets``.
    """
    from mcp.shared._httpx_utils import create_mcp_http_client

    assert config.url is not None
    headers = {key: expand(value, secrets, env_too=True) for key, value in config.headers.items()}
    url = expand(config.url, secrets)
    if config.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(url, headers=headers or None, auth=auth,
                          timeout=min(config.startup_timeout, 30.0),
                          sse_read_timeout=max(config.timeout, 300.0))
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(create_mcp_http_client(headers=headers or None,
                                                                  auth=auth))
    return streamable_http_client(url, http_client=http)


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
        self._listeners: set[Reporter] = set()
        #: the secret values substituted into this server's configuration
        self.secrets = Scrubber()
        #: the name the server gave in the handshake (``janito`` for another janito)
        self.server_name = ""
        #: counts the tool lists received after ``notifications/tools/list_changed``
        self.list_version = 0
        #: called (on the server's event-loop thread) after each such list
        self.on_tools_changed: list[Callable[[RemoteServer], None]] = []

    def __repr__(self) -> str:
        state = "connected" if self.connected else "not connected"
        return f"<RemoteServer {self.name} ({self.config.transport}, {state})>"

    @property
    def connected(self) -> bool:
        return self._client is not None and self._broken is None

    # -- the event loop ---------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            loop = _in_empty_context(asyncio.new_event_loop)
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
        return _in_empty_context(asyncio.run_coroutine_threadsafe, coro, self._ensure_loop())

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
            plain = _plain_reason(exc)
            if plain is not None:
                raise StartError(self.clean(plain)) from None
            raise StartError(self.clean(f"{describe(exc)}{self._stderr_note()}")) from None

    @property
    def janito_peer(self) -> bool:
        """Whether the server is another janito (it calls itself ``janito`` in the
        handshake): its answers are already in janito's shape and are passed on as they are."""
        return self.server_name == "janito"

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
                watcher = asyncio.get_running_loop().create_task(self._listen(client))
                try:
                    await stop.wait()
                finally:
                    watcher.cancel()
                    try:
                        await watcher
                    except BaseException:
                        pass
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
        secrets = self.secrets
        transport: Any
        if config.url:
            url = expand(config.url, secrets)
            auth = self._auth(url) if config.oauth is not None else None
            transport = await remote_transport(config, stack, secrets, auth)
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            from ._config import read_env_file

            assert config.command is not None and self._stderr is not None
            env: dict[str, str] = {}
            if config.env_file:
                from_file = read_env_file(expand(config.env_file, secrets))
                secrets.add(*from_file.values())
                env.update(from_file)
            env.update({key: expand(value, secrets, env_too=True)
                        for key, value in config.env.items()})
            env[DEPTH_ENV] = str(depth() + 1)
            params = StdioServerParameters(
                command=expand(config.command, secrets),
                args=[expand(arg, secrets) for arg in config.args],
                env=env,
                cwd=os.path.expanduser(expand(config.cwd, secrets)) if config.cwd else None,
            )
            transport = stdio_client(params, errlog=self._stderr.write_fd)  # type: ignore[arg-type]
        client = Client(
            transport,
            client_info=mcp_types.Implementation(name="janito", version=self.client_version),
            logging_callback=self._on_log,
            message_handler=self._on_message,
            log_level="info",
            cache=None,
        )
        entered = await stack.enter_async_context(client)
        info = getattr(entered, "server_info", None)
        self.server_name = str(getattr(info, "name", "") or "")
        return entered

    def _auth(self, url: str) -> Any:
        """The SDK's OAuth provider on the stored sign-in; StartError when there is none."""
        from ._oauth import SecretTokenStorage, login_hint, provider

        if not SecretTokenStorage(self.config).has_tokens():
            raise StartError(login_hint(self.config))
        return provider(self.config, url, self.secrets)

    async def _listen(self, client: Any) -> None:
        """On a 2026-07-28 connection tool-list changes come through ``subscriptions/listen``
        (earlier protocols send ``notifications/tools/list_changed``, see ``_on_message``).
        A server that does not offer it, or a dropped stream, just ends the watch."""
        try:
            capabilities = client.server_capabilities
            tools = getattr(capabilities, "tools", None)
            if tools is not None and getattr(tools, "list_changed", None) is False:
                return
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    await self._refresh(client)
        except asyncio.CancelledError:
            raise
        except Exception:
            return

    async def _on_message(self, message: Any) -> None:
        """Server notifications: a changed tool list is fetched again and published."""
        if isinstance(message, Exception):
            return
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed" and self._client is not None:
            client = self._client
            asyncio.get_running_loop().create_task(self._refresh(client))

    async def _refresh(self, client: Any) -> None:
        try:
            tools = await self._list_tools(client)
        except Exception:
            return  # the next notification, or the next start, lists them again
        self.tools = tools
        self.list_version += 1
        for listener in list(self.on_tools_changed):
            try:
                listener(self)
            except Exception:
                pass

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
            listener(str(params.level), text)

    async def _call(self, client: Any, tool: str, arguments: dict[str, Any],
                    relay: Reporter) -> Any:
        janito_peer = self.janito_peer

        async def progress(value: float, total: float | None, message: str | None) -> None:
            if janito_peer:
                # a janito server sends each report twice, as progress and as a log line
                # carrying its level: relaying both printed every line twice
                return
            shown = message or (f"{value:g}/{total:g}" if total else f"{value:g}")
            relay("progress", shown)

        self._listeners.add(relay)
        try:
            return await client.call_tool(tool, arguments, progress_callback=progress)
        finally:
            self._listeners.discard(relay)

    async def call(self, tool: str, arguments: dict[str, Any], report: Reporter | None = None,
                   *, local_name: str | None = None) -> dict[str, Any]:
        """Call remote ``tool`` from a coroutine on any loop and return janito's result
        dict; never raises, except ``CancelledError`` when the awaiting task is cancelled
        (the remote call is cancelled with it).

        ``report`` is called on the caller's loop, in the caller's context. The result,
        success or failure, structured data and text alike, and every progress or log
        message reported on the way, are cleaned of the secret values substituted into
        this server's configuration: a server that echoes its token passes it no further.
        """
        shown = None if report is None else _cleaned(report, self.clean)
        result: dict[str, Any] = self.scrubbed(
            await self._call_once(tool, arguments, shown, local_name))
        return result

    async def _call_once(self, tool: str, arguments: dict[str, Any], report: Reporter | None,
                         local_name: str | None) -> dict[str, Any]:
        where = {"server": self.name, "tool": local_name or tool}
        client = self._client
        if client is not None and self._broken is None:
            stderr_mark = self._stderr.count if self._stderr is not None else 0
        else:
            # Starting it again waits on the session's loop, up to its start-up timeout:
            # in a thread, so the caller's loop (a server's, serving others) keeps going.
            ready = await asyncio.to_thread(self._ready, where)
            if isinstance(ready, dict):
                return ready
            client, stderr_mark = ready
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()

        def relay(level: str, message: str) -> None:
            # On the session's loop: the report is the caller's to make, on its own loop.
            if report is not None:
                try:
                    loop.call_soon_threadsafe(_report, report, level, message, context=context)
                except RuntimeError:  # the caller's loop is gone: nobody to tell
                    pass

        waiter = asyncio.wrap_future(self._submit(self._call(client, tool, arguments, relay)))
        try:
            done, _ = await asyncio.wait((waiter,), timeout=self.config.timeout)
        except asyncio.CancelledError:
            waiter.cancel()  # and so the remote call, which the SDK tells the server about
            raise
        if not done:
            waiter.cancel()
            return failure(
                f"MCP server {self.name!r} did not answer {tool} within "
                f"{self.config.timeout:g} s; the call was cancelled",
                TIMEOUT, **where,
            )
        if waiter.cancelled():  # the session's loop cancelled it: the server is going away
            return await asyncio.to_thread(self._call_failed, ConnectionError("the call was "
                                           "cancelled by the session"), tool, where, stderr_mark)
        exc = waiter.exception()
        if exc is not None:
            # Reading the server's last stderr lines may wait for its pipe: not on this loop.
            return await asyncio.to_thread(self._call_failed, exc, tool, where, stderr_mark)
        from ._results import result_dict

        return result_dict(waiter.result(), self.name, tool, local_name, self.clean,
                           janito_peer=self.janito_peer)

    def _ready(self, where: dict[str, str]) -> tuple[Any, int] | dict[str, Any]:
        """(the session, the server's stderr line count) once started, or the failure."""
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
            return self._client, self._stderr.count if self._stderr is not None else 0

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
        broken_result = _broken_result(exc)
        if broken_result is not None:
            # The session is fine: only this answer broke the server's own promises.
            return failure(self.clean(f"MCP server {self.name!r} answered {tool} with a result "
                                      f"that breaks its own declaration: {broken_result}"),
                           INVALID_RESULT, **where)
        self._broken = describe(exc)
        note = self._stderr_note(stderr_mark)
        return failure(
            self.clean(f"MCP server {self.name!r} stopped during the call to {tool} "
                       f"({describe(exc)}){note}; it is restarted on the next call"),
            CONNECTION_FAILED, **where,
        )


def _plain_reason(exc: BaseException) -> str | None:
    """The message of a start failure that explains itself (a sign-in is needed)."""
    from ._oauth import LoginRequired

    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 20:
        seen += 1
        if isinstance(current, (StartError, LoginRequired)):
            return str(current)
        inner = getattr(current, "exceptions", None)
        if isinstance(inner, (list, tuple)) and inner:
            current = inner[0]
            continue
        current = current.__cause__ or current.__context__
    return None


def _broken_result(exc: BaseException) -> str | None:
    """What is wrong with a result the SDK refused, or None for any other failure.

    The SDK checks a result against the tool's declared ``outputSchema`` (raising
    RuntimeError with one of a few known sentences) and against the protocol's own result
    model (pydantic's ValidationError); either is that answer's fault, not the session's.
    """
    while True:
        inner = getattr(exc, "exceptions", None)
        if isinstance(inner, (list, tuple)) and len(inner) == 1:
            exc = inner[0]
            continue
        break
    if isinstance(exc, RuntimeError):
        text = str(exc)
        if text.startswith(("Invalid structured content returned by tool",
                            "Invalid schema for tool")) or "has an output schema but did not " \
                "return structured content" in text:
            return " ".join(text.split())[:1000]
        return None
    try:
        from pydantic import ValidationError
    except ImportError:  # pragma: no cover - the SDK requires pydantic
        return None
    if isinstance(exc, ValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"the result is not an MCP tool result ({where}: {first.get('msg', 'invalid')})"
    return None


def _report(report: Reporter, level: str, message: str) -> None:
    try:
        report(level, message)
    except Exception:  # a report that fails must not fail the call
        pass


def _cleaned(report: Reporter, clean: Callable[[str], str]) -> Reporter:
    """``report`` with ``clean`` applied to each message first."""
    return lambda level, message: report(level, clean(message))


def _compact(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
