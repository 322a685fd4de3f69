"""The OpenAI Agents SDK: janito's tools as FunctionTools, run by the SDK's ScriptedModel."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from framework_setup import (
    EXPECTED_FORECAST,
    RUNS,
    Setup,
    forecast_registry,
    parsed,
)

from janito_core.integrations.openai_agents import reject, tools

OFFLINE = RunConfig(tracing_disabled=True)


def outputs(model: ScriptedModel) -> dict[str, Any]:
    """The tools' answers the model was last sent, by call id, as it read them."""
    last = model.last_call
    assert last is not None
    return {item["call_id"]: parsed(item["output"]) for item in last.input
            if isinstance(item, dict) and item.get("type") == "function_call_output"}


def test_a_conversation_reads_is_refused_a_write_and_is_asked_twice(setup: Setup) -> None:
    model = ScriptedModel([
        [function_call("CountLetters", {"text": "hello world"}, call_id="c1"),
         function_call("WriteNote", {"name": "n.txt", "text": "hi"}, call_id="c2")],
        [function_call("RunCheck", {"check": "lint"}, call_id="c3")],
        [function_call("RunCheck", {"check": "deploy"}, call_id="c4")],
        [assistant_message("done")],
    ])
    agent = Agent(name="checker", model=model, tools=tools(setup.registry))
    setup.take_w_away()

    async def conversation() -> str:
        result = await Runner.run(agent, "check the project", run_config=OFFLINE)
        [asked] = result.interruptions
        assert (asked.tool_name, asked.call_id) == ("RunCheck", "c3")
        assert RUNS == []
        state = result.to_state()
        state.approve(asked)
        result = await Runner.run(agent, state, run_config=OFFLINE)
        [asked] = result.interruptions
        assert asked.call_id == "c4"
        state = result.to_state()
        reject(state, asked)
        result = await Runner.run(agent, state, run_config=OFFLINE)
        return str(result.final_output)

    assert asyncio.run(conversation()) == "done"
    answers = outputs(model)
    assert answers["c1"] == {"success": True, "letters": 10}
    assert answers["c2"]["error_type"] == "permission_denied"
    assert answers["c3"] == {"success": True, "ran": "lint"}
    assert answers["c4"]["error_type"] == "approval_declined"
    assert answers["c4"]["approval"]["arguments"] == {"check": "deploy"}
    setup.assert_conversation_logged("openai-agents")


def test_a_reason_for_the_no_reaches_the_model(setup: Setup) -> None:
    model = ScriptedModel([[function_call("RunCheck", {"check": "deploy"}, call_id="d")],
                           [assistant_message("ok")]])
    agent = Agent(name="checker", model=model, tools=tools(setup.registry, ["RunCheck"]))

    async def conversation() -> None:
        result = await Runner.run(agent, "deploy", run_config=OFFLINE)
        state = result.to_state()
        reject(state, result.interruptions[0], "not on a Friday")
        await Runner.run(agent, state, run_config=OFFLINE)

    asyncio.run(conversation())
    answer = outputs(model)["d"]
    assert answer["error_type"] == "approval_declined" and "not on a Friday" in answer["error"]
    assert RUNS == []


@pytest.mark.parametrize("arguments, error_type", [
    ({"txt": "x"}, "invalid_arguments"),
    ('{"text": 5, "more": 1}', "invalid_arguments"),
])
def test_bad_arguments_get_janitos_answer(setup: Setup, arguments: Any, error_type: str) -> None:
    model = ScriptedModel([[function_call("CountLetters", arguments, call_id="z")],
                           [assistant_message("ok")]])
    agent = Agent(name="counter", model=model, tools=tools(setup.registry, ["CountLetters"]))
    asyncio.run(Runner.run(agent, "count", run_config=OFFLINE))
    answer = outputs(model)["z"]
    assert answer["success"] is False and answer["error_type"] == error_type


def test_the_schemas_are_janitos(setup: Setup) -> None:
    [tool] = tools(setup.registry, ["CountLetters"])
    schema = setup.registry.schema("CountLetters")
    assert tool.strict_json_schema is True
    assert tool.params_json_schema == schema.strict_parameters
    assert tool.description == schema.description


def test_a_tool_whose_result_is_a_pydantic_model(tmp_path: Path) -> None:
    registry = forecast_registry(tmp_path)
    [forecast] = tools(registry)
    model = ScriptedModel([[function_call("GetForecast", {"city": "Lisbon"}, call_id="f")],
                           [assistant_message("ok")]])
    agent = Agent(name="weather", model=model, tools=[forecast])
    asyncio.run(Runner.run(agent, "weather?", run_config=OFFLINE))
    assert outputs(model)["f"] == EXPECTED_FORECAST


def test_an_approved_run_state_resumed_twice_runs_the_call_once(setup: Setup) -> None:
    """A host that saved the approved state and resumes it again (a retried request, a
    second worker) gets no second run: the person's yes settled one call."""
    from agents import RunState

    model = ScriptedModel([[function_call("RunCheck", {"check": "lint"}, call_id="c1")],
                           [assistant_message("done")], [assistant_message("done again")]])
    agent = Agent(name="checker", model=model, tools=tools(setup.registry, ["RunCheck"]))

    async def conversation() -> dict[str, Any]:
        result = await Runner.run(agent, "lint", run_config=OFFLINE)
        state = result.to_state()
        state.approve(result.interruptions[0])
        saved = state.to_json()
        await Runner.run(agent, state, run_config=OFFLINE)
        await Runner.run(agent, await RunState.from_json(agent, saved), run_config=OFFLINE)
        return outputs(model)

    answer = asyncio.run(conversation())["c1"]
    assert answer["error_type"] == "approval_required" and "used already" in answer["error"]
    assert RUNS == ["lint"]
