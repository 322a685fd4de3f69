"""Errors of the OneDrive toolset and the redaction that keeps credentials out of results.

Every value that grants access (access and refresh tokens, upload-session URLs,
pre-authenticated download URLs) is registered with :func:`remember_secret` when it is
seen; :func:`redact` removes all of them, and anything shaped like a bearer token or a
JWT, from any text that may reach a result, a report or the terminal.
"""

from __future__ import annotations

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
