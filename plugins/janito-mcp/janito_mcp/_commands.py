"""The ``janito mcp`` command, added to ``janito`` through the ``janito_register_commands`` hook.

This module is imported whenever janito loads its plugins, so it holds only argparse
definitions: the MCP SDK is imported by the handlers, when a command actually runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from janito_core import hookimpl

from ._limits import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    DEFAULT_SHUTDOWN_GRACE,
)

DEFAULT_PORT = 8000
#: Seconds a call of a client that declared the tasks extension runs before it becomes a task.
DEFAULT_TASK_AFTER = 5.0


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
                       "(otherwise the mcp_serve_token secret or --oauth-issuer is required "
                       "there)")
    serve.add_argument("--oauth-issuer", default=None, dest="mcp_oauth_issuer", metavar="URL",
                       help="with --transport http: accept OAuth access tokens (JWTs) of this "
                       "authorization server instead of the mcp_serve_token secret; their "
                       "scopes janito:read, janito:write and janito:execute grant r, w and x "
                       "(environment: JANITO_MCP_OAUTH_ISSUER)")
    serve.add_argument("--oauth-jwks-uri", default=None, dest="mcp_oauth_jwks_uri", metavar="URL",
                       help="where the issuer's signing keys are (default: read from its "
                       "metadata; environment: JANITO_MCP_OAUTH_JWKS_URI)")
    serve.add_argument("--oauth-resource", default=None, dest="mcp_oauth_resource",
                       metavar="URL",
                       help="this server's URL as clients reach it, which tokens must name as "
                       "their audience (default: the URL served; set it behind a proxy; "
                       "environment: JANITO_MCP_OAUTH_RESOURCE)")
    serve.add_argument("--stateless", action="store_true", dest="mcp_stateless",
                       help="with --transport http: the SDK's stateless streamable HTTP (no "
                       "session: any request may reach any process, behind any load balancer)")
    serve.add_argument("--workers", type=int, default=1, dest="mcp_workers", metavar="N",
                       help="with --transport http --stateless: N uvicorn worker processes "
                       "accept on one port (default 1)")
    serve.add_argument("--task-store", default="memory", dest="mcp_task_store", metavar="URL",
                       help="where MCP tasks are kept: 'memory' (default; one process) or "
                       "redis://HOST:PORT/DB, shared by every worker and instance (needs "
                       "janito-mcp[redis]); 'off' answers every call in its own request")
    serve.add_argument("--task-after", type=float, default=DEFAULT_TASK_AFTER,
                       dest="mcp_task_after", metavar="SECONDS",
                       help="a call still running this long, from a client that declared the "
                       "MCP tasks extension, becomes a task the client polls (default "
                       f"{DEFAULT_TASK_AFTER:g})")
    serve.add_argument("--shutdown-grace", type=float, default=DEFAULT_SHUTDOWN_GRACE,
                       dest="mcp_shutdown_grace", metavar="SECONDS",
                       help="on SIGTERM, how long calls in flight have to finish before they "
                       f"are cancelled (default {DEFAULT_SHUTDOWN_GRACE:g})")
    serve.add_argument("--header-timeout", type=float, default=DEFAULT_HEADER_TIMEOUT,
                       dest="mcp_header_timeout", metavar="SECONDS",
                       help="with --transport http: a connection that has not sent a "
                       "request's complete headers this long after it opened or after its "
                       f"previous response is answered 408 and closed (default "
                       f"{DEFAULT_HEADER_TIMEOUT:g})")
    serve.add_argument("--body-timeout", type=float, default=DEFAULT_BODY_TIMEOUT,
                       dest="mcp_body_timeout", metavar="SECONDS",
                       help="with --transport http: a request body not complete this long "
                       f"after its headers is answered 408 (default {DEFAULT_BODY_TIMEOUT:g})")
    serve.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                       dest="mcp_max_connections", metavar="N",
                       help="with --transport http: connections held at once; more are "
                       f"answered 503 (default {DEFAULT_MAX_CONNECTIONS}, lowered when the "
                       "descriptor limit cannot hold it)")
    serve.add_argument("--max-connections-per-client", type=int,
                       default=DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
                       dest="mcp_max_connections_per_client", metavar="N",
                       help="with --transport http: connections held at once from one client "
                       f"address; more are answered 429 (default "
                       f"{DEFAULT_MAX_CONNECTIONS_PER_CLIENT})")
    serve.add_argument("--ask-timeout", type=float, default=300.0, dest="mcp_ask_timeout",
                       metavar="SECONDS",
                       help="how long the person at the client has to answer a call the "
                       "policy asks about (asked through MCP elicitation); no answer is a no "
                       "(default 300)")
    serve.add_argument("--no-journal", action="store_false", dest="mcp_journal",
                       help="neither journal the changes of calls (no janito undo) nor log "
                       "the calls (janito log)")
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

    imports = commands.add_parser(
        "import",
        help="copy the MCP servers of another client's file into janito's mcp.json",
        description="Copy the servers of an MCP configuration file (Claude Desktop's "
        "mcpServers, VS Code's or Cursor's servers) into the 'mcp' toolset's configuration "
        "file. Entries are checked as janito reads them; one janito cannot use (a "
        "${input:...} prompt, a name janito refuses) is reported and left out.",
    )
    imports.add_argument("source", metavar="PATH", help="the file to import from")
    imports.add_argument("--replace", action="store_true", dest="mcp_replace",
                         help="replace servers of the same name already in janito's file")
    imports.add_argument("--dry-run", action="store_true", dest="mcp_dry_run",
                         help="say what would be imported without writing anything")
    imports.set_defaults(handler=import_command)

    login = commands.add_parser(
        "login",
        help="sign in to a remote MCP server that asks for OAuth",
        description="Sign in to a remote MCP server whose entry has \"oauth\": the "
        "authorization page opens in a browser (or its address is printed), and the tokens "
        "are kept in janito's secrets store, where mounting the server finds them.",
    )
    login.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    login.add_argument("--no-browser", action="store_true", dest="mcp_no_browser",
                       help="only print the address to open")
    login.add_argument("--timeout", type=float, default=300.0, dest="mcp_login_timeout",
                       metavar="SECONDS", help="how long to wait for the browser (default 300)")
    login.set_defaults(handler=login_command)

    logout = commands.add_parser("logout", help="forget the OAuth tokens of a remote MCP server")
    logout.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    logout.set_defaults(handler=logout_command)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def serve_command(args: argparse.Namespace) -> int:
    """Handler of ``janito mcp serve``."""
    from ._serve import serve

    return serve(serve_options(args))


def serve_options(args: argparse.Namespace) -> Any:
    """The ``ServeOptions`` that parsed ``janito mcp serve`` arguments ask for."""
    from ._serve import ServeOptions

    return ServeOptions(
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
        stateless=bool(args.mcp_stateless),
        workers=int(args.mcp_workers),
        header_timeout=float(args.mcp_header_timeout),
        body_timeout=float(args.mcp_body_timeout),
        max_connections=int(args.mcp_max_connections),
        max_connections_per_client=int(args.mcp_max_connections_per_client),
        ask_timeout=float(args.mcp_ask_timeout),
        journal=bool(args.mcp_journal),
        oauth_issuer=args.mcp_oauth_issuer,
        oauth_jwks_uri=args.mcp_oauth_jwks_uri,
        oauth_resource=args.mcp_oauth_resource,
        task_store=str(args.mcp_task_store),
        task_after=float(args.mcp_task_after),
        shutdown_grace=float(args.mcp_shutdown_grace),
    )


def parse_serve_options(argv: list[str]) -> Any:
    """``ServeOptions`` from the options of ``janito mcp serve`` (what ``JANITO_MCP_SERVE``
    holds for the ASGI application); ``janito_core.cli.UsageError`` for a bad one."""
    from janito_core.cli import UsageError

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:
            raise UsageError(f"JANITO_MCP_SERVE: {message}")

    parser = Parser(prog="JANITO_MCP_SERVE", add_help=False)
    add_arguments(parser)
    args = parser.parse_args(["serve", *argv])
    return serve_options(args)


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
            print(f"  {row['name']:<{width}}  {row['permissions'] or '-':<3}  "
                  f"{row['transport']:<5}  {row['target']}" + ("  (oauth)" if row["oauth"] else ""))
    return 0


def import_command(args: argparse.Namespace) -> int:
    """Handler of ``janito mcp import PATH``."""
    from pathlib import Path

    from ._config import ConfigError, config_path
    from ._importing import import_servers

    try:
        report = import_servers(Path(args.source).expanduser(), config_path(),
                                replace=bool(args.mcp_replace), dry_run=bool(args.mcp_dry_run))
    except ConfigError as exc:
        print(f"janito mcp: {exc}", file=sys.stderr)
        return 1
    verb = "would import" if args.mcp_dry_run else "imported"
    if report.imported:
        print(f"{verb} {len(report.imported)} server(s) into {report.target}: "
              + ", ".join(report.imported))
    else:
        print(f"no server {verb} into {report.target}")
    for name, reason in report.kept.items():
        print(f"  kept {name}: {reason}", file=sys.stderr)
    for name, reason in report.refused.items():
        print(f"  left out {name}: {reason}", file=sys.stderr)
    return 1 if report.refused else 0


def login_command(args: argparse.Namespace) -> int:
    """Handler of ``janito mcp login SERVER``."""
    from ._login import login

    return login(args.server, browser=not args.mcp_no_browser, timeout=args.mcp_login_timeout)


def logout_command(args: argparse.Namespace) -> int:
    """Handler of ``janito mcp logout SERVER``."""
    from janito_core.secrets import delete_secret

    from ._config import oauth_secret_name

    if delete_secret(oauth_secret_name(args.server)):
        print(f"forgot the sign-in to the MCP server {args.server!r}")
    else:
        print(f"no sign-in to the MCP server {args.server!r} was stored")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m janito_mcp``: the ``janito mcp`` subcommands on their own."""
    parser = argparse.ArgumentParser(prog="python -m janito_mcp",
                                     description="janito's Model Context Protocol commands")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return int(args.handler(args))
