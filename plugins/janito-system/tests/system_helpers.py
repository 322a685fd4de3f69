"""Helpers for tests that watch processes come and go."""

from __future__ import annotations

import os
import time
from pathlib import Path


def new_marker() -> str:
    """A string no other process has in its command line: give it to every process of a test.

    Process ids cannot be compared across a sandbox's PID namespace, so tests find the
    processes they started by this marker (``exec -a MARKER sleep``) instead.
    """
    import uuid

    return f"janito-sys-{uuid.uuid4().hex[:12]}"


def survivors(marker: str) -> list[tuple[int, str]]:
    """Live processes (not zombies) whose command line holds ``marker``: (pid, command line)."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        text = cmdline.replace(b"\0", b" ").decode("utf-8", "replace").strip()
        if marker in text and state not in (b"Z", b"X"):
            found.append((int(entry), text))
    return found


def sleepers(marker: str) -> list[tuple[int, str]]:
    """The survivors that are the marked sleepers themselves (``exec -a MARKER``)."""
    return [(pid, text) for pid, text in survivors(marker) if text.startswith(marker)]


def wait_for_sleepers(marker: str, count: int, limit: float = 60.0) -> None:
    """Wait until ``count`` marked sleepers run (AssertionError after ``limit`` seconds)."""
    end = time.monotonic() + limit
    while len(sleepers(marker)) < count:
        assert time.monotonic() < end, f"only {sleepers(marker)} of {count} sleepers started"
        time.sleep(0.02)


def settle(marker: str, limit: float = 60.0) -> list[tuple[int, str]]:
    """The survivors left after a grace period: SIGKILL is delivered asynchronously, and a
    machine running four test workers on two cores may take long to deliver it."""
    end = time.monotonic() + limit
    while True:
        left = survivors(marker)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.02)


def reap(marker: str) -> None:
    """SIGKILL what a failed test left running (only processes carrying its marker)."""
    import signal

    for pid, _ in survivors(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


SYSTEM_FOLDERS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")
"""Where janito may take bubblewrap from, and nowhere else."""


def mechanism_problem(mechanism: str) -> str | None:
    """Why the sandbox mechanism ``mechanism`` cannot run here (None when it can)."""
    from janito_system import _sandbox

    from janito_core.sandbox import SandboxPolicy

    saved = os.environ.get(_sandbox.MECHANISM_ENV)
    os.environ[_sandbox.MECHANISM_ENV] = mechanism
    try:
        choice = _sandbox.choose(SandboxPolicy("workspace-write", "test"), probe=True)
    finally:
        if saved is None:
            del os.environ[_sandbox.MECHANISM_ENV]
        else:
            os.environ[_sandbox.MECHANISM_ENV] = saved
    return None if choice.mechanism == mechanism else choice.why


def system_bwrap() -> list[str]:
    """The bwrap files of the system's own folders, as real paths (what janito may use)."""
    found = []
    for folder in SYSTEM_FOLDERS:
        path = os.path.join(folder, "bwrap")
        if os.path.lexists(path) and os.path.realpath(path) not in found:
            found.append(os.path.realpath(path))
    return found


def with_system_bwrap_replaced(argv: list[str], replacement: str) -> list[str]:
    """``argv`` run in a mount namespace where every system bwrap is ``replacement``
    (``/dev/null``: none is left), so a test can take bubblewrap away for real.

    Needs bubblewrap itself to make the namespace; raises LookupError when there is none
    (then there is nothing to take away, and ``argv`` can run as it is).
    """
    found = system_bwrap()
    if not found:
        raise LookupError("no system bwrap")
    outer = [found[0], "--dev-bind", "/", "/"]
    for path in found:
        outer += ["--ro-bind", replacement, path]
    return [*outer, "--", *argv]
