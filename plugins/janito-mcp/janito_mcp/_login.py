"""``janito mcp login SERVER``: the one place a person signs in to an OAuth-protected server.

It connects to the server with the SDK's OAuth provider in its interactive form: the
authorization page is opened in a browser (``--no-browser``: only printed on stderr), the
browser comes back to a listener on 127.0.0.1, the code is exchanged (PKCE) and the
tokens land in janito's secrets store. The server's tools are then listed once, to show
that the sign-in works.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from typing import Any

from janito_core.scrub import Scrubber


def login(name: str, *, browser: bool = True, timeout: float = 300.0) -> int:
    from ._config import ConfigError, config_path, load_config

    try:
        config = load_config(config_path())
    except ConfigError as exc:
        print(f"janito mcp: {exc}", file=sys.stderr)
        return 1
    server = next((s for s in config.servers if s.name == name), None)
    if server is None:
        reason = config.errors.get(name)
        print(f"janito mcp: no usable server {name!r} in {config.path}"
              + (f": {reason}" if reason else ""), file=sys.stderr)
        return 1
    if server.oauth is None or server.url is None:
        print(f"janito mcp: the server {name!r} does not sign in with OAuth (add \"oauth\": true "
              "to its entry if it should)", file=sys.stderr)
        return 1
    import anyio

    secrets = Scrubber()
    try:
        count = anyio.run(_sign_in, server, secrets, browser, timeout)
    except KeyboardInterrupt:
        print("janito mcp: sign-in cancelled", file=sys.stderr)
        return 130
    except Exception as exc:
        from ._client import describe

        print(secrets.text(f"janito mcp: the sign-in to {name!r} failed: {describe(exc)}"),
              file=sys.stderr)
        return 1
    print(f"Signed in to the MCP server {name!r}: it offers {count} tool(s). The tokens are in "
          "janito's secrets store.")
    return 0


async def _sign_in(server: Any, secrets: Scrubber, browser: bool, timeout: float) -> int:
    import mcp_types
    from mcp.client import Client

    from . import __version__
    from ._client import remote_transport
    from ._config import expand
    from ._oauth import CallbackListener, SecretTokenStorage, provider

    assert server.oauth is not None and server.url is not None
    listener = CallbackListener(server.oauth.redirect_port)
    try:
        storage = SecretTokenStorage(server, secrets)
        storage.forget_client_unless(listener.redirect_uri)
        # A new sign-in replaces the old tokens: without this the provider would use them.
        storage._write(tokens=None, expires_at=None)

        def show(address: str) -> None:
            print(f"Open this address to sign in to the MCP server {server.name!r}:\n  {address}",
                  file=sys.stderr, flush=True)
            if browser:
                import webbrowser

                try:
                    webbrowser.open(address)
                except Exception:
                    pass

        auth = provider(server, expand(server.url, secrets), secrets,
                        redirect_uri=listener.redirect_uri, on_authorize=show,
                        wait_for_code=lambda: listener.wait(timeout))
        async with AsyncExitStack() as stack:
            transport = await remote_transport(server, stack, secrets, auth)
            client = await stack.enter_async_context(Client(
                transport, cache=None,
                client_info=mcp_types.Implementation(name="janito", version=__version__)))
            tools = await client.list_tools()
            return len(tools.tools)
    finally:
        listener.close()
