"""pydantic-ai: janito's tools as a toolset, run by pydantic-ai's own offline models."""

from __future__ import annotations

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
from pydantic_ai import Agent
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, RunContext

from janito_core.integrations.pydantic_ai import JanitoToolset


def returns(messages: list[ModelMessage]) -> dict[str, ToolReturnPart]:
    """Every tool's answer in the conversation, by tool call id."""
    return {part.tool_call_id: part for message in messages for part in message.parts
            if isinstance(part, ToolReturnPart)}


def conversation(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A model that reads, writes, then runs a check twice, one step per answer it got."""
    step = len(returns(messages))
    if step == 0:
        return ModelResponse(parts=[
            ToolCallPart("CountLetters", {"text": "hello world"}, tool_call_id="c1"),
            ToolCallPart("WriteNote", {"name": "n.txt", "text": "hi"}, tool_call_id="c2"),
        ])
    if step == 2:
        return ModelResponse(parts=[ToolCallPart("RunCheck", {"check": "lint"}, tool_call_id="c3")])
    if step == 3:
        return ModelResponse(parts=[ToolCallPart("RunCheck", {"check": "deploy"},
                                                 tool_call_id="c4")])
    return ModelResponse(parts=[TextPart("done")])


def test_a_conversation_reads_is_refused_a_write_and_is_asked_twice(setup: Setup) -> None:
    toolset = JanitoToolset(setup.registry)
    setup.take_w_away()
    agent = Agent(FunctionModel(conversation), toolsets=[toolset],
                  output_type=[str, DeferredToolRequests])

    first = agent.run_sync("check the project")
    asked = first.output
    assert isinstance(asked, DeferredToolRequests)
    assert [part.tool_call_id for part in asked.approvals] == ["c3"]
    approval = asked.metadata["c3"]["janito"]
    assert approval["tool"] == "RunCheck" and approval["arguments"] == {"check": "lint"}
    assert "x" in approval["permissions"] and approval["reason"]
    assert RUNS == []  # nothing ran before the person said yes

    second = agent.run_sync(message_history=first.all_messages(),
                             deferred_tool_results=toolset.results(asked, {"c3": True}))
    asked = second.output
    assert isinstance(asked, DeferredToolRequests)
    assert [part.tool_call_id for part in asked.approvals] == ["c4"]

    third = agent.run_sync(message_history=second.all_messages(),
                            deferred_tool_results=toolset.results(asked, {"c4": False}))
    assert third.output == "done"

    answers = returns(third.all_messages())
    assert parsed(answers["c1"].content) == {"success": True, "letters": 10}
    refused = parsed(answers["c2"].content)
    assert refused["success"] is False and refused["error_type"] == "permission_denied"
    assert parsed(answers["c3"].content) == {"success": True, "ran": "lint"}
    declined = parsed(answers["c4"].content)
    assert declined["error_type"] == "approval_declined"
    assert declined["approval"]["arguments"] == {"check": "deploy"}
    assert answers["c4"].outcome == "denied"
    setup.assert_conversation_logged("pydantic-ai")


def test_the_ask_answered_in_the_run_by_a_handler(setup: Setup) -> None:
    toolset = JanitoToolset(setup.registry, tools=["RunCheck"])
    seen: list[dict[str, Any]] = []

    def ask(ctx: RunContext[Any], requests: DeferredToolRequests) -> DeferredToolResults:
        seen.extend(requests.metadata[c.tool_call_id]["janito"] for c in requests.approvals)
        return toolset.results(requests, {c.tool_call_id: c.args_as_dict()["check"] == "lint"
                                          for c in requests.approvals})

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if returns(messages):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[
            ToolCallPart("RunCheck", {"check": "lint"}, tool_call_id="a"),
            ToolCallPart("RunCheck", {"check": "deploy"}, tool_call_id="b"),
        ])

    agent = Agent(FunctionModel(model), toolsets=[toolset],
                  capabilities=[HandleDeferredToolCalls(handler=ask)])
    result = agent.run_sync("check")
    assert result.output == "done"
    assert sorted(r["arguments"]["check"] for r in seen) == ["deploy", "lint"]
    answers = returns(result.all_messages())
    assert parsed(answers["a"].content)["ran"] == "lint"
    assert parsed(answers["b"].content)["error_type"] == "approval_declined"
    assert RUNS == ["lint"]


def test_test_model_calls_what_the_toolset_offers(setup: Setup) -> None:
    toolset = JanitoToolset(setup.registry, tools=["CountLetters"])
    model = TestModel()
    result = Agent(model, toolsets=[toolset]).run_sync("count")
    offered = model.last_model_request_parameters.function_tools
    assert [t.name for t in offered] == ["CountLetters"]
    assert offered[0].parameters_json_schema == setup.registry.schema("CountLetters").parameters
    answer = parsed(returns(result.all_messages()).popitem()[1].content)
    assert answer["success"] is True and isinstance(answer["letters"], int)


@pytest.mark.parametrize("arguments, error_type", [
    ({"txt": "x"}, "invalid_arguments"),
    ("{not json", "invalid_json"),
    ("[1, 2]", "invalid_arguments"),
])
def test_bad_arguments_get_janitos_answer(setup: Setup, arguments: Any,
                                                error_type: str) -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if returns(messages):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("CountLetters", arguments, tool_call_id="z")])

    result = Agent(FunctionModel(model), toolsets=[JanitoToolset(setup.registry)]).run_sync("x")
    answer = parsed(returns(result.all_messages())["z"].content)
    assert answer["success"] is False and answer["error_type"] == error_type


def test_a_tool_the_privileges_deny_is_not_offered(setup: Setup) -> None:
    setup.take_w_away()
    assert "WriteNote" not in JanitoToolset(setup.registry)._definitions
    with pytest.raises(ValueError, match="WriteNote is denied here"):
        JanitoToolset(setup.registry, tools=["WriteNote"])


def test_a_tool_whose_result_is_a_pydantic_model(tmp_path: Path) -> None:
    registry = forecast_registry(tmp_path)
    toolset = JanitoToolset(registry)
    declared = toolset._definitions["GetForecast"].return_schema
    assert declared is not None and declared == registry.schema("GetForecast").output_schema

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if returns(messages):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("GetForecast", {"city": "Lisbon"},
                                                 tool_call_id="f")])

    result = Agent(FunctionModel(model), toolsets=[toolset]).run_sync("weather?")
    assert parsed(returns(result.all_messages())["f"].content) == EXPECTED_FORECAST


def test_arguments_the_person_edited_are_decided_again_by_the_policy(tmp_path: Path) -> None:
    """``ToolApproved(override_args=...)``: the call runs as the person edited it, and
    the policy decides that call anew, so a deny rule still wins over the yes; the same
    approval brought again runs nothing."""
    from janito_notes.run_check import RunCheck
    from pydantic_ai.tools import ToolApproved

    from janito_core import Registry, Workspace

    registry = Registry(autoload=(), workspace=Workspace(str(tmp_path)), reports="off",
                        policy={"mode": "ask", "rules": [
                            {"action": "deny", "tools": ["RunCheck"], "args": {"check": ["prod*"]}}]})
    registry.add_tool(RunCheck, toolset="notes")
    RUNS.clear()
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[
        TextPart("done")] if returns(messages) else [
        ToolCallPart("RunCheck", {"check": "lint"}, tool_call_id="e")])),
        toolsets=[JanitoToolset(registry)], output_type=[str, DeferredToolRequests])
    asked = agent.run_sync("check")
    outcomes = {}
    for edited in ("prod-deploy", "lint-fast", "lint-fast"):
        result = agent.run_sync(message_history=asked.all_messages(),
                                deferred_tool_results=DeferredToolResults(approvals={
                                    "e": ToolApproved(override_args={"check": edited})}))
        outcomes.setdefault(edited, []).append(
            parsed(returns(result.all_messages())["e"].content).get("error_type"))
    assert outcomes == {"prod-deploy": ["denied_by_policy"],
                        "lint-fast": [None, "approval_required"]}
    assert RUNS == ["lint-fast"]
