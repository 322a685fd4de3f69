"""The ``janito mcp`` command, added to ``janito`` through the ``janito_register_commands`` hook.

This module is imported whenever janito loads its plugins, so it holds only argparse
definitions: the MCP SDK is imported by the handlers, when a command actually runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from janito_core import hookimpl

DEFAULT_PORT = 8000


@hookimpl
def janito_register_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``janito mcp`` with its ``serve`` and ``servers`` subcommands."""
    parser = subparsers.add_parser(
        "mcp",
        help="serve janito's tools over MCP; list the MCP servers the 'mcp' toolset mounts",
        description="Model Context Protocol: serve janito's tools to MCP clients "
        "(janito mcp serve) and inspect the MCP servers mounted by the 'mcp' toolset "
        "(janito mcp servers).",
    )
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` and ``servers`` subcommands, on ``parser``."""
    from janito_core.cli import registry_options

    commands = parser.add_subparsers(dest="mcp_command", metavar="COMMAND")
    parser.set_defaults(handler=lambda args: _usage(parser))

    serve = commands.add_parser(
        "serve",
        parents=[registry_options()],
        help="serve the loaded tools to MCP clients (stdio or streamable HTTP)",
        description="Serve janito's tools over the Model Context Protocol. Read-only by "
        "default (-r is always granted): tools that write (-w) or execute (-x) are exposed "
        "only when granted explicitly. What is exposed is listed on stderr.",
    )
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                       dest="mcp_transport", help="stdio (default) or streamable HTTP")
    serve.add_argument("--host", default="127.0.0.1", dest="mcp_host", metavar="HOST",
                       help="address to listen on with --transport http (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, dest="mcp_port", metavar="PORT",
                       help=f"port for --transport http (default {DEFAULT_PORT}; 0 picks a free one)")
    serve.add_argument("--path", default="/mcp", dest="mcp_path", metavar="PATH",
                       help="URL path of the MCP endpoint with --transport http (default /mcp)")
    serve.add_argument("--no-auth", action="store_true", dest="mcp_no_auth",
                       help="serve HTTP without authentication, even on a non-loopback --host "
                       "(otherwise the mcp_serve_token secret is required there)")
    serve.add_argument("--allow-private-network", action="store_true",
                       dest="mcp_allow_private_network",
                       help="let tools such as GetUrl reach loopback, private, link-local and "
                       "cloud metadata addresses (refused by default when serving)")
    serve.set_defaults(handler=serve_command)

    servers = commands.add_parser(
        "servers",
        help="list the MCP servers configured for the 'mcp' toolset",
        description="List the MCP servers of the 'mcp' toolset's configuration file "
        "without starting them.",
    )
    servers.add_argument("--json", action="store_true", dest="mcp_json",
                         help="print a JSON list instead of a table")
    servers.set_defaults(handler=servers_command)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def serve_command(args: argparse.Namespace) -> int:
    """Handler of ``janito mcp serve``."""
    from ._serve import ServeOptions, serve

    options = ServeOptions(
        toolsets=tuple(args.toolset),
        write=bool(args.write),
        execute=bool(args.execute),
        transport=args.mcp_transport,
        host=args.mcp_host,
        port=int(args.mcp_port),
        path=args.mcp_path,
        workspace=args.workspace,
        no_auth=bool(args.mcp_no_auth),
        allow_private_network=bool(args.mcp_allow_private_network),
    )
    return serve(options)


def servers_command(args: argparse.Namespace) -> int:
    """Handler of ``janito mcp servers``."""
    import json

    from ._config import ConfigError, config_path, load_config

    path = config_path()
    try:
        config = load_config(path)
    except ConfigError as exc:
        print(f"janito mcp: {exc}", file=sys.stderr)
        return 1
    rows = [server.as_row() for server in config.servers]
    rows.extend({"name": name, "error": reason} for name, reason in config.errors.items())
    if args.mcp_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not config.exists:
        print(f"no MCP servers configured: {path} does not exist", file=sys.stderr)
        return 0
    print(f"MCP servers in {path}:")
    width = max((len(r["name"]) for r in rows), default=4)
    for row in rows:
        if "error" in row:
            print(f"  {row['name']:<{width}}  error: {row['error']}")
        else:
            print(f"  {row['name']:<{width}}  {row['permissions'] or '-':<3}  {row['target']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m janito_mcp``: the ``janito mcp`` subcommands on their own."""
    parser = argparse.ArgumentParser(prog="python -m janito_mcp",
                                     description="janito's Model Context Protocol commands")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return int(args.handler(args))
