"""``janito mcp serve``: the loaded janito tools as an MCP server (stdio or streamable HTTP).

Tools are listed with the MCP input schemas of ``janito_core.formats.mcp`` and every call
goes through ``janito_core.dispatch.acall_tool``, so argument validation, privileges and
the ``janito_tool_call`` hook apply exactly as they do for any other caller. An async tool
(``async def run()``, a mounted MCP server's tools among them) is awaited on the server's
event loop; any other runs in a worker thread. Each call has a call id made from the MCP
request id; janito stamps every progress report with the id of the call that made it, and
the reports reach that call's client as MCP progress notifications (when the client asked
for progress) and log messages, and are still rendered on stderr. Nothing but MCP
messages is ever written to stdout.

Each call has a ``CancelToken``: the SDK cancels the request's handler when the client
sends ``notifications/cancelled`` or the session ends (the client disconnected), and the
handler then cancels the token, which a synchronous tool sees as ``self.cancel_token`` and
an async one as ``CancelledError``. Over HTTP the connection a call's request came on is
watched too: in session mode the SDK keeps the handler when it drops, though the answer
could go nowhere else, so the drop cancels the token as well. HTTP connections go through
``_guard`` (read timeouts, connection limits, Host and Origin on loopback). Calls run
under the private-network policy of the server (refused unless ``--allow-private-network``
or ``JANITO_PRIVATE_NETWORK=allow``). Over HTTP, every request to the endpoint carries a
bearer token when one is configured (``_auth``): the ``mcp_serve_token`` secret, or an
OAuth access token of the configured issuer, whose scopes then bound the tools listed
and callable in that request.

HTTP is served by an ASGI application (``_app``, made by ``janito_mcp.asgi:create_app``)
that any ASGI server runs; ``janito mcp serve`` runs it in uvicorn, in one process or in
uvicorn's own multiprocess mode (``--workers``). A call of a client that declared the MCP
tasks extension and still runs after ``--task-after`` seconds becomes a task (``_tasks``).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import shlex
import socket
import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from janito_core import Privileges, Registry, failure, hookimpl

from ._asking import (
    APPROVAL_INPUT,
    DEFAULT_ASK_TIMEOUT,
    REQUEST,
    InputRound,
    asks_by_result,
    eliciting_approver,
)
from ._drain import CANCEL_GRACE, DEFAULT_SHUTDOWN_GRACE
from ._guard import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    Limits,
    is_loopback,
)

if TYPE_CHECKING:
    from janito_core.cancellation import CancelToken
    from janito_core.reporter import ReportEvent

    from ._app import ServingApp
    from ._auth import BearerAuth
    from ._tasks import Tasks

SERVER_NAME = "janito"
FORWARDER_PLUGIN = "janito-mcp:report-forwarder"
#: The secret whose value HTTP clients must send as ``Authorization: Bearer <value>``.
TOKEN_SECRET = "mcp_serve_token"
#: The environment variables that configure OAuth when the options do not.
OAUTH_ENV = {"issuer": "JANITO_MCP_OAUTH_ISSUER", "jwks_uri": "JANITO_MCP_OAUTH_JWKS_URI",
             "resource": "JANITO_MCP_OAUTH_RESOURCE"}
#: The secret that seals the ``requestState`` of policy asks, shared by every instance
#: behind one address (else it is derived from the static token they share).
STATE_KEY_SECRET = "mcp_serve_state_key"
#: The environment variable the ASGI application reads its options from: the options of
#: ``janito mcp serve``, as they are written on its command line.
OPTIONS_ENV = "JANITO_MCP_SERVE"
__all__ = ["CANCEL_GRACE", "is_loopback"]
CANCELLED_REASON = "the MCP client cancelled the call or disconnected"
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
    #: Serve HTTP with no authentication even on a non-loopback address.
    no_auth: bool = False
    #: Let tools connect to loopback, private and metadata addresses (GetUrl).
    allow_private_network: bool = False
    #: The SDK's stateless streamable HTTP: every request stands alone.
    stateless: bool = False
    #: uvicorn worker processes accepting on the one listening socket (stateless HTTP only).
    workers: int = 1
    #: Seconds a connection has to send a request's headers, and then its body (HTTP).
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    #: Connections held at once, in all and from one client address (HTTP).
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_connections_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT
    #: Seconds the client's person has to answer a call the policy asks about.
    ask_timeout: float = DEFAULT_ASK_TIMEOUT
    #: Journal every change of a call (``janito undo``) and log every call (``janito log``).
    journal: bool = True
    #: OAuth (HTTP): the issuer whose access tokens are accepted, where its signing keys
    #: are (default: read from its metadata), and this server's resource URL, which tokens
    #: must name as their audience (default: the URL served).
    oauth_issuer: str | None = None
    oauth_jwks_uri: str | None = None
    oauth_resource: str | None = None
    #: Where tasks are kept: ``memory``, ``off`` or a ``redis://`` URL.
    task_store: str = "memory"
    #: Seconds a call of a client that declared the tasks extension runs before it is a task.
    task_after: float = 5.0
    #: Seconds the calls in flight have after SIGTERM before they are cancelled.
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE

    def as_argv(self) -> list[str]:
        """These options as ``janito mcp serve`` takes them (what ``JANITO_MCP_SERVE`` holds
        for the ASGI application), with the workspace made absolute."""
        argv = ["--transport", self.transport, "--host", self.host, "--port", str(self.port),
                "--path", self.path, "--workers", str(self.workers),
                "--workspace", os.path.abspath(self.workspace or os.getcwd()),
                "--header-timeout", repr(self.header_timeout),
                "--body-timeout", repr(self.body_timeout),
                "--max-connections", str(self.max_connections),
                "--max-connections-per-client", str(self.max_connections_per_client),
                "--ask-timeout", repr(self.ask_timeout), "--task-store", self.task_store,
                "--task-after", repr(self.task_after),
                "--shutdown-grace", repr(self.shutdown_grace)]
        for toolset in self.toolsets:
            argv += ["-t", toolset]
        flags = {"-w": self.write, "-x": self.execute, "--no-auth": self.no_auth,
                 "--allow-private-network": self.allow_private_network,
                 "--stateless": self.stateless, "--no-journal": not self.journal}
        for flag, value in (("--oauth-issuer", self.oauth_issuer),
                            ("--oauth-jwks-uri", self.oauth_jwks_uri),
                            ("--oauth-resource", self.oauth_resource)):
            if value:
                argv += [flag, value]
        return argv + [flag for flag, on in flags.items() if on]

    @property
    def limits(self) -> Limits:
        return Limits(self.header_timeout, self.body_timeout, self.max_connections,
                      self.max_connections_per_client)

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

    registry = build(argparse.Namespace(
        toolset=list(options.toolsets), read=True, write=options.write,
        execute=options.execute, workspace=options.workspace, journal=options.journal,
    ))
    # The command's approver prompts on a terminal; a server's person is at the client.
    registry.approver = eliciting_approver(options.ask_timeout)
    return registry


def _caller_of(ctx: Any) -> dict[str, Any]:
    """Who makes a ``tools/call``, as the journal and the audit log record it: the client's
    name and version (from the handshake, or the request's ``_meta`` in the 2026-07-28
    era) and the HTTP session, when there is one."""
    info: Any = None
    session = getattr(ctx, "session", None)
    params = getattr(session, "client_params", None)
    if params is not None:
        info = getattr(params, "client_info", None)
    if info is None:
        meta = getattr(ctx, "meta", None)
        if meta is not None and not isinstance(meta, dict):
            meta = getattr(meta, "model_extra", None) or {}
        info = (meta or {}).get("io.modelcontextprotocol/clientInfo")
    if info is not None and not isinstance(info, dict):
        info = {"name": getattr(info, "name", None), "version": getattr(info, "version", None)}
    caller: dict[str, Any] = {"kind": "mcp"}
    if isinstance(info, dict):
        caller["client"] = info.get("name")
        caller["client_version"] = info.get("version")
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    if headers is not None:
        caller["session"] = headers.get("mcp-session-id")
    return caller


# -- progress reports -> MCP notifications ------------------------------------------------


class _Channel:
    """The notifications of one ``tools/call``, sent on the server's loop.

    A report comes from the tool: on the server's loop itself (an async tool), or from a
    worker thread (any other), which waits until its notification is written.
    """

    def __init__(self, ctx: Any) -> None:
        import asyncio

        self.ctx = ctx
        self.loop = asyncio.get_running_loop()
        self.pending = ""
        self.count = 0
        # The last notification scheduled from the loop's own thread: each waits for the
        # one before, so they reach the client in the order they were reported.
        self.last: Any = None
        #: Once the call became a task, where its reports go instead (``_tasks``): the
        #: request that could carry notifications has been answered.
        self.sink: Any = None

    def send(self, event: ReportEvent) -> None:
        import asyncio

        text = self.pending + str(event.message)
        if "\n" not in event.end:
            self.pending = text + event.end
            return
        self.pending = ""
        if not text.strip():
            return
        if self.sink is not None:
            self.sink.report(text.strip())
            return
        message = self.notify(event.kind, event.tool, text.strip())
        if _running_loop() is self.loop:
            self.last = self.loop.create_task(_after(self.last, message))
            return
        try:
            asyncio.run_coroutine_threadsafe(message, self.loop).result()
        except Exception:
            pass

    async def flush(self) -> None:
        if self.last is not None:
            await _after(self.last, None)
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


def _running_loop() -> Any:
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _after(previous: Any, message: Any) -> None:
    """``message`` (a coroutine, or None) once ``previous`` (a task, or None) is done."""
    import asyncio

    if previous is not None:
        await asyncio.wait((previous,))
    if message is not None:
        await message


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
    """An MCP low-level server whose tools are a registry's loaded tools.

    ``allow_private_network`` is the private-network policy its calls run under.
    ``state_key`` seals the ``requestState`` of input-required results (2026-07-28 era):
    every worker behind one address must share it; without it, a key of this process.
    ``tasks``: the tasks extension, when calls may become tasks.
    """

    def __init__(self, registry: Registry, *, allow_private_network: bool = False,
                 state_key: bytes | None = None,
                 ask_timeout: float = DEFAULT_ASK_TIMEOUT, tasks: Tasks | None = None) -> None:
        import mcp_types as types
        from mcp.server.lowlevel import Server

        from janito_core.formats import mcp as mcp_format

        self.registry = registry
        self.allow_private_network = allow_private_network
        self.tools: dict[str, Any] = {}
        #: The permission letters of each served tool, which a request's scopes must grant.
        self.permissions: dict[str, str] = {}
        self.problems: list[str] = []
        self.forwarder = ReportForwarder()
        self._serial = itertools.count(1)
        self.tasks = tasks
        #: call id -> the cancel token of each call this process runs (a task's included)
        self.running: dict[str, CancelToken] = {}
        for name in registry.names():
            try:
                tool = registry.get(name)
                definition = mcp_format(registry.schema(name),
                                        permissions=registry.get_tool_permissions(name),
                                        open_world=tool is not None and bool(
                                            getattr(tool.tool_class, "open_world", False)))
                # a mounted tool's class declares the schema of the answers janito gives
                declared = getattr(tool.tool_class, "output_schema", None) if tool else None
                if isinstance(declared, dict) and declared:
                    definition["outputSchema"] = copy.deepcopy(declared)
                self.tools[name] = types.Tool.model_validate(definition)
                self.permissions[name] = registry.get_tool_permissions(name) or ""
            except Exception as exc:
                self.problems.append(f"{name}: its schema cannot be served ({exc})")
        registry.plugins.register(self.forwarder, FORWARDER_PLUGIN, "janito-mcp")
        from . import __version__
        from ._skills import SkillResources, serves_skills

        # Resources are served (and the capability declared) only when something serves
        # them: the skills of the skills toolset. Prompts never are: a client asking for
        # them is answered "method not found", as for any capability not declared.
        skills = SkillResources(self._side_call) if serves_skills(self.tools) else None
        self.server: Any = Server(
            SERVER_NAME,
            version=__version__,
            instructions="janito tools. Every result is a JSON object with 'success'; a "
            "failure has 'error' and 'error_type'.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=skills.list_resources if skills else None,
            on_list_resource_templates=skills.list_templates if skills else None,
            on_read_resource=skills.read_resource if skills else None,
            get_tool_input_schema=self._input_schema,
        )
        from ._asking import request_state_boundary

        self.server.middleware.append(request_state_boundary(state_key, ask_timeout))
        if tasks is not None:
            tasks.install(self.server)
        warnings.filterwarnings("ignore", message=r"The logging capability is deprecated",
                                category=Warning)

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.tools.get(name)
        return None if tool is None else dict(tool.input_schema)

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        scopes = token_scopes(ctx)
        if scopes is None:
            return types.ListToolsResult(tools=list(self.tools.values()))
        from ._auth import missing_scopes

        return types.ListToolsResult(tools=[
            tool for name, tool in self.tools.items()
            if not missing_scopes(self.permissions[name], scopes)])

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        import asyncio

        import anyio
        import mcp_types as types

        from janito_core._context import current_caller
        from janito_core.cancellation import CancelToken
        from janito_core.results import CANCELLED

        from ._guard import connection_of

        arguments = dict(params.arguments or {})
        name = str(params.name)
        # Request ids are unique within one session only; HTTP serves several at once.
        call_id = f"mcp-{next(self._serial)}:{ctx.request_id}"
        channel = self.forwarder.channels[call_id] = _Channel(ctx)
        token = self.running[call_id] = CancelToken()
        # The call is a task of its own, so that a cancelled request can tell the tool
        # through the token and give it CANCEL_GRACE to stop before letting go of it.
        loop = asyncio.get_running_loop()
        # the task copies the context as it is now: the approver finds this request in it
        asking = None
        if asks_by_result(ctx.protocol_version):
            asking = InputRound(dict(params.input_responses or {}), params.request_state)
        REQUEST.set((ctx, asking))
        current_caller.set(_caller_of(ctx))
        call = loop.create_task(self._dispatch(call_id, name, arguments, token,
                                               token_scopes(ctx)))
        tasks = self.tasks if self.tasks is not None and self.tasks.wanted(ctx) else None
        # Over HTTP the answer can only travel on the connection the request came on: in
        # session mode the SDK keeps the session (and the handler) when that connection
        # drops, and with no event store nothing could ever resume the stream, so a drop
        # cancels the call as a notifications/cancelled would (until it becomes a task).
        connection = connection_of(ctx.request)
        dropped: asyncio.Future[None] = loop.create_future()

        def on_drop() -> None:
            if not dropped.done():
                dropped.set_result(None)

        def on_end() -> None:
            self.forwarder.channels.pop(call_id, None)
            self.running.pop(call_id, None)

        if connection is not None:
            if connection.closed:
                on_drop()
            else:
                connection.on_close.append(on_drop)
        detached = False
        try:
            await asyncio.wait((call, dropped), return_when=asyncio.FIRST_COMPLETED,
                               timeout=tasks.after if tasks is not None else None)
            if tasks is not None and not call.done() and not dropped.done():
                # a long call of a client that polls: the request is answered with the task
                handle = await tasks.adopt(call, token, channel, ctx, on_end)
                if handle is not None:
                    detached = True
                    return handle
                # the store could not take it: the call is answered in its request
                await asyncio.wait((call, dropped), return_when=asyncio.FIRST_COMPLETED)
            if call.done():
                result = call.result()
                await channel.flush()
            else:
                token.cancel(CANCELLED_REASON)
                await asyncio.wait((call,), timeout=CANCEL_GRACE)
                result = call.result() if call.done() else failure(
                    f"{name}: {CANCELLED_REASON}", CANCELLED, tool=name)
        except anyio.get_cancelled_exc_class():
            if not detached:
                token.cancel(CANCELLED_REASON)
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE):
                    await asyncio.wait((call,))
            raise
        finally:
            if not detached:
                on_end()
            if connection is not None and on_drop in connection.on_close:
                connection.on_close.remove(on_drop)
        if asking is not None and asking.question is not None:
            # the approver asked instead of answering: the call did not run
            return types.InputRequiredResult(input_requests={APPROVAL_INPUT: asking.question},
                                             request_state=asking.question_state)
        text = json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=result,
            is_error=not result.get("success", False),
        )

    def cancel_all(self, reason: str) -> None:
        """Cancel every call this process runs, tasks included (the end of a drain)."""
        for token in list(self.running.values()):
            token.cancel(reason)

    async def _side_call(self, ctx: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool call the server makes to answer a request that is not ``tools/call``
        (reading a skill): the same dispatch, caller and scopes, without progress."""
        from janito_core._context import current_caller

        current_caller.set(_caller_of(ctx))
        call_id = f"mcp-{next(self._serial)}:{ctx.request_id}"
        return await self._dispatch(call_id, name, arguments, None, token_scopes(ctx))

    async def _dispatch(self, call_id: str, name: str, arguments: dict[str, Any],
                        token: CancelToken | None = None,
                        scopes: list[str] | None = None) -> dict[str, Any]:
        """The call through janito's dispatch; ``scopes``, those of the request's access
        token, must grant the tool's permissions. The answer is what a client may be told
        (``_disclosure``: no host paths in a missing tool's load failures)."""
        if name not in self.tools and self.registry.get(name) is not None:
            return failure(f"{name} is not served here", "unknown_tool", tool=name)
        if scopes is not None and name in self.tools:
            from ._auth import missing_scopes

            missing = missing_scopes(self.permissions[name], scopes)
            if missing:
                from janito_core.results import PERMISSION_DENIED

                return failure(
                    f"{name} needs the scope{'s' if len(missing) > 1 else ''} "
                    f"{' and '.join(missing)}, which the access token of this request does "
                    "not carry", PERMISSION_DENIED, tool=name, missing_scopes=missing)
        from janito_core.dispatch import acall_tool
        from janito_core.network import private_network

        from ._disclosure import for_client

        with private_network(self.allow_private_network):
            return for_client(await acall_tool(name, arguments, registry=self.registry,
                                               call_id=call_id, cancel_token=token))

    # -- transports -------------------------------------------------------------------

    async def run_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        if self.tasks is not None:
            await self.tasks.start()
        try:
            async with stdio_server() as (read_stream, write_stream):
                await self.server.run(read_stream, write_stream,
                                      self.server.create_initialization_options())
        finally:
            self.cancel_all(CANCELLED_REASON)
            if self.tasks is not None:
                await self.tasks.close(CANCEL_GRACE)

    def http_app(self, path: str, auth: BearerAuth | None = None, stateless: bool = False,
                 open_paths: tuple[str, ...] = ()) -> Any:
        """The SDK's streamable HTTP app at ``path``; with ``auth``, every request but those
        to ``open_paths`` must carry a bearer token ``auth`` accepts. ``stateless``: the
        SDK's stateless mode, no session between requests."""
        from mcp.server.transport_security import TransportSecuritySettings

        # The SDK checks Host and Origin only for three exact spellings of loopback, and
        # refuses some of their own (LOCALHOST, a Host without a port): LoopbackHostCheck
        # does it for every loopback address instead (see _app).
        unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app = self.server.streamable_http_app(streamable_http_path=path,
                                              stateless_http=stateless,
                                              transport_security=unchecked)
        return app if auth is None else auth.wrap(app, path, open_paths)


def token_scopes(ctx: Any) -> list[str] | None:
    """The scopes of the access token the request of ``ctx`` came with (``_auth`` put it
    in the HTTP scope), or None when it came with none (stdio, HTTP without
    authentication): then the server's own privileges are the only bound."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    access = getattr(user, "access_token", None)
    return None if access is None else list(access.scopes)


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
    print("janito mcp: private network addresses (loopback, private, link-local, metadata) "
          + ("are reachable by the tools" if served.allow_private_network else
             "are refused to the tools (--allow-private-network allows them)"), file=stream)
    if served.tasks is not None:
        from ._taskstore import describe_store

        print(f"janito mcp: a call still running after {options.task_after:g} s becomes an MCP "
              f"task for clients that declared the tasks extension; tasks are kept in "
              f"{describe_store(options.task_store)}", file=stream)
    elif options.task_store == "memory" and options.workers > 1:
        print("janito mcp: calls are not made tasks: with --workers the tasks must be kept "
              "where every worker finds them (--task-store redis://...)", file=stream)
    records = {r.name: r for r in registry.records()}
    width = max((len(n) for n in records), default=0)
    for name in names:
        record = records[name]
        print(f"  {name:<{width}}  {record.permissions or '-':<3}  {record.toolset}", file=stream)
    denied = [r for r in records.values() if r.status == "denied"]
    if denied:
        print("not exposed, privileges not granted: " + ", ".join(
            f"{r.name} ({r.permissions})" for r in denied), file=stream)
    skipped = [r for r in records.values() if r.status in ("skipped", "error")]
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

    from ._taskstore import TaskStoreError

    err = stderr or sys.stderr
    try:
        _check_options(options)
        if options.transport == "http":
            _check_auth(options)
    except (UsageError, LookupError, ValueError) as exc:
        print(f"janito mcp: {exc}", file=err)
        return 2
    sock = None
    if options.transport == "http":
        # bound before anything slow happens (port 0: any free one)
        sock = _listen(options, err)
        if sock is None:
            return 1
    try:
        app = build_app(options, url=served_url(options, sock) if sock is not None else None)
    except (UsageError, LookupError, ValueError, TaskStoreError) as exc:
        print(f"janito mcp: {exc}", file=err)
        if sock is not None:
            sock.close()
        return 2
    served = app.served
    describe_exposure(served.registry, served, options, err)
    try:
        if sock is None:
            import anyio

            anyio.run(served.run_stdio)
            return 0
        return _run_http(app, options, sock, err)
    except KeyboardInterrupt:
        return 130
    finally:
        if sock is not None:
            sock.close()


def build_app(options: ServeOptions, registry: Registry | None = None,
              url: str | None = None) -> ServingApp:
    """The server ``options`` describe: its registry, its tasks, its ASGI application.

    ``url`` is where the MCP endpoint is served, the resource OAuth tokens must name
    unless ``--oauth-resource`` says it (under another ASGI server janito cannot know it,
    and OAuth needs ``--oauth-resource``). Raises ``UsageError`` (bad options, serving
    open on a public address), ``LookupError`` or ``ValueError`` (a toolset or workspace),
    ``TaskStoreError`` (the task store).
    """
    from janito_core.network import ENV_VAR

    from ._app import ServingApp
    from ._drain import Drain
    from ._tasks import Tasks
    from ._taskstore import MemoryTaskStore, open_store

    allow_private = options.allow_private_network or _private_network_from_env()
    auth = http_auth(options, url) if options.transport == "http" else None
    if registry is None:
        registry = build_registry(options)
    registry.names()
    store = open_store(options.task_store)
    if isinstance(store, MemoryTaskStore) and options.workers > 1:
        store = None  # a task would be asked about in processes that never saw it
    if store is not None:
        # the answers to policy asks are taken once in the store every instance shares
        registry.approver = eliciting_approver(options.ask_timeout, ledger=store)
    # Each call runs under the server's choice (JanitoServer sets it per call); threads a
    # tool starts on its own do not inherit that, so the process-wide setting says it too.
    os.environ[ENV_VAR] = "allow" if allow_private else "refuse"
    served = JanitoServer(registry, allow_private_network=allow_private,
                          state_key=state_key(options), ask_timeout=options.ask_timeout,
                          tasks=Tasks(store, options.task_after) if store is not None else None)
    return ServingApp(served, options, auth, Drain(options.shutdown_grace, served.cancel_all))


def state_key(options: ServeOptions) -> bytes | None:
    """The key that seals ``requestState``: from the ``mcp_serve_state_key`` secret, else
    from the secret every instance behind one address shares (the static bearer token;
    OAuth clients hold tokens of their own, so OAuth deployments set the secret), else
    None (a key of this process alone)."""
    import hashlib
    import hmac

    from janito_core.secrets import get_secret

    material = get_secret(STATE_KEY_SECRET)
    if not material and options.transport == "http" and not options.no_auth \
            and oauth_settings(options) is None:
        material = get_secret(TOKEN_SECRET)
    if not material:
        return None
    return hmac.new(material.encode("utf-8", "surrogatepass"), b"janito-mcp requestState",
                    hashlib.sha256).digest()


def _check_options(options: ServeOptions) -> None:
    from janito_core.cli import UsageError

    if options.workers < 1:
        raise UsageError("--workers must be at least 1")
    if options.transport != "http" and (options.stateless or options.workers > 1):
        raise UsageError("--stateless and --workers are for --transport http")
    if options.workers > 1 and not options.stateless:
        raise UsageError("--workers needs --stateless: an MCP session lives in one process, so "
                         "several processes behind one port can only serve stateless requests")
    problems = options.limits.problems()
    for name, value in (("--ask-timeout", options.ask_timeout),
                        ("--shutdown-grace", options.shutdown_grace)):
        if not value > 0:
            problems.append(f"{name} must be a positive number of seconds")
    if not options.task_after >= 0:
        problems.append("--task-after must be a number of seconds, 0 or more")
    if problems:
        raise UsageError("; ".join(problems))


def _private_network_from_env() -> bool:
    from janito_core.network import env_choice

    return env_choice() is True


@dataclass(frozen=True)
class OAuthSettings:
    """Whose access tokens HTTP accepts (``ServeOptions.oauth_*``, else the environment)."""

    issuer: str
    jwks_uri: str | None = None
    resource: str | None = None


def oauth_settings(options: ServeOptions) -> OAuthSettings | None:
    """The OAuth configuration, or None when there is none; UsageError for a bad one."""
    from urllib.parse import urlsplit

    from janito_core.cli import UsageError

    from ._jwt import url_problem

    def chosen(value: str | None, key: str) -> str | None:
        return value or os.environ.get(OAUTH_ENV[key]) or None

    issuer = chosen(options.oauth_issuer, "issuer")
    jwks_uri = chosen(options.oauth_jwks_uri, "jwks_uri")
    resource = chosen(options.oauth_resource, "resource")
    if issuer is None:
        if jwks_uri or resource:
            raise UsageError("--oauth-jwks-uri and --oauth-resource need --oauth-issuer "
                             f"(or {OAUTH_ENV['issuer']})")
        return None
    if options.no_auth:
        raise UsageError("--no-auth and --oauth-issuer contradict each other: choose one")
    problems = [url_problem("--oauth-issuer", issuer)]
    if jwks_uri:
        problems.append(url_problem("--oauth-jwks-uri", jwks_uri))
    if resource:
        parts = urlsplit(resource)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.fragment:
            problems.append(f"--oauth-resource must be this server's http(s) URL without a "
                            f"fragment, got {resource!r}")
    found = [p for p in problems if p]
    if found:
        raise UsageError("; ".join(found))
    return OAuthSettings(issuer, jwks_uri, resource)


def _check_auth(options: ServeOptions) -> None:
    """UsageError when HTTP would be served with authentication configured wrongly, or open
    on an address that is not loopback (checked before anything is bound or loaded)."""
    if oauth_settings(options) is None:
        _http_token(options)


def http_auth(options: ServeOptions, url: str | None) -> BearerAuth | None:
    """What HTTP requires of a request to the server that ``url`` reaches: an OAuth access
    token (when an issuer is configured), the ``mcp_serve_token`` secret, or nothing.

    ``url`` is the resource URL tokens must name when ``--oauth-resource`` does not say
    it (None: unknown, under an ASGI server). Raises UsageError as ``_check_auth`` does.
    """
    from ._auth import BearerAuth, StaticTokenVerifier, scopes_of

    scopes = scopes_of(options.privileges)
    oauth = oauth_settings(options)
    if oauth is not None:
        from ._jwt import JWTVerifier

        resource = oauth.resource or url
        if resource is None:
            from janito_core.cli import UsageError

            raise UsageError("under an ASGI server janito cannot know its own URL: with "
                             "--oauth-issuer, --oauth-resource (or "
                             f"{OAUTH_ENV['resource']}) must say the URL clients reach")
        return BearerAuth(JWTVerifier(oauth.issuer, resource, oauth.jwks_uri), scopes,
                          resource=resource, issuer=oauth.issuer)
    token = _http_token(options)
    return None if token is None else BearerAuth(StaticTokenVerifier(token), scopes)


def _http_token(options: ServeOptions) -> str | None:
    """The static bearer token HTTP requires, or None; UsageError when serving open is not
    allowed."""
    from janito_core.cli import UsageError

    if options.no_auth:
        return None
    from janito_core.secrets import env_var, get_secret

    token = get_secret(TOKEN_SECRET)
    if token:
        return token
    if not is_loopback(options.host):
        raise UsageError(
            f"refusing to serve on {options.host}, which is not a loopback address, without "
            f"authentication: set the secret {TOKEN_SECRET} (janito secrets set {TOKEN_SECRET}, "
            f"or {env_var(TOKEN_SECRET)}) so clients must send it as a bearer token, or name "
            "an OAuth issuer (--oauth-issuer), or pass --no-auth to serve anyone who can "
            "reach the address")
    return None


def _listen(options: ServeOptions, err: TextIO) -> socket.socket | None:
    """The listening socket for HTTP, bound before anything slow happens (port 0: any free one)."""
    import socket

    host = bare_host(options.host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when
    # the listening socket says TCP, and without it small responses wait for delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, options.port))
        # Many clients at once (a load balancer, a benchmark) connect faster than one
        # process accepts; a short queue would refuse them.
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        print(f"janito mcp: cannot listen on {options.host}:{options.port}: {exc.strerror or exc}",
              file=err)
        return None
    return sock


def _run_http(app: ServingApp, options: ServeOptions, sock: socket.socket,
              err: TextIO) -> int:
    """uvicorn on ``sock``: in this process, or in uvicorn's multiprocess mode."""
    import uvicorn

    announce(options, sock, app.auth, err)
    settings: dict[str, Any] = dict(
        log_level="warning", lifespan="on", access_log=False,
        http="janito_mcp._guard:GuardedH11Protocol",
        # the drain cancels what still runs at the grace's end; the server waits for that
        timeout_graceful_shutdown=int(options.shutdown_grace + CANCEL_GRACE + 2))
    if options.workers == 1:
        server = uvicorn.Server(uvicorn.Config(app, **settings))
        server.run(sockets=[sock])
        return 0 if server.started else 1  # the lifespan failed: it said why
    import secrets
    from dataclasses import replace

    from uvicorn.supervisors import Multiprocess

    from janito_core.secrets import env_var

    # Each worker is a fresh interpreter that makes the application from these options
    # (with the resource URL OAuth tokens must name, which only this process knows).
    if app.auth is not None and app.auth.resource is not None:
        options = replace(options, oauth_resource=app.auth.resource)
    os.environ[OPTIONS_ENV] = shlex.join(options.as_argv())
    if state_key(options) is None:
        # one key for every worker: the answer to a question may reach another worker
        os.environ[env_var(STATE_KEY_SECRET)] = secrets.token_urlsafe(32)
    config = uvicorn.Config("janito_mcp.asgi:create_app", factory=True,
                            workers=options.workers, **settings)
    # Workers start as `python -c ...`, which puts the working folder (a workspace a
    # client writes into) first on the import path: they start from the root instead.
    os.chdir("/")
    import inspect

    # uvicorn up to 0.4x takes the function each worker runs; later ones make it themselves
    takes_target = "target" in inspect.signature(Multiprocess).parameters
    extra = {"target": uvicorn.Server(config).run} if takes_target else {}
    Multiprocess(config, sockets=[sock], **extra).run()
    return 0


def bare_host(host: str) -> str:
    """``--host`` without the brackets an IPv6 address may be written with."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def served_url(options: ServeOptions, sock: socket.socket) -> str:
    """The URL of the MCP endpoint as the listening socket serves it."""
    port = sock.getsockname()[1]
    host = bare_host(options.host)
    host = f"[{host}]" if sock.family == socket.AF_INET6 else host
    return f"http://{host}:{port}{options.path}"


def announce(options: ServeOptions, sock: socket.socket, auth: BearerAuth | None,
             err: TextIO) -> None:
    """The lines that say where and how the server listens (tests and scripts read the URL)."""
    from ._guard import describe, fit_descriptors

    # the same fit as each server process makes
    limits, lowered = fit_descriptors(options.limits)
    if lowered:
        print(f"janito mcp: {lowered}", file=err)
    print(f"janito mcp: {describe(limits)}", file=err)
    if auth is None and not is_loopback(options.host):
        print(f"janito mcp: warning: {options.host} is not a loopback address and --no-auth "
              "turned authentication off: anyone who can reach it can call the exposed tools",
              file=err)
    elif auth is None and options.no_auth:
        print("janito mcp: --no-auth: requests are not authenticated", file=err)
    if auth is not None and auth.resource is not None:
        print(f"janito mcp: protected resource metadata at {auth.metadata_url}; the "
              f"{TOKEN_SECRET} secret is not accepted while OAuth is configured", file=err)
    how = auth.describe() if auth is not None else "no authentication"
    mode = ""
    if options.stateless:
        mode = f", stateless, {options.workers} worker{'s' if options.workers != 1 else ''}"
    print(f"janito mcp: listening on {served_url(options, sock)} ({how}{mode})", file=err)
    err.flush()
