"""Graceful shutdown: what a server process does between SIGTERM and its exit.

Kubernetes (and any supervisor: systemd, uvicorn's own, gunicorn's arbiter) stops a
process with SIGTERM and kills it a grace period later. On SIGTERM janito's application:

- answers its readiness probe 503 at once, so a balancer or a Service stops sending it
  new requests (the ASGI server closes the listening socket too);
- lets the calls in flight run for ``grace`` seconds;
- then cancels the ones still running through their cancel tokens: each answers its
  client ``cancelled`` ("the server is shutting down") instead of a dropped connection,
  and a task kept in a shared store is marked cancelled there.

The ASGI server's own signal handler still runs (it is chained, not replaced): it closes
the listener and waits for the connections, and janito's grace must end before the
server's own time is up (``--timeout-graceful-shutdown`` of uvicorn, ``--graceful-timeout``
of gunicorn, ``terminationGracePeriodSeconds`` of a pod).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from ._limits import DEFAULT_SHUTDOWN_GRACE

__all__ = ["CANCEL_GRACE", "DEFAULT_SHUTDOWN_GRACE", "Drain"]
#: How long a cancelled call's handler waits for the tool to notice its token before the
#: request (or the whole session, when the client went away) is let go without it.
CANCEL_GRACE = 5.0
SHUTDOWN_REASON = "the server is shutting down"
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Drain:
    """The shutdown state of one server process.

    ``cancel_all`` is what the grace's end calls: the server hands in how to cancel every
    call it runs. ``begin`` may be called from a signal handler or the event loop; it is
    idempotent.
    """

    def __init__(self, grace: float, cancel_all: Callable[[str], None]) -> None:
        self.grace = grace
        self.cancel_all = cancel_all
        self.draining = False
        self._loop: Any = None
        self._timer: Any = None
        self._previous: dict[int, Any] = {}

    def start(self) -> None:
        """Called on the server's loop at start-up: follow SIGTERM and SIGINT from now on."""
        import asyncio

        self._loop = asyncio.get_running_loop()
        if threading.current_thread() is not threading.main_thread():
            return  # signals reach the main thread only; the lifespan's end still drains
        for sig in _SIGNALS:
            try:
                self._previous[sig] = signal.signal(sig, self._on_signal)
            except (ValueError, OSError):
                pass

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.begin)
        previous = self._previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL and signum == signal.SIGINT:
            raise KeyboardInterrupt

    def begin(self) -> None:
        """Stop being ready; cancel what still runs ``grace`` seconds from now."""
        if self.draining:
            return
        self.draining = True
        if self._loop is not None and not self._loop.is_closed():
            self._timer = self._loop.call_later(self.grace, self.cancel_all, SHUTDOWN_REASON)

    def stop(self) -> None:
        """Called at the lifespan's end: whatever still runs is cancelled now."""
        self.draining = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.cancel_all(SHUTDOWN_REASON)
        for sig, previous in self._previous.items():
            try:
                if signal.getsignal(sig) == self._on_signal:
                    signal.signal(sig, previous)
            except (ValueError, OSError):
                pass
        self._previous.clear()
