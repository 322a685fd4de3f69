"""TypedDicts of typing_extensions (which ``typing.is_typeddict`` does not recognise, and
which pydantic needs below Python 3.12) as parameters and results, with ``Required``,
``NotRequired`` and ``ReadOnly`` from either module, under postponed annotations."""

from __future__ import annotations

import json
import sys
import typing
from typing import Annotated

import jsonschema
import pytest
import typing_extensions as te

from janito_core import Registry, tool
from janito_core.constraints import Ge, MaxLen
from janito_core.decorator import tool_class
from janito_core.dispatch import call_tool
from janito_core.formats import render
from janito_core.schema import result_branches, tool_schema

VALIDATOR = jsonschema.Draft202012Validator
# typing's own markers where this Python has them (3.11+), else typing_extensions' again
Required = getattr(typing, "Required", te.Required)
NotRequired = getattr(typing, "NotRequired", te.NotRequired)


class Window(te.TypedDict):
    """Lines to read.

    Attributes:
        first: First line, counting from 1.
        last: Last line.
        note: Free text.
        label: A label.
    """

    first: Annotated[int, Ge(1)]
    last: te.NotRequired[Annotated[int, Ge(1)]]
    note: Annotated[NotRequired[str], "Said in Annotated."]
    label: te.ReadOnly[NotRequired[Annotated[str, MaxLen(5)]]]


class Options(te.TypedDict, total=False):
    """Options.

    Attributes:
        mode: How.
        depth: How deep.
        level: How loud.
    """

    mode: te.Required[str]
    depth: int
    level: Required[int]


class Summary(te.TypedDict):
    success: bool
    lines: int
    first: NotRequired[str]


@tool()
def read_window(window: Window, options: Options | None = None) -> Summary:
    """Read a window of lines.

    Args:
        window: Which lines.
        options: How to read them.
    """
    assert type(window) is dict
    return {"success": True, "lines": window.get("last", window["first"]) - window["first"] + 1}


@pytest.fixture
def registry() -> Registry:
    registry = Registry(autoload=(), reports="off")
    registry.add_tool(read_window)
    return registry


def test_typing_does_not_see_them_but_janito_does() -> None:
    assert te.is_typeddict(Window)
    if sys.version_info < (3, 14):
        assert not typing.is_typeddict(Window)
    schema = tool_schema(tool_class(read_window))
    assert schema.diagnostics == ()
    VALIDATOR.check_schema(schema.parameters)
    window = schema.parameters["properties"]["window"]
    assert window == {
        "type": "object",
        "properties": {
            "first": {"type": "integer", "minimum": 1, "description": "First line, counting from 1."},
            "last": {"type": "integer", "minimum": 1, "description": "Last line."},
            "note": {"type": "string", "description": "Said in Annotated."},
            "label": {"type": "string", "maxLength": 5, "description": "A label."},
        },
        "required": ["first"],
        "additionalProperties": False,
        "description": "Which lines.",
    }
    options = schema.parameters["properties"]["options"]
    assert sorted(options["required"]) == ["level", "mode"]
    assert options["properties"]["depth"] == {"type": "integer", "description": "How deep."}


def test_their_strict_schema_and_every_format() -> None:
    from test_formats import (
        check_anthropic,
        check_gemini,
        check_mcp,
        check_openai_chat,
        check_openai_responses,
    )

    schema = tool_schema(tool_class(read_window))
    strict = schema.strict_parameters
    assert strict is not None
    window = strict["properties"]["window"]
    assert window["required"] == ["first", "last", "note", "label"]
    assert window["properties"]["last"]["type"] == ["integer", "null"]
    for flag in (False, True):
        check_openai_chat(render(schema, "openai", strict=flag), flag)
        check_openai_responses(render(schema, "openai-responses", strict=flag))
        check_anthropic(render(schema, "anthropic", strict=flag))
        check_gemini(render(schema, "gemini", strict=flag), schema)
        check_mcp(render(schema, "mcp", strict=flag))
    assert render(schema, "openai", strict=True)["function"]["strict"] is True


def test_their_keys_are_checked_and_converted(registry: Registry) -> None:
    good = call_tool("ReadWindow", json.dumps({"window": {"first": "2", "last": 4},
                                               "options": {"mode": "fast", "level": 1}}),
                     registry=registry)
    assert good == {"success": True, "lines": 3}
    bad = call_tool("ReadWindow", json.dumps({"window": {"frist": 1, "label": "too long"},
                                              "options": {"depth": 1}}), registry=registry)
    assert bad["error_type"] == "invalid_arguments"
    assert bad["details"] == [
        {"field": "window.frist", "error": "unknown field (did you mean 'first'?)"},
        {"field": "window.label", "error": "must hold at most 5 characters, got 8"},
        {"field": "window.first", "error": "missing required field"},
        {"field": "options.mode", "error": "missing required field"},
        {"field": "options.level", "error": "missing required field"},
    ]


def test_a_typed_dict_result_of_typing_extensions_is_the_output_schema(registry: Registry) -> None:
    output = render(tool_schema(tool_class(read_window)), "mcp")["outputSchema"]
    VALIDATOR.check_schema(output)
    success, _ = result_branches(output)
    assert success["properties"]["lines"] == {"type": "integer"}
    assert "first" not in success["required"]
    result = call_tool("ReadWindow", json.dumps({"window": {"first": 1}}), registry=registry)
    assert VALIDATOR(output).is_valid(result)
