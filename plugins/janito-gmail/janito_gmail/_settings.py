"""Where the mail tools connect and as whom: settings and credentials.

Credentials live in the janito-core secrets store: ``gmail_username``,
``gmail_password`` (an app password for Gmail) and ``gmail_oauth_token`` (an OAuth 2
access token; when set, XOAUTH2 is used instead of the password). Each can be overridden
by ``JANITO_SECRET_GMAIL_<NAME>`` in the environment, as janito-core does for every secret.

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
=============  =================  ===========================================
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field

USERNAME_SECRET = "gmail_username"
PASSWORD_SECRET = "gmail_password"
OAUTH_SECRET = "gmail_oauth_token"

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
            f"set it with `janito secrets set {USERNAME_SECRET}`, then "
            f"`janito secrets set {PASSWORD_SECRET}` (an app password)"
        )
    if store.names is not None:
        configured = PASSWORD_SECRET in store.names or OAUTH_SECRET in store.names
    else:
        configured = bool(_secret(PASSWORD_SECRET) or _secret(OAUTH_SECRET))
    if not configured:
        return (
            f"no mail password is configured: the secret {PASSWORD_SECRET} is not set; "
            f"set it with `janito secrets set {PASSWORD_SECRET}` (for Gmail an app password), "
            f"or set {OAUTH_SECRET} to use an OAuth token"
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
        if not (password or oauth_token):
            raise SettingsError(f"the secret {PASSWORD_SECRET} is empty; set it with "
                                f"`janito secrets set {PASSWORD_SECRET}`")
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
        return cls(
            username=username,
            password=password,
            oauth_token=oauth_token,
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

    def ssl_context(self) -> ssl.SSLContext:
        """A verifying TLS context: the system's trust store plus ``ca_file`` if set.

        Certificate and host name checks are always on; a private server's certificate is
        trusted by naming it (or its CA) in ``ca_file``, never by turning checks off.
        """
        try:
            stamp = os.stat(self.ca_file).st_mtime_ns if self.ca_file else 0
        except OSError:
            stamp = -1
        key = (self.ca_file, stamp)
        context = _CONTEXTS.get(key)
        if context is None:
            context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
            if self.ca_file:
                try:
                    context.load_verify_locations(cafile=self.ca_file)
                except (OSError, ssl.SSLError) as exc:
                    raise SettingsError(
                        f"the setting ca_file ({self.ca_file}) holds no usable certificate: "
                        f"{exc}"
                    ) from None
            _CONTEXTS.clear()  # keep one: settings rarely change within a process
            _CONTEXTS[key] = context
        return context

    def secrets(self) -> list[str]:
        """The credentials to keep out of every text (``janito_core.scrub`` also finds them
        in the forms they travel in, such as the base64 of ``AUTH PLAIN`` and XOAUTH2)."""
        return [secret for secret in (self.password, self.oauth_token) if secret]


def known_secrets() -> list[str]:
    """The configured secret values (for scrubbing), without needing valid settings."""
    from janito_core.errors import SecretStoreError

    try:
        return [value for value in (_secret(PASSWORD_SECRET), _secret(OAUTH_SECRET)) if value]
    except SecretStoreError:
        return []  # nothing can be read, so nothing read can leak
