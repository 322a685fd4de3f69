"""Where asynchronous tools run when their caller is not, and where synchronous tools run
when their caller is.

``call_tool`` is synchronous, and an ``async def run()`` tool needs an event loop. A
thread that runs no loop hands the coroutine to the loop of the call's registry, started
on first use in a daemon thread, and waits for it: tools that keep something bound to a
loop (a client session, a connection pool) find the same loop from one call to the next,
and no call pays for making and closing a loop. A caller already inside that loop (an
async tool calling ``call_tool`` on another) cannot wait on it without stopping it, so
that coroutine runs on a loop of its own in a new thread instead.

``acall_tool`` and ``aexecute_tool_calls`` run synchronous tools in threads of one pool
of the registry, sized like anyio's default limit (40) rather than asyncio's default
executor (CPUs + 4), because a served janito may be waiting on that many slow tools.

Nothing here is imported by ``janito tools``: it loads only when a call needs it, since
``asyncio`` alone costs start-up about 10 ms.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: Threads that run synchronous tools for the async entry points, at most.
THREADS = 40


class AsyncRunner:
    """One registry's event loop for async tools called from synchronous code, and its
    pool of threads for synchronous tools called from async code; each started on first
    use and stopped when the registry is collected (``Registry.async_runner``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, running in a daemon thread (started on first use)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            return loop
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                # Made in an empty context: the loop keeps the context it is made in (its
                # wake-up handle does), and the caller's names the registry, which must
                # stay free to be collected.
                self._loop = contextvars.Context().run(asyncio.new_event_loop)
                started = threading.Event()
                threading.Thread(target=_serve_forever, args=(self._loop, started), daemon=True,
                                 name="janito-async").start()
                started.wait()
            return self._loop

    def thread_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        """The pool of synchronous tools awaited by the async entry points (threads made
        as they are needed)."""
        pool = self._pool
        if pool is not None:
            return pool
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    THREADS, thread_name_prefix="janito-call")
            return self._pool

    def run_coroutine(self, coro: Coroutine[Any, Any, T],
                      loop: asyncio.AbstractEventLoop | None = None) -> T:
        """Run ``coro`` to completion on ``loop`` (default: this runner's loop) and return
        what it returns, blocking this thread meanwhile.

        Called on the thread that runs ``loop`` itself, it runs ``coro`` on a fresh loop
        in a new thread instead, since waiting here would stop the very loop it waits
        for. An interrupt (Ctrl-C) while waiting cancels the coroutine and is raised again.
        """
        target = loop if loop is not None and not loop.is_closed() else self.loop()
        if _running_loop() is target:
            return _run_elsewhere(coro)
        future = asyncio.run_coroutine_threadsafe(coro, target)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def shutdown(self) -> None:
        """Stop the loop and let the pool's idle threads go (what runs finishes first)."""
        with self._lock:
            loop, self._loop = self._loop, None
            pool, self._pool = self._pool, None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        if pool is not None:
            pool.shutdown(wait=False)


def _serve_forever(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(started.set)
    try:
        loop.run_forever()
    finally:
        loop.close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _run_elsewhere(coro: Coroutine[Any, Any, T]) -> T:
    box: list[Any] = []

    def main() -> None:
        try:
            box.append((True, asyncio.run(coro)))
        except BaseException as exc:  # handed to the waiting thread, which raises it
            box.append((False, exc))

    # The call's context (its registry, id and token) goes along, as it does to a loop.
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(main,), name="janito-async-nested",
                              daemon=True)
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    result: T = value
    return result
