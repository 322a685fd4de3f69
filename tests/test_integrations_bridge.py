"""What every framework integration shares (janito_core/integrations/_bridge.py), tested
without any framework: the tools offered, the ask answered before the call and settled in
dispatch, and a person's no that never becomes a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from janito_core import Privileges, Registry, Workspace, tool
from janito_core.integrations import _bridge
from janito_core.journal import Journal

RAN: list[str] = []


@tool(permissions="r")
def look(text: str) -> dict[str, Any]:
    """Look at a text.

    Args:
        text: What to look at.
    """
    return {"seen": text}


@tool(permissions="x")
def launch(target: str) -> dict[str, Any]:
    """Launch something.

    Args:
        target: What to launch.
    """
    RAN.append(target)
    return {"launched": target}


def make(tmp_path: Path, **options: Any) -> Registry:
    RAN.clear()
    (tmp_path / "ws").mkdir()
    registry = Registry(autoload=(), workspace=Workspace(str(tmp_path / "ws")), reports="off",
                        policy=options.pop("policy", {"mode": "ask"}),
                        journal=Journal(tmp_path / "journal"), **options)
    registry.add_tool(look)
    registry.add_tool(launch)
    return registry


def audit(registry: Registry) -> list[tuple[str, Any, Any, str]]:
    assert registry.journal is not None
    return [(line["tool"], line.get("error_type"), line.get("approved"), line["caller"]["kind"])
            for line in registry.journal.audit_log.lines()]


def test_offered_are_the_loaded_tools_and_a_denied_one_is_refused_by_name(tmp_path: Path) -> None:
    registry = make(tmp_path, privileges=Privileges.from_string("r"))
    assert [t.name for t in _bridge.offered(registry)] == ["Look"]
    [offered] = _bridge.offered(registry, ["Look"])
    assert offered.parameters == registry.schema("Look").parameters
    assert (offered.permissions, offered.toolset) == ("r", "local")
    with pytest.raises(ValueError, match="Launch is denied here"):
        _bridge.offered(registry, ["Launch"])
    with pytest.raises(ValueError, match="no tool named 'Nope'"):
        _bridge.offered(registry, ["Nope"])


def test_request_says_what_the_person_is_asked_and_runs_nothing(tmp_path: Path) -> None:
    registry = make(tmp_path)
    assert _bridge.request(registry, "Look", {"text": "a"}, "c1") is None
    asked = _bridge.request(registry, "Launch", {"target": "rocket"}, "c2")
    assert asked is not None
    assert (asked.tool, asked.arguments, asked.call_id) == ("Launch", {"target": "rocket"}, "c2")
    assert asked.reason and RAN == []
    # kept, so that the yes lets the call go where this request showed, and only there
    assert registry.pending_approvals() == [asked]
    assert _bridge.request(registry, "Launch", {"target": "rocket"}, "c2") == asked
    assert registry.pending_approvals() == [asked]
    # a call that dispatch would refuse anyway is not put to anyone
    assert _bridge.request(registry, "Launch", {"tagret": "x"}, "c3") is None
    assert _bridge.request(registry, "Launch", "{not json", "c3") is None
    assert _bridge.request(registry, "Nope", {}, "c3") is None


def test_a_yes_runs_the_call_and_a_no_declines_it_once_logged_each(tmp_path: Path) -> None:
    registry = make(tmp_path)
    ran = _bridge.call(registry, "Launch", {"target": "a"}, "c1", decision=True, host="test")
    assert ran == {"success": True, "launched": "a"}
    declined = _bridge.call(registry, "Launch", '{"target": "b"}', "c2", decision="too risky",
                            host="test")
    assert declined["error_type"] == "approval_declined" and "too risky" in declined["error"]
    unasked = _bridge.call(registry, "Launch", {"target": "c"}, "c3", host="test")
    assert unasked["error_type"] == "approval_required"
    assert RAN == ["a"]
    assert audit(registry) == [("Launch", None, True, "test"),
                               ("Launch", "approval_declined", False, "test"),
                               ("Launch", "approval_required", False, "test")]


def test_a_no_is_never_a_run_even_when_the_policy_no_longer_asks(tmp_path: Path) -> None:
    registry = make(tmp_path, policy={"mode": "full-auto"})
    declined = _bridge.call(registry, "Launch", {"target": "a"}, "c1", decision=False)
    assert declined["error_type"] == "approval_declined"
    assert _bridge.call(registry, "Launch", {"target": "a"}, "c1", decision=True)["success"]
    assert RAN == ["a"]


def test_the_registrys_own_approver_answers_and_no_framework_is_asked(tmp_path: Path) -> None:
    asked: list[str] = []

    def approver(request: Any) -> bool:
        asked.append(request.arguments["target"])
        return request.arguments["target"] == "a"

    registry = make(tmp_path, approver=approver)
    assert _bridge.request(registry, "Launch", {"target": "a"}, "c1") is None
    assert _bridge.call(registry, "Launch", {"target": "a"}, "c1")["success"] is True
    assert _bridge.call(registry, "Launch", {"target": "b"}, "c2")["error_type"] == \
        "approval_declined"
    assert asked == ["a", "b"] and RAN == ["a"]


async def _acall(registry: Registry) -> dict[str, Any]:
    return await _bridge.acall(registry, "Launch", {"target": "z"}, "c9", decision=True,
                               host="test")


def test_acall_settles_the_same_way(tmp_path: Path) -> None:
    import asyncio

    registry = make(tmp_path)
    assert asyncio.run(_acall(registry)) == {"success": True, "launched": "z"}
    assert audit(registry) == [("Launch", None, True, "test")]


@pytest.mark.parametrize("answer, decision", [
    (True, True), ("always", True), (False, False), (None, False), ("", False),
    ("not now", "not now"), (1, False), ({"type": "approve"}, False),
])
def test_decision_of(answer: Any, decision: Any) -> None:
    assert _bridge.decision_of(answer) == decision


def test_a_decision_settles_its_call_once(tmp_path: Path) -> None:
    """A framework's approval brought again (a saved run state resumed twice, a task
    LangGraph runs again) does not run the call again, nor turns a no into a yes."""
    registry = make(tmp_path)
    assert _bridge.call(registry, "Launch", {"target": "a"}, "c1", decision=True)["success"]
    again = _bridge.call(registry, "Launch", {"target": "a"}, "c1", decision=True)
    assert again["error_type"] == "approval_required" and "used already" in again["error"]
    assert _bridge.call(registry, "Launch", {"target": "b"}, "c2", decision=False)[
        "error_type"] == "approval_declined"
    assert _bridge.call(registry, "Launch", {"target": "b"}, "c2", decision=True)[
        "error_type"] == "approval_required"
    # other arguments under the same id are another call, asked about on their own
    assert _bridge.call(registry, "Launch", {"target": "c"}, "c1", decision=True)["success"]
    # without an id nothing tells two calls apart: each yes a person gives runs one
    for _ in range(2):
        assert _bridge.call(registry, "Launch", {"target": "n"}, None, decision=True)["success"]
    assert RAN == ["a", "c", "n", "n"]
