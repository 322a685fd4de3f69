"""Running a child process with capped output, a timeout and cancellation, killed whole.

What contains the processes of a call is the ``Launch`` the caller hands in (see
``_sandbox.py``): a PID namespace under bubblewrap, a supervising child subreaper, or,
where neither exists, the process group. The child always starts a new session
(``start_new_session=True``), so the process group it leads holds everything that does
not move away on purpose. When the call ends for any reason (normal exit, timeout,
cancellation, an interrupt) the group gets SIGKILL; a supervised launch is first asked to
stop (it then kills every descendant, wherever it went). The group is signalled while the
child is still an unreaped zombie, so its process group id cannot have been reused.

Output is read as it arrives and kept up to a cap per stream: the first half and the
last half of the cap, with a marker saying how much was left out in the middle. Without
a namespace or a supervisor, a process that left the group (``setsid``, a daemon that
double-forks) escapes the group kill; reading its output stops shortly after the call
ends so it cannot hold the call open.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from janito_core.results import counted

if TYPE_CHECKING:
    import subprocess

    from janito_core.cancellation import CancelToken

DEFAULT_STREAM_CAP = 40_000
"""Bytes of stdout and of stderr kept per call (half from the start, half from the end)."""

DRAIN_SECONDS = 1.0
"""How long output is still read after the group was killed."""

STOP_SECONDS = 5.0
"""How long a supervisor asked to stop may take to kill its descendants before SIGKILL."""

PROCESS_GROUP = "process group"
"""The mechanism of a launch that only has its process group (``_sandbox`` names the others)."""

_READ_SIZE = 65_536
_POLL_MAX = 0.05
_WAIT_MAX = 3600.0  # one wait of the selector (epoll on Linux): finite on every platform


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
            f"{head}\n[... truncated: {omitted} of {counted(self.total, 'byte')} omitted from the "
            f"middle ...]\n{tail}"
        )


class Launch:
    """How one command starts and how it is stopped: built by ``_sandbox.prepare``.

    ``argv`` and ``env`` are what is executed (the command wrapped in bubblewrap or the
    supervisor, or as it is). ``child_fds`` are passed to the child and closed here once
    it started; ``control`` is kept open for the length of the call and closed to tell a
    supervisor to stop (it also closes if janito dies). ``polite``: ask the child to stop
    (SIGTERM) and give it ``STOP_SECONDS`` before SIGKILL, since it cleans up after the
    command. ``tmpdir``, the call's private temporary folder, is removed at the end.
    ``report``: the read end of a pipe on which the sandbox says whether it ran the command
    to its end (read into ``Outcome.report`` once the child has exited).
    """

    __slots__ = ("argv", "child_fds", "control", "env", "mechanism", "polite", "report",
                 "tmpdir")

    def __init__(self, argv: list[str], env: dict[str, str] | None, *,
                 mechanism: str = PROCESS_GROUP, tmpdir: str | None = None) -> None:
        self.argv = argv
        self.env = env
        self.mechanism = mechanism
        self.tmpdir = tmpdir
        self.child_fds: tuple[int, ...] = ()
        self.control: int | None = None
        self.report: int | None = None
        self.polite = False

    def started(self) -> None:
        """Close this side's copy of what only the child needs."""
        fds, self.child_fds = self.child_fds, ()
        for fd in fds:
            _close(fd)

    def release(self) -> None:
        """Close the control pipe: a supervisor takes it as the order to stop."""
        control, self.control = self.control, None
        if control is not None:
            _close(control)

    def read_report(self) -> bytes | None:
        """What the sandbox wrote on the report pipe, without waiting (None: no pipe)."""
        if self.report is None:
            return None
        chunks = []
        try:
            os.set_blocking(self.report, False)
            while chunk := os.read(self.report, _READ_SIZE):
                chunks.append(chunk)
        except OSError:  # nothing more for now; a writer still alive cannot hold the call
            pass
        return b"".join(chunks)

    def cleanup(self) -> None:
        """Release every descriptor and remove the temporary folder (never raises)."""
        self.started()
        self.release()
        report, self.report = self.report, None
        if report is not None:
            _close(report)
        tmpdir, self.tmpdir = self.tmpdir, None
        if tmpdir is not None:
            import shutil

            shutil.rmtree(tmpdir, ignore_errors=True)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


class Outcome:
    """What became of one child process."""

    __slots__ = ("cancelled", "duration_ms", "exit_code", "interrupted", "notes",
                 "output_incomplete", "report", "stderr", "stdout", "timed_out")

    def __init__(self, *, exit_code: int | None, timed_out: bool, interrupted: bool,
                 duration_ms: int, stdout: CappedBuffer | None, stderr: CappedBuffer | None,
                 output_incomplete: bool = False, cancelled: bool = False,
                 report: bytes | None = None) -> None:
        self.exit_code = exit_code
        self.timed_out = timed_out
        self.interrupted = interrupted
        self.cancelled = cancelled
        self.duration_ms = duration_ms
        self.stdout = stdout
        self.stderr = stderr
        self.output_incomplete = output_incomplete
        self.report = report
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


def _wait_exited(proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Wait up to ``seconds`` for the child to exit, leaving it unreaped."""
    deadline = time.monotonic() + seconds
    pause = 0.0005
    while not _has_exited(proc) and time.monotonic() < deadline:
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def stop(proc: subprocess.Popen[bytes], launch: Launch | None) -> None:
    """End the child and everything it started (idempotent; the child stays unreaped).

    A supervisor is asked first, since only it can reach descendants that left the group.
    """
    if launch is not None and launch.polite and not _has_exited(proc):
        launch.release()
        try:
            os.kill(proc.pid, 15)  # SIGTERM
        except OSError:
            pass
        _wait_exited(proc, STOP_SECONDS)
    kill_group(proc.pid)


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
    launch: Launch | None = None,
    cancel: CancelToken | None = None,
) -> Outcome:
    """Run ``argv`` in ``cwd`` and collect what it prints; OSError when it cannot start.

    ``launch``, when given, replaces ``argv`` and ``env`` with its own (the sandboxed
    command line) and says how to stop it; its temporary folder is removed at the end.
    The child's stdin carries ``input_data`` and then end-of-file (empty by default).
    ``cancel`` ends the run early, as a timeout does, when its token is cancelled.
    """
    import selectors
    import subprocess

    if launch is None:
        launch = Launch(argv, env)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            launch.argv,
            cwd=cwd,
            env=launch.env,
            stdin=subprocess.DEVNULL if input_data is None else subprocess.PIPE,
            stdout=subprocess.PIPE if capture_stdout else subprocess.DEVNULL,
            stderr=subprocess.PIPE if capture_stderr else subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            pass_fds=launch.child_fds,
        )
    except BaseException:
        launch.cleanup()
        raise
    launch.started()
    buffers: dict[int, CappedBuffer] = {}
    stdout_buffer = CappedBuffer(stream_cap) if capture_stdout else None
    stderr_buffer = CappedBuffer(stream_cap) if capture_stderr else None
    selector = selectors.DefaultSelector()
    pidfd: int | None = None
    cancel_fd: int | None = None
    timed_out = interrupted = cancelled = incomplete = False
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
        if cancel is not None:
            cancel_fd = cancel.fileno()
            selector.register(cancel_fd, selectors.EVENT_READ)
        deadline = None if timeout is None else started + timeout
        drain_until: float | None = None
        poll = 0.001
        try:
            while True:
                if drain_until is None and _has_exited(proc):
                    stop(proc, launch)
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
                        stop(proc, launch)
                        drain_until = time.monotonic() + DRAIN_SECONDS
                        continue
                    wait = deadline - now
                if wait is not None:
                    wait = min(wait, _WAIT_MAX)
                if pidfd is None and drain_until is None:
                    wait = poll if wait is None else min(wait, poll)
                    poll = min(poll * 2, _POLL_MAX)
                for key, _ in selector.select(wait):
                    fd = int(key.fd)
                    if fd == cancel_fd:
                        selector.unregister(fd)
                        cancel_fd = None
                        if drain_until is None:
                            cancelled = True
                            stop(proc, launch)
                            drain_until = time.monotonic() + DRAIN_SECONDS
                        continue
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
            stop(proc, launch)
    finally:
        stop(proc, launch)
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
        report = launch.read_report()
        launch.cleanup()
    duration_ms = int((time.monotonic() - started) * 1000)
    exit_code = proc.returncode
    outcome = Outcome(
        exit_code=None if (timed_out or interrupted or cancelled) else exit_code,
        timed_out=timed_out,
        interrupted=interrupted,
        cancelled=cancelled,
        duration_ms=duration_ms,
        stdout=stdout_buffer,
        stderr=stderr_buffer,
        output_incomplete=incomplete,
        report=report,
    )
    if incomplete:
        outcome.notes.append(
            "a process that left the call's process group still held the output open; "
            "reading stopped"
        )
    return outcome
