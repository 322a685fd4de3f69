"""Cooperative cancellation of one tool call.

A caller that may give up on a call (an MCP client sending ``notifications/cancelled`` or
disconnecting, a host shutting down) passes a :class:`CancelToken` to ``call_tool``; the
tool reads it with :func:`current_token` (or ``BaseTool.cancel_token``) and stops early.
Tools that wait on file descriptors (the run tools' output loop) add
:meth:`CancelToken.fileno` to what they wait on, so a cancellation wakes them at once
instead of at their next poll.

A tool that notices the cancellation raises :class:`CallCancelled` (``check()`` does it),
or returns a failure of type ``cancelled``; dispatch turns the exception into that result.
An ``async def run()`` tool needs none of this: dispatch cancels the task awaiting it,
which the tool sees as ``asyncio.CancelledError`` (:meth:`CancelToken.on_cancel` is
how the signal crosses over).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from contextvars import ContextVar

from .errors import JanitoError


class CallCancelled(JanitoError):
    """Raised inside a tool whose call was cancelled; dispatch answers ``cancelled``."""

    def __init__(self, reason: str = "the call was cancelled") -> None:
        self.reason = reason
        super().__init__(reason)


class CancelToken:
    """A flag that one thread sets and the thread running a tool observes.

    ``cancel()`` may be called from any thread, any number of times; the first reason wins.
    """

    __slots__ = ("_callbacks", "_event", "_lock", "_pipe", "reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._pipe: tuple[int, int] | None = None
        self._callbacks: list[Callable[[], object]] | None = None
        self.reason: str | None = None

    def cancel(self, reason: str = "the call was cancelled") -> None:
        """Ask the call to stop; wakes every waiter on :meth:`wait` and :meth:`fileno`."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            self._event.set()
            if self._pipe is not None:
                try:
                    os.write(self._pipe[1], b"x")
                except OSError:  # already written (the pipe holds one byte) or closed
                    pass
            callbacks, self._callbacks = self._callbacks, None
        # Outside the lock: a callback may cancel another token, or this one again.
        for callback in callbacks or ():
            try:
                callback()
            except Exception:  # one listener's fault must not keep the others uninformed
                pass

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback()`` once when the token is cancelled (at once if it is already).

        It runs on the thread that cancels, so it must be quick and must not block: set
        another token, or hand the news to an event loop with ``call_soon_threadsafe``.
        Returns a function that forgets the callback, for a listener that is done first.
        """
        with self._lock:
            if not self._event.is_set():
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(callback)
                return lambda: self._forget(callback)
        callback()
        return _nothing

    def _forget(self, callback: Callable[[], object]) -> None:
        with self._lock:
            if self._callbacks is not None:
                try:
                    self._callbacks.remove(callback)
                except ValueError:
                    pass

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; whether it was cancelled."""
        return self._event.wait(timeout)

    def check(self) -> None:
        """Raise :class:`CallCancelled` when the call was cancelled."""
        if self._event.is_set():
            raise CallCancelled(self.reason or "the call was cancelled")

    def fileno(self) -> int:
        """A descriptor that becomes readable once the call is cancelled (for select/poll).

        Made on first use and closed by :meth:`close`; reading it is not needed.
        """
        with self._lock:
            if self._pipe is None:
                read_end, write_end = os.pipe()
                os.set_blocking(write_end, False)
                self._pipe = (read_end, write_end)
                if self._event.is_set():
                    os.write(write_end, b"x")
            return self._pipe[0]

    def close(self) -> None:
        """Release the descriptor of :meth:`fileno`, if one was made."""
        with self._lock:
            pipe, self._pipe = self._pipe, None
        if pipe is not None:
            for fd in pipe:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def __repr__(self) -> str:
        state = f"cancelled: {self.reason}" if self.cancelled else "active"
        return f"<CancelToken {state}>"


def _nothing() -> None:
    return None


_current: ContextVar[CancelToken | None] = ContextVar("janito_cancel_token", default=None)


def current_token() -> CancelToken | None:
    """The token of the call running in this context, or None when nobody can cancel it."""
    return _current.get()
