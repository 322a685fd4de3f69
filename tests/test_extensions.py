"""Extension points for toolsets whose tools are known only at run time (mounted servers)."""

from __future__ import annotations

import types
from typing import Any

from janito_core import BaseTool, Registry, hookimpl, tool
from janito_core.discovery import tool_classes
from janito_core.dispatch import call_tool, execute_tool_calls


def _declared(name: str, schema: dict[str, Any]) -> type:
    def run(self: BaseTool, **kwargs: Any) -> dict[str, Any]:
        return {"success": True, "received": kwargs}

    cls = type(name, (BaseTool,), {"__doc__": "Echo what arrives.", "input_schema": schema,
                                    "run": run, "__module__": __name__})
    return tool(permissions="x")(cls)


def test_a_declared_schema_is_validated_by_the_same_rules() -> None:
    registry = Registry(autoload=())
    registry.add_tool(_declared("remote__echo", {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to echo."},
                       "times": {"type": ["integer", "null"]},
                       "mode": {"enum": ["a", "b"]}},
        "required": ["text"],
        "additionalProperties": False,
    }))
    schema = registry.get_function_schema("remote__echo")["function"]
    assert schema["parameters"]["properties"]["text"]["description"] == "What to echo."
    ok = call_tool("remote__echo", '{"text": 5, "times": "3", "mode": "b"}', registry=registry)
    assert ok == {"success": True, "received": {"text": "5", "times": 3, "mode": "b"}}
    bad = call_tool("remote__echo", '{"times": "x", "mode": "c", "extra": 1}', registry=registry)
    assert bad["error_type"] == "invalid_arguments"
    assert sorted(d["field"] for d in bad["details"]) == ["extra", "mode", "text", "times"]


def test_an_open_declared_schema_passes_undeclared_arguments_through() -> None:
    registry = Registry(autoload=())
    registry.add_tool(_declared("remote__open", {"type": "object", "properties": {}}))
    result = call_tool("remote__open", {"anything": [1, 2]}, registry=registry)
    assert result == {"success": True, "received": {"anything": [1, 2]}}


def test_a_declared_field_of_any_type_takes_null_as_its_schema_says() -> None:
    registry = Registry(autoload=())
    registry.add_tool(_declared("remote__any", {
        "type": "object", "properties": {"value": {"description": "Anything."}},
        "required": ["value"], "additionalProperties": False,
    }))
    result = call_tool("remote__any", '{"value": null}', registry=registry)
    assert result == {"success": True, "received": {"value": None}}


def test_nested_declared_objects_follow_the_rules_of_typed_objects() -> None:
    registry = Registry(autoload=())
    registry.add_tool(_declared("remote__nested", {
        "type": "object",
        "properties": {"options": {
            "type": "object",
            "properties": {"depth": {"type": "integer"}, "label": {"type": "string"}},
            "required": ["depth"],
            "additionalProperties": False,
        }, "extra": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "required": ["options"],
    }))
    # null for an optional field that cannot be null means "not given"; an open object
    # keeps undeclared keys, a closed one refuses them
    ok = call_tool("remote__nested", {"options": {"depth": "2", "label": None},
                                      "extra": {"n": "1", "kept": True}}, registry=registry)
    assert ok["received"] == {"options": {"depth": 2}, "extra": {"n": 1, "kept": True}}
    bad = call_tool("remote__nested", {"options": {"label": "x", "colour": "red"}},
                    registry=registry)
    assert bad["error_type"] == "invalid_arguments"
    assert sorted(d["field"] for d in bad["details"]) == ["options.colour", "options.depth"]


def test_a_class_bound_to_two_names_is_one_tool() -> None:
    module = types.ModuleType("twice")
    cls = _declared("Twice", {"type": "object", "properties": {}})
    cls.__module__ = "twice"
    module.Twice = cls
    module.alias = cls
    assert tool_classes(module) == [cls]


def test_reports_carry_the_id_of_the_call_that_made_them() -> None:
    seen: list[tuple[str | None, str]] = []

    @tool(permissions="r")
    class Chatty(BaseTool):
        """Report, then answer."""

        def run(self) -> dict[str, Any]:
            """Report, then answer."""
            self.report_progress("working")
            return {"success": True}

    class Collector:
        @hookimpl
        def janito_report(self, event: Any) -> None:
            seen.append((event.call_id, event.message))

    registry = Registry(autoload=())
    registry.add_tool(Chatty)
    registry.plugins.register(Collector(), "tests:collector", None)
    execute_tool_calls([{"id": "call_1", "type": "function",
                         "function": {"name": "Chatty", "arguments": "{}"}},
                        {"type": "function_call", "call_id": "call_2", "name": "Chatty",
                         "arguments": "{}"}], registry=registry)
    call_tool("Chatty", {}, registry=registry)
    assert seen == [("call_1", "working"), ("call_2", "working"), (None, "working")]


def test_a_declared_tool_keeps_its_full_description_and_shows_its_parameters() -> None:
    import inspect

    cls = _declared("remote__described", {
        "type": "object",
        "properties": {"text": {"type": "string"}, "times": {"type": "integer", "default": 2}},
        "required": ["text"],
    })
    cls.description = "Echo text.\n\nRepeats it when asked."
    registry = Registry(autoload=())
    registry.add_tool(cls)
    assert registry.schema("remote__described").description == "Echo text.\n\nRepeats it when asked."
    wrapper = registry.get("remote__described")
    assert wrapper is not None
    assert str(inspect.signature(wrapper)).startswith("(*, text, times=2)")
