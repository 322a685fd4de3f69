"""LangChain: janito's tools as BaseTools in an agent of ``create_agent``, driven by
LangChain's fake chat model; the policy's ask pauses the graph as the human-in-the-loop
middleware does, and is resumed with its decisions."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from framework_setup import (
    EXPECTED_FORECAST,
    RUNS,
    Setup,
    forecast_registry,
    parsed,
)
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from janito_core.integrations.langchain import tools


class ToolCallingFake(GenericFakeChatModel):
    """The fake chat model, told which tools it has (it answers from its script anyway)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.__dict__.setdefault("bound", []).append(list(tools))
        return self


def called(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def script() -> ToolCallingFake:
    return ToolCallingFake(messages=iter([
        AIMessage("", tool_calls=[called("CountLetters", {"text": "hello world"}, "c1"),
                                  called("WriteNote", {"name": "n.txt", "text": "hi"}, "c2")]),
        AIMessage("", tool_calls=[called("RunCheck", {"check": "lint"}, "c3")]),
        AIMessage("", tool_calls=[called("RunCheck", {"check": "deploy"}, "c4")]),
        AIMessage("done"),
    ]))


def answers(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def check_the_conversation(setup: Setup, final: dict[str, Any],
                           asked: list[dict[str, Any]]) -> None:
    assert [(a["name"], a["tool_call_id"], a["args"]) for a in asked] == [
        ("RunCheck", "c3", {"check": "lint"}), ("RunCheck", "c4", {"check": "deploy"})]
    assert asked[0]["type"] == "tool_approval" and asked[0]["approval"]["reason"]
    got = answers(final)
    assert parsed(got["c1"].content) == {"success": True, "letters": 10}
    assert got["c1"].status == "success"
    assert parsed(got["c2"].content)["error_type"] == "permission_denied"
    assert got["c2"].status == "error"
    assert parsed(got["c3"].content) == {"success": True, "ran": "lint"}
    declined = parsed(got["c4"].content)
    assert declined["error_type"] == "approval_declined" and "not today" in declined["error"]
    assert final["messages"][-1].content == "done"
    setup.assert_conversation_logged("langchain")


def test_a_conversation_reads_is_refused_a_write_and_is_asked_twice(setup: Setup) -> None:
    agent = create_agent(script(), tools(setup.registry), checkpointer=InMemorySaver())
    setup.take_w_away()
    config: Any = {"configurable": {"thread_id": "t"}}
    asked = []

    state = agent.invoke({"messages": [("user", "check the project")]}, config)
    asked.append(state["__interrupt__"][0].value)
    assert RUNS == []
    state = agent.invoke(Command(resume={"type": "approve"}), config)
    asked.append(state["__interrupt__"][0].value)
    state = agent.invoke(Command(resume={"type": "reject", "message": "not today"}), config)
    check_the_conversation(setup, state, asked)


def test_the_same_conversation_on_the_event_loop(setup: Setup) -> None:
    agent = create_agent(script(), tools(setup.registry), checkpointer=InMemorySaver())
    setup.take_w_away()
    config: Any = {"configurable": {"thread_id": "t"}}

    async def conversation() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        asked = []
        state = await agent.ainvoke({"messages": [("user", "check the project")]}, config)
        asked.append(state["__interrupt__"][0].value)
        state = await agent.ainvoke(Command(resume={"type": "approve"}), config)
        asked.append(state["__interrupt__"][0].value)
        state = await agent.ainvoke(
            Command(resume={"decisions": [{"type": "reject", "message": "not today"}]}), config)
        return state, asked

    state, asked = asyncio.run(conversation())
    check_the_conversation(setup, state, asked)


def test_outside_a_graph_an_asked_call_answers_approval_required(setup: Setup) -> None:
    [run_check] = tools(setup.registry, ["RunCheck"])
    message = run_check.invoke(called("RunCheck", {"check": "lint"}, "x"))
    answer = parsed(message.content)
    assert answer["error_type"] == "approval_required" and answer["approval"]["tool"] == "RunCheck"
    assert message.status == "error"
    assert RUNS == []


@pytest.mark.parametrize("arguments, error_type", [
    ({"txt": "x"}, "invalid_arguments"),
    ({"text": ["a"]}, "invalid_arguments"),
])
def test_bad_arguments_get_janitos_answer(setup: Setup, arguments: Any, error_type: str) -> None:
    [count] = tools(setup.registry, ["CountLetters"])
    message = count.invoke(called("CountLetters", arguments, "z"))
    assert parsed(message.content)["error_type"] == error_type
    assert message.status == "error"


def test_the_model_is_given_janitos_schema(setup: Setup) -> None:
    [count] = tools(setup.registry, ["CountLetters"])
    function = convert_to_openai_tool(count)["function"]
    schema = setup.registry.schema("CountLetters")
    assert function["name"] == "CountLetters" and function["description"] == schema.description
    assert function["parameters"] == schema.parameters


def test_a_tool_whose_result_is_a_pydantic_model(tmp_path: Path) -> None:
    model = ToolCallingFake(messages=iter([
        AIMessage("", tool_calls=[called("GetForecast", {"city": "Lisbon"}, "f")]),
        AIMessage("done"),
    ]))
    agent = create_agent(model, tools(forecast_registry(tmp_path)))
    state = agent.invoke({"messages": [("user", "weather?")]})
    message = answers(state)["f"]
    assert parsed(message.content) == EXPECTED_FORECAST and message.status == "success"


# -- a graph of one's own, whose ToolNode runs every call of a turn in one task -----------
#
# LangGraph answers the interrupts of one task by position, and the calls of a ToolNode
# run in threads: which call takes which answer is the order they reach their ask in,
# not the order the person was shown them in. ``_interrupted`` below makes the worst
# order happen every time: the second call reaches its ask first.


def _one_task_graph(setup: Setup, calls: list[dict[str, Any]]) -> Any:
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    def model(state: MessagesState) -> dict[str, Any]:
        done = any(isinstance(m, ToolMessage) for m in state["messages"])
        return {"messages": [AIMessage("done" if done else "", tool_calls=[] if done else calls)]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode(tools(setup.registry)))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", lambda s: "tools" if s["messages"][-1].tool_calls
                                else END)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=InMemorySaver())


@pytest.fixture
def second_call_asks_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from janito_core.integrations import langchain as integration

    real = integration._interrupted
    turns = threading.Condition()
    seen = {"a": 0, "b": 0}

    def interrupted(asked: Any, arguments: Any, call_id: Any) -> Any:
        with turns:
            seen[call_id] += 1
            if call_id == "a":  # wait (a little at most) for b to have asked as often
                turns.wait_for(lambda: seen["b"] >= seen["a"], timeout=5)
        try:
            return real(asked, arguments, call_id)
        finally:
            with turns:
                turns.notify_all()

    monkeypatch.setattr(integration, "_interrupted", interrupted)


CALLS = [called("RunCheck", {"check": "lint"}, "a"), called("RunCheck", {"check": "EVIL"}, "b")]


def _resumed(graph: Any, answer: Any) -> dict[str, Any]:
    config: Any = {"configurable": {"thread_id": "t"}}
    state = graph.invoke({"messages": [("user", "check")]}, config)
    for _ in range(6):
        if "__interrupt__" not in state:
            return dict(state)
        state = graph.invoke(Command(resume={i.id: answer(i.value)
                                             for i in state["__interrupt__"]}), config)
    raise AssertionError("the graph never stopped asking")


def test_an_answer_naming_its_call_runs_that_call_only_and_once(
        setup: Setup, second_call_asks_first: None) -> None:
    def person(asked: dict[str, Any]) -> dict[str, Any]:
        kind = "approve" if asked["args"] == {"check": "lint"} else "reject"
        return {"type": kind, "tool_call_id": asked["tool_call_id"]}

    final = _resumed(_one_task_graph(setup, CALLS), person)
    assert RUNS == ["lint"]
    assert parsed(answers(final)["b"].content)["success"] is False


def test_an_answer_not_naming_its_call_runs_nothing_where_calls_share_a_task(
        setup: Setup, second_call_asks_first: None) -> None:
    final = _resumed(_one_task_graph(setup, CALLS), lambda asked: {"type": "approve"})
    assert RUNS == []
    for message in answers(final).values():
        answer = parsed(message.content)
        assert answer["error_type"] == "approval_required" and "tool_call_id" in answer["error"]
