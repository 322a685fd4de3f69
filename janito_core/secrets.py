"""The secrets store: keyring when the system has one, a private file otherwise.

``JANITO_SECRET_<NAME>`` in the environment overrides any stored value, which is how CI
and containers pass credentials. Names are case-insensitive identifiers such as
``gmail_password``. The keyring library is imported only when a secret is read or
written without an environment override.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

SERVICE = "janito"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


def config_dir() -> Path:
    """janito's configuration folder: ``JANITO_CONFIG_DIR``, else the XDG config home."""
    explicit = os.environ.get("JANITO_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "janito"


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"invalid secret name {name!r}: use letters, digits and underscores, "
            "starting with a letter"
        )
    return name.lower()


def env_var(name: str) -> str:
    """The environment variable that overrides secret ``name``."""
    return "JANITO_SECRET_" + _check_name(name).upper()


def _usable_keyring() -> object | None:
    """The system keyring backend, or None where only the 'fail' backend is available."""
    try:
        import keyring
        from keyring.backends import fail
    except Exception:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring):
        return None
    try:
        priority = float(getattr(type(backend), "priority", 1))
    except Exception:
        priority = 1
    if priority <= 0:
        return None
    return backend


class _FileStore:
    """Secrets in ``<config>/secrets.json``, readable by the owner only."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "secrets.json"

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _write(self, data: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".secrets.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def get(self, name: str) -> str | None:
        return self._read().get(name)

    def set(self, name: str, value: str) -> None:
        data = self._read()
        data[name] = value
        self._write(data)

    def delete(self, name: str) -> bool:
        data = self._read()
        if name not in data:
            return False
        del data[name]
        self._write(data)
        return True

    def names(self) -> list[str]:
        return sorted(self._read())


class _KeyringStore:
    """Secrets in the system keyring; an index entry remembers the names for listing."""

    _INDEX = "__janito_secret_names__"

    def __init__(self, backend: object) -> None:
        self.backend = backend

    def _names(self) -> list[str]:
        raw = self.backend.get_password(SERVICE, self._INDEX)  # type: ignore[attr-defined]
        try:
            names = json.loads(raw) if raw else []
        except ValueError:
            names = []
        return sorted({str(n) for n in names}) if isinstance(names, list) else []

    def _save_names(self, names: list[str]) -> None:
        self.backend.set_password(SERVICE, self._INDEX, json.dumps(sorted(set(names))))  # type: ignore[attr-defined]

    def get(self, name: str) -> str | None:
        value = self.backend.get_password(SERVICE, name)  # type: ignore[attr-defined]
        return None if value is None else str(value)

    def set(self, name: str, value: str) -> None:
        self.backend.set_password(SERVICE, name, value)  # type: ignore[attr-defined]
        self._save_names([*self._names(), name])

    def delete(self, name: str) -> bool:
        if self.get(name) is None:
            return False
        self.backend.delete_password(SERVICE, name)  # type: ignore[attr-defined]
        self._save_names([n for n in self._names() if n != name])
        return True

    def names(self) -> list[str]:
        return self._names()


def _store() -> _FileStore | _KeyringStore:
    backend = _usable_keyring()
    if backend is not None:
        return _KeyringStore(backend)
    return _FileStore(config_dir())


def backend_name() -> str:
    """Where stored secrets live, for people: the keyring backend or the file path."""
    store = _store()
    if isinstance(store, _KeyringStore):
        return f"keyring ({type(store.backend).__module__}.{type(store.backend).__name__})"
    return f"file {store.path}"


def get_secret(name: str) -> str | None:
    """The value of secret ``name``: the environment override, else the store, else None."""
    key = _check_name(name)
    override = os.environ.get("JANITO_SECRET_" + key.upper())
    if override:
        return override
    try:
        return _store().get(key)
    except Exception:
        return None


def has_secret(name: str) -> bool:
    return get_secret(name) is not None


def set_secret(name: str, value: str) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError("a secret value must be a non-empty string")
    _store().set(_check_name(name), value)


def delete_secret(name: str) -> bool:
    """Remove secret ``name`` from the store; True if it was there."""
    return _store().delete(_check_name(name))


def list_secrets() -> list[str]:
    """Names of the stored secrets and of the environment overrides, never their values."""
    names = set(_store().names())
    for variable in os.environ:
        if variable.startswith("JANITO_SECRET_") and len(variable) > len("JANITO_SECRET_"):
            names.add(variable[len("JANITO_SECRET_") :].lower())
    return sorted(names)
