"""The audit log: one JSON line per call, appended, in the journal's folder.

``audit.jsonl`` grows to ``max_bytes`` (16 MiB by default), then becomes ``audit.1.jsonl``
(the older ones shift to ``.2``, ``.3``; past ``keep`` files the oldest is let go), so the
log holds at most ``max_bytes * (keep + 1)``. Lines are appended with ``O_APPEND`` in one
write each, so processes sharing the log never interleave inside a line; the rotation
itself takes a lock file so two processes never rotate at once.

A process keeps the log open between lines (an open and a close a call fewer). After each
line it looks the log up by name: when another process rotated it meanwhile, the line went
to the rotated file, which is still part of the log, or, rotated out of it, is written
again to the new one; either way the log is opened afresh for the next line.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

DEFAULT_MAX_BYTES = 16 << 20
DEFAULT_KEEP = 3
_NAME = "audit.jsonl"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def _encoder() -> Callable[[Any], str]:
    """What turns a record into its JSON text, made once: ``json.dumps`` and
    ``JSONEncoder.encode`` build a new C encoder (and run some twenty lines of Python) for
    each call, which a journaled call would do five times. The same text: no ASCII
    escaping, ``str()`` of what JSON has no form for."""
    import json.encoder

    make = getattr(json.encoder, "c_make_encoder", None)
    if make is not None:
        try:
            chunks = make(None, str, json.encoder.encode_basestring, None, ": ", ", ",
                          False, False, True)
        except TypeError:  # another signature: the plain way below
            chunks = None
        if chunks is not None:
            join = "".join
            return lambda value: join(chunks(value, 0))
    return json.JSONEncoder(ensure_ascii=False, default=str).encode


#: A record's JSON text (see :func:`_encoder`); the journal's logs use it too.
ENCODE = _encoder()


class AuditLog:
    """The audit log of a journal folder (see the module's docstring)."""

    def __init__(self, folder: Path, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 keep: int = DEFAULT_KEEP) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()
        self._open: _Open | None = None
        # a line cut short (a full disk) is ended before the next, which would join it
        self._cut = False

    @property
    def path(self) -> Path:
        return self.folder / "audit.jsonl"

    def _rotated(self, number: int) -> Path:
        return self.folder / f"audit.{number}.jsonl"

    def append(self, record: Mapping[str, Any], arguments: str | None = None) -> None:
        """Append ``record`` as one line; ``arguments``, JSON text, as its last field."""
        text = ENCODE(record)
        if arguments is not None:
            text = f'{text[:-1]}, "arguments": {arguments}}}' if text != "{}" else \
                f'{{"arguments": {arguments}}}'
        line = text.encode("utf-8", "replace") + b"\n"
        with self._lock:
            log = self._log()
            if self._cut:
                line = b"\n" + line
            self._cut = True
            _write_all(log.fd, line)
            self._cut = False
            try:
                now = os.stat(_NAME, dir_fd=log.folder_fd)
            except FileNotFoundError:
                now = None
            if now is None or now.st_ino != log.ino:
                # rotated by another process since it was opened: from the next line on,
                # the new file; this one is written there too if it went nowhere
                lost = os.fstat(log.fd).st_nlink == 0
                self.close()
                if lost:
                    log = self._log()
                    _write_all(log.fd, line)
                    now = os.fstat(log.fd)
            size = now.st_size if now is not None else 0
        if size > self.max_bytes:
            self._rotate()

    def _log(self) -> _Open:
        """The log as this process holds it open (opened here after a fork)."""
        log = self._open
        if log is None or log.pid != os.getpid():
            log = self._open = _Open.of(self.folder)
        return log

    def close(self) -> None:
        log, self._open = self._open, None
        if log is not None and log.pid == os.getpid():
            log.close()

    def _rotate(self) -> None:
        with _locked(self.folder / ".audit.lock"):
            try:
                if self.path.stat().st_size <= self.max_bytes:
                    return  # another process rotated it first
            except FileNotFoundError:
                return
            with contextlib.suppress(FileNotFoundError):
                self._rotated(self.keep).unlink()
            for number in range(self.keep - 1, 0, -1):
                with contextlib.suppress(FileNotFoundError):
                    self._rotated(number).rename(self._rotated(number + 1))
            if self.keep > 0:
                self.path.rename(self._rotated(1))
            else:
                self.path.unlink()
        with self._lock:
            self.close()

    def lines(self, since: float | None = None) -> Iterator[dict[str, Any]]:
        """Every line, oldest first (those at or after time ``since`` only, when given)."""
        files = [self._rotated(n) for n in range(self.keep, 0, -1)] + [self.path]
        for path in files:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            for raw in data.splitlines():
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue  # cut short by a killed process or a full disk
                if not isinstance(record, dict):
                    continue
                if since is not None and float(record.get("time") or 0) < since:
                    continue
                yield record


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no locks here: a rotation race loses at most a rotation
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class _Open:
    """The log open for appending in one process: its descriptor, its inode, and a
    descriptor of its folder to look its name up in."""

    __slots__ = ("fd", "folder_fd", "ino", "pid")

    def __init__(self, folder_fd: int, fd: int) -> None:
        self.folder_fd, self.fd = folder_fd, fd
        self.ino, self.pid = os.fstat(fd).st_ino, os.getpid()

    @classmethod
    def of(cls, folder: Path) -> _Open:
        try:
            folder_fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except FileNotFoundError:  # the first line: the folder is made only then
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            folder_fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            fd = os.open(_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _CLOEXEC, 0o600,
                         dir_fd=folder_fd)
        except BaseException:
            os.close(folder_fd)
            raise
        return cls(folder_fd, fd)

    def close(self) -> None:
        for fd in (self.fd, self.folder_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:  # one write in practice: O_APPEND keeps concurrent lines whole
        view = view[os.write(fd, view):]
