"""``janito gmail login|logout|status``: signing in to Google for the gmail toolset.

The sign-in is OAuth 2.0 for installed applications: janito listens on a loopback port
(127.0.0.1, a port the system picks), opens Google's consent page in a browser, and
Google sends the browser back to that port with a one-time code, which is traded for
tokens (PKCE, so the code is useless to anyone else). When the browser runs on another
machine (``--no-browser``, or no browser here), its last page cannot load; the person
pastes that page's address into the terminal instead, and janito reads the code from it.
"""

from __future__ import annotations

import argparse
import json
import secrets
import selectors
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

from janito_core.results import counted

from . import _oauth, _settings
from ._settings import (
    CLIENT_ID_SECRET,
    CLIENT_SECRET_SECRET,
    OAUTH_SECRET,
    PASSWORD_SECRET,
    REFRESH_SECRET,
    USERNAME_SECRET,
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
MAIL_SCOPE = "https://mail.google.com/"
PERMISSIONS_PAGE = "https://myaccount.google.com/connections"
CLIENT_HELP = (
    "janito ships no OAuth client: create your own (a \"Desktop app\" client in a Google "
    "Cloud project with the Gmail API enabled; the janito-gmail README shows how), then run "
    "`janito gmail login --client-file client_secret.json` with the JSON file Google gives "
    "you, or `janito gmail login --client-id ID` and type the secret when asked"
)
_PAGE = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>janito</title></head>"
         "<body style=\"font-family: sans-serif\"><h2>{title}</h2><p>{text}</p></body></html>")


class LoginFailed(Exception):
    """The sign-in cannot go on; the message says why and what to do."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Answer:
    """What came back from Google through the browser."""

    code: str | None
    error: str | None = None
    description: str = ""


class Console:
    """Where the command talks to the person; every text passes through the scrubber."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        from janito_core.scrub import Scrubber

        self.out = out
        self.err = err
        self.scrubber = Scrubber()

    def hide(self, *values: str | None) -> None:
        for value in values:
            if value:
                self.scrubber.add(value)

    def say(self, text: str = "") -> None:
        self.out.write(self.scrubber.text(text) + "\n")
        self.out.flush()

    def warn(self, text: str) -> None:
        self.err.write(self.scrubber.text(text) + "\n")
        self.err.flush()


# -- the client -----------------------------------------------------------------------


def _client_from_file(path: str) -> tuple[str, str]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise LoginFailed(f"cannot read the client file {path}: {exc.strerror or exc}",
                          EXIT_USAGE) from None
    except ValueError:
        raise LoginFailed(f"the client file {path} is not JSON; download it again from the "
                          "Google Cloud console (Clients, the download button)",
                          EXIT_USAGE) from None
    section = data.get("installed") or data.get("web") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        raise LoginFailed(f"the client file {path} holds no \"installed\" client; create an "
                          "OAuth client of type \"Desktop app\"", EXIT_USAGE)
    client_id, client_secret = section.get("client_id"), section.get("client_secret")
    if not (isinstance(client_id, str) and client_id and isinstance(client_secret, str)
            and client_secret):
        raise LoginFailed(f"the client file {path} lacks client_id or client_secret",
                          EXIT_USAGE)
    return client_id.strip(), client_secret.strip()


def _ask_secret(client_id: str) -> str:
    if not sys.stdin.isatty():
        value = sys.stdin.readline().strip()
    else:
        import getpass

        value = getpass.getpass(f"Client secret of {client_id}: ").strip()
    if not value:
        raise LoginFailed("no client secret given; " + CLIENT_HELP, EXIT_USAGE)
    return value


def choose_client(args: argparse.Namespace) -> tuple[str, str]:
    """(client id, client secret): from the file, the options, or the secrets store."""
    from janito_core.secrets import get_secret

    if args.client_file:
        return _client_from_file(args.client_file)
    stored_id = get_secret(CLIENT_ID_SECRET)
    stored_secret = get_secret(CLIENT_SECRET_SECRET)
    if args.client_id:
        client_id = args.client_id.strip()
        if args.client_secret:
            return client_id, args.client_secret.strip()
        if client_id == stored_id and stored_secret:
            return client_id, stored_secret
        return client_id, _ask_secret(client_id)
    if stored_id and stored_secret:
        return stored_id, stored_secret
    raise LoginFailed("no OAuth client is configured. " + CLIENT_HELP, EXIT_USAGE)


def _client(client_id: str, client_secret: str) -> _oauth.Client:
    store = _settings._Store()
    return _oauth.Client(
        client_id=client_id,
        client_secret=client_secret,
        auth_url=_settings.setting("oauth_auth_url", store) or _oauth.GOOGLE_AUTH_URL,
        token_url=_settings.setting("oauth_token_url", store) or _oauth.GOOGLE_TOKEN_URL,
        revoke_url=_settings.setting("oauth_revoke_url", store) or _oauth.GOOGLE_REVOKE_URL,
    )


def _network() -> tuple[Any, float]:
    """The TLS context and timeout the token endpoint is reached with (the settings')."""
    ca_file = _settings.setting("ca_file")
    raw = _settings.setting("timeout") or _settings.DEFAULTS["timeout"]
    try:
        timeout = float(raw)
    except ValueError:
        timeout = 30.0
    try:
        return _settings.tls_context(ca_file), timeout
    except _settings.SettingsError as exc:
        raise LoginFailed(str(exc), EXIT_USAGE) from None


# -- waiting for the code ----------------------------------------------------------------


def _answer_from(query: str, state: str) -> Answer | None:
    """The Answer in a redirect's query, or None when it is not meant for this sign-in."""
    fields = {k: v[0] for k, v in parse_qs(query).items()}
    if fields.get("state") != state:
        return None
    if "error" in fields:
        return Answer(None, fields["error"], fields.get("error_description", ""))
    code = fields.get("code")
    return Answer(code) if code else None


def _serve_one(connection: socket.socket, state: str) -> Answer | None:
    """Read one request on the loopback port and answer it with a small page."""
    connection.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data and len(data) < 16384:
            chunk = connection.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    request_line = data.split(b"\r\n", 1)[0].decode("latin-1")
    parts = request_line.split(" ")
    answer = None
    if len(parts) >= 2 and parts[0] == "GET":
        answer = _answer_from(urlsplit(parts[1]).query, state)
    if answer is None:
        status, title, text = "404 Not Found", "Nothing here", "This is janito's sign-in port."
    elif answer.error:
        status, title = "200 OK", "Sign-in not completed"
        text = "Google said: " + _html(answer.error) + ". You can close this tab."
    else:
        status, title = "200 OK", "Signed in"
        text = "janito received the sign-in. You can close this tab and return to the terminal."
    body = _PAGE.format(title=title, text=text).encode("utf-8")
    head = (f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n"
            "Cache-Control: no-store\r\n\r\n").encode("ascii")
    try:
        connection.sendall(head + body)
    except OSError:
        pass
    return answer


def _html(text: str) -> str:
    import html

    return html.escape(text)


def wait_for_answer(listener: socket.socket, state: str, *, paste: TextIO | None,
                    timeout: float, console: Console) -> Answer:
    """The first answer for this sign-in: on the loopback port, or pasted on ``paste``."""
    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    if paste is not None:
        try:
            selector.register(paste, selectors.EVENT_READ, "paste")
        except (ValueError, OSError):  # not something that can be waited on
            paste = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LoginFailed(f"no answer from the browser within {counted(int(timeout), 'second')}; "
                                  "run `janito gmail login` again")
            for key, _events in selector.select(timeout=left):
                if key.data == "listener":
                    connection, _address = listener.accept()
                    with connection:
                        answer = _serve_one(connection, state)
                    if answer is not None:
                        return answer
                    continue
                line = paste.readline() if paste is not None else ""
                if not line:
                    selector.unregister(key.fileobj)
                    paste = None
                    continue
                text = line.strip()
                if not text:
                    continue
                query = urlsplit(text).query if "?" in text else text
                answer = _answer_from(query, state)
                if answer is None:
                    console.warn("That is not the address of the page Google sent you to "
                                 "for this sign-in (it must hold this sign-in's state and a "
                                 "code). Paste the whole address from the browser's address bar.")
                    continue
                return answer
    finally:
        selector.close()


# -- the commands --------------------------------------------------------------------


def login(args: argparse.Namespace, console: Console) -> int:
    from janito_core.secrets import get_secret, set_secret

    client_id, client_secret = choose_client(args)
    console.hide(client_secret)
    client = _client(client_id, client_secret)
    context, timeout = _network()
    try:
        listener = socket.create_server(("127.0.0.1", args.port or 0))
    except OSError as exc:
        raise LoginFailed(f"cannot listen on 127.0.0.1:{args.port or 0} for Google's answer "
                          f"({exc.strerror or exc}); choose another --port", EXIT_USAGE) from None
    with listener:
        port = int(listener.getsockname()[1])
        redirect_uri = f"http://127.0.0.1:{port}/"
        verifier, challenge = _oauth.pkce_pair()
        state = secrets.token_urlsafe(24)
        hint = args.user or get_secret(USERNAME_SECRET)
        url = _oauth.authorization_url(client, redirect_uri, state=state, challenge=challenge,
                                       login_hint=hint)
        opened = False
        if not args.no_browser:
            try:
                import webbrowser

                opened = webbrowser.open(url, new=1)
            except Exception:
                opened = False
        if opened:
            console.say("A browser window opened at Google's sign-in page. If it did not, "
                        "open this address:")
        else:
            console.say("Open this address in a browser (on this machine or any other) and "
                        "sign in to Google:")
        console.say()
        console.say("    " + url)
        console.say()
        if not opened:
            console.say("After you allow access, the browser goes to an address starting with "
                        f"{redirect_uri}. On this machine janito receives it by itself; from "
                        "another machine the page will not load: copy its whole address from "
                        "the address bar and paste it here.")
        console.say(f"Waiting for the sign-in (at most {counted(int(args.timeout), 'second')})...")
        # a pasted address is taken even when a browser opened: it may be on another screen
        answer = wait_for_answer(listener, state, paste=sys.stdin, timeout=args.timeout,
                                 console=console)
    if answer.error:
        detail = f" ({answer.description})" if answer.description else ""
        raise LoginFailed(f"Google did not grant access: {answer.error}{detail}")
    assert answer.code is not None
    try:
        tokens = _oauth.exchange_code(client, answer.code, verifier, redirect_uri,
                                      context=context, timeout=timeout)
    except _oauth.OAuthError as exc:
        hint = (" check the client id and secret;" if exc.error == "invalid_client" else "")
        raise LoginFailed(f"the token endpoint refused the sign-in ({exc});{hint} run "
                          "`janito gmail login` again") from None
    except OSError as exc:
        raise LoginFailed(f"cannot reach the token endpoint {client.token_url}: "
                          f"{getattr(exc, 'reason', None) or exc}") from None
    console.hide(tokens.access_token, tokens.refresh_token)
    if tokens.scope and MAIL_SCOPE not in tokens.scope.split():
        raise LoginFailed("the sign-in did not grant access to Gmail (the box \"Read, compose, "
                          "send and permanently delete all your email\" must be ticked on the "
                          "consent page); run `janito gmail login` again")
    if not tokens.refresh_token:
        raise LoginFailed("Google sent no refresh token, so the sign-in could not last; remove "
                          f"janito's access at {PERMISSIONS_PAGE} and run `janito gmail login` "
                          "again")
    account = tokens.email or args.user or get_secret(USERNAME_SECRET)
    if args.user and tokens.email and tokens.email.lower() != args.user.lower():
        raise LoginFailed(f"you signed in as {tokens.email}, not {args.user}; run the command "
                          f"again and choose {args.user} in the browser (nothing was stored)")
    if not account:
        raise LoginFailed("Google did not say which account signed in; run `janito gmail login "
                          "--user you@gmail.com`", EXIT_USAGE)
    set_secret(USERNAME_SECRET, account)
    set_secret(CLIENT_ID_SECRET, client_id)
    set_secret(CLIENT_SECRET_SECRET, client_secret)
    set_secret(REFRESH_SECRET, tokens.refresh_token)
    _oauth.cache_tokens(client, tokens.refresh_token, tokens.access_token, tokens.expires_at)
    console.say(f"Signed in to Google as {account}; the sign-in is kept in janito's secrets "
                "store and renewed by itself.")
    if get_secret(PASSWORD_SECRET) or get_secret(OAUTH_SECRET):
        console.say(f"(The stored {PASSWORD_SECRET} or {OAUTH_SECRET} is no longer used; "
                    "`janito secrets delete NAME` removes it.)")
    if args.check:
        status = _check(console)
        if status != EXIT_OK:
            return status
    console.say("Try it: janito run -t gmail ReadEmails --limit 5")
    return EXIT_OK


def _check(console: Console) -> int:
    """Log in to the IMAP server with the new sign-in, as the tools will."""
    from ._errors import MailError
    from ._imap import imap_session
    from ._settings import Settings, SettingsError

    try:
        settings = Settings.load()
        console.hide(*settings.secrets())
        with imap_session(settings) as mailbox:
            status = mailbox.client.folder_status("INBOX", ["MESSAGES"])
        console.hide(*settings.secrets())
    except (MailError, SettingsError) as exc:
        console.warn(f"The sign-in is stored, but the IMAP server did not accept it: {exc}")
        return EXIT_FAILED
    count = int(status.get(b"MESSAGES", 0))
    console.say(f"Checked: {settings.imap_host} accepted the sign-in ({counted(count, 'message')} in "
                "INBOX).")
    return EXIT_OK


def logout(args: argparse.Namespace, console: Console) -> int:
    from janito_core.secrets import delete_secret, get_secret

    refresh_token = get_secret(REFRESH_SECRET)
    if not refresh_token:
        console.say("Not signed in to Google: there is no stored sign-in.")
        return EXIT_OK
    console.hide(refresh_token)
    client_id = get_secret(CLIENT_ID_SECRET)
    client_secret = get_secret(CLIENT_SECRET_SECRET)
    revoked = False
    if client_id and client_secret:
        console.hide(client_secret)
        context, timeout = _network()
        try:
            _oauth.revoke(_client(client_id, client_secret), refresh_token, context=context,
                          timeout=timeout)
            revoked = True
        except _oauth.OAuthError as exc:
            revoked = exc.error in ("invalid_token", "invalid_grant")  # dead already
            if not revoked:
                console.warn(f"Google did not confirm the revocation ({exc}).")
        except OSError as exc:
            console.warn(f"Google could not be reached to revoke the sign-in "
                         f"({getattr(exc, 'reason', None) or exc}).")
    delete_secret(REFRESH_SECRET)
    _oauth.forget_stored_access_token()
    _oauth.clear_process_cache()
    if args.forget_client:
        delete_secret(CLIENT_ID_SECRET)
        delete_secret(CLIENT_SECRET_SECRET)
    console.say("Signed out: the stored Google sign-in was deleted"
                + (" and revoked at Google." if revoked else "."))
    if not revoked:
        console.say(f"To be sure janito has no access left, remove it at {PERMISSIONS_PAGE}.")
    return EXIT_OK


def status(args: argparse.Namespace, console: Console) -> int:
    from janito_core.secrets import get_secret

    refresh = get_secret(REFRESH_SECRET)
    if refresh:
        method = "google sign-in"
    elif get_secret(OAUTH_SECRET):
        method = "access token"
    elif get_secret(PASSWORD_SECRET):
        method = "password"
    else:
        method = None
    info: dict[str, Any] = {
        "signed_in": bool(method and get_secret(USERNAME_SECRET)),
        "method": method,
        "username": get_secret(USERNAME_SECRET),
        "client_id": get_secret(CLIENT_ID_SECRET),
        "imap_host": _settings.setting("imap_host") or _settings.DEFAULTS["imap_host"],
    }
    if refresh and info["client_id"]:
        stored = _oauth._cached_entry(get_secret(_oauth.ACCESS_CACHE_SECRET),
                                      _oauth._grant_key(_client(info["client_id"], "-"), refresh))
        info["access_token_valid_for"] = max(0, int(stored[1] - time.time())) if stored else 0
    if args.json:
        console.say(json.dumps(info, indent=2))
    elif not info["signed_in"]:
        console.say("Gmail: not configured; " + _settings.LOGIN_HINT + ".")
    else:
        line = f"Gmail: {info['username']} via {method} on {info['imap_host']}"
        if method == "google sign-in":
            minutes = info.get("access_token_valid_for", 0) // 60
            line += (f" (current access token good for {minutes} more minutes)" if minutes
                     else " (a new access token is fetched on the next call)")
        console.say(line)
    return EXIT_OK if info["signed_in"] else EXIT_FAILED


def run(command: str, args: argparse.Namespace) -> int:
    from janito_core.errors import SecretStoreError

    console = Console(sys.stdout, sys.stderr)
    handler = {"login": login, "logout": logout, "status": status}[command]
    try:
        return handler(args, console)
    except LoginFailed as exc:
        console.warn(f"error: {exc}")
        return exc.status
    except SecretStoreError as exc:
        console.warn(f"error: {exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        console.warn("sign-in cancelled")
        return 130

