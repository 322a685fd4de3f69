"""A call the policy asks about is asked of the person at the MCP client, by elicitation.

The workspace's ``.janito/policy.toml`` asks before every WriteNote. The SDK's own client
answers the server's ``elicitation/create`` with its callback: an explicit yes runs the
call; a decline, a cancel, an accepted form saying no, an answer too late and a client
that declared no elicitation capability all leave the note unwritten, and the result is
``approval_declined`` naming the rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import HttpServer, run_async, stdio_params
from mcp.client import Client
from mcp.client.stdio import stdio_client

POLICY = '[[rules]]\naction = "ask"\ntools = ["WriteNote"]\nreason = "notes need a yes"\n'
Answer = Callable[[Any, Any], Awaitable[Any]]
asked: list[str] = []


@pytest.fixture
def policed(workspace: Path) -> Path:
    (workspace / ".janito").mkdir()
    (workspace / ".janito" / "policy.toml").write_text(POLICY, encoding="utf-8")
    return workspace


def _answer(action: str, content: dict[str, Any] | None = None, wait: float = 0) -> Answer:
    async def callback(context: Any, params: Any) -> Any:
        asked.append(params.message)
        if wait:
            await anyio.sleep(wait)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]
    return callback


def _call(workspace: Path, config_dir: Path, callback: Answer | None,
          *flags: str, target: Any = None, mode: str = "legacy") -> Any:
    async def main() -> Any:
        where = target if target is not None else stdio_client(
            stdio_params(workspace, config_dir, "-w", *flags))
        async with Client(where, mode=mode, elicitation_callback=callback) as client:
            with anyio.fail_after(120):  # a bound on a hang, not a measure
                return await client.call_tool("WriteNote", {"filepath": "note.txt",
                                                             "text": "written"})
    asked.clear()
    return run_async(main).structured_content


def _assert_refused(result: dict[str, Any], workspace: Path, said: str) -> None:
    assert result["success"] is False
    assert result["error_type"] == "approval_declined", result
    assert said in result["error"]
    assert result["approval"]["rule"] and "WriteNote" in result["approval"]["rule"]
    assert not (workspace / "note.txt").exists(), "a call that was not approved ran"


def test_a_yes_runs_the_call(policed: Path, config_dir: Path) -> None:
    result = _call(policed, config_dir, _answer("accept", {"approve": True}))
    assert result["success"] is True, result
    assert (policed / "note.txt").read_text(encoding="utf-8") == "written"
    assert len(asked) == 1 and "WriteNote" in asked[0] and "notes need a yes" in asked[0]


@pytest.mark.parametrize(("action", "content", "said"), [
    ("decline", None, "declined"),
    ("cancel", None, "cancelled"),
    ("accept", {"approve": False}, "answered no"),
], ids=["declined", "cancelled", "accepted-no"])
def test_anything_but_yes_changes_nothing(policed: Path, config_dir: Path, action: str,
                                          content: dict[str, Any] | None, said: str) -> None:
    _assert_refused(_call(policed, config_dir, _answer(action, content)), policed, said)
    assert len(asked) == 1


def test_an_answer_too_late_changes_nothing(policed: Path, config_dir: Path) -> None:
    result = _call(policed, config_dir, _answer("accept", {"approve": True}, wait=30),
                   "--ask-timeout", "1")
    _assert_refused(result, policed, "no answer within 1 s")


def test_a_client_that_cannot_elicit_is_refused_naming_the_rule(policed: Path,
                                                                config_dir: Path) -> None:
    result = _call(policed, config_dir, None)
    _assert_refused(result, policed, "declared no elicitation capability")
    assert "WriteNote" in result["error"] and "policy.toml" in result["error"]


def test_over_http_in_session_mode(policed: Path, config_dir: Path) -> None:
    server = HttpServer(policed, config_dir, "-w")
    try:
        no = _call(policed, config_dir, _answer("decline"), target=server.url)
        _assert_refused(no, policed, "declined")
        yes = _call(policed, config_dir, _answer("accept", {"approve": True}),
                    target=server.url)
        assert yes["success"] is True, yes
    finally:
        server.stop()


def test_the_per_request_era_is_refused_naming_the_rule(policed: Path, config_dir: Path) -> None:
    """The 2026-07-28 era asks through input-required results, which serving does not
    answer yet: the call is refused, with the rule named, and nothing runs."""
    server = HttpServer(policed, config_dir, "-w")
    try:
        result = _call(policed, config_dir, _answer("accept", {"approve": True}),
                       target=server.url, mode="auto")
        _assert_refused(result, policed, "input-required")
        assert asked == []
    finally:
        server.stop()
