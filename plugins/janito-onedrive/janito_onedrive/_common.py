"""What every OneDrive tool shares: the load gate, the client, and failure results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from . import _settings

if TYPE_CHECKING:
    from ._graph import GraphClient


_MEMO_SECONDS = 2.0
_memo: dict[str, Any] = {}


def forget_readiness() -> None:
    """Drop the remembered answer of :func:`not_ready_reason` (after login or logout)."""
    _memo.clear()


def not_ready_reason() -> str | None:
    """Why the OneDrive tools cannot work here, or None when they can.

    Cheap: it reads two secrets and looks for msal without importing it. Loading the
    toolset asks once per tool, so the answer is kept for two seconds (per configuration
    folder and environment) to read the secrets store once rather than eight times.
    """
    import os
    import time

    key = "|".join([os.environ.get("JANITO_CONFIG_DIR", ""), os.environ.get("XDG_CONFIG_HOME", ""),
                    os.environ.get("PYTHON_KEYRING_BACKEND", ""),
                    os.environ.get("JANITO_SECRET_ONEDRIVE_CLIENT_ID", ""),
                    os.environ.get("JANITO_SECRET_ONEDRIVE_TOKEN_CACHE", "")[:64]])
    now = time.monotonic()
    if _memo.get("key") == key and now - _memo.get("at", -1e9) < _MEMO_SECONDS:
        return _memo.get("reason")
    reason = _not_ready_reason()
    _memo.update(key=key, at=now, reason=reason)
    return reason


def _not_ready_reason() -> str | None:
    import importlib.util

    if importlib.util.find_spec("msal") is None:
        return "the msal package is not installed (pip install janito-onedrive)"
    from janito_core.secrets import get_secret

    from ._auth import cached_accounts

    try:
        client = get_secret(_settings.CLIENT_ID_SECRET)
        blob = get_secret(_settings.TOKEN_CACHE_SECRET)
    except Exception as exc:  # a broken secrets store must not break loading
        return f"the secrets store cannot be read ({type(exc).__name__}); {_settings.LOGIN_HINT}"
    if not client or not blob or not cached_accounts(blob):
        return f"OneDrive is not signed in: {_settings.LOGIN_HINT}"
    return None


def gate(cls: Any) -> bool:
    """The body of every OneDrive tool's ``should_load``."""
    reason = not_ready_reason()
    if reason is None:
        return True
    return bool(cls.skip(reason))


def client() -> GraphClient:
    from ._auth import MsalTokenProvider
    from ._graph import GraphClient

    return GraphClient(MsalTokenProvider())


def invalid(message: str, **echo: Any) -> dict[str, Any]:
    return {"success": False, "error": message, "error_type": "invalid_arguments", **echo}


def guarded(tool: Any, body: Callable[[], dict[str, Any]], **echo: Any) -> dict[str, Any]:
    """Run ``body`` and turn every failure into a result that carries no credential."""
    from ._errors import OneDriveError, redact

    try:
        return body()
    except OneDriveError as exc:
        result = exc.result(**echo)
        _report_error(tool, result["error"])
        return result
    except Exception as exc:
        text = str(exc).strip()
        message = redact(f"unexpected {type(exc).__name__}" + (f": {text}" if text else ""))
        _report_error(tool, message)
        return {"success": False, "error": message, "error_type": "tool_exception", **echo}


def _report_error(tool: Any, message: str) -> None:
    try:
        tool.report_error(message)
    except Exception:
        pass


def not_found(kind: str, path: str) -> str:
    return f"no OneDrive {kind} at '{path or '/'}'"
