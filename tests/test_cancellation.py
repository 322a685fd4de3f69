"""Cooperative cancellation: the token, and how dispatch honours it."""

from __future__ import annotations

import select
import threading
import time
from typing import Any

import pytest

from janito_core import BaseTool, CallCancelled, CancelToken, Registry, tool
from janito_core.cancellation import current_token
from janito_core.dispatch import call_tool


@tool(permissions="")
class WaitForCancel(BaseTool):
    """Wait until the call is cancelled or a few seconds pass."""

    def run(self, seconds: float = 5.0) -> dict[str, Any]:
        """Wait.

        Args:
            seconds: Longest wait.
        """
        token = self.cancel_token
        if token is None:
            return {"success": True, "cancellable": False}
        token.wait(seconds)
        token.check()
        return {"success": True, "cancellable": True}


@tool(permissions="")
class Counter(BaseTool):
    """Count calls that actually ran."""

    runs = 0

    def run(self) -> dict[str, Any]:
        """Count."""
        type(self).runs += 1
        return {"success": True}


def registry() -> Registry:
    reg = Registry(autoload=())
    reg.add_tool(WaitForCancel)
    reg.add_tool(Counter)
    return reg


def test_a_call_without_token_sees_none() -> None:
    assert call_tool("WaitForCancel", {"seconds": 0}, registry=registry()) == {
        "success": True, "cancellable": False}
    assert current_token() is None


def test_cancelling_from_another_thread_stops_the_tool() -> None:
    token = CancelToken()
    threading.Timer(0.1, token.cancel, args=("the client went away",)).start()
    started = time.monotonic()
    result = call_tool("WaitForCancel", {"seconds": 30}, registry=registry(), cancel_token=token)
    assert time.monotonic() - started < 10
    assert result["success"] is False
    assert result["error_type"] == "cancelled"
    assert "the client went away" in result["error"]
    assert current_token() is None


def test_a_call_cancelled_before_it_starts_does_not_run() -> None:
    token = CancelToken()
    token.cancel("too late")
    Counter.runs = 0
    result = call_tool("Counter", {}, registry=registry(), cancel_token=token)
    assert result["error_type"] == "cancelled"
    assert "too late" in result["error"]
    assert Counter.runs == 0


def test_first_reason_wins_and_check_raises() -> None:
    token = CancelToken()
    token.check()
    token.cancel("first")
    token.cancel("second")
    assert token.cancelled and token.reason == "first"
    with pytest.raises(CallCancelled, match="first"):
        token.check()


@pytest.mark.parametrize("cancel_first", [False, True])
def test_fileno_becomes_readable_on_cancel(cancel_first: bool) -> None:
    token = CancelToken()
    if cancel_first:
        token.cancel()
    fd = token.fileno()
    try:
        if not cancel_first:
            assert select.select([fd], [], [], 0)[0] == []
            threading.Timer(0.05, token.cancel).start()
        assert select.select([fd], [], [], 10)[0] == [fd]
    finally:
        token.close()
    token.close()  # twice is harmless


def test_on_cancel_is_told_once_and_can_be_forgotten() -> None:
    token = CancelToken()
    heard: list[str] = []
    forget = token.on_cancel(lambda: heard.append("first"))
    forget_second = token.on_cancel(lambda: heard.append("second"))
    token.on_cancel(lambda: 1 / 0)  # a listener that fails does not keep the others uninformed
    forget_second()
    forget_second()  # twice is harmless
    token.cancel("now")
    token.cancel("again")
    assert heard == ["first"]
    forget()  # after the fact: nothing to forget
    token.on_cancel(lambda: heard.append("late"))  # already cancelled: told at once
    assert heard == ["first", "late"]


def test_a_listener_may_cancel_another_token() -> None:
    parent, child = CancelToken(), CancelToken()
    parent.on_cancel(lambda: child.cancel(parent.reason or ""))
    parent.cancel("the turn was stopped")
    assert child.cancelled and child.reason == "the turn was stopped"
