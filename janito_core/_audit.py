"""The audit log: one JSON line per call, appended, in the journal's folder.

``audit.jsonl`` grows to ``max_bytes`` (16 MiB by default), then becomes ``audit.1.jsonl``
(the older ones shift to ``.2``, ``.3``; past ``keep`` files the oldest is let go), so the
log holds at most ``max_bytes * (keep + 1)``. Lines are appended with ``O_APPEND`` in one
write each, so processes sharing the log never interleave inside a line; the rotation
itself takes a lock file so two processes never rotate at once.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

DEFAULT_MAX_BYTES = 16 << 20
DEFAULT_KEEP = 3
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class AuditLog:
    """The audit log of a journal folder (see the module's docstring)."""

    def __init__(self, folder: Path, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 keep: int = DEFAULT_KEEP) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.keep = keep

    @property
    def path(self) -> Path:
        return self.folder / "audit.jsonl"

    def _rotated(self, number: int) -> Path:
        return self.folder / f"audit.{number}.jsonl"

    def append(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str).encode("utf-8", "replace")
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o600)
        except FileNotFoundError:  # the first line: the folder is made only then
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, flags, 0o600)
        try:
            os.write(fd, line + b"\n")
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > self.max_bytes:
            self._rotate()

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
