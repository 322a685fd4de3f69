"""``janito onedrive login|logout|status``, added through the ``janito_register_commands`` hook.

Advertised as the ``janito.plugins`` entry point ``onedrive``. Importing this module
imports neither msal nor the network code: the handlers do, when they run.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from janito_core import hookimpl

from . import _settings

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


@hookimpl
def janito_register_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "onedrive", help="sign in to OneDrive for the onedrive toolset",
        description="Sign in to OneDrive (Microsoft Graph) for the onedrive toolset.",
    )
    sub = parser.add_subparsers(dest="onedrive_command", metavar="ACTION")
    login = sub.add_parser(
        "login", help="sign in with a device code",
        description="Sign in with the device-code flow: open the page shown, enter the code, "
        "and the tokens are kept in janito's secrets store.",
    )
    login.add_argument("--client-id", metavar="ID",
                       help="the application (client) id of your Microsoft Entra app "
                       f"registration (stored as the secret {_settings.CLIENT_ID_SECRET})")
    login.set_defaults(handler=cmd_login)
    logout = sub.add_parser("logout", help="forget the stored OneDrive sign-in")
    logout.set_defaults(handler=cmd_logout)
    status = sub.add_parser("status", help="show whether OneDrive is signed in")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler=cmd_status)
    parser.set_defaults(handler=cmd_status, json=False)


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def cmd_login(args: argparse.Namespace) -> int:
    from ._auth import client_id, device_login
    from ._errors import redact

    client = (getattr(args, "client_id", None) or client_id() or "").strip()
    if not client:
        _err("error: no client id. Register an app in Microsoft Entra (see the janito-onedrive "
             "README) and run `janito onedrive login --client-id <application id>`, or set "
             f"JANITO_SECRET_{_settings.CLIENT_ID_SECRET.upper()}.")
        return EXIT_USAGE
    try:
        import msal  # noqa: F401
    except ImportError:
        _err("error: the msal package is missing; install janito-onedrive again")
        return EXIT_FAILED

    def say(message: str) -> None:
        sys.stdout.write(message + "\n")
        sys.stdout.flush()

    try:
        result = device_login(client, say)
    except KeyboardInterrupt:
        _err("sign-in cancelled")
        return 130
    except Exception as exc:
        text = str(exc).strip()
        _err(redact(f"error: the sign-in failed ({type(exc).__name__}"
                    + (f": {text}" if text else "") + ")"))
        return EXIT_FAILED
    if "error" in result:
        detail = result.get("error_description") or ""
        _err(redact(f"error: the sign-in failed: {result['error']}"
                    + (f" ({detail})" if detail else "")))
        return EXIT_FAILED
    who = result.get("username") or "your account"
    say(f"Signed in to OneDrive as {who}. The onedrive toolset is ready "
        "(janito tools -t onedrive).")
    return EXIT_OK


def cmd_logout(args: argparse.Namespace) -> int:
    from ._auth import logout

    if logout():
        sys.stdout.write("Signed out of OneDrive: the stored tokens were deleted.\n")
    else:
        sys.stdout.write("OneDrive was not signed in.\n")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from ._auth import cached_accounts, client_id, stored_cache

    try:
        client = client_id()
        accounts = cached_accounts(stored_cache())
    except Exception as exc:
        _err(f"error: the secrets store cannot be read ({type(exc).__name__})")
        return EXIT_FAILED
    info: dict[str, Any] = {
        "signed_in": bool(client and accounts),
        "accounts": [str(a.get("username") or "") for a in accounts],
        "client_id_set": bool(client),
        "authority": _settings.authority(),
        "graph_url": _settings.graph_url(),
    }
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
    elif info["signed_in"]:
        names = ", ".join(n for n in info["accounts"] if n) or "an account"
        sys.stdout.write(f"OneDrive: signed in as {names}\n")
    else:
        sys.stdout.write(f"OneDrive: not signed in; {_settings.LOGIN_HINT}\n")
    return EXIT_OK if info["signed_in"] else EXIT_FAILED
