"""A deadline for one call made from the command line, which ends it whatever the tool does.

``call_tool(timeout=...)`` tells the tool through its cancellation token when the time
is up, and a tool that listens stops and answers ``timeout`` (janito-system's run tools
end every process of the call then). A tool that does not listen would hold the command
forever, so :class:`Deadline` goes on in three steps:

1. at the timeout, the token (``call_tool`` does it);
2. a grace later, an interrupt raised in the main thread where the tool runs
   (:class:`CallOverran`, a ``KeyboardInterrupt``): a blocking wait returns, the tool's
   ``finally`` blocks run, ``subprocess.run`` kills its child, as on Ctrl-C;
3. another grace later, if even that did not end the call, the answer is written and the
   process exits at once.

Steps 2 and 3 act only while the main thread is inside the tool (below ``ToolCall.run``
on its stack): once the tool has returned, janito's own work for the call (the journal,
the answer) is left to finish, however slow the disk.

Processes the call started and left behind (a ``Popen`` never waited for) are killed
once the time ran out and the call ended, by any step (:meth:`Deadline.end_leftovers`):
the descendants of this process started since the call began (their start time in
``/proc``; where there is none, this is not done). One that moved away on purpose (a
daemon that double-forked, now a child of init) is no longer a descendant and is not
found; janito-system's tools contain theirs so that none escapes.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

#: Seconds between the steps: what a tool told to stop may take to end its processes
#: (janito-system's supervisor gets as long), on a machine that is busy.
GRACE = 5.0


class CallOverran(KeyboardInterrupt):
    """Raised in the main thread when a call outlived its timeout and the grace after it."""


class Deadline:
    """Ends the call running on the main thread ``timeout`` seconds after :meth:`start`.

    ``give_up()`` is called from the watchdog thread at step 3: it must write the answer
    and leave the process. After :meth:`stop` nothing more happens; the SIGALRM handler
    installed by :meth:`start` stays (ignoring the signal), so that a signal already on
    its way can never meet the default action, which would end the process.
    """

    def __init__(self, timeout: float, give_up: Callable[[], Any]) -> None:
        self.timeout = timeout
        self.grace = GRACE
        self._give_up = give_up
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._interrupted = False
        self._can_interrupt = False
        self._started: float | None = None
        self._since: int | None = None

    def start(self) -> None:
        import signal

        self._started = time.monotonic()
        self._since = clock_ticks()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, self._interrupt)
            self._can_interrupt = True
        threading.Thread(target=self._watch, name="janito-call-deadline", daemon=True).start()

    def stop(self) -> None:
        """The call is over: nothing more will be done to it (may be called again)."""
        with self._lock:
            self._done.set()

    @property
    def expired(self) -> bool:
        """Whether the timeout has run out since :meth:`start`."""
        return self._started is not None and time.monotonic() - self._started >= self.timeout

    @property
    def overran(self) -> bool:
        """Whether step 2 came: the tool, still running a grace after its token told it to
        stop, was interrupted."""
        return self._interrupted

    def end_leftovers(self) -> list[int]:
        """Kill the descendants of this process started since :meth:`start` that are still
        there (an MCP server janito started before the call is no business of the call's;
        one started within the same clock tick before it may be taken for the call's)."""
        if self._since is None:
            return []
        ended: list[int] = []
        for _ in range(5):  # a process forking meanwhile is found by the next round
            found = end_processes(descendants(os.getpid(), self._since) - set(ended))
            if not found:
                break
            ended += found
        return ended

    def _interrupt(self, signum: int, frame: Any) -> None:
        if not self._done.is_set() and in_tool(frame):
            self._interrupted = True
            raise CallOverran()

    def _watch(self) -> None:
        import signal

        if self._done.wait(self.timeout + self.grace):
            return
        main = threading.main_thread().ident or 0
        with self._lock:
            if self._done.is_set():
                return
            if self._can_interrupt and in_tool(sys._current_frames().get(main)):
                signal.pthread_kill(main, signal.SIGALRM)
        while not self._done.wait(self.grace):
            with self._lock:
                if self._done.is_set():
                    return
                if in_tool(sys._current_frames().get(main)):
                    self.end_leftovers()
                    self._give_up()


def in_tool(frame: Any) -> bool:
    """Whether ``frame`` (a thread's innermost) is inside a tool's ``run()``, that is,
    below ``ToolCall.run`` on the stack."""
    from ._call import ToolCall

    code = ToolCall.run.__code__
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def clock_ticks() -> int | None:
    """Now, in the unit of a process's start time in ``/proc/PID/stat`` (clock ticks since
    boot); None where that cannot be read."""
    try:
        return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))
    except (AttributeError, OSError, ValueError):
        return None


def descendants(pid: int, since: int | None = None) -> set[int]:
    """Every process below ``pid`` (children, theirs, ...), read from ``/proc``; with
    ``since`` (clock ticks), only those started then or later. An empty set where there
    is no ``/proc``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    children: dict[int, list[int]] = {}
    started: dict[int, int] = {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid ... starttime ...": comm may hold spaces and parentheses
        fields = text[text.rfind(b")") + 2:].split()
        if len(fields) > 19:
            children.setdefault(int(fields[1]), []).append(int(entry))
            started[int(entry)] = int(fields[19])
    found: set[int] = set()
    waiting = list(children.get(pid, ()))
    while waiting:
        child = waiting.pop()
        if child not in found:
            found.add(child)
            waiting.extend(children.get(child, ()))
    if since is not None:
        found = {p for p in found if started.get(p, since) >= since}
    return found


def end_processes(pids: set[int]) -> list[int]:
    """Stop every process of ``pids`` first (so none forks or is reparented meanwhile),
    then kill them; the ones that were still there."""
    import signal

    ended = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGSTOP)
            ended.append(pid)
        except OSError:
            pass
    for pid in ended:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return ended
