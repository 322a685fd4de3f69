"""Where the mail tools connect and as whom: settings and credentials.

Credentials live in the janito-core secrets store: ``gmail_username``, and one way to
log in, tried in this order:

- ``gmail_oauth_refresh_token`` with ``gmail_oauth_client_id`` and
  ``gmail_oauth_client_secret``, as ``janito gmail login`` stores them: access tokens are
  obtained and renewed from it (``_oauth.py``) and used with XOAUTH2;
- ``gmail_oauth_token``: an OAuth 2 access token obtained elsewhere, used as it is;
- ``gmail_password`` (an app password for Gmail).

Each can be overridden by ``JANITO_SECRET_GMAIL_<NAME>`` in the environment, as
janito-core does for every secret.

Every other setting is read from ``JANITO_GMAIL_<NAME>`` in the environment, else from the
secret ``gmail_<name>``, else its default (Gmail's servers):

=============  =================  ===========================================
name           default            meaning
=============  =================  ===========================================
imap_host      imap.gmail.com     IMAP server
imap_port      993 / 143          993 for ``ssl``, 143 for ``starttls``/``none``
imap_tls       ssl                ``ssl`` (implicit TLS), ``starttls`` or ``none``
smtp_host      smtp.gmail.com     SMTP server
smtp_port      587 / 465 / 25     587 for ``starttls``, 465 for ``ssl``, 25 for ``none``
smtp_tls       starttls           ``ssl``, ``starttls`` or ``none``
ca_file        (system store)     PEM file of certificates to trust in addition
timeout        30                 seconds to wait for a server before giving up
from_address   the username       the From address of SendEmail
trash_folder   (found by LIST)    folder TrashEmails moves to
oauth_*_url    Google's           ``oauth_auth_url``, ``oauth_token_url``,
                                  ``oauth_revoke_url``: the OAuth endpoints
=============  =================  ===========================================
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ._oauth import AccessTokens, Client

USERNAME_SECRET = "gmail_username"
PASSWORD_SECRET = "gmail_password"
OAUTH_SECRET = "gmail_oauth_token"
REFRESH_SECRET = "gmail_oauth_refresh_token"
CLIENT_ID_SECRET = "gmail_oauth_client_id"
CLIENT_SECRET_SECRET = "gmail_oauth_client_secret"
LOGIN_HINT = ("run `janito gmail login` to sign in with Google, or set an app password "
              f"with `janito secrets set {PASSWORD_SECRET}`")

TLS_MODES = ("ssl", "starttls", "none")
DEFAULTS = {
    "imap_host": "imap.gmail.com",
    "imap_tls": "ssl",
    "smtp_host": "smtp.gmail.com",
    "smtp_tls": "starttls",
    "timeout": "30",
}
IMAP_PORTS = {"ssl": 993, "starttls": 143, "none": 143}
SMTP_PORTS = {"ssl": 465, "starttls": 587, "none": 25}
# Loading the system's trust store costs tens of milliseconds; reuse the context.
_CONTEXTS: dict[tuple[str | None, int], ssl.SSLContext] = {}


class SettingsError(ValueError):
    """A setting holds a value that cannot work (the message names the setting)."""


def _secret(name: str) -> str | None:
    from janito_core.errors import SecretStoreError
    from janito_core.secrets import get_secret

    try:
        value = get_secret(name)
    except SecretStoreError:
        raise  # a store that cannot be parsed must be named, not read as "not configured"
    except Exception:
        return None
    return value or None


class _Store:
    """One look at the secrets store: which names exist, then values of those only.

    A keyring lookup can cost a round trip to a desktop service, so the settings that
    are not stored at all are not asked for one by one.
    """

    def __init__(self) -> None:
        from janito_core.errors import SecretStoreError
        from janito_core.secrets import list_secrets

        try:
            self.names: set[str] | None = {n.lower() for n in list_secrets()}
        except SecretStoreError:
            raise
        except Exception:  # a keyring that fails: ask for each value instead
            self.names = None

    def has(self, name: str) -> bool:
        return self.names is None or name in self.names

    def get(self, name: str) -> str | None:
        return _secret(name) if self.has(name) else None


def setting(name: str, store: _Store | None = None) -> str | None:
    """``JANITO_GMAIL_<NAME>``, else the secret ``gmail_<name>``, else None."""
    value = os.environ.get("JANITO_GMAIL_" + name.upper())
    if value:
        return value.strip()
    stored = (store or _Store()).get("gmail_" + name)
    return stored.strip() if stored else None


def missing_credentials(store: _Store | None = None) -> str | None:
    """Why the tools cannot log in here, or None when credentials are configured."""
    store = store or _Store()
    if not (store.has(USERNAME_SECRET) and store.get(USERNAME_SECRET)) and \
            not os.environ.get("JANITO_GMAIL_USERNAME"):
        return (
            f"no mail account is configured: the secret {USERNAME_SECRET} is not set; "
            "run `janito gmail login` to sign in with Google, or set it with "
            f"`janito secrets set {USERNAME_SECRET}`, then "
            f"`janito secrets set {PASSWORD_SECRET}` (an app password)"
        )
    ways = (REFRESH_SECRET, OAUTH_SECRET, PASSWORD_SECRET)
    if store.names is not None:
        configured = any(name in store.names for name in ways)
    else:
        configured = any(_secret(name) for name in ways)
    if not configured:
        return (
            f"no way to log in is configured: run `janito gmail login` to sign in with "
            f"Google, or, for an app password, the secret {PASSWORD_SECRET}: set it with "
            f"`janito secrets set {PASSWORD_SECRET}`"
        )
    return None


def _port(name: str, default: int, store: _Store) -> int:
    raw = setting(name, store)
    if raw is None:
        return default
    try:
        port = int(raw)
    except ValueError:
        raise SettingsError(f"the setting {name} must be a port number, not {raw!r}") from None
    if not 0 < port < 65536:
        raise SettingsError(f"the setting {name} must be a port between 1 and 65535")
    return port


def _tls(name: str, store: _Store) -> str:
    value = (setting(name, store) or DEFAULTS[name]).lower()
    if value not in TLS_MODES:
        raise SettingsError(f"the setting {name} must be one of ssl, starttls, none, "
                            f"not {value!r}")
    return value


@dataclass(frozen=True)
class Settings:
    """One call's connection settings and credentials (secrets never in ``repr``)."""

    username: str
    password: str | None = field(repr=False)
    oauth_token: str | None = field(repr=False)
    refresh_token: str | None = field(repr=False)
    client: Client | None = field(repr=False)
    imap_host: str
    imap_port: int
    imap_tls: str
    smtp_host: str
    smtp_port: int
    smtp_tls: str
    ca_file: str | None
    timeout: float
    from_address: str
    trash_folder: str | None
    tokens: AccessTokens | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls) -> Settings:
        """Read the settings now; SettingsError names the first that cannot work."""
        store = _Store()
        problem = missing_credentials(store)
        if problem:
            raise SettingsError(problem)
        username = (store.get(USERNAME_SECRET) or os.environ.get("JANITO_GMAIL_USERNAME")
                    or "").strip()
        password = store.get(PASSWORD_SECRET)
        oauth_token = store.get(OAUTH_SECRET)
        refresh_token = store.get(REFRESH_SECRET)
        if not (password or oauth_token or refresh_token):
            raise SettingsError(f"the secret {PASSWORD_SECRET} is empty; set it with "
                                f"`janito secrets set {PASSWORD_SECRET}`")
        client = oauth_client(store) if refresh_token else None
        imap_tls = _tls("imap_tls", store)
        smtp_tls = _tls("smtp_tls", store)
        raw_timeout = setting("timeout", store) or DEFAULTS["timeout"]
        try:
            timeout = float(raw_timeout)
        except ValueError:
            raise SettingsError(f"the setting timeout must be a number of seconds, "
                                f"not {raw_timeout!r}") from None
        if not 0 < timeout <= 3600:
            raise SettingsError("the setting timeout must be between 0 and 3600 seconds")
        ca_file = setting("ca_file", store)
        if ca_file and not os.path.isfile(ca_file):
            raise SettingsError(f"the setting ca_file names {ca_file!r}, which is not a file")
        settings = cls(
            username=username,
            password=password,
            oauth_token=oauth_token,
            refresh_token=refresh_token,
            client=client,
            imap_host=setting("imap_host", store) or DEFAULTS["imap_host"],
            imap_port=_port("imap_port", IMAP_PORTS[imap_tls], store),
            imap_tls=imap_tls,
            smtp_host=setting("smtp_host", store) or DEFAULTS["smtp_host"],
            smtp_port=_port("smtp_port", SMTP_PORTS[smtp_tls], store),
            smtp_tls=smtp_tls,
            ca_file=ca_file,
            timeout=timeout,
            from_address=setting("from_address", store) or username,
            trash_folder=setting("trash_folder", store),
        )
        if client is not None and refresh_token:
            from ._oauth import ACCESS_CACHE_SECRET, AccessTokens

            tokens = AccessTokens(client, refresh_token, context=settings.ssl_context(),
                                  timeout=timeout, stored=store.get(ACCESS_CACHE_SECRET))
            object.__setattr__(settings, "tokens", tokens)  # frozen: set once, here
        return settings

    @property
    def uses_oauth(self) -> bool:
        """Whether the servers are logged in to with XOAUTH2 (else with the password)."""
        return bool(self.tokens or self.oauth_token)

    def access_token(self) -> str | None:
        """The XOAUTH2 access token to log in with now (renewed first if it is about to
        expire), or None when the password is used. MailError when no token can be had."""
        if self.tokens is None:
            return self.oauth_token
        return self._token(self.tokens.current)

    def renew_access_token(self) -> str | None:
        """A new access token after a server refused one that came from a cache; None when
        there is nothing new to try (a static token, or the refused one was just issued)."""
        if self.tokens is None:
            return None
        return self._token(self.tokens.renew)

    def _token(self, obtain: Callable[[], str | None]) -> str | None:
        from ._errors import MailError, classify
        from ._oauth import OAuthError

        assert self.tokens is not None and self.client is not None
        endpoint = self.client.token_url
        try:
            return obtain()
        except OAuthError as exc:
            if exc.needs_login:
                self.tokens.forget()
                raise login_required(self.username, exc) from None
            raise MailError("server_error", f"the OAuth token endpoint {endpoint} answered "
                                            f"with an error: {exc}; try again later") from None
        except OSError as exc:
            reason = getattr(exc, "reason", None)
            cause = reason if isinstance(reason, BaseException) else exc
            raise classify(cause, server=endpoint, protocol="OAuth token endpoint") from None

    def ssl_context(self) -> ssl.SSLContext:
        """A verifying TLS context: the system's trust store plus ``ca_file`` if set."""
        return tls_context(self.ca_file)

    def secrets(self) -> list[str]:
        """The credentials to keep out of every text (``janito_core.scrub`` also finds them
        in the forms they travel in, such as the base64 of ``AUTH PLAIN`` and XOAUTH2),
        with every access token obtained so far."""
        values = [self.password, self.oauth_token, self.refresh_token,
                  self.client.client_secret if self.client else None]
        if self.tokens is not None:
            values.extend(self.tokens.known())
        return [secret for secret in values if secret]


def tls_context(ca_file: str | None) -> ssl.SSLContext:
    """A verifying TLS context: the system's trust store plus ``ca_file`` if set.

    Certificate and host name checks are always on; a private server's certificate is
    trusted by naming it (or its CA) in ``ca_file``, never by turning checks off.
    """
    try:
        stamp = os.stat(ca_file).st_mtime_ns if ca_file else 0
    except OSError:
        stamp = -1
    key = (ca_file, stamp)
    context = _CONTEXTS.get(key)
    if context is None:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if ca_file:
            try:
                context.load_verify_locations(cafile=ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise SettingsError(
                    f"the setting ca_file ({ca_file}) holds no usable certificate: {exc}"
                ) from None
        _CONTEXTS.clear()  # keep one: settings rarely change within a process
        _CONTEXTS[key] = context
    return context


def oauth_client(store: _Store | None = None) -> Client:
    """The person's OAuth client from the secrets store; SettingsError when incomplete."""
    from ._oauth import GOOGLE_AUTH_URL, GOOGLE_REVOKE_URL, GOOGLE_TOKEN_URL, Client

    store = store or _Store()
    client_id = store.get(CLIENT_ID_SECRET)
    client_secret = store.get(CLIENT_SECRET_SECRET)
    for name, value in ((CLIENT_ID_SECRET, client_id), (CLIENT_SECRET_SECRET, client_secret)):
        if not value:
            raise SettingsError(f"the secret {name} is not set, so the stored Google sign-in "
                                "cannot be renewed; run `janito gmail login` again")
    assert client_id and client_secret
    return Client(
        client_id=client_id.strip(),
        client_secret=client_secret.strip(),
        auth_url=setting("oauth_auth_url", store) or GOOGLE_AUTH_URL,
        token_url=setting("oauth_token_url", store) or GOOGLE_TOKEN_URL,
        revoke_url=setting("oauth_revoke_url", store) or GOOGLE_REVOKE_URL,
    )


def login_required(username: str, exc: Exception) -> Exception:
    """The one result for a sign-in that only a new ``janito gmail login`` can repair."""
    from ._errors import LOGIN_REQUIRED, MailError

    return MailError(
        LOGIN_REQUIRED,
        f"the Google sign-in of {username} is no longer valid ({exc}): it has expired or "
        "was revoked; run `janito gmail login` to sign in again",
    )


def known_secrets() -> list[str]:
    """The configured secret values (for scrubbing), without needing valid settings."""
    from janito_core.errors import SecretStoreError

    names = (PASSWORD_SECRET, OAUTH_SECRET, REFRESH_SECRET, CLIENT_SECRET_SECRET)
    try:
        return [value for value in (_secret(name) for name in names) if value]
    except SecretStoreError:
        return []  # nothing can be read, so nothing read can leak
