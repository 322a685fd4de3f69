"""Executing what a model asks for: every error kind, coercion, shapes, the call hook."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from janito_core import BaseTool, Privileges, Registry, hookimpl, tool
from janito_core.constraints import Ge
from janito_core.dispatch import ToolCall, call_tool, execute_tool_calls, failure


def call(registry: Registry, name: Any, arguments: Any = None, **kwargs: Any) -> dict[str, Any]:
    result = call_tool(name, arguments, registry=registry, **kwargs)
    json.dumps(result, allow_nan=False)  # whatever happens, the answer is plain JSON
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # ... and valid UTF-8
    assert isinstance(result.get("success"), bool)
    if not result["success"]:
        assert isinstance(result["error"], str) and result["error"]
        assert result["error_type"].replace("_", "").isalpha()
        assert result["error_type"] == result["error_type"].lower()
    return result


def fields(result: dict[str, Any]) -> list[str]:
    return [d["field"] for d in result["details"]]


def test_failure_builds_the_common_shape() -> None:
    assert failure("It broke.", "timeout", tool="X") == {
        "success": False, "error": "It broke.", "error_type": "timeout", "tool": "X"}


# -- malformed input ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ['{"count": 1', "{count: 1}", "{'count': 1}", "nope",
                                  '{"count": 1}}', "[" * 100_000])
def test_malformed_json(registry: Registry, text: str) -> None:
    result = call(registry, "Typed", text)
    assert result["error_type"] == "invalid_json"
    assert "send one JSON object" in result["error"]
    assert result["tool"] == "Typed"


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "an array"), ('"count"', "a string"),
                                            ("5", "a number"), ("null", "null"),
                                            ("true", "a boolean")])
def test_arguments_that_are_not_an_object(registry: Registry, text: str, kind: str) -> None:
    result = call(registry, "Typed", text)
    assert result["error_type"] == "invalid_arguments"
    assert result["error"] == f"the arguments must be a JSON object, got {kind}"
    assert result["details"] == [{"field": "(arguments)", "error": f"expected an object, got {kind}"}]
    decoded = json.loads(text)
    if not isinstance(decoded, str):  # a str is JSON text, not a decoded value
        assert call(registry, "Typed", decoded)["error_type"] == "invalid_arguments"


@pytest.mark.parametrize("empty", [None, "", "  ", "{}", {}, b"{}"])
def test_empty_arguments_mean_no_arguments(registry: Registry, empty: Any) -> None:
    assert call(registry, "Nothing", empty)["success"] is True
    missing = call(registry, "Typed", empty)
    assert missing["error_type"] == "invalid_arguments"
    assert missing["details"] == [{"field": "count", "error": "missing required field"}]


def test_bytes_and_mappings_are_accepted(registry: Registry) -> None:
    assert call(registry, "Typed", b'{"count": 4}')["values"]["count"] == 4
    assert call(registry, "Typed", bytearray(b'{"count": 4}'))["values"]["count"] == 4
    from types import MappingProxyType

    assert call(registry, "Typed", MappingProxyType({"count": 4}))["values"]["count"] == 4


# -- unknown and unavailable tools ---------------------------------------------------------------


def test_an_unknown_tool_suggests_the_closest_names(registry: Registry) -> None:
    result = call(registry, "ReadNotes", {})
    assert result["error_type"] == "unknown_tool"
    assert result["suggestions"][0] == "ReadNote"
    assert "did you mean ReadNote" in result["error"]
    assert call(registry, "readnote", {})["suggestions"] == ["ReadNote"]
    none = call(registry, "zzzzzzzzzz", {})
    assert none["suggestions"] == [] and "did you mean" not in none["error"]


def test_an_unknown_tool_name_is_cut_short(registry: Registry) -> None:
    result = call(registry, "x" * 10_000, {})
    assert result["error_type"] == "unknown_tool"
    assert len(result["error"]) < 300


@pytest.mark.parametrize("name", [None, 5, ["Typed"], {"name": "Typed"}])
def test_a_tool_name_that_is_not_a_string(registry: Registry, name: Any) -> None:
    assert call(registry, name, {})["error_type"] == "unknown_tool"


def test_a_skipped_tool_is_unavailable_with_its_reason(registry: Registry) -> None:
    result = call(registry, "NeedsToken", {})
    assert result["error_type"] == "tool_unavailable"
    assert "the testkit_token secret is not set" in result["error"]


def test_a_tool_denied_by_the_running_privileges(testkit_dir: Path) -> None:
    registry = Registry(autoload=(), allowed=None, privileges=Privileges.from_string("r"))
    registry.add_toolset("testkit")
    for name, missing in (("WriteNote", "write (-w)"), ("RunThing", "execute (-x)"),
                          ("Everything", "write (-w), execute (-x)")):
        result = call(registry, name, {})
        assert result["error_type"] == "permission_denied"
        assert result["tool"] == name
        assert missing in result["error"]
    assert call(registry, "Nothing", {})["success"] is True


# -- invalid arguments ---------------------------------------------------------------------------


def test_details_name_every_bad_field(registry: Registry) -> None:
    result = call(registry, "Typed", {
        "count": True, "mode": "medium", "color": "blue", "cuont": 1, "point": {"x": "a"},
        "items": [1, "b"], "options": {"label": []}, "level": 7, "ratio": "fast",
    })
    assert result["error_type"] == "invalid_arguments"
    assert sorted(fields(result)) == sorted([
        "count", "mode", "color", "cuont", "point.x", "items[1]", "options.depth",
        "options.label", "level", "ratio"])
    details = {d["field"]: d["error"] for d in result["details"]}
    assert details["count"] == "expected an integer, got boolean true"
    assert details["mode"] == "expected one of \"fast\", \"slow\", got string 'medium'"
    assert "red" in details["color"] and "green" in details["color"]
    assert details["cuont"] == "unknown field (did you mean 'count'?)"
    assert details["options.depth"] == "missing required field"
    assert details["level"] == "expected one of 1, 2, 3, got number 7"
    # the sentence names the first three problems and counts the rest; details has them all
    for field in fields(result)[:3]:
        assert f"{field}: {details[field]}" in result["error"]
    assert result["error"].endswith(f"; and {len(result['details']) - 3} more; "
                                    "see details and call again")


@pytest.mark.parametrize(("arguments", "field", "message"), [
    ({}, "count", "missing required field"),
    ({"count": 1, "colour": "red"}, "colour", "unknown field (did you mean 'color'?)"),
    ({"count": 1, "zzz": 0}, "zzz", "unknown field"),
    ({"count": "ten"}, "count", "expected an integer, got string 'ten'"),
    ({"count": None}, "count", "must not be null"),
    ({"count": 1, "mode": "FAST"}, "mode", "expected one of \"fast\", \"slow\", got string 'FAST'"),
    ({"count": 1, "color": "blue"}, "color", "expected one of \"red\", \"green\", got string 'blue'"),
    ({"count": 1, "tags": "a,b"}, "tags", "expected an array, got string 'a,b'"),
    ({"count": 1, "point": [1, 2]}, "point", "expected an object, got array"),
    ({"count": 1, "point": {"x": 1, "z": 2}}, "point.z", "unknown field"),
    ({"count": 1, "point": {"y": 2}}, "point.x", "missing required field"),
    ({"count": 1, "pair": [1]}, "pair", "expected an array of 2 items, got array"),
    ({"count": 1, "mapping": {"a": "x"}}, "mapping.a", "expected an integer, got string 'x'"),
    ({"count": 1, "flag": "yes"}, "flag", "expected true or false, got string 'yes'"),
])
def test_each_kind_of_bad_field(registry: Registry, arguments: dict[str, Any], field: str,
                                message: str) -> None:
    result = call(registry, "Typed", arguments)
    assert result["error_type"] == "invalid_arguments"
    assert {"field": field, "error": message} in result["details"]


def test_nan_and_infinity_arguments(registry: Registry) -> None:
    for text in ('{"count": 1, "ratio": NaN}', '{"count": 1, "ratio": Infinity}',
                 '{"count": 1, "ratio": -Infinity}'):
        result = call(registry, "Typed", text)
        assert result["error_type"] == "invalid_arguments"
        assert result["details"] == [{"field": "ratio", "error": "expected a finite number"}]
    assert fields(call(registry, "Typed", '{"count": NaN}')) == ["count"]


def test_unknown_field_names_are_cut_short(registry: Registry) -> None:
    result = call(registry, "Typed", {"count": 1, "k" * 5000: 1})
    assert len(result["details"][0]["field"]) <= 100


# -- coercion: the rules of janito_core/_types.py ------------------------------------------------

COERCIONS = [
    # int: a JSON integer, an integral float, a decimal string; never a boolean
    ("count", 5, 5, "int"),
    ("count", 3.0, 3, "int"),
    ("count", "50", 50, "int"),
    ("count", " -7 ", -7, "int"),
    ("count", "+8", 8, "int"),
    # float: a number or a numeric string
    ("ratio", 2, 2.0, "float"),
    ("ratio", "2.5", 2.5, "float"),
    ("ratio", "1e3", 1000.0, "float"),
    # bool: true/false or their strings in any case
    ("flag", True, True, "bool"),
    ("flag", "TRUE", True, "bool"),
    ("flag", " false ", False, "bool"),
    # str: a string; a number becomes its JSON text
    ("name", "text", "text", "str"),
    ("name", 5, "5", "str"),
    ("name", 2.5, "2.5", "str"),
    # arrays: a JSON array or a string holding one
    ("items", [1, "2"], [1, 2], "list"),
    ("items", "[1, 2]", [1, 2], "list"),
    ("tags", ["a", "a", "b"], ["a", "b"], "set"),
    ("pair", [1, "x"], [1, "x"], "tuple"),
    # objects: a JSON object or a string holding one
    ("mapping", {"a": 1}, {"a": 1}, "dict"),
    ("mapping", '{"a": "2"}', {"a": 2}, "dict"),
    ("point", {"x": "1"}, {"__type__": "Point", "x": 1, "y": 0}, "Point"),
    ("point", '{"x": 1, "y": 2}', {"__type__": "Point", "x": 1, "y": 2}, "Point"),
    ("options", {"depth": 2}, {"depth": 2}, "dict"),
    # Literal and Enum: one of the listed values; an Enum arrives as its member
    ("mode", "slow", "slow", "str"),
    ("level", 3, 3, "int"),
    ("level", "2", 2, "int"),
    ("color", "green", "Color.GREEN", "Color"),
    ("color", "GREEN", "Color.GREEN", "Color"),
    # T | None: null gives None
    ("maybe", None, None, "NoneType"),
    ("maybe", "4", 4, "int"),
]


@pytest.mark.parametrize(("field", "sent", "received", "type_name"), COERCIONS)
def test_coercion_rules(registry: Registry, field: str, sent: Any, received: Any,
                        type_name: str) -> None:
    arguments = {"count": 1, field: sent}
    result = call(registry, "Typed", arguments)
    assert result["success"] is True, result
    assert result["values"][field] == received
    assert result["types"][field] == type_name


REFUSALS = [
    ("count", True), ("count", 3.5), ("count", "3.5"), ("count", "1e3"), ("count", "0x10"),
    ("count", "٣"), ("count", []), ("ratio", True), ("ratio", "fast"), ("ratio", "inf"),
    ("ratio", "nan"), ("flag", 1), ("flag", "yes"), ("flag", "1"), ("name", True),
    ("name", [1]), ("name", {}), ("items", "1,2"), ("items", {"a": 1}), ("items", [True]),
    ("mapping", "[1]"), ("mode", 1), ("level", "two"), ("level", 2.5), ("level", True),
    ("color", "Red"), ("color", 1), ("maybe", "x"),
]


@pytest.mark.parametrize(("field", "sent"), REFUSALS)
def test_values_no_rule_accepts(registry: Registry, field: str, sent: Any) -> None:
    result = call(registry, "Typed", {"count": 1, field: sent} if field != "count" else
                  {"count": sent})
    assert result["error_type"] == "invalid_arguments"
    assert fields(result) == [field] or fields(result)[0].startswith(field)


def test_null_for_an_optional_parameter_means_its_default(registry: Registry) -> None:
    # What a model sends under a strict schema: every property, null for "use the default".
    strict = registry.schema("Typed").strict_parameters
    if strict is None:  # Typed has a dict parameter: no strict schema, nulls still work
        strict = registry.schema("Typed").parameters
    arguments = {name: None for name in strict["properties"]}
    arguments["count"] = 2
    result = call(registry, "Typed", arguments)
    assert result["success"] is True
    values = result["values"]
    assert (values["ratio"], values["flag"], values["mode"], values["color"]) == (
        1.0, False, "fast", "Color.RED")
    assert values["maybe"] is None and values["items"] is None


def test_an_optional_parameter_without_a_default_receives_none(registry: Registry) -> None:
    @tool()
    class Window(BaseTool):
        """Show a window of lines."""

        def run(self, start: int | None, end: int | None, label: str | None = "all") -> dict[str, Any]:
            """Show it.

            Args:
                start: First line.
                end: Last line.
                label: A label.
            """
            return {"success": True, "start": start, "end": end, "label": label}

    registry.add_tool(Window)
    assert call(registry, "Window", {}) == {"success": True, "start": None, "end": None,
                                            "label": "all"}
    assert call(registry, "Window", {"end": 9})["start"] is None
    assert call(registry, "Window", '{"start": 2, "label": null}') == {
        "success": True, "start": 2, "end": None, "label": None}


@dataclass
class Box:
    """A box.

    Attributes:
        inside: Anything.
    """

    inside: Any = "empty"


def test_a_parameter_of_any_type_takes_null_as_its_schema_says(registry: Registry) -> None:
    from janito_core.decorator import tool_class
    from janito_core.schema import tool_schema

    @tool()
    def keep(value: Any, loose, box: Box | None = None, kept: object = 5) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        """Keep a value.

        Args:
            value: Any value.
            loose: An untyped one.
            box: A box of anything.
            kept: Any object.
        """
        return {"success": True, "value": value, "loose": loose, "kept": kept,
                "inside": "no box" if box is None else box.inside}

    registry.add_tool(keep)
    schema = tool_schema(tool_class(keep)).parameters
    assert schema["properties"]["value"] == {"description": "Any value."}  # any value: null too
    assert schema["required"] == ["value", "loose"]
    answer = call(registry, "Keep", '{"value": null, "loose": null, "kept": null, "box": {"inside": null}}')
    assert answer == {"success": True, "value": None, "loose": None, "kept": None, "inside": None}
    # null is a value, not "not given": a required one must still be there
    missing = call(registry, "Keep", '{"loose": 1}')
    assert missing["details"] == [{"field": "value", "error": "missing required field"}]


# -- tools that misbehave --------------------------------------------------------------------------


def test_a_tool_that_raises_keeps_the_message_and_no_traceback(
    registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="janito.dispatch"):
        result = call(registry, "Raises", {"message": "disk on fire"})
    assert result == {"success": False, "error": "Raises raised ValueError: disk on fire",
                      "error_type": "tool_exception", "tool": "Raises"}
    assert "Traceback" not in json.dumps(result)
    (logged,) = [r for r in caplog.records if r.name == "janito.dispatch"]
    assert logged.levelno == logging.DEBUG
    assert logged.exc_info is not None and logged.exc_info[0] is ValueError
    assert "Traceback" in caplog.text and "disk on fire" in caplog.text


def test_no_traceback_is_logged_above_debug(registry: Registry,
                                            caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        call(registry, "Raises", {})
    assert "Traceback" not in caplog.text


def test_sys_exit_inside_a_tool_does_not_stop_the_host(registry: Registry) -> None:
    result = call(registry, "Exits", {})
    assert result["error_type"] == "tool_exception"
    assert result["error"] == "Exits raised SystemExit: 3"


def test_workspace_errors_become_outside_workspace(registry: Registry) -> None:
    assert call(registry, "Escapes", {})["error_type"] == "outside_workspace"
    result = call(registry, "NeedsWorkspaceError", {})
    assert result["error_type"] == "outside_workspace"
    assert "/elsewhere" in result["error"]


def test_a_result_that_is_not_a_dict(registry: Registry) -> None:
    result = call(registry, "ReturnsList", {})
    assert result["error_type"] == "invalid_result"
    assert result["error"] == "ReturnsList returned list, not a dict; this is a bug in the tool"


def test_a_result_without_success_is_successful(registry: Registry) -> None:
    assert call(registry, "ReturnsNoSuccess", {}) == {"success": True, "answer": 42}


def test_a_result_whose_success_is_not_a_boolean(registry: Registry) -> None:
    result = call(registry, "ReturnsBadSuccess", {})
    assert result["error_type"] == "invalid_result"
    assert "success='yes'" in result["error"]


@pytest.mark.parametrize(("kind", "problem"), [
    ("set", "is a set"),
    ("bytes", "is a bytes"),
    ("nan", "is nan, which JSON cannot carry"),
    ("inf", "is -inf, which JSON cannot carry"),
    ("key", "has a key 1 that is not a string"),
])
def test_a_result_that_is_not_json_names_the_path(registry: Registry, kind: str,
                                                  problem: str) -> None:
    result = call(registry, "ReturnsObject", {"kind": kind})
    assert result["error_type"] == "invalid_result"
    assert f"result['data']['rows'][1]['value'] {problem}" in result["error"]


def test_an_oversized_string_is_truncated_with_a_marker(registry: Registry) -> None:
    result = call(registry, "Huge", {"chars": 300_000})
    assert result["success"] is True
    assert result["truncated"] is True
    assert result["tail"] == "kept"
    assert "[... truncated:" in result["text"]
    assert "of 300000 characters shown]" in result["text"]
    assert len(json.dumps(result)) <= registry.max_result_chars * 1.05


def test_an_oversized_list_is_truncated_with_a_marker(registry: Registry) -> None:
    result = call(registry, "Huge", {"items": 60_000}, max_result_chars=5_000)
    assert result["truncated"] is True
    assert result["items"][-1].startswith("[... truncated:")
    assert result["items"][-1].endswith("of 60000 items shown]")
    assert result["items"][:3] == [0, 1, 2]
    assert len(json.dumps(result)) <= 5_000 * 1.1


def test_the_size_limit_is_configurable_per_registry(registry: Registry) -> None:
    assert registry.max_result_chars == 100_000
    small = call(registry, "Huge", {"chars": 5_000})
    assert "truncated" not in small
    registry.max_result_chars = 1_000
    cut = call(registry, "Huge", {"chars": 5_000})
    assert cut["truncated"] is True
    assert len(json.dumps(cut)) <= 1_100
    untouched = call(registry, "Huge", {"chars": 5_000}, max_result_chars=10_000)
    assert "truncated" not in untouched


# -- lone surrogates ---------------------------------------------------------------------------------
# JSON text can carry a lone surrogate ("\\ud800"), and a file name that is not UTF-8 decodes to
# one; neither can be encoded as UTF-8, so no answer of dispatch may hold one.


@tool()
class Surrogates(BaseTool):
    """Return lone surrogates in keys and values, as a tool listing odd file names would."""

    def run(self, chars: int = 0) -> dict[str, Any]:
        """Return them.

        Args:
            chars: Also return a string this long made of lone surrogates.
        """
        out: dict[str, Any] = {"name": "a\udcffb.txt", "k\ud800": ["x\udfff", {"\udc80": 1}],
                               "plain": "é 日本 🙂"}
        if chars:
            out["long"] = "\udcff" * chars
        return out


@tool()
class RaisesSurrogate(BaseTool):
    """Raise an error quoting a file name that is not UTF-8."""

    def run(self) -> dict[str, Any]:
        raise RuntimeError("cannot read bad\udcffname")


def assert_utf8(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    text.encode("utf-8")
    return text


def test_lone_surrogates_in_a_result_are_escaped(registry: Registry) -> None:
    registry.add_tool(Surrogates)
    result = call(registry, "Surrogates", {})
    assert result == {"success": True, "name": "a\\udcffb.txt", "k\\ud800": ["x\\udfff", {"\\udc80": 1}],
                      "plain": "é 日本 🙂"}


def test_escaping_happens_before_the_size_limit(registry: Registry) -> None:
    registry.add_tool(Surrogates)
    result = call(registry, "Surrogates", {"chars": 20_000}, max_result_chars=50_000)
    assert result["truncated"] is True  # 20,000 surrogates are 120,000 characters escaped
    assert result["long"].startswith("\\udcff" * 10)
    assert len(result["long"]) <= 50_000
    assert_utf8(result)


def test_an_exception_quoting_a_lone_surrogate(registry: Registry) -> None:
    registry.add_tool(RaisesSurrogate)
    result = call(registry, "RaisesSurrogate", {})
    assert result["error_type"] == "tool_exception"
    assert "bad\\udcffname" in result["error"]


@pytest.mark.parametrize("arguments", [{"\ud800": 1}, '{"\\ud800": 1}', b'{"\\udcff": 1}',
                                       {"count": 1, "x\udcff": [1]}])
def test_a_key_with_a_lone_surrogate_is_named_escaped(registry: Registry, arguments: Any) -> None:
    result = call(registry, "Typed", arguments)
    assert result["error_type"] == "invalid_arguments"
    assert any(f.endswith(("\\ud800", "\\udcff")) for f in fields(result))


@pytest.mark.parametrize("name", ["Typ\ud800ed", "\udcff"])
def test_a_tool_name_with_a_lone_surrogate(registry: Registry, name: str) -> None:
    assert call(registry, name, {})["error_type"] == "unknown_tool"
    assert call(registry, name, "{")["error_type"] == "invalid_json"


def test_a_hook_error_quoting_a_lone_surrogate(registry: Registry) -> None:
    class Broken:
        @hookimpl(tryfirst=True)
        def janito_tool_call(self, call: Any) -> Any:
            raise RuntimeError("cannot open log \udcff")

    registry.plugins.register(Broken(), "tests:broken-surrogate", "acme-broken")
    result = call(registry, "Nothing", {})
    assert result["error_type"] == "plugin_error"
    assert "\\udcff" in result["error"]


def test_every_turn_shape_answers_in_utf8(registry: Registry) -> None:
    registry.add_tool(Surrogates)
    bad = '{"\\ud800": 1}'
    turns = [
        [{"id": "call\ud800", "type": "function", "function": {"name": "Surrogates", "arguments": "{}"}},
         {"id": "c2", "type": "function", "function": {"name": "Typed", "arguments": bad}}],
        [{"type": "function_call", "call_id": "fc\udcff", "name": "Surrogates", "arguments": "{}"},
         {"type": "function_call", "call_id": "fc2", "name": "N\ud800", "arguments": bad}],
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "tu\ud800", "name": "Surrogates", "input": {}},
            {"type": "tool_use", "id": "tu2", "name": "Typed", "input": {"\ud800": 1}}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "Surrogates", "args": {}, "id": "g\udcff"}},
            {"functionCall": {"name": "Ty\ud800ped", "args": {"\ud800": 1}}}]},
    ]
    for turn in turns:
        items = execute_tool_calls(turn, registry=registry)
        assert len(items) == 2
        assert_utf8(items)
        first = items[0]
        content = first.get("content") or first.get("output")
        answer = json.loads(content) if content else first["functionResponse"]["response"]
        assert answer["name"] == "a\\udcffb.txt"
    chat, responses, anthropic, gemini = (execute_tool_calls(t, registry=registry) for t in turns)
    assert chat[0]["tool_call_id"] == "call\\ud800"
    assert responses[0]["call_id"] == "fc\\udcff"
    assert anthropic[0]["tool_use_id"] == "tu\\ud800"
    assert gemini[0]["functionResponse"]["id"] == "g\\udcff"
    assert gemini[1]["functionResponse"]["name"] == "Ty\\ud800ped"


# -- one assistant turn in each provider's shape ---------------------------------------------------


def _echo_counts(results: list[dict[str, Any]], key: str) -> list[Any]:
    out = []
    for item in results:
        content = item[key] if isinstance(item[key], dict) else json.loads(item[key])
        out.append(content.get("values", {}).get("count", content.get("error_type")))
    return out


def test_openai_chat_shape(registry: Registry) -> None:
    calls = [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": "Typed", "arguments": json.dumps({"count": i})}}
        for i in range(5)
    ]
    calls.insert(2, {"id": "call_bad", "type": "function",
                     "function": {"name": "Typo", "arguments": "{}"}})
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    for turn in (calls, message):
        results = execute_tool_calls(turn, registry=registry)
        assert [r["role"] for r in results] == ["tool"] * 6
        assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]
        assert _echo_counts(results, "content") == [0, 1, "unknown_tool", 2, 3, 4]
        assert set(results[0]) == {"role", "tool_call_id", "content"}


def test_openai_responses_shape(registry: Registry) -> None:
    output = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "fc_1", "name": "Typed", "arguments": '{"count": 7}'},
        {"type": "message", "role": "assistant", "content": []},
        {"type": "function_call", "call_id": "fc_2", "name": "Typed", "arguments": "{bad"},
        {"type": "function_call", "call_id": "fc_3", "name": "Typed", "arguments": '{"count": 8}'},
    ]
    results = execute_tool_calls(output, registry=registry)
    assert [r["type"] for r in results] == ["function_call_output"] * 3
    assert [r["call_id"] for r in results] == ["fc_1", "fc_2", "fc_3"]
    assert _echo_counts(results, "output") == [7, "invalid_json", 8]
    assert all(isinstance(r["output"], str) for r in results)


def test_anthropic_shape(registry: Registry) -> None:
    message = {"role": "assistant", "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "Typed", "input": {"count": 3}},
        {"type": "tool_use", "id": "toolu_2", "name": "Raises", "input": {}},
        {"type": "tool_use", "id": "toolu_3", "name": "Typed", "input": {"count": "4"}},
    ]}
    results = execute_tool_calls(message, registry=registry)
    assert [r["type"] for r in results] == ["tool_result"] * 3
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2", "toolu_3"]
    assert [r["is_error"] for r in results] == [False, True, False]
    assert _echo_counts(results, "content") == [3, "tool_exception", 4]
    blocks = [b for b in message["content"] if b["type"] == "tool_use"]
    assert execute_tool_calls(blocks, registry=registry) == results


def test_gemini_shape(registry: Registry) -> None:
    content = {"role": "model", "parts": [
        {"text": "Calling tools."},
        {"functionCall": {"name": "Typed", "args": {"count": 1}}},
        {"functionCall": {"id": "g2", "name": "WriteNot", "args": {}}},
        {"functionCall": {"name": "Typed", "args": {"count": 2}}},
    ]}
    results = execute_tool_calls(content, registry=registry)
    assert [r["functionResponse"]["name"] for r in results] == ["Typed", "WriteNot", "Typed"]
    assert "id" not in results[0]["functionResponse"]
    assert results[1]["functionResponse"]["id"] == "g2"
    responses = [r["functionResponse"]["response"] for r in results]
    assert responses[0]["values"]["count"] == 1
    assert responses[1]["error_type"] == "unknown_tool"
    assert responses[1]["suggestions"] == ["WriteNote"]
    assert responses[2]["values"]["count"] == 2


def test_calls_run_in_order(registry: Registry, workspace: Path) -> None:
    calls = [
        {"type": "tool_use", "id": "1", "name": "WriteNote",
         "input": {"filepath": "log.txt", "text": "first"}},
        {"type": "tool_use", "id": "2", "name": "ReadNote", "input": {"filepath": "log.txt"}},
        {"type": "tool_use", "id": "3", "name": "WriteNote",
         "input": {"filepath": "log.txt", "text": "second"}},
        {"type": "tool_use", "id": "4", "name": "ReadNote", "input": {"filepath": "log.txt"}},
    ]
    results = execute_tool_calls(calls, registry=registry)
    assert [json.loads(r["content"]).get("text") for r in results] == [None, "first", None,
                                                                       "second"]


def test_an_unrecognised_shape_is_a_programming_error(registry: Registry) -> None:
    with pytest.raises(TypeError, match="unrecognised tool call shape"):
        execute_tool_calls([{"tool": "Typed"}], registry=registry)
    with pytest.raises(TypeError):
        execute_tool_calls("Typed", registry=registry)


# -- the janito_tool_call hook ---------------------------------------------------------------------


class Auditor:
    """A wrapper that sees every call and its result."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], str, bool]] = []

    @hookimpl(wrapper=True)
    def janito_tool_call(self, call: ToolCall):  # type: ignore[no-untyped-def]
        result = yield
        self.seen.append((call.name, dict(call.arguments), call.permissions,
                          result.get("success")))
        result["audited"] = True
        return result


class Gatekeeper:
    """Refuses writes; lets everything else through."""

    @hookimpl
    def janito_tool_call(self, call: ToolCall) -> dict[str, Any] | None:
        if "w" in call.permissions:
            return call.refuse(f"{call.name} needs approval")
        return None


class Exploder:
    @hookimpl
    def janito_tool_call(self, call: ToolCall) -> dict[str, Any] | None:
        raise RuntimeError("the approval service is down")


def test_a_wrapper_sees_every_call(registry: Registry, workspace: Path) -> None:
    auditor = Auditor()
    assert registry.plugins.register(auditor, "acme-audit:audit", "acme-audit") is None
    call(registry, "Typed", {"count": "5"})
    call(registry, "WriteNote", {"filepath": "a.txt", "text": "x"})
    result = call(registry, "Raises", {})
    assert result["audited"] is True and result["error_type"] == "tool_exception"
    assert auditor.seen == [
        ("Typed", {"count": 5}, "", True),
        ("WriteNote", {"filepath": "a.txt", "text": "x"}, "w", True),
        ("Raises", {}, "", False),
    ]
    # Calls rejected before they reach a tool never reach the hook either.
    call(registry, "Typed", {"count": "x"})
    call(registry, "NoSuchTool", {})
    assert len(auditor.seen) == 3


def test_an_implementation_can_refuse_a_call(registry: Registry, workspace: Path) -> None:
    registry.plugins.register(Gatekeeper(), "acme-gate:gate", "acme-gate")
    refused = call(registry, "WriteNote", {"filepath": "a.txt", "text": "x"})
    assert refused == {"success": False, "error": "WriteNote needs approval",
                       "error_type": "refused", "tool": "WriteNote"}
    assert not (workspace / "a.txt").exists()
    assert call(registry, "ReadNote", {"filepath": "missing.txt"})["error_type"] == "not_found"


def test_a_hook_that_raises_is_a_plugin_error_naming_the_plugin(registry: Registry) -> None:
    registry.plugins.register(Exploder(), "acme-explode:explode", "acme-explode")
    result = call(registry, "Nothing", {})
    assert result["error_type"] == "plugin_error"
    assert "plugin 'acme-explode:explode' raised in janito_tool_call" in result["error"]
    assert "the approval service is down" in result["error"]
    (error,) = [e for e in registry.load_errors if e.kind == "hook"]
    assert error.distribution == "acme-explode"


def test_the_call_object(registry: Registry) -> None:
    captured: list[ToolCall] = []

    class Spy:
        @hookimpl
        def janito_tool_call(self, call: ToolCall) -> None:
            captured.append(call)

    registry.plugins.register(Spy(), "tests:spy", None)
    call_tool("Typed", '{"count": 1}', registry=registry, call_id="abc")
    (seen,) = captured
    assert (seen.name, seen.id, seen.raw_arguments, seen.arguments) == (
        "Typed", "abc", '{"count": 1}', {"count": 1})
    assert seen.registry is registry
    assert seen.record is registry.record("Typed")


# -- never raises ------------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
NAMES = st.sampled_from(["Typed", "ReadNote", "WriteNote", "Huge", "ReturnsObject", "Raises",
                         "Nope", "typed", ""])
KEYS = st.sampled_from(["count", "ratio", "flag", "name", "items", "tags", "mode", "level",
                        "color", "point", "options", "mapping", "maybe", "pair", "filepath",
                        "text", "kind", "chars", "zz"])


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, arguments=st.dictionaries(KEYS, JSON, max_size=6) | JSON | st.text(max_size=30))
def test_call_tool_never_raises(registry: Registry, name: str, arguments: Any) -> None:
    if isinstance(arguments, dict) and "chars" in arguments:
        arguments["chars"] = 10
    call(registry, name, arguments)


# -- renamed parameters and per-registry schemas -------------------------------------------------


@tool(permissions="")
class Renamed(BaseTool):
    """A tool whose parameter used to be called differently."""

    renamed_parameters: ClassVar[dict[str, str]] = {"search_text": "renamed to 'old_str'"}

    def run(self, old_str: str) -> dict[str, Any]:
        """Echo.

        Args:
            old_str: Text.
        """
        return {"success": True, "old_str": old_str}


def test_a_renamed_parameter_names_its_new_name(workspace: Path) -> None:
    registry = Registry(workspace=workspace, autoload=(), allowed=None)
    registry.add_tool(Renamed)
    result = call(registry, "Renamed", {"search_text": "x"})
    details = {d["field"]: d["error"] for d in result["details"]}
    assert details == {"search_text": "unknown field: renamed to 'old_str'",
                       "old_str": "missing required field"}
    assert call(registry, "Renamed", {"old_str": "x"})["success"] is True


@tool(permissions="")
class Changed(BaseTool):
    """A tool whose parameter's values changed meaning."""

    changed_parameters: ClassVar[dict[str, str]] = {"depth": "0 meant no limit before: use null"}

    def run(self, depth: Annotated[int, Ge(1)] | None = None, name: str = "") -> dict[str, Any]:
        """Echo.

        Args:
            depth: Levels, from 1; null for no limit.
            name: Text.
        """
        return {"success": True, "depth": depth}


def test_a_refused_value_says_what_changed(workspace: Path) -> None:
    registry = Registry(workspace=workspace, autoload=(), allowed=None)
    registry.add_tool(Changed)
    result = call(registry, "Changed", {"depth": 0, "name": ["x"]})
    details = {d["field"]: d["error"] for d in result["details"]}
    assert details == {"depth": "must be at least 1, got 0 (0 meant no limit before: use null)",
                       "name": "expected a string, got array"}
    assert "(0 meant no limit before: use null)" in result["error"]
    typed = call(registry, "Changed", {"depth": "deep"})
    assert typed["details"][0]["error"].endswith("(0 meant no limit before: use null)")
    assert call(registry, "Changed", {"depth": None})["depth"] is None


@tool(permissions="")
class Offered(BaseTool):
    """Pick one of what the registry offers."""

    calls = 0

    def run(self, choice: str) -> dict[str, Any]:
        """Pick.

        Args:
            choice: One of the offers.
        """
        return {"success": True}

    @classmethod
    def refine_schema(cls, schema: Any, registry: Registry) -> Any:
        cls.calls += 1
        if cls.calls > 2:
            raise RuntimeError("broken refinement")
        offers = [f"offer-{cls.calls}"]
        properties = {**schema.parameters["properties"],
                      "choice": {**schema.parameters["properties"]["choice"], "enum": offers}}
        return schema._replace(description=f"Offers: {offers[0]}",
                               parameters={**schema.parameters, "properties": properties})


def test_refine_schema_is_asked_each_time_and_a_failure_keeps_the_declared_schema(
        workspace: Path) -> None:
    registry = Registry(workspace=workspace, autoload=(), allowed=None)
    registry.add_tool(Offered)
    first = registry.schema("Offered")
    assert first.description == "Offers: offer-1"
    assert first.parameters["properties"]["choice"]["enum"] == ["offer-1"]
    assert registry.get_function_schema("Offered")["function"]["description"] == "Offers: offer-2"
    declared = registry.schema("Offered")
    assert declared.description == "Pick one of what the registry offers."
    assert "enum" not in declared.parameters["properties"]["choice"]
