"""``janito mcp serve``: the loaded janito tools as an MCP server (stdio or streamable HTTP).

Tools are listed with the MCP input schemas of ``janito_core.formats.mcp`` and every call
goes through ``janito_core.dispatch.call_tool``, so argument validation, privileges and
the ``janito_tool_call`` hook apply exactly as they do for any other caller. A call runs
in a worker thread, with a call id made from the MCP request id; janito stamps every
progress report with the id of the call that made it, and the reports reach that call's
client as MCP progress notifications (when the client asked for progress) and log
messages, and are still rendered on stderr. Nothing but MCP messages is ever written to
stdout.
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from janito_core import Privileges, Registry, failure, hookimpl

if TYPE_CHECKING:
    from janito_core.reporter import ReportEvent

SERVER_NAME = "janito"
FORWARDER_PLUGIN = "janito-mcp:report-forwarder"
LOOPBACK = ("127.0.0.1", "localhost", "::1")

_LEVELS = {"error": "error", "warning": "warning"}


@dataclass(frozen=True)
class ServeOptions:
    """What ``janito mcp serve`` was asked to do."""

    toolsets: tuple[str, ...] = ()
    write: bool = False
    execute: bool = False
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    workspace: str | None = None

    @property
    def privileges(self) -> Privileges:
        return Privileges(read=True, write=self.write, execute=self.execute)


def build_registry(options: ServeOptions) -> Registry:
    """The registry to serve: autoload toolsets plus ``-t`` ones, read-only unless granted.

    Built by the ``janito`` command's own ``build_registry``, with read always granted
    (so no flag means read-only, not everything). Raises ``janito_core.cli.UsageError``
    for a bad ``-t`` or ``--workspace``.
    """
    import argparse

    from janito_core.cli import build_registry as build

    return build(argparse.Namespace(
        toolset=list(options.toolsets), read=True, write=options.write,
        execute=options.execute, workspace=options.workspace,
    ))


# -- progress reports -> MCP notifications ------------------------------------------------


class _Channel:
    """The notifications of one ``tools/call``: sent on the server's loop, from the tool's thread."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.pending = ""
        self.count = 0

    def send(self, event: ReportEvent) -> None:
        """Called in the tool's worker thread; blocks until the notification is written."""
        import anyio.from_thread

        text = self.pending + str(event.message)
        if "\n" not in event.end:
            self.pending = text + event.end
            return
        self.pending = ""
        if text.strip():
            try:
                anyio.from_thread.run(self.notify, event.kind, event.tool, text.strip())
            except Exception:
                pass

    async def flush(self) -> None:
        if self.pending.strip():
            await self.notify("progress", None, self.pending.strip())
        self.pending = ""

    async def notify(self, kind: str, tool: str | None, text: str) -> None:
        session = self.ctx.session
        self.count += 1
        try:
            await session.report_progress(self.count, None, text)
        except Exception:
            pass
        try:
            await session.send_log_message(
                _LEVELS.get(kind, "info"), text, logger=f"janito.{tool}" if tool else "janito",
                related_request_id=self.ctx.request_id,
            )
        except Exception:
            pass


class ReportForwarder:
    """A ``janito_report`` implementation that forwards each call's reports to its MCP client.

    ``channels`` maps the call id given to dispatch to that call's channel; a report
    carries the id of the call that made it (``ReportEvent.call_id``).
    """

    def __init__(self) -> None:
        self.channels: dict[str, _Channel] = {}

    @hookimpl
    def janito_report(self, event: ReportEvent) -> None:
        channel = self.channels.get(event.call_id) if event.call_id is not None else None
        if channel is not None:
            channel.send(event)


# -- the MCP server -----------------------------------------------------------------------


class JanitoServer:
    """An MCP low-level server whose tools are a registry's loaded tools."""

    def __init__(self, registry: Registry) -> None:
        import mcp_types as types
        from mcp.server.lowlevel import Server

        from janito_core.formats import mcp as mcp_format

        self.registry = registry
        self.tools: dict[str, Any] = {}
        self.problems: list[str] = []
        self.forwarder = ReportForwarder()
        self._serial = itertools.count(1)
        for name in registry.names():
            try:
                definition = mcp_format(registry.schema(name),
                                        permissions=registry.get_tool_permissions(name))
                self.tools[name] = types.Tool.model_validate(definition)
            except Exception as exc:
                self.problems.append(f"{name}: its schema cannot be served ({exc})")
        registry.plugins.register(self.forwarder, FORWARDER_PLUGIN, "janito-mcp")
        from . import __version__

        self.server: Any = Server(
            SERVER_NAME,
            version=__version__,
            instructions="janito tools. Every result is a JSON object with 'success'; a "
            "failure has 'error' and 'error_type'.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            get_tool_input_schema=self._input_schema,
        )
        warnings.filterwarnings("ignore", message=r"The logging capability is deprecated",
                                category=Warning)

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.tools.get(name)
        return None if tool is None else dict(tool.input_schema)

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListToolsResult(tools=list(self.tools.values()))

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        import anyio.to_thread
        import mcp_types as types

        arguments = dict(params.arguments or {})
        name = str(params.name)
        # Request ids are unique within one session only; HTTP serves several at once.
        call_id = f"mcp-{next(self._serial)}:{ctx.request_id}"
        channel = self.forwarder.channels[call_id] = _Channel(ctx)
        try:
            result = await anyio.to_thread.run_sync(self._dispatch, call_id, name, arguments)
            await channel.flush()
        finally:
            self.forwarder.channels.pop(call_id, None)
        text = json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=result,
            is_error=not result.get("success", False),
        )

    def _dispatch(self, call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name not in self.tools and self.registry.get(name) is not None:
            return failure(f"{name} is not served here", "unknown_tool", tool=name)
        from janito_core.dispatch import call_tool

        return call_tool(name, arguments, registry=self.registry, call_id=call_id)

    # -- transports -------------------------------------------------------------------

    async def run_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await self.server.run(read_stream, write_stream,
                                  self.server.create_initialization_options())

    def http_app(self, host: str, path: str) -> Any:
        return self.server.streamable_http_app(streamable_http_path=path, host=host)


def describe_exposure(registry: Registry, served: JanitoServer, options: ServeOptions,
                      stream: TextIO) -> None:
    """Tell the operator on stderr what the server exposes, and what it keeps back and why."""
    privileges = str(options.privileges)
    where = "stdio" if options.transport == "stdio" else "streamable HTTP"
    names = list(served.tools)
    print(f"janito mcp: serving {len(names)} tool{'s' if len(names) != 1 else ''} over {where} "
          f"with privileges {privileges}" + (
              "" if options.write and options.execute else
              " (tools that write need -w, tools that execute need -x)"), file=stream)
    records = {r.name: r for r in registry.records()}
    width = max((len(n) for n in records), default=0)
    for name in names:
        record = records[name]
        print(f"  {name:<{width}}  {record.permissions or '-':<3}  {record.toolset}", file=stream)
    denied = [r for r in records.values() if r.status == "denied"]
    if denied:
        print("not exposed, privileges not granted: " + ", ".join(
            f"{r.name} ({r.permissions})" for r in denied), file=stream)
    skipped = [r for r in records.values() if r.status == "skipped"]
    for record in skipped:
        print(f"not exposed, cannot load here: {record.name}: {record.reason}", file=stream)
    for problem in served.problems:
        print(f"not exposed: {problem}", file=stream)
    for error in registry.load_errors:
        who = error.distribution or "janito"
        print(f"load error ({who}): {error.reason}", file=stream)
    stream.flush()


def serve(options: ServeOptions, stderr: TextIO | None = None) -> int:
    """Run the server until the client disconnects (stdio) or the process is stopped (HTTP)."""
    from janito_core.cli import UsageError

    err = stderr or sys.stderr
    try:
        registry = build_registry(options)
        registry.names()
    except (UsageError, LookupError) as exc:
        print(f"janito mcp: {exc}", file=err)
        return 2
    sock = None
    if options.transport == "http":
        sock = _listen(options, err)
        if sock is None:
            return 1
    served = JanitoServer(registry)
    describe_exposure(registry, served, options, err)
    try:
        if sock is None:
            import anyio

            anyio.run(served.run_stdio)
            return 0
        return _run_http(served, options, sock, err)
    except KeyboardInterrupt:
        return 130
    finally:
        if sock is not None:
            sock.close()


def _listen(options: ServeOptions, err: TextIO) -> socket.socket | None:
    """The listening socket for HTTP, bound before anything slow happens (port 0: any free one)."""
    import socket

    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when
    # the listening socket says TCP, and without it small responses wait for delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((options.host, options.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        print(f"janito mcp: cannot listen on {options.host}:{options.port}: {exc.strerror or exc}",
              file=err)
        return None
    return sock


def _run_http(served: JanitoServer, options: ServeOptions, sock: socket.socket, err: TextIO) -> int:
    import uvicorn

    port = sock.getsockname()[1]
    host = f"[{options.host}]" if sock.family == socket.AF_INET6 else options.host
    app = served.http_app(options.host, options.path)
    if options.host not in LOOPBACK:
        print(f"janito mcp: warning: {options.host} is not a loopback address and the server "
              "has no authentication: anyone who can reach it can call the exposed tools",
              file=err)
    print(f"janito mcp: listening on http://{host}:{port}{options.path}", file=err)
    err.flush()
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
    return 0
