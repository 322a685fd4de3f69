"""Where MCP tasks are kept: this process's memory, or Redis shared by every instance.

A task is created and run by one server process (its *owner*); any process behind the
same address may be asked about it. So the store holds each task's record (what
``tasks/get`` answers), carries a cancellation to the owner wherever it runs, and tells
whether the owner is still alive:

- ``put``/``get``: the record, a JSON object, kept until its time to live is over;
- ``cancel``: ask the owner to cancel the task; ``start(on_cancel)`` is how an owner
  hears of it (in memory: at once; Redis: a publish on one channel every owner listens to);
- ``hold``/``held``: the owner's lease on a running task, renewed while it runs; a task
  whose lease lapsed lost its owner (a killed process), and is answered as failed;
- ``claim_once``: a key taken at most once in its time (the answers to policy asks,
  ``_asking``), so one yes runs one call whichever instance it reaches.

``open_store(url)`` picks the store: ``memory``, or ``redis://`` / ``rediss://`` /
``unix://`` URLs (redis-py, the ``janito-mcp[redis]`` extra).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Protocol

#: The key prefix of everything janito keeps in Redis, and the cancellation channel.
REDIS_PREFIX = "janito:mcp:task:"
CANCEL_CHANNEL = "janito:mcp:task-cancel"
CLAIM_PREFIX = "janito:mcp:claimed:"


class TaskStoreError(Exception):
    """The task store cannot be used (a bad URL, a missing client library)."""


class TaskStore(Protocol):
    """What the tasks extension needs of a store."""

    #: Whether other processes see the same tasks (Redis) or only this one (memory).
    shared: bool

    async def start(self, on_cancel: Callable[[str], None]) -> None: ...
    async def close(self) -> None: ...
    async def ping(self) -> None: ...
    async def put(self, task_id: str, record: dict[str, Any], ttl: float) -> None: ...
    async def get(self, task_id: str) -> dict[str, Any] | None: ...
    async def cancel(self, task_id: str) -> None: ...
    async def hold(self, task_id: str, seconds: float) -> None: ...
    async def held(self, task_id: str) -> bool: ...
    async def claim_once(self, key: str, seconds: float) -> bool: ...


class MemoryTaskStore:
    """Tasks of one process, in a dict; records are let go of when their time is over."""

    shared = False

    def __init__(self) -> None:
        from ._asking import MemoryLedger

        self._records: dict[str, tuple[float, dict[str, Any]]] = {}
        self._on_cancel: Callable[[str], None] | None = None
        self._ledger = MemoryLedger()

    async def claim_once(self, key: str, seconds: float) -> bool:
        return await self._ledger.claim_once(key, seconds)

    async def start(self, on_cancel: Callable[[str], None]) -> None:
        self._on_cancel = on_cancel

    async def close(self) -> None:
        self._on_cancel = None

    async def ping(self) -> None:
        return None

    async def put(self, task_id: str, record: dict[str, Any], ttl: float) -> None:
        now = time.monotonic()
        for key in [k for k, (until, _) in self._records.items() if until < now]:
            del self._records[key]
        self._records[task_id] = (now + ttl, dict(record))

    async def get(self, task_id: str) -> dict[str, Any] | None:
        found = self._records.get(task_id)
        if found is None or found[0] < time.monotonic():
            return None
        return dict(found[1])

    async def cancel(self, task_id: str) -> None:
        if self._on_cancel is not None:
            self._on_cancel(task_id)

    async def hold(self, task_id: str, seconds: float) -> None:
        return None

    async def held(self, task_id: str) -> bool:
        # the owner is this process: while it answers, it holds its tasks
        return True


class RedisTaskStore:
    """Tasks in Redis: one key per record and per lease, one channel for cancellations."""

    shared = True

    def __init__(self, url: str) -> None:
        try:
            import redis.asyncio as redis
        except ImportError as exc:
            raise TaskStoreError(
                f"--task-store {_safe(url)} needs the Redis client: pip install "
                "'janito-mcp[redis]'") from exc
        self.url = url
        self._client: Any = redis.Redis.from_url(url, decode_responses=True,
                                                 health_check_interval=30)
        self._listener: Any = None
        self._pubsub: Any = None

    async def start(self, on_cancel: Callable[[str], None]) -> None:
        import asyncio

        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.subscribe(CANCEL_CHANNEL)

        async def listen() -> None:
            while True:
                try:
                    async for message in self._pubsub.listen():
                        if message.get("type") == "message":
                            on_cancel(str(message.get("data")))
                except asyncio.CancelledError:
                    raise
                except Exception:
                    # the connection broke: subscribe again once Redis answers
                    await asyncio.sleep(1.0)
                    try:
                        await self._pubsub.subscribe(CANCEL_CHANNEL)
                    except Exception:
                        pass

        self._listener = asyncio.get_running_loop().create_task(listen())

    async def close(self) -> None:
        import asyncio
        import contextlib

        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        with contextlib.suppress(Exception):
            await self._client.aclose()

    async def ping(self) -> None:
        await self._client.ping()

    async def put(self, task_id: str, record: dict[str, Any], ttl: float) -> None:
        await self._client.set(REDIS_PREFIX + task_id, json.dumps(record),
                               px=max(1000, int(ttl * 1000)))

    async def get(self, task_id: str) -> dict[str, Any] | None:
        text = await self._client.get(REDIS_PREFIX + task_id)
        if text is None:
            return None
        found = json.loads(text)
        return found if isinstance(found, dict) else None

    async def cancel(self, task_id: str) -> None:
        await self._client.publish(CANCEL_CHANNEL, task_id)

    async def hold(self, task_id: str, seconds: float) -> None:
        await self._client.set(REDIS_PREFIX + task_id + ":owner", "1",
                               px=max(1000, int(seconds * 1000)))

    async def held(self, task_id: str) -> bool:
        return bool(await self._client.exists(REDIS_PREFIX + task_id + ":owner"))

    async def claim_once(self, key: str, seconds: float) -> bool:
        return bool(await self._client.set(CLAIM_PREFIX + key, "1", nx=True,
                                           px=max(1000, int(seconds * 1000))))


def _safe(url: str) -> str:
    """The URL without the password it may carry, for messages."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest.split("/", 1)[0]:
        rest = "***@" + rest.split("@", 1)[1]
    return scheme + sep + rest


def open_store(url: str) -> TaskStore | None:
    """The store ``--task-store`` names; None for ``off``. TaskStoreError for a bad one."""
    if url == "off":
        return None
    if url == "memory":
        return MemoryTaskStore()
    if url.split("://", 1)[0] in ("redis", "rediss", "unix"):
        return RedisTaskStore(url)
    raise TaskStoreError(f"--task-store must be 'memory', 'off' or a redis:// URL, not "
                         f"{_safe(url)!r}")


def describe_store(url: str) -> str:
    return _safe(url)
