"""The secrets store: keyring when the system has one, a private file otherwise.

``JANITO_SECRET_<NAME>`` in the environment overrides any stored value, which is how CI
and containers pass credentials. Names are case-insensitive identifiers such as
``gmail_password``. The keyring library is imported only when a secret is read or
written without an environment override.

Changes are read-modify-write under an exclusive lock (``<config>/secrets.lock``), so
concurrent ``set_secret`` calls from threads and processes all land. A store that cannot
be parsed raises :class:`~janito_core.errors.SecretStoreError` naming it, from reads and
writes alike; it is never taken for an empty store and never overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from .config import config_dir, write_private
from .errors import SecretStoreError

SERVICE = "janito"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
LOCK_FILE = "secrets.lock"

__all__ = [
    "SecretStoreError", "backend_name", "config_dir", "delete_secret", "env_var", "get_secret",
    "has_secret", "list_secrets", "set_secret",
]


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


# Threads of one process take this before the file lock: where flock is emulated with
# per-process record locks (some network filesystems) it would not keep them apart, and
# where there is no fcntl at all it is the only lock there is.
_THREADS = threading.Lock()


def _lock_exclusively(fd: int) -> bool:
    """Hold an exclusive lock on ``fd`` against other processes until it is closed.

    False where the platform has no ``fcntl`` (Windows): there, only the threads of one
    process are kept apart, and two processes changing the store at the same moment can
    still lose one change (the store stays whole and parseable either way).
    """
    try:
        import fcntl
    except ImportError:
        return False
    fcntl.flock(fd, fcntl.LOCK_EX)
    return True


@contextlib.contextmanager
def _locked(folder: Path, *, required: bool = True) -> Iterator[None]:
    """The secrets lock: the thread lock, then ``folder/secrets.lock`` locked exclusively.

    A separate lock file, because the store itself is replaced on every write: a lock on
    the old file would not stop a process that has opened the new one. The lock file is
    never removed (removing it would let two processes lock two different files).
    ``required=False``: a folder that cannot hold the lock file leaves only the thread lock.
    """
    with _THREADS:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                         0o600)
        except OSError:
            if required:
                raise
            yield
            return
        try:
            _lock_exclusively(fd)
            yield
        finally:
            os.close(fd)


class _FileStore:
    """Secrets in ``<config>/secrets.json``, readable by the owner only.

    Reads take no lock: every write replaces the file whole (a temporary file in the same
    folder, synced, then renamed over it), so a reader sees one complete version.
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / "secrets.json"

    def _read(self) -> dict[str, str]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, NotADirectoryError):
            return {}
        except OSError as exc:
            raise SecretStoreError(str(self.path), f"cannot be read ({exc.strerror or exc})") from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO would block the read forever
                raise SecretStoreError(str(self.path), "is not a regular file")
            chunks = []
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
        except OSError as exc:
            raise SecretStoreError(str(self.path), f"cannot be read ({exc.strerror or exc})") from exc
        finally:
            os.close(fd)
        raw = b"".join(chunks)
        if not raw.strip():
            return {}  # an empty file holds nothing that could be lost
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise SecretStoreError(str(self.path), f"is not UTF-8 text (byte {exc.start})") from None
        except (ValueError, RecursionError) as exc:
            detail = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
            raise SecretStoreError(str(self.path), f"is not valid JSON ({detail})") from None
        if not isinstance(data, dict):
            raise SecretStoreError(str(self.path), "does not hold a JSON object")
        odd = [k for k, v in data.items() if not isinstance(v, str)]
        if odd:
            raise SecretStoreError(str(self.path), f"holds a value that is not a string ({odd[0]!r})")
        return data

    def _write(self, data: dict[str, str]) -> None:
        write_private(self.path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))

    def get(self, name: str) -> str | None:
        return self._read().get(name)

    def set(self, name: str, value: str) -> None:
        with _locked(self.path.parent):
            data = self._read()
            data[name] = value
            self._write(data)

    def delete(self, name: str) -> bool:
        with _locked(self.path.parent):
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
        if not raw:
            return []
        try:
            names = json.loads(raw)
        except (ValueError, RecursionError):
            names = None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise SecretStoreError(
                f"keyring entry {SERVICE}/{self._INDEX}",
                "(the list of names janito keeps) is not a JSON array of names",
            )
        return sorted(set(names))

    def _save_names(self, names: list[str]) -> None:
        self.backend.set_password(SERVICE, self._INDEX, json.dumps(sorted(set(names))))  # type: ignore[attr-defined]

    def get(self, name: str) -> str | None:
        value = self.backend.get_password(SERVICE, name)  # type: ignore[attr-defined]
        return None if value is None else str(value)

    # The keyring stores each value atomically, but the index of names is read, changed and
    # written back: the secrets lock keeps two of those from crossing.

    def set(self, name: str, value: str) -> None:
        with _locked(config_dir(), required=False):
            names = self._names()  # a broken index refuses before anything is stored
            self.backend.set_password(SERVICE, name, value)  # type: ignore[attr-defined]
            if name not in names:
                self._save_names([*names, name])

    def delete(self, name: str) -> bool:
        with _locked(config_dir(), required=False):
            names = self._names()
            if self.get(name) is None:
                return False
            self.backend.delete_password(SERVICE, name)  # type: ignore[attr-defined]
            self._save_names([n for n in names if n != name])
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
    """The value of secret ``name``: the environment override, else the store, else None.

    Raises SecretStoreError when the store cannot be parsed (an override still wins
    without the store being read). A keyring that fails reads as not holding the secret.
    """
    key = _check_name(name)
    override = os.environ.get("JANITO_SECRET_" + key.upper())
    if override:
        return override
    try:
        return _store().get(key)
    except SecretStoreError:
        raise
    except Exception:
        return None


def has_secret(name: str) -> bool:
    return get_secret(name) is not None


def set_secret(name: str, value: str) -> None:
    """Store secret ``name``; SecretStoreError (nothing changed) if the store cannot be parsed."""
    if not isinstance(value, str) or not value:
        raise ValueError("a secret value must be a non-empty string")
    _store().set(_check_name(name), value)


def delete_secret(name: str) -> bool:
    """Remove secret ``name`` from the store; True if it was there (SecretStoreError, with
    nothing changed, if the store cannot be parsed)."""
    return _store().delete(_check_name(name))


def list_secrets() -> list[str]:
    """Names of the stored secrets and of the environment overrides, never their values."""
    names = set(_store().names())
    for variable in os.environ:
        if variable.startswith("JANITO_SECRET_") and len(variable) > len("JANITO_SECRET_"):
            names.add(variable[len("JANITO_SECRET_") :].lower())
    return sorted(names)
