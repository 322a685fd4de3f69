"""``janito gmail login|logout|status``, added through the ``janito_register_commands`` hook.

Advertised as the ``janito.plugins`` entry point ``gmail``. Importing this module costs
only argparse set-up; the sign-in code (``_login``) is imported when a handler runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from janito_core import hookimpl


@hookimpl
def janito_register_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "gmail", help="sign in to Gmail for the gmail toolset",
        description="Sign in to Google for the gmail toolset (OAuth for installed apps, "
        "with your own OAuth client), sign out, or show how the toolset logs in.",
    )
    sub = parser.add_subparsers(dest="gmail_command", metavar="ACTION")
    login = sub.add_parser(
        "login", help="sign in with Google in a browser",
        description="Open Google's consent page, receive the answer on a loopback port "
        "(or as a pasted address), and keep the refresh token in janito's secrets store. "
        "The client comes from --client-file, --client-id, or the one stored last time.",
    )
    login.add_argument("--client-file", metavar="JSON",
                       help="the client_secret_....json file of your Desktop app OAuth client")
    login.add_argument("--client-id", metavar="ID", help="the OAuth client id")
    login.add_argument("--client-secret", metavar="SECRET",
                       help="the client secret (asked without echo when left out)")
    login.add_argument("--user", metavar="ADDRESS",
                       help="the Gmail address to sign in as (suggested to Google, then checked)")
    login.add_argument("--no-browser", action="store_true",
                       help="print the address instead of opening a browser, and accept the "
                       "final address pasted back (for a machine without a browser)")
    login.add_argument("--port", type=int, default=0, metavar="N",
                       help="the loopback port to receive the answer on (default: any free one)")
    login.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                       help="how long to wait for the browser (default 300)")
    login.add_argument("--no-check", dest="check", action="store_false",
                       help="do not log in to the IMAP server afterwards to check the sign-in")
    login.set_defaults(handler=_handler("login"))
    logout = sub.add_parser("logout", help="revoke and delete the stored Google sign-in")
    logout.add_argument("--forget-client", action="store_true",
                        help="also delete the stored OAuth client id and secret")
    logout.set_defaults(handler=_handler("logout"))
    status = sub.add_parser("status", help="show how the gmail toolset logs in")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler=_handler("status"))
    parser.set_defaults(handler=_handler("status"), json=False)


def _handler(command: str) -> Any:
    def handle(args: argparse.Namespace) -> int:
        from ._login import run

        return run(command, args)

    return handle
