"""A call the policy asks about is asked of the person at the MCP client, by elicitation.

The workspace's ``.janito/policy.toml`` asks before every WriteNote. The SDK's own client
answers the server's ``elicitation/create`` (up to 2025-11-25) or the input-required
result (2026-07-28) with its callback: an explicit yes runs the call; a decline, a cancel,
an accepted form saying no, an answer too late and a client that declared no elicitation
capability all leave the note unwritten, and the result is ``approval_declined`` naming
the rule. On the 2026-07-28 era a hostile client drives the rounds by hand: an answer sent
with other arguments, a forged state, a state sent twice and a late answer run nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
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


#: Every answer but a yes: the client's action, the form it sent, what the refusal says.
NOT_YES = pytest.mark.parametrize(("action", "content", "said"), [
    ("decline", None, "declined"),
    ("cancel", None, "cancelled"),
    ("accept", {"approve": False}, "answered no"),
], ids=["declined", "cancelled", "accepted-no"])


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


@NOT_YES
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


# -- the 2026-07-28 era: input-required results ----------------------------------------

NOTE = {"filepath": "note.txt", "text": "written"}
YES = {"janito.approve": types.ElicitResult(action="accept", content={"approve": True})}


@pytest.fixture
def http_server(policed: Path, config_dir: Path) -> Iterator[HttpServer]:
    server = HttpServer(policed, config_dir, "-w", "--ask-timeout", "5")
    yield server
    server.stop()


def test_the_per_request_era_asks_through_an_input_required_result(
        policed: Path, config_dir: Path, http_server: HttpServer) -> None:
    """The SDK's client answers the input-required result with its elicitation callback
    and sends the call again: a yes runs it, once."""
    result = _call(policed, config_dir, _answer("accept", {"approve": True}),
                   target=http_server.url, mode="auto")
    assert result["success"] is True, result
    assert (policed / "note.txt").read_text(encoding="utf-8") == "written"
    assert len(asked) == 1 and "WriteNote" in asked[0] and "notes need a yes" in asked[0]


@NOT_YES
def test_the_per_request_era_runs_nothing_on_anything_but_yes(
        policed: Path, config_dir: Path, http_server: HttpServer, action: str,
        content: dict[str, Any] | None, said: str) -> None:
    result = _call(policed, config_dir, _answer(action, content), target=http_server.url,
                   mode="auto")
    _assert_refused(result, policed, said)
    assert len(asked) == 1


def test_the_per_request_era_refuses_a_client_that_cannot_elicit(
        policed: Path, config_dir: Path, http_server: HttpServer) -> None:
    result = _call(policed, config_dir, None, target=http_server.url, mode="auto")
    _assert_refused(result, policed, "declared no elicitation capability")


def _rounds(url: str, steps: Callable[[Any], Awaitable[Any]]) -> Any:
    """``steps`` drives the rounds by hand, as a hostile client would, on a session that
    can elicit (the callback is never called: nothing is sent back mid-call)."""
    async def main() -> Any:
        async with Client(url, mode="auto", elicitation_callback=_answer("decline")) as client:
            with anyio.fail_after(120):  # a bound on a hang, not a measure
                return await steps(client.session)
    return run_async(main)


async def _asked(session: Any, arguments: dict[str, Any] = NOTE) -> Any:
    first = await session.call_tool("WriteNote", arguments, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    question = first.input_requests["janito.approve"]
    assert "WriteNote" in question.params.message
    return first


def test_an_answer_for_other_arguments_runs_nothing(policed: Path,
                                                    http_server: HttpServer) -> None:
    async def steps(session: Any) -> Any:
        first = await _asked(session)
        changed = {"filepath": "other.txt", "text": "not what was shown"}
        with pytest.raises(Exception) as refused:
            await session.call_tool("WriteNote", changed, input_responses=YES,
                                    request_state=first.request_state,
                                    allow_input_required=True)
        return refused.value

    error = _rounds(http_server.url, steps)
    assert "requestState" in str(error)
    assert not (policed / "other.txt").exists() and not (policed / "note.txt").exists()


def test_an_answer_after_a_link_was_swapped_in_runs_nothing(policed: Path,
                                                             http_server: HttpServer) -> None:
    """Between the question and the answer, note.txt became a link into .git/: the yes
    was for writing note.txt, not .git/config."""
    (policed / ".git").mkdir()
    (policed / ".git" / "config").write_text("[core]\n", encoding="utf-8")

    async def steps(session: Any) -> Any:
        first = await _asked(session)
        (policed / "note.txt").symlink_to(".git/config")
        again = await session.call_tool("WriteNote", NOTE, input_responses=YES,
                                        request_state=first.request_state,
                                        allow_input_required=True)
        return again.structured_content

    result = _rounds(http_server.url, steps)
    assert result["success"] is False and "another call" in result["error"], result
    assert (policed / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"


def test_a_forged_or_missing_state_asks_again(policed: Path, http_server: HttpServer) -> None:
    async def steps(session: Any) -> Any:
        first = await _asked(session)
        with pytest.raises(Exception) as forged:
            await session.call_tool("WriteNote", NOTE, input_responses=YES,
                                    request_state=first.request_state[:-4] + "AAAA",
                                    allow_input_required=True)
        unstated = await session.call_tool("WriteNote", NOTE, input_responses=YES,
                                           allow_input_required=True)
        return forged.value, unstated

    forged, unstated = _rounds(http_server.url, steps)
    assert "requestState" in str(forged)
    assert isinstance(unstated, types.InputRequiredResult), "a yes with no state ran the call"
    assert not (policed / "note.txt").exists()


def test_one_yes_runs_one_call(policed: Path, http_server: HttpServer) -> None:
    async def steps(session: Any) -> Any:
        first = await _asked(session)
        runs = []
        for _ in range(2):
            runs.append(await session.call_tool("WriteNote", NOTE, input_responses=YES,
                                                request_state=first.request_state,
                                                allow_input_required=True))
            (policed / "note.txt").unlink(missing_ok=True)
        return [run.structured_content for run in runs]

    ran, replayed = _rounds(http_server.url, steps)
    assert ran["success"] is True, ran
    _assert_refused(replayed, policed, "used already")


def test_an_answer_after_the_ask_timeout_runs_nothing(policed: Path, config_dir: Path) -> None:
    server = HttpServer(policed, config_dir, "-w", "--ask-timeout", "1")

    async def steps(session: Any) -> Any:
        first = await _asked(session)
        await anyio.sleep(1.5)
        late = await session.call_tool("WriteNote", NOTE, input_responses=YES,
                                       request_state=first.request_state,
                                       allow_input_required=True)
        return late.structured_content

    try:
        _assert_refused(_rounds(server.url, steps), policed, "no answer within 1 s")
    finally:
        server.stop()


def _until_a_worker_answers(url: str) -> None:
    """Wait for a worker to serve ``url``, as long as a start may take.

    The supervisor announces the address before its workers (fresh interpreters) accept on
    it. Under load they take longer to start than the 10 s the SDK gives its
    ``server/discover`` probe (20 s was measured with a busy loop per core): a client of
    ``mode="auto"`` then falls back to the handshake era, whose stateless requests cannot
    carry a question back, and the call is refused instead of asked about. The handshake
    itself waits for its answer.
    """
    async def main() -> None:
        with anyio.fail_after(120):  # a bound on a hang, not a measure
            async with Client(url, mode="legacy") as client:
                await client.list_tools()
    run_async(main)


def test_an_answer_reaches_any_worker(policed: Path, config_dir: Path) -> None:
    """Behind one address, the worker that asked and the one that gets the answer may
    differ: every worker shares the key that seals the state. Each question and each
    answer goes on a connection of its own, so the kernel hands them to either worker
    (with a key per worker, about half of the answers would be refused)."""
    server = HttpServer(policed, config_dir, "-w", "--stateless", "--workers", "2")
    _until_a_worker_answers(server.url)

    async def ask(session: Any, arguments: dict[str, Any]) -> Any:
        return await _asked(session, arguments)

    try:
        results = []
        for number in range(12):
            arguments = {"filepath": f"note{number}.txt", "text": "written"}
            first = _rounds(server.url, lambda session, a=arguments: ask(session, a))

            async def answer(session: Any, a: dict[str, Any] = arguments,
                             state: str = first.request_state) -> Any:
                return await session.call_tool("WriteNote", a, input_responses=YES,
                                               request_state=state,
                                               allow_input_required=True)
            results.append(_rounds(server.url, answer).structured_content)
    finally:
        server.stop()
    assert [result["success"] for result in results] == [True] * 12, results
    assert sorted(p.name for p in policed.glob("note*.txt")) == sorted(
        f"note{n}.txt" for n in range(12))
