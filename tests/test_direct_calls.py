"""The short way through ``call_tool`` answers exactly as the full one, and never outlives
the state that admitted it: privileges, policy, journal, hooks and tools changed after a
call take effect on the next one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from janito_core import BaseTool, Privileges, Registry, _call, _plans, hookimpl, tool
from janito_core.dispatch import ToolCall, call_tool
from janito_core.workspace import Workspace


@tool(permissions="r")
class Ping(BaseTool):
    """Answer at once."""

    def run(self) -> dict[str, Any]:
        """Answer at once."""
        return {"success": True}


@tool(permissions="w")
class Note(BaseTool):
    """Write a note."""

    def run(self, path: str, text: str = "") -> dict[str, Any]:
        """Write a note.

        Args:
            path: Where.
            text: What.
        """
        self.workspace.write_file(path, text.encode(), overwrite=True)
        return {"success": True, "path": path}


@tool(permissions="r")
class Echo(BaseTool):
    """Answer with what it was given, or with what it is told to answer."""

    def run(self, count: int, mode: Literal["plain", "raise", "exit", "awaitable", "bad",
                                            "big", "wide", "nested", "no-success"] = "plain",
            text: str = "") -> Any:
        """Answer.

        Args:
            count: A number.
            mode: What to answer.
            text: Some text.
        """
        if mode == "raise":
            raise ValueError(f"told to raise {text}")
        if mode == "exit":
            raise SystemExit(3)
        if mode == "awaitable":
            async def later() -> dict[str, Any]:
                return {"success": True, "later": count}
            return later()
        if mode == "bad":
            return {"success": True, "value": float("nan")}
        if mode == "big":
            return {"success": True, "text": text * 1000}
        if mode == "wide":
            return {"success": True, "ключ": text + "\udcff"}
        if mode == "nested":
            return {"success": True, "rows": [{"n": count, "text": text}]}
        if mode == "no-success":
            return {"count": count}
        return {"success": True, "count": count, "text": text, "none": None, "flag": False}


@tool(permissions="r")
class Later(BaseTool):
    """Answer later."""

    async def run(self) -> dict[str, Any]:
        """Answer later."""
        return {"success": True, "async": True}


READ = Privileges.from_string("r")


def the_full_way(name: Any, arguments: Any, registry: Registry) -> dict[str, Any]:
    """``call_tool(name, arguments, registry=registry)`` as it answers without the short way."""
    return _call._full_way(name, arguments, registry, None, None, None, None, None)


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    registry = Registry(autoload=(), workspace=Workspace(tmp_path), max_result_chars=2_000)
    # the short way is for untraced calls: whatever provider an earlier test of the
    # process set, these calls are not traced
    registry.tracing = False
    for cls in (Ping, Note, Echo, Later):
        registry.add_tool(cls)
    return registry


arguments = st.one_of(
    st.none(), st.just("{}"), st.just(""), st.just("  "), st.just("[]"), st.just("{"),
    st.just(b"{}"), st.just('{"count": 1e400}'), st.just('{"count": NaN}'),
    st.dictionaries(st.sampled_from(["count", "mode", "text", "other", "path"]),
                    st.one_of(st.integers(-3, 10**20), st.text(max_size=6), st.none(),
                              st.booleans(), st.floats(allow_nan=False, width=32),
                              st.sampled_from(["plain", "raise", "exit", "awaitable", "bad",
                                               "big", "wide", "nested", "no-success"])),
                    max_size=4),
).flatmap(lambda value: st.sampled_from([value, json.dumps(value)])
          if isinstance(value, dict) else st.just(value))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["Ping", "Echo", "Later", "Note", "Nope", 7]), sent=arguments)
def test_both_ways_answer_alike(registry: Registry, name: Any, sent: Any) -> None:
    """Differential: a call the short way may take, against the same call made the full way.
    (The hypothesis examples share one registry, so most calls find their tool admitted.)"""
    registry.privileges = READ  # Note is denied, the rest allowed
    call_tool(name, '{"count": 1}', registry=registry)  # admitted: the short way is open
    call_tool(name, "{}", registry=registry)
    direct = call_tool(name, sent, registry=registry)
    full = the_full_way(name, sent, registry)
    assert direct == full
    json.dumps(direct, allow_nan=False)


def test_the_short_way_is_taken_once_a_call_was_admitted(registry: Registry,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    full_ways: list[str] = []
    full_way = _call._full_way

    def spy(name: Any, *args: Any) -> dict[str, Any]:
        full_ways.append(name)
        return full_way(name, *args)

    monkeypatch.setattr(_call, "_full_way", spy)
    for _ in range(3):
        assert call_tool("Echo", '{"count": 2}', registry=registry)["count"] == 2
    for _ in range(3):
        assert call_tool("Ping", "{}", registry=registry) == {"success": True}
    # the first call of each is admitted the full way; the next two take the short way
    assert full_ways == ["Echo", "Ping"]


def test_privileges_taken_away_after_a_call_refuse_the_next(registry: Registry) -> None:
    assert call_tool("Ping", registry=registry) == {"success": True}
    assert call_tool("Ping", registry=registry) == {"success": True}
    registry.privileges = Privileges.from_string("x")
    refused = call_tool("Ping", registry=registry)
    assert refused["error_type"] == "permission_denied"
    registry.privileges = Privileges.from_string("r")
    assert call_tool("Ping", registry=registry) == {"success": True}


def test_a_policy_set_after_a_call_decides_the_next(registry: Registry) -> None:
    assert call_tool("Ping", registry=registry)["success"]
    assert call_tool("Ping", registry=registry)["success"]
    from janito_core.policy import Policy

    registry.policy = Policy.from_data({"rules": [{"action": "deny", "tools": ["Ping"]}]})
    assert call_tool("Ping", registry=registry)["error_type"] == "denied_by_policy"


def test_a_journal_set_after_a_call_records_the_next(registry: Registry, tmp_path: Path) -> None:
    from janito_core.journal import Journal

    assert call_tool("Note", '{"path": "a.txt", "text": "one"}', registry=registry)["success"]
    assert call_tool("Note", '{"path": "a.txt", "text": "two"}', registry=registry)["success"]
    registry.journal = Journal(tmp_path.parent / f"{tmp_path.name}-journal")
    assert call_tool("Note", '{"path": "a.txt", "text": "three"}', registry=registry)["success"]
    entries = registry.journal.entries()
    assert [entry.tool for entry in entries] == ["Note"]


def test_a_hook_registered_after_a_call_sees_the_next(registry: Registry) -> None:
    seen: list[str] = []

    class Watcher:
        @hookimpl(wrapper=True)
        def janito_tool_call(self, call: ToolCall):  # type: ignore[no-untyped-def]
            result = yield
            seen.append(call.name)
            return result

    assert call_tool("Ping", registry=registry)["success"]
    assert call_tool("Ping", registry=registry)["success"]
    registry.plugins.register(Watcher(), "tests:watcher", "tests")
    assert call_tool("Ping", registry=registry)["success"]
    assert seen == ["Ping"]


def test_a_timeout_or_a_token_takes_the_full_way(registry: Registry) -> None:
    from janito_core.cancellation import CancelToken

    assert call_tool("Ping", registry=registry)["success"]
    token = CancelToken()
    token.cancel("stop")
    assert call_tool("Ping", registry=registry, cancel_token=token)["error_type"] == "cancelled"
    assert call_tool("Ping", registry=registry, timeout=5)["success"]


def test_a_workspace_set_after_a_call_is_the_next_ones(registry: Registry,
                                                      tmp_path: Path) -> None:
    registry.privileges = Privileges.from_string("rw")
    for text in ("one", "two"):
        assert call_tool("Note", {"path": "a.txt", "text": text}, registry=registry)["success"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    registry.workspace = Workspace(elsewhere)
    assert call_tool("Note", {"path": "a.txt", "text": "three"}, registry=registry)["success"]
    assert (tmp_path / "a.txt").read_text() == "two"
    assert (elsewhere / "a.txt").read_text() == "three"


def test_a_run_replaced_by_a_coroutine_function_is_awaited(registry: Registry,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert call_tool("Ping", registry=registry) == {"success": True}

    async def run(self: Any) -> dict[str, Any]:
        return {"success": True, "replaced": True}

    monkeypatch.setattr(Ping, "run", run)
    assert call_tool("Ping", registry=registry) == {"success": True, "replaced": True}


@pytest.mark.parametrize("limit", [1, 17, 18, 19])
def test_the_bare_answer_is_capped_as_the_full_way_caps_it(tmp_path: Path, limit: int) -> None:
    registry = Registry(autoload=(), workspace=Workspace(tmp_path), max_result_chars=limit)
    registry.add_tool(Ping)
    answers = [call_tool("Ping", "{}", registry=registry) for _ in range(3)]
    assert answers[1:] == answers[:2] == [the_full_way("Ping", "{}", registry)] * 2


@tool(permissions="r")
class EchoWithOwnSchema(Echo):
    """Answer, taking a count that must be at least 5."""

    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object", "properties": {"count": {"type": "integer", "minimum": 5}},
        "required": ["count"], "additionalProperties": False}


def test_a_subclass_does_not_take_its_parents_plan(registry: Registry) -> None:
    """Echo's plan, which EchoWithOwnSchema inherits as a class attribute, holds a compiled
    decoder that knows nothing of the subclass's minimum."""
    pytest.importorskip("msgspec")
    registry.add_tool(EchoWithOwnSchema)
    for _ in range(_plans.COLD_CALLS + 2):
        assert call_tool("Echo", '{"count": 1}', registry=registry)["count"] == 1
    assert Echo._janito_plan.decode is not None  # type: ignore[attr-defined]
    for _ in range(2):
        refused = call_tool("EchoWithOwnSchema", '{"count": 1}', registry=registry)
        assert refused["error_type"] == "invalid_arguments", refused
    assert call_tool("EchoWithOwnSchema", '{"count": 6}', registry=registry)["count"] == 6
    assert EchoWithOwnSchema._janito_plan.owner is EchoWithOwnSchema  # type: ignore[attr-defined]
    assert Echo._janito_plan.owner is Echo  # type: ignore[attr-defined]


class SpecWatcher:
    """A janito_tool_call plugin named by an entry point (set_specs), not registered."""

    seen: ClassVar[list[str]] = []

    @hookimpl(wrapper=True)
    def janito_tool_call(self, call: ToolCall):  # type: ignore[no-untyped-def]
        result = yield
        SpecWatcher.seen.append(call.name)
        return result


spec_watcher = SpecWatcher()


def test_a_hook_plugin_found_after_a_call_sees_the_next(registry: Registry) -> None:
    from janito_core.discovery import PluginSpec

    SpecWatcher.seen.clear()
    for _ in range(3):  # admitted, then the short way: no hook known to anyone
        assert call_tool("Ping", registry=registry)["success"]
    registry.plugins.set_specs([PluginSpec("watcher", "tests", "0", f"{__name__}:spec_watcher")])
    assert call_tool("Ping", registry=registry)["success"]
    assert SpecWatcher.seen == ["Ping"]
