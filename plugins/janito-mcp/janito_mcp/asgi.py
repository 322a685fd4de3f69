"""janito's MCP server as an ASGI application, for the ASGI servers people already run.

    JANITO_MCP_SERVE="-t gmail --stateless" uvicorn --factory janito_mcp.asgi:create_app \\
        --workers 4 --http janito_mcp.asgi:GuardedH11Protocol
    gunicorn -k uvicorn_worker.UvicornWorker 'janito_mcp.asgi:create_app()'
    hypercorn --workers 2 'janito_mcp.asgi:create_app()'

``JANITO_MCP_SERVE`` holds the options of ``janito mcp serve`` as they are written on its
command line (the ones that say where to listen are the ASGI server's business, and
``--host`` only tells janito whether the address is loopback); the environment is read as
``janito mcp serve`` reads it (secrets, ``JANITO_CONFIG_DIR``, ``JANITO_PRIVATE_NETWORK``).
See docs/deploying.md.
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING, Any

from ._guard import GuardedH11Protocol

if TYPE_CHECKING:
    from ._serve import ServeOptions

__all__ = ["GuardedH11Protocol", "create_app"]


def create_app(options: ServeOptions | None = None) -> Any:
    """The ASGI application of ``janito mcp serve --transport http`` with ``options``, or
    with the options in ``JANITO_MCP_SERVE``. Raises ``janito_core.cli.UsageError`` for
    options ``janito mcp serve`` would refuse (serving a public address without a token)."""
    from ._serve import OPTIONS_ENV, _check_options, build_app

    if options is None:
        from ._commands import parse_serve_options

        argv = shlex.split(os.environ.get(OPTIONS_ENV, ""))
        options = parse_serve_options(["--transport", "http", *argv])
    _check_options(options)
    return build_app(options)
