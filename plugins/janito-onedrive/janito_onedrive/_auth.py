"""Sign-in: msal's device-code flow, with the token cache kept in janito's secrets store.

The serialised msal token cache lives in the secret ``onedrive_token_cache`` and the
application (client) id in ``onedrive_client_id``. Each tool call reads the cache, asks
msal for a token silently (msal refreshes it with the refresh token when it has
expired) and writes the cache back when msal changed it. msal is imported here only,
inside functions, so importing the toolset never pays for it. Whether the tools can work
here at all (msal installed, an account signed in) is answered here too: every tool's
``should_load`` asks it, and signing in or out forgets the answer.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Protocol

from . import _settings
from ._errors import AuthError, install_log_redaction, redact, remember_secret

_apps: dict[tuple[str, str], Any] = {}
_apps_lock = threading.Lock()
token_lock = threading.RLock()


class TokenProvider(Protocol):
    """Where the Graph client gets its bearer token."""

    def token(self, force_refresh: bool = False) -> str:
        """A valid access token; ``force_refresh`` asks for a new one (after a 401)."""
        ...


def client_id() -> str | None:
    from janito_core.secrets import get_secret

    return get_secret(_settings.CLIENT_ID_SECRET)


def stored_cache() -> str | None:
    from janito_core.secrets import get_secret

    return get_secret(_settings.TOKEN_CACHE_SECRET)


def cached_accounts(blob: str | None) -> list[dict[str, Any]]:
    """The accounts recorded in a serialised msal cache, read without msal."""
    if not blob:
        return []
    try:
        data = json.loads(blob)
    except ValueError:
        return []
    accounts = data.get("Account") if isinstance(data, dict) else None
    if not isinstance(accounts, dict):
        return []
    return [a for a in accounts.values() if isinstance(a, dict)]


def remember_cache_secrets(blob: str | None) -> None:
    """Register every token in a serialised cache for redaction."""
    if not blob:
        return
    try:
        data = json.loads(blob)
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    for kind in ("AccessToken", "RefreshToken", "IdToken"):
        entries = data.get(kind)
        if isinstance(entries, dict):
            for entry in entries.values():
                if isinstance(entry, dict):
                    remember_secret(entry.get("secret"))


def build_app(client: str) -> Any:
    """The msal PublicClientApplication for ``client`` at the configured authority.

    Building one reads the authority's OpenID configuration over the network, so the
    application is kept for the process. Its token cache is a SerializableTokenCache
    that callers load from the secrets store before each use (under ``token_lock``).
    """
    import msal

    install_log_redaction()
    authority = _settings.authority()
    key = (client, authority)
    with _apps_lock:
        app = _apps.get(key)
        if app is None:
            options: dict[str, Any] = {}
            if _settings.custom_authority():
                # A private or local authority is not in Microsoft's instance list.
                options.update(validate_authority=False, instance_discovery=False)
            app = msal.PublicClientApplication(
                client, authority=authority, token_cache=msal.SerializableTokenCache(),
                **options,
            )
            _apps[key] = app
    return app


def forget_apps() -> None:
    """Drop the cached msal applications (after logout, or a settings change)."""
    with _apps_lock:
        _apps.clear()


class MsalTokenProvider:
    """Tokens from msal, silently refreshed, with the cache in the secrets store."""

    def token(self, force_refresh: bool = False) -> str:
        with token_lock:
            return self._token(force_refresh)

    def _token(self, force_refresh: bool) -> str:
        client = client_id()
        blob = stored_cache()
        if not client or not blob or not cached_accounts(blob):
            raise AuthError(f"OneDrive is not signed in; {_settings.LOGIN_HINT}",
                            "auth_required")
        remember_cache_secrets(blob)
        try:
            import msal  # noqa: F401
        except ImportError:
            raise AuthError("the msal package is missing; install janito-onedrive again",
                            "missing_dependency") from None
        try:
            app = build_app(client)
            cache = app.token_cache
            cache.deserialize(blob)
            accounts = app.get_accounts()
            if not accounts:
                raise AuthError(f"OneDrive is not signed in; {_settings.LOGIN_HINT}",
                                "auth_required")
            result = app.acquire_token_silent_with_error(
                list(_settings.SCOPES), account=accounts[0], force_refresh=force_refresh)
        except AuthError:
            raise
        except Exception as exc:
            raise AuthError(
                f"the Microsoft sign-in service could not be reached ({redact(_describe(exc))})",
                "connection_failed") from None
        _save_if_changed(cache)
        if not result or "access_token" not in result:
            reason = ""
            if isinstance(result, dict) and result.get("error"):
                reason = f" ({result['error']})"
            raise AuthError(
                f"the OneDrive sign-in has expired or was revoked{reason}; "
                f"{_settings.LOGIN_HINT} again", "auth_failed")
        token = str(result["access_token"])
        remember_secret(token)
        return token


def _save_if_changed(cache: Any) -> None:
    if getattr(cache, "has_state_changed", False):
        from janito_core.secrets import set_secret

        blob = cache.serialize()
        remember_cache_secrets(blob)
        set_secret(_settings.TOKEN_CACHE_SECRET, blob)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def device_login(client: str, say: Callable[[str], None]) -> dict[str, Any]:
    """Sign in with the device-code flow; store the client id and cache on success.

    ``say`` shows the instructions (the verification URL and the code) to the person.
    Returns msal's result with tokens removed: ``{"username": ...}`` or ``{"error": ...}``.
    """
    from janito_core.secrets import set_secret

    with token_lock:
        app = build_app(client)
        cache = app.token_cache
        cache.deserialize(None)
        return _device_login(app, cache, client, say, set_secret)


def _device_login(app: Any, cache: Any, client: str, say: Callable[[str], None],
                  set_secret: Callable[[str, str], None]) -> dict[str, Any]:
    flow = app.initiate_device_flow(scopes=list(_settings.SCOPES))
    if "user_code" not in flow:
        return {"error": str(flow.get("error") or "device_flow_failed"),
                "error_description": redact(flow.get("error_description") or "")}
    remember_secret(flow.get("device_code"))
    say(str(flow.get("message") or
            f"Open {flow.get('verification_uri')} and enter the code {flow['user_code']}"))
    result = app.acquire_token_by_device_flow(flow)
    if "access_token" not in result:
        return {"error": str(result.get("error") or "sign_in_failed"),
                "error_description": redact(result.get("error_description") or "")}
    remember_secret(result.get("access_token"))
    remember_secret(result.get("refresh_token"))
    set_secret(_settings.CLIENT_ID_SECRET, client)
    blob = cache.serialize()
    remember_cache_secrets(blob)
    set_secret(_settings.TOKEN_CACHE_SECRET, blob)
    forget_readiness()
    claims = result.get("id_token_claims") or {}
    username = claims.get("preferred_username") or claims.get("email") or claims.get("name") or ""
    return {"username": str(username)}


def logout() -> bool:
    """Forget the stored token cache; True if there was one."""
    from janito_core.secrets import delete_secret

    forget_apps()
    forget_readiness()
    try:
        return delete_secret(_settings.TOKEN_CACHE_SECRET)
    except Exception:
        return False


# -- whether the tools can work here (what should_load asks) --------------------------


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

    try:
        client = get_secret(_settings.CLIENT_ID_SECRET)
        blob = get_secret(_settings.TOKEN_CACHE_SECRET)
    except Exception as exc:  # a broken secrets store must not break loading
        return f"the secrets store cannot be read ({type(exc).__name__}); {_settings.LOGIN_HINT}"
    if not client or not blob or not cached_accounts(blob):
        return f"OneDrive is not signed in: {_settings.LOGIN_HINT}"
    return None
