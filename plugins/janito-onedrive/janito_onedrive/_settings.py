"""Settings of the OneDrive toolset: environment variables and secret names.

Importing this module costs nothing beyond ``os``; the tools read it in ``should_load``.
"""

from __future__ import annotations

import os

GRAPH_URL_ENV = "JANITO_ONEDRIVE_GRAPH_URL"
DEFAULT_GRAPH_URL = "https://graph.microsoft.com/v1.0"

AUTHORITY_ENV = "JANITO_ONEDRIVE_AUTHORITY"
DEFAULT_AUTHORITY = "https://login.microsoftonline.com/common"

TIMEOUT_ENV = "JANITO_ONEDRIVE_TIMEOUT"
MAX_RETRIES_ENV = "JANITO_ONEDRIVE_MAX_RETRIES"
MAX_RETRY_WAIT_ENV = "JANITO_ONEDRIVE_MAX_RETRY_WAIT"
SIMPLE_UPLOAD_LIMIT_ENV = "JANITO_ONEDRIVE_SIMPLE_UPLOAD_LIMIT"
CHUNK_SIZE_ENV = "JANITO_ONEDRIVE_CHUNK_SIZE"

CLIENT_ID_SECRET = "onedrive_client_id"
TOKEN_CACHE_SECRET = "onedrive_token_cache"

# Delegated permission the tools need; msal adds openid, profile and offline_access itself.
SCOPES: tuple[str, ...] = ("Files.ReadWrite",)

# Upload fragments must be multiples of 320 KiB (Microsoft Graph upload sessions).
FRAGMENT_UNIT = 320 * 1024
DEFAULT_CHUNK_SIZE = 16 * FRAGMENT_UNIT  # 5 MiB
DEFAULT_SIMPLE_UPLOAD_LIMIT = 4 * 1024 * 1024

LOGIN_HINT = "run `janito onedrive login` to sign in"


def graph_url() -> str:
    """The Microsoft Graph base URL, without a trailing slash."""
    return (os.environ.get(GRAPH_URL_ENV) or DEFAULT_GRAPH_URL).rstrip("/")


def authority() -> str:
    """The sign-in authority (``https://login.microsoftonline.com/<tenant>``)."""
    return (os.environ.get(AUTHORITY_ENV) or DEFAULT_AUTHORITY).rstrip("/")


def custom_authority() -> bool:
    """Whether the authority was set by hand (then msal skips its authority validation)."""
    return bool(os.environ.get(AUTHORITY_ENV))


def _number(name: str, default: float, low: float, high: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return min(max(value, low), high)


def timeout() -> float:
    """Seconds one HTTP request may take."""
    return _number(TIMEOUT_ENV, 60.0, 1.0, 3600.0)


def max_retries() -> int:
    """How many times a throttled (429) or unavailable (503) request is tried again."""
    return int(_number(MAX_RETRIES_ENV, 4, 0, 20))


def max_retry_wait() -> float:
    """The longest Retry-After janito waits out; a longer one becomes a ``throttled`` result."""
    return _number(MAX_RETRY_WAIT_ENV, 60.0, 0.0, 3600.0)


def simple_upload_limit() -> int:
    """Files up to this many bytes are uploaded in one PUT; larger ones use a session."""
    return int(_number(SIMPLE_UPLOAD_LIMIT_ENV, DEFAULT_SIMPLE_UPLOAD_LIMIT, 0, 250 * 1024 * 1024))


def chunk_size() -> int:
    """Bytes per upload-session fragment, rounded down to a multiple of 320 KiB."""
    raw = int(_number(CHUNK_SIZE_ENV, DEFAULT_CHUNK_SIZE, FRAGMENT_UNIT, 60 * 1024 * 1024))
    return max(FRAGMENT_UNIT, raw - raw % FRAGMENT_UNIT)
