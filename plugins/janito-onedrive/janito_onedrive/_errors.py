"""Errors of the OneDrive toolset and the redaction that keeps credentials out of results.

Every value that grants access (access and refresh tokens, upload-session URLs,
pre-authenticated download URLs) is registered with :func:`remember_secret` when it is
seen; :func:`redact` removes all of them (in every form janito-core's scrubber knows:
JSON-escaped, base64, URL-encoded), and anything shaped like a bearer token or a JWT,
from any text that may reach a result, a report or the terminal. :data:`LOG_FILTER`
does the same to the log records of msal and its HTTP client.
"""

from __future__ import annotations

import re
from typing import Any

from janito_core.scrub import REDACTED, Scrubber, ScrubFilter

#: Shapes of credentials that are removed even when their value was never seen.
TOKEN_SHAPES = (
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/=!*]+"), "Bearer " + REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*"), REDACTED),
    (re.compile(r"(?i)\b(access_token|refresh_token|tempauth|device_code|client_secret|sig|token)="
                r"[^&\s\"']+"), lambda m: f"{m.group(1)}={REDACTED}"),
)
MAX_REMEMBERED = 2000

#: The credentials seen in this process (the oldest forgotten past MAX_REMEMBERED).
SECRETS = Scrubber(patterns=TOKEN_SHAPES, capacity=MAX_REMEMBERED)
remember_secret = SECRETS.add
redact = SECRETS.text


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

#: msal logs a refused token refresh at DEBUG with the identity service's
#: ``error_description`` verbatim; a service that quotes the refresh token it was sent
#: would otherwise put it in the host's logs.
LOG_FILTER = ScrubFilter(SECRETS)


def install_log_redaction() -> None:
    """Put :data:`LOG_FILTER` on msal's loggers and its HTTP client's (idempotent)."""
    LOG_FILTER.install(LIBRARY_LOGGERS, _LIBRARY_PREFIXES)


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
