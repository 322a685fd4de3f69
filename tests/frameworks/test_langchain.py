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
    EXPECTED_OUTCOMES,
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
    assert RUNS == ["lint"]
    assert setup.outcomes() == EXPECTED_OUTCOMES
    assert setup.callers() == {"langchain"}


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
