"""Errors of the OneDrive toolset and the redaction that keeps credentials out of results.

Every value that grants access (access and refresh tokens, upload-session URLs,
pre-authenticated download URLs) is registered with :func:`remember_secret` when it is
seen; :func:`redact` removes all of them, and anything shaped like a bearer token or a
JWT, from any text that may reach a result, a report or the terminal, and
:class:`RedactingFilter` does the same to the log records of msal and its HTTP client.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

_lock = threading.Lock()
_secrets: dict[str, None] = {}  # insertion-ordered set; the oldest go first past the cap
MAX_REMEMBERED = 2000

_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/=!*]+")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*")
_QUERY_SECRET = re.compile(
    r"(?i)\b(access_token|refresh_token|tempauth|device_code|client_secret|sig|token)="
    r"[^&\s\"']+"
)

REDACTED = "[redacted]"


def remember_secret(value: object) -> None:
    """Register a credential so that :func:`redact` removes it wherever it appears."""
    if isinstance(value, str) and len(value) >= 8:
        with _lock:
            _secrets.pop(value, None)
            _secrets[value] = None
            while len(_secrets) > MAX_REMEMBERED:
                del _secrets[next(iter(_secrets))]


def redact(text: object) -> str:
    """``text`` with every known credential and anything token-shaped replaced."""
    result = str(text)
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for value in known:
        if value in result:
            result = result.replace(value, REDACTED)
    result = _BEARER.sub("Bearer " + REDACTED, result)
    result = _JWT.sub(REDACTED, result)
    return _QUERY_SECRET.sub(lambda m: f"{m.group(1)}={REDACTED}", result)


# -- keeping credentials out of the logs of msal and of its HTTP client ---------------

# The loggers msal and requests/urllib3 write to. A filter on a logger sees only the
# records made on that logger (not those its children pass up), so each is named; any
# other logger under these packages that exists when the filter is installed gets it too.
LIBRARY_LOGGERS = (
    "msal", "msal.application", "msal.authority", "msal.broker", "msal.cloudshell",
    "msal.managed_identity", "msal.mex", "msal.region", "msal.telemetry", "msal.token_cache",
    "msal.throttled_http_client", "msal.wstrust_request", "msal.oauth2cli",
    "msal.oauth2cli.assertion", "msal.oauth2cli.authcode", "msal.oauth2cli.oauth2",
    "msal.oauth2cli.oidc", "requests", "urllib3", "urllib3.connection",
    "urllib3.connectionpool", "urllib3.poolmanager", "urllib3.response", "urllib3.util.retry",
)
_LIBRARY_PREFIXES = ("msal.", "requests.", "urllib3.")


class RedactingFilter(logging.Filter):
    """Rewrites a log record with :func:`redact` applied before any handler sees it.

    msal logs a refused token refresh at DEBUG with the identity service's
    ``error_description`` verbatim; a service that quotes the refresh token it was sent
    would put it in the host's logs. The record's message is formatted here, cleaned and
    kept without arguments; a traceback or stack text is cleaned the same way.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a handler would print the raw message and its arguments
            message = f"{record.msg} {record.args!r}"
        record.msg = redact(message)
        record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            cleaned = redact(record.exc_text)
            if cleaned != record.exc_text:
                record.exc_text = cleaned
                record.exc_info = None  # the exception object itself still holds the value
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def install_log_redaction() -> None:
    """Put :class:`RedactingFilter` on msal's loggers and its HTTP client's (idempotent)."""
    names = set(LIBRARY_LOGGERS)
    names.update(name for name in list(logging.Logger.manager.loggerDict)
                 if name.startswith(_LIBRARY_PREFIXES))
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


class OneDriveError(Exception):
    """A failure that becomes a result: one sentence and an ``error_type``."""

    def __init__(self, message: str, error_type: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type
        self.extra = extra

    def result(self, **echo: Any) -> dict[str, Any]:
        """The failed tool result, with the inputs echoed and credentials removed."""
        out: dict[str, Any] = {"success": False, "error": redact(self.message),
                               "error_type": self.error_type}
        for key, value in self.extra.items():
            out[key] = redact(value) if isinstance(value, str) else value
        for key, value in echo.items():
            out.setdefault(key, value)
        return out


class AuthError(OneDriveError):
    """No usable sign-in: not signed in, refresh refused, or the sign-in service unreachable."""

    def __init__(self, message: str, error_type: str = "auth_failed", **extra: Any) -> None:
        super().__init__(message, error_type, **extra)


class GraphError(OneDriveError):
    """Microsoft Graph answered with an error, or could not be reached."""

    def __init__(self, message: str, error_type: str, *, status: int | None = None,
                 code: str | None = None, **extra: Any) -> None:
        if status is not None:
            extra.setdefault("status", status)
        super().__init__(message, error_type, **extra)
        self.status = status
        self.code = code
