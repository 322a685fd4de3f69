"""The ASGI application of ``janito mcp serve`` over HTTP, for any ASGI server.

Around the MCP SDK's streamable HTTP app (``JanitoServer.http_app``: the MCP endpoint,
behind ``_auth``'s bearer gate when authentication is configured, which also serves the
OAuth protected-resource metadata), in this order for each request:

1. ``GuardMiddleware``: the request's connection, timed and counted by
   ``GuardedH11Protocol`` when the server runs it (uvicorn started by janito, or given
   ``--http janito_mcp.asgi:GuardedH11Protocol``);
2. the health endpoints, unauthenticated, in the shape Kubernetes probes expect:
   ``/healthz`` (liveness: 200 while the process answers) and ``/readyz`` (readiness:
   200, or 503 while shutting down or while the task store does not answer);
3. a connection that arrived on a non-loopback address of a server with no
   authentication is refused 403 (the server was started behind janito's back on a
   public address: ``janito mcp serve`` refuses to start so);
4. ``LoopbackHostCheck`` when ``--host`` is a loopback address (the default);
5. the MCP endpoint.

The lifespan starts and stops what one process owns: the connection table, the task
store and its cancellation listener, and the drain that SIGTERM begins (``_drain``).
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from ._drain import CANCEL_GRACE
from ._guard import (
    STATE_KEY,
    GuardMiddleware,
    LoopbackHostCheck,
    Table,
    fit_descriptors,
    is_loopback,
)

if TYPE_CHECKING:
    from ._auth import BearerAuth
    from ._drain import Drain
    from ._serve import JanitoServer, ServeOptions

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
#: How long the readiness probe waits for the task store to answer.
STORE_PING_TIMEOUT = 1.0


def _plain_json(status: int, body: dict[str, Any]) -> list[dict[str, Any]]:
    data = json.dumps(body).encode("utf-8")
    return [{"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"),
                         (b"content-length", str(len(data)).encode("ascii")),
                         (b"cache-control", b"no-store")]},
            {"type": "http.response.body", "body": data}]


class ServingApp:
    """One server process's ASGI application (see the module's docstring)."""

    def __init__(self, served: JanitoServer, options: ServeOptions, auth: BearerAuth | None,
                 drain: Drain) -> None:
        self.served = served
        self.options = options
        self.auth = auth
        self.drain = drain
        #: the SDK's app, whose lifespan runs its session manager
        self.mcp = served.http_app(options.path, stateless=options.stateless)
        gated = self.mcp if auth is None else auth.wrap(self.mcp, options.path)
        self.routed = GuardMiddleware(self._route)
        self.checked = LoopbackHostCheck(gated, is_loopback(options.host))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        await self.routed(scope, receive, send)

    async def _route(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD"):
            path = scope.get("path")
            if path == LIVENESS_PATH:
                await self._answer(send, 200, {"status": "alive"})
                return
            if path == READINESS_PATH:
                status, body = await self.readiness()
                await self._answer(send, status, body)
                return
        if scope["type"] == "http" and self.auth is None and not self.options.no_auth:
            from ._guard import served_address

            address = served_address(scope)
            if address is not None and not address.is_loopback:
                await self._answer(send, 403, {
                    "error": "this server has no authentication and answers only on a "
                    "loopback address: set the mcp_serve_token secret or --oauth-issuer, or "
                    "serve with --no-auth"})
                return
        await self.checked(scope, receive, send)

    @staticmethod
    async def _answer(send: Any, status: int, body: dict[str, Any]) -> None:
        for message in _plain_json(status, body):
            await send(message)

    async def readiness(self) -> tuple[int, dict[str, Any]]:
        if self.drain.draining:
            return 503, {"status": "draining", "reason": "the server is shutting down"}
        tasks = self.served.tasks
        if tasks is not None:
            import anyio

            try:
                with anyio.fail_after(STORE_PING_TIMEOUT):
                    await tasks.store.ping()
            except Exception as exc:
                return 503, {"status": "unready",
                             "reason": f"the task store does not answer ({type(exc).__name__})"}
        return 200, {"status": "ready"}

    async def _lifespan(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        state = scope.get("state")
        async with AsyncExitStack() as stack:
            try:
                limits, _ = fit_descriptors(self.options.limits)
                if isinstance(state, dict):
                    state[STATE_KEY] = Table(limits)
                self.drain.start()
                if self.served.tasks is not None:
                    await self.served.tasks.start()
                await stack.enter_async_context(self.mcp.router.lifespan_context(self.mcp))
            except Exception as exc:
                await send({"type": "lifespan.startup.failed",
                            "message": f"janito mcp: cannot start: {type(exc).__name__}: {exc}"})
                return
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
            self.drain.stop()
            if self.served.tasks is not None:
                await self.served.tasks.close(CANCEL_GRACE)
        await send({"type": "lifespan.shutdown.complete"})
