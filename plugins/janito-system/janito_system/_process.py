"""Running a child process in its own process group, with capped output and a timeout.

The child starts a new session (``start_new_session=True``), so it and everything it
starts share one process group whose id is the child's pid. When the call ends, for any
reason (normal exit, timeout, an interrupt), the whole group gets SIGKILL: no child or
grandchild outlives the call. The group is signalled while the child is still an
unreaped zombie, so its process group id cannot have been reused by then.

Output is read as it arrives and kept up to a cap per stream: the first half and the
last half of the cap, with a marker saying how much was left out in the middle.
A process that leaves the group on purpose (``setsid``, a daemon that double-forks into
a new session) escapes the group kill; reading its output stops shortly after the call
ends so it cannot hold the call open.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

DEFAULT_STREAM_CAP = 40_000
"""Bytes of stdout and of stderr kept per call (half from the start, half from the end)."""

DRAIN_SECONDS = 1.0
"""How long output is still read after the group was killed."""

_READ_SIZE = 65_536
_POLL_MAX = 0.05
_WAIT_MAX = 3600.0  # one select() call; the platform limit is far above, but finite


class CappedBuffer:
    """Keeps the head and the tail of a byte stream, counting what it leaves out."""

    __slots__ = ("_tail", "head", "head_limit", "tail_limit", "total")

    def __init__(self, cap: int = DEFAULT_STREAM_CAP) -> None:
        cap = max(int(cap), 2)
        self.head_limit = cap // 2
        self.tail_limit = cap - self.head_limit
        self.head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self.tail_limit:
                del self._tail[: len(self._tail) - self.tail_limit]

    @property
    def tail(self) -> bytes:
        return bytes(self._tail[-self.tail_limit:]) if self.tail_limit else b""

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        """The kept bytes as text (UTF-8, undecodable bytes replaced), marker included."""
        head = bytes(self.head).decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + tail
        omitted = self.total - len(self.head) - len(self.tail)
        return (
            f"{head}\n[... truncated: {omitted} of {self.total} bytes omitted from the "
            f"middle ...]\n{tail}"
        )


class Outcome:
    """What became of one child process."""

    __slots__ = ("duration_ms", "exit_code", "interrupted", "notes", "output_incomplete",
                 "stderr", "stdout", "timed_out")

    def __init__(self, *, exit_code: int | None, timed_out: bool, interrupted: bool,
                 duration_ms: int, stdout: CappedBuffer | None, stderr: CappedBuffer | None,
                 output_incomplete: bool = False) -> None:
        self.exit_code = exit_code
        self.timed_out = timed_out
        self.interrupted = interrupted
        self.duration_ms = duration_ms
        self.stdout = stdout
        self.stderr = stderr
        self.output_incomplete = output_incomplete
        self.notes: list[str] = []

    def streams(self) -> dict[str, Any]:
        """``stdout``/``stderr`` text and their truncation flags, for a tool result."""
        out: dict[str, Any] = {}
        for name, buffer in (("stdout", self.stdout), ("stderr", self.stderr)):
            if buffer is None:
                continue
            out[name] = buffer.text()
            out[f"{name}_truncated"] = buffer.truncated
            out[f"{name}_bytes"] = buffer.total
        return out


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group ``pgid``; a group already gone is fine."""
    try:
        os.killpg(pgid, 9)  # SIGKILL; the signal module is not imported on every start
    except (ProcessLookupError, PermissionError):
        pass


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the child has exited, without reaping it (its pid keeps the group id)."""
    waitid = getattr(os, "waitid", None)
    if waitid is not None and hasattr(os, "WNOWAIT"):
        try:
            return waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


def _open_pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


def run_process(
    argv: list[str],
    *,
    cwd: str,
    timeout: float | None,
    env: dict[str, str] | None = None,
    capture_stdout: bool = True,
    capture_stderr: bool = True,
    stream_cap: int = DEFAULT_STREAM_CAP,
    input_data: bytes | None = None,
) -> Outcome:
    """Run ``argv`` in ``cwd`` and collect what it prints; OSError when it cannot start.

    The child's stdin carries ``input_data`` and then end-of-file (empty by default).
    """
    import selectors
    import subprocess

    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL if input_data is None else subprocess.PIPE,
        stdout=subprocess.PIPE if capture_stdout else subprocess.DEVNULL,
        stderr=subprocess.PIPE if capture_stderr else subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    pgid = proc.pid
    buffers: dict[int, CappedBuffer] = {}
    stdout_buffer = CappedBuffer(stream_cap) if capture_stdout else None
    stderr_buffer = CappedBuffer(stream_cap) if capture_stderr else None
    selector = selectors.DefaultSelector()
    pidfd: int | None = None
    timed_out = interrupted = incomplete = False
    pending = memoryview(input_data or b"")
    stdin_fd: int | None = None
    try:
        if proc.stdin is not None:
            stdin_fd = proc.stdin.fileno()
            os.set_blocking(stdin_fd, False)
            selector.register(stdin_fd, selectors.EVENT_WRITE)
        for stream, buffer in ((proc.stdout, stdout_buffer), (proc.stderr, stderr_buffer)):
            if stream is not None and buffer is not None:
                buffers[stream.fileno()] = buffer
                selector.register(stream.fileno(), selectors.EVENT_READ)
        pidfd = _open_pidfd(proc.pid)
        if pidfd is not None:
            selector.register(pidfd, selectors.EVENT_READ)
        deadline = None if timeout is None else started + timeout
        drain_until: float | None = None
        poll = 0.001
        try:
            while True:
                if drain_until is None and _has_exited(proc):
                    kill_group(pgid)
                    drain_until = time.monotonic() + DRAIN_SECONDS
                if drain_until is not None and not buffers:
                    break
                now = time.monotonic()
                wait: float | None = None
                if drain_until is not None:
                    if now >= drain_until:
                        incomplete = True
                        break
                    wait = drain_until - now
                elif deadline is not None:
                    if now >= deadline:
                        timed_out = True
                        kill_group(pgid)
                        drain_until = now + DRAIN_SECONDS
                        continue
                    wait = deadline - now
                if wait is not None:
                    wait = min(wait, _WAIT_MAX)
                if pidfd is None and drain_until is None:
                    wait = poll if wait is None else min(wait, poll)
                    poll = min(poll * 2, _POLL_MAX)
                for key, _ in selector.select(wait):
                    fd = int(key.fd)
                    if fd == stdin_fd:
                        try:
                            written = os.write(fd, pending[:_READ_SIZE])
                        except BlockingIOError:
                            continue
                        except OSError:  # the child closed its stdin
                            written = len(pending)
                        pending = pending[written:]
                        if not pending:
                            selector.unregister(fd)
                            if proc.stdin is not None:
                                proc.stdin.close()
                            stdin_fd = None
                        continue
                    if fd == pidfd:
                        selector.unregister(fd)
                        os.close(fd)
                        pidfd = None
                        poll = 0.001
                        continue
                    try:
                        data = os.read(fd, _READ_SIZE)
                    except OSError:
                        data = b""
                    if data:
                        buffers[fd].feed(data)
                    else:
                        selector.unregister(fd)
                        del buffers[fd]
        except KeyboardInterrupt:
            interrupted = True
            kill_group(pgid)
    finally:
        kill_group(pgid)
        selector.close()
        if pidfd is not None:
            os.close(pidfd)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
            pass
    duration_ms = int((time.monotonic() - started) * 1000)
    exit_code = proc.returncode
    outcome = Outcome(
        exit_code=None if (timed_out or interrupted) else exit_code,
        timed_out=timed_out,
        interrupted=interrupted,
        duration_ms=duration_ms,
        stdout=stdout_buffer,
        stderr=stderr_buffer,
        output_incomplete=incomplete,
    )
    if incomplete:
        outcome.notes.append(
            "a process that left the call's process group still held the output open; "
            "reading stopped"
        )
    return outcome
