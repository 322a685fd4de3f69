"""Each provider's tool shape, checked against that provider's published rules.

The rules below are written down from the providers' documentation; each checker names
its source. Where two versions of a document disagree, the stricter rule is used, so a
schema that passes here is accepted by both.

OpenAI Chat Completions (``tools[]``)
    Source: OpenAI API reference, "Create chat completion", ``tools``: an entry is
    ``{"type": "function", "function": {"name", "description", "parameters", "strict"}}``;
    ``name`` is a-z, A-Z, 0-9, underscores and dashes, at most 64 characters; ``parameters``
    is a JSON Schema object; ``strict`` defaults to false.
OpenAI Responses (``tools[]``)
    Source: OpenAI API reference, "Create a model response", function tool: a flat
    ``{"type": "function", "name", "description", "parameters", "strict"}``, where
    ``parameters`` and ``strict`` are required fields.
OpenAI strict mode
    Source: OpenAI guide "Structured Outputs", section "Supported schemas" (also linked
    from the function-calling guide, "Strict mode"):
    - supported types: string, number, boolean, integer, object, array, enum, anyOf;
      a type may be a list with "null" to emulate an optional field;
    - the root must be an object and must not be anyOf;
    - all fields must be required: every key of ``properties`` is in ``required``;
    - ``additionalProperties: false`` must always be set in objects;
    - at most 100 object properties in total and 5 levels of nesting (later raised to
      5000 and 10), at most 500 enum values in total;
    - not supported (an error when strict is on): for strings minLength, maxLength,
      pattern, format; for numbers minimum, maximum, multipleOf; for objects
      patternProperties, unevaluatedProperties, propertyNames, minProperties,
      maxProperties; for arrays unevaluatedItems, contains, minContains, maxContains,
      minItems, maxItems, uniqueItems. ``default`` is not in the supported list either.
Anthropic Messages API (``tools[]``)
    Source: Anthropic API reference, Messages, ``tools``: ``name`` matching
    ``^[a-zA-Z0-9_-]{1,64}$``, ``description``, ``input_schema`` a JSON Schema whose
    ``type`` is "object"; optional ``cache_control`` and ``type``. Strict tool use
    (docs "Strict tool use" and "Structured outputs: JSON Schema limitations"): ``strict:
    true`` on the tool; every object sets ``additionalProperties: false``; numerical
    constraints (minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf),
    string length constraints (minLength, maxLength) and array constraints other than
    minItems 0 or 1 are not supported.
Google Gemini ``functionDeclarations[]``
    Source: Gemini / Vertex AI REST reference, ``FunctionDeclaration`` and ``Schema``:
    ``name`` starts with a letter or underscore, then a-z, A-Z, 0-9, underscores, dots and
    dashes, at most 64; ``parameters`` is a ``Schema``, "a select subset of an OpenAPI 3.0
    schema object" with the fields type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT,
    NULL), format, title, description, nullable, enum, maxItems, minItems, properties,
    propertyOrdering, required, anyOf, items, minimum, maximum, minLength, maxLength,
    pattern, example, default, minProperties, maxProperties. ``enum`` is for strings
    (``format: "enum"``); int64 fields such as maxItems travel as strings in JSON. Parameter
    names start with a letter or underscore (a-z, A-Z, 0-9, underscore, at most 64). The
    API rejects an OBJECT whose ``properties`` is empty ("properties: should be non-empty
    for OBJECT type", reported in agno-agi/agno#2112 and lobehub/lobehub#5002) and
    ``properties`` on a non-OBJECT ("only allowed for OBJECT type"); for a function
    without parameters, ``parameters`` is left unset.
MCP ``Tool``
    Source: Model Context Protocol schema, ``schema/2025-06-18/schema.json``, definitions
    ``Tool`` and ``ToolAnnotations``: required ``name`` and ``inputSchema``; optional
    ``title``, ``description``, ``outputSchema``, ``annotations``, ``_meta``;
    ``inputSchema`` has ``type: "object"``, optional ``properties`` (an object of schemas)
    and ``required`` (strings); annotations are ``title`` and the booleans
    ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import jsonschema
import pytest

from janito_core import BaseTool, Registry, tool
from janito_core.dispatch import call_tool
from janito_core.formats import (
    FORMATS,
    anthropic,
    gemini,
    mcp,
    openai_chat,
    openai_responses,
    render,
)
from janito_core.schema import ToolSchema, tool_schema

VALIDATOR = jsonschema.Draft202012Validator

# -- sample tools beyond the testkit ---------------------------------------------------------------


class Cabin(enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


@dataclasses.dataclass
class Passenger:
    """A traveller.

    Args:
        name: Full name as on the passport.
        age: Age in years.
        seat: Preferred seat, if any.
    """

    name: str
    age: int
    seat: str | None = None


@tool(permissions="w")
class BookFlight(BaseTool):
    """Book a flight for one or more passengers."""

    def run(
        self,
        origin: Annotated[str, "IATA code of the departure airport."],
        destination: str,
        passengers: list[Passenger],
        cabin: Cabin = Cabin.ECONOMY,
        stops: Literal[0, 1, 2] = 0,
        meal: Literal["veg", "fish", "meat"] | None = None,
        flexible_days: int | None = None,
        price_limit: float = 1000.0,
        notes: list[str] | None = None,
        insured: bool = False,
        code: int | str | None = None,
    ) -> dict[str, Any]:
        """Book it.

        Args:
            destination: IATA code of the arrival airport.
            passengers: Who travels.
            cabin: Cabin class.
            stops: Most stops accepted.
            meal: Meal preference.
            flexible_days: Days of flexibility around the date.
            price_limit: Highest total price in euros.
            notes: Notes for the airline.
            insured: Add travel insurance.
            code: A booking code, numeric or alphanumeric.
        """
        return {"success": True}


@tool()
class Ping(BaseTool):
    """Check that the service answers."""

    def run(self) -> dict[str, Any]:
        return {"success": True}


@tool(permissions="rx")
class Tag(BaseTool):
    """Attach free-form labels."""

    def run(self, labels: dict[str, str], target: str,
            mixed: Literal["auto", 0] = "auto") -> dict[str, Any]:
        """Tag it.

        Args:
            labels: Label names to values.
            target: What to tag.
            mixed: A choice of a word or a number.
        """
        return {"success": True}


LOCAL_TOOLS = [BookFlight, Ping, Tag]


@pytest.fixture
def schemas(registry: Registry) -> Iterator[ToolSchema]:
    """Every loaded testkit tool plus the local samples."""
    found = [registry.schema(r.name) for r in registry.records() if r.status == "loaded"]
    return iter(found + [tool_schema(cls) for cls in LOCAL_TOOLS])


def walk(node: Any, depth: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Every schema node below ``node`` with its object nesting depth."""
    if not isinstance(node, dict):
        return
    yield node, depth
    for key in ("properties", "$defs"):
        for child in (node.get(key) or {}).values():
            yield from walk(child, depth + 1)
    if isinstance(node.get("items"), dict):
        yield from walk(node["items"], depth + 1)
    for key in ("anyOf", "prefixItems"):
        for child in node.get(key) or []:
            yield from walk(child, depth)


def types_of(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    return kind if isinstance(kind, list) else [kind] if kind is not None else []


# -- the rules --------------------------------------------------------------------------------------

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
GEMINI_PARAMETER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

OPENAI_STRICT_KEYWORDS = {"type", "properties", "required", "additionalProperties", "items",
                          "enum", "anyOf", "description", "const", "$ref", "$defs"}
JSON_TYPES = {"string", "number", "boolean", "integer", "object", "array", "null"}
GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
GEMINI_KEYWORDS = {"type", "format", "title", "description", "nullable", "enum", "maxItems",
                   "minItems", "properties", "propertyOrdering", "required", "anyOf", "items",
                   "minimum", "maximum", "minLength", "maxLength", "pattern", "example",
                   "default", "minProperties", "maxProperties"}
ANTHROPIC_STRICT_FORBIDDEN = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                              "multipleOf", "minLength", "maxLength", "maxItems"}
MCP_TOOL_KEYS = {"name", "title", "description", "inputSchema", "outputSchema", "annotations",
                 "_meta"}
MCP_HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}


def check_json_schema_object(parameters: dict[str, Any]) -> None:
    VALIDATOR.check_schema(parameters)
    assert parameters["type"] == "object"
    assert isinstance(parameters.get("properties", {}), dict)


def check_openai_strict(parameters: dict[str, Any]) -> None:
    assert parameters["type"] == "object" and "anyOf" not in parameters
    total_properties = 0
    enum_values = 0
    for node, depth in walk(parameters):
        assert set(node) <= OPENAI_STRICT_KEYWORDS, set(node) - OPENAI_STRICT_KEYWORDS
        assert set(types_of(node)) <= JSON_TYPES
        assert depth <= 5
        enum_values += len(node.get("enum", []))
        if "object" in types_of(node):
            assert node.get("additionalProperties") is False, node
            assert sorted(node.get("required", [])) == sorted(node.get("properties", {})), node
            total_properties += len(node.get("properties", {}))
    assert total_properties <= 100
    assert enum_values <= 500


def check_openai_chat(entry: dict[str, Any], strict: bool) -> None:
    assert set(entry) == {"type", "function"} and entry["type"] == "function"
    function = entry["function"]
    assert set(function) <= {"name", "description", "parameters", "strict"}
    assert OPENAI_NAME.match(function["name"])
    assert isinstance(function["description"], str)
    check_json_schema_object(function["parameters"])
    if strict:
        assert isinstance(function["strict"], bool)
    if function.get("strict"):
        check_openai_strict(function["parameters"])


def check_openai_responses(entry: dict[str, Any]) -> None:
    assert set(entry) == {"type", "name", "description", "parameters", "strict"}
    assert entry["type"] == "function"
    assert OPENAI_NAME.match(entry["name"])
    assert isinstance(entry["strict"], bool)
    check_json_schema_object(entry["parameters"])
    if entry["strict"]:
        check_openai_strict(entry["parameters"])


def check_anthropic(entry: dict[str, Any]) -> None:
    assert set(entry) <= {"name", "description", "input_schema", "strict", "cache_control",
                          "type"}
    assert ANTHROPIC_NAME.match(entry["name"])
    assert isinstance(entry["description"], str)
    check_json_schema_object(entry["input_schema"])
    if entry.get("strict"):
        assert entry["strict"] is True
        for node, _ in walk(entry["input_schema"]):
            assert not set(node) & ANTHROPIC_STRICT_FORBIDDEN
            assert node.get("minItems", 0) in (0, 1)
            if "object" in types_of(node):
                assert node.get("additionalProperties") is False


def check_gemini_schema(node: dict[str, Any], path: str) -> None:
    assert set(node) <= GEMINI_KEYWORDS, (path, set(node) - GEMINI_KEYWORDS)
    assert "type" in node or "anyOf" in node, (path, node)
    if "type" in node:
        assert node["type"] in GEMINI_TYPES, (path, node["type"])
    if "enum" in node:
        assert node.get("type") == "STRING" and node.get("format") == "enum", (path, node)
        assert all(isinstance(v, str) for v in node["enum"]), (path, node)
    if "nullable" in node:
        assert isinstance(node["nullable"], bool)
    for key in ("minItems", "maxItems"):
        if key in node:
            assert isinstance(node[key], str) and node[key].isdigit()
    if "properties" in node:
        assert node.get("type") == "OBJECT", (path, "properties only on OBJECT")
    if node.get("type") == "OBJECT":
        assert node.get("properties"), (path, "an OBJECT needs non-empty properties")
        for name, child in node["properties"].items():
            assert GEMINI_PARAMETER.match(name)
            check_gemini_schema(child, f"{path}.{name}")
        assert set(node.get("required", [])) <= set(node["properties"])
    if "items" in node:
        assert node.get("type") == "ARRAY", (path, "items only on ARRAY")
        check_gemini_schema(node["items"], f"{path}[]")
    for index, option in enumerate(node.get("anyOf", [])):
        check_gemini_schema(option, f"{path}|{index}")


def check_gemini(entry: dict[str, Any], schema: ToolSchema) -> None:
    assert set(entry) <= {"name", "description", "parameters"}
    assert GEMINI_NAME.match(entry["name"])
    if schema.parameters["properties"]:
        assert entry["parameters"]["type"] == "OBJECT"
        check_gemini_schema(entry["parameters"], entry["name"])
    else:
        assert "parameters" not in entry


def check_mcp(entry: dict[str, Any]) -> None:
    assert set(entry) <= MCP_TOOL_KEYS
    assert isinstance(entry["name"], str) and entry["name"]
    assert isinstance(entry.get("description", ""), str)
    input_schema = entry["inputSchema"]
    assert input_schema["type"] == "object"
    assert isinstance(input_schema.get("properties", {}), dict)
    assert all(isinstance(v, dict) for v in input_schema.get("properties", {}).values())
    assert all(isinstance(r, str) for r in input_schema.get("required", []))
    VALIDATOR.check_schema(input_schema)
    if "annotations" in entry:
        annotations = entry["annotations"]
        assert set(annotations) <= MCP_HINTS | {"title"}
        assert all(isinstance(annotations[h], bool) for h in set(annotations) & MCP_HINTS)


# -- every tool in every shape ------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_openai_chat_shape_follows_the_rules(schemas: Iterator[ToolSchema], strict: bool) -> None:
    for schema in schemas:
        check_openai_chat(openai_chat(schema, strict=strict), strict)


@pytest.mark.parametrize("strict", [False, True])
def test_openai_responses_shape_follows_the_rules(schemas: Iterator[ToolSchema],
                                                  strict: bool) -> None:
    for schema in schemas:
        check_openai_responses(openai_responses(schema, strict=strict))


@pytest.mark.parametrize("strict", [False, True])
def test_anthropic_shape_follows_the_rules(schemas: Iterator[ToolSchema], strict: bool) -> None:
    for schema in schemas:
        check_anthropic(anthropic(schema, strict=strict))


@pytest.mark.parametrize("strict", [False, True])
def test_gemini_shape_follows_the_rules(schemas: Iterator[ToolSchema], strict: bool) -> None:
    for schema in schemas:
        check_gemini(gemini(schema, strict=strict), schema)


@pytest.mark.parametrize("strict", [False, True])
def test_mcp_shape_follows_the_rules(schemas: Iterator[ToolSchema], strict: bool) -> None:
    for schema in schemas:
        check_mcp(mcp(schema, strict=strict))
        check_mcp(mcp(schema, permissions="rwx"))


def test_render_covers_every_format(schemas: Iterator[ToolSchema]) -> None:
    assert FORMATS == ("openai", "openai-responses", "anthropic", "gemini", "mcp")
    schema = next(schemas)
    assert render(schema) == openai_chat(schema)
    assert render(schema, "openai-responses", strict=True) == openai_responses(schema, strict=True)
    assert render(schema, "anthropic") == anthropic(schema)
    assert render(schema, "gemini") == gemini(schema)
    assert render(schema, "mcp") == mcp(schema)
    with pytest.raises(ValueError, match="unknown format 'bard'"):
        render(schema, "bard")


# -- strict where possible, never wrong where not -------------------------------------------------------


def test_strict_is_used_when_the_tool_allows_it() -> None:
    schema = tool_schema(BookFlight)
    assert schema.strict_parameters is not None
    chat = openai_chat(schema, strict=True)["function"]
    assert chat["strict"] is True
    assert chat["parameters"] == schema.strict_parameters
    assert openai_responses(schema, strict=True)["strict"] is True
    assert anthropic(schema, strict=True)["strict"] is True
    passengers = chat["parameters"]["properties"]["passengers"]["items"]
    assert passengers["required"] == ["name", "age", "seat"]
    assert passengers["properties"]["seat"]["type"] == ["string", "null"]


def test_strict_falls_back_to_the_ordinary_schema_with_strict_off() -> None:
    schema = tool_schema(Tag)
    assert schema.strict_parameters is None
    assert any("dict[str, T]" in d for d in schema.diagnostics)
    chat = openai_chat(schema, strict=True)["function"]
    assert chat["strict"] is False and chat["parameters"] == schema.parameters
    responses = openai_responses(schema, strict=True)
    assert responses["strict"] is False and responses["parameters"] == schema.parameters
    assert "strict" not in anthropic(schema, strict=True)


def test_without_strict_openai_chat_leaves_the_flag_out() -> None:
    assert "strict" not in openai_chat(tool_schema(BookFlight))["function"]
    # Responses turns strict on by default, so janito always says what it wants.
    assert openai_responses(tool_schema(BookFlight))["strict"] is False


def test_renderers_return_copies() -> None:
    schema = tool_schema(BookFlight)
    entry = openai_chat(schema, strict=True)
    entry["function"]["parameters"]["properties"].clear()
    anthropic(schema)["input_schema"]["required"].append("x")
    assert schema.strict_parameters is not None and schema.strict_parameters["properties"]
    assert "x" not in schema.parameters["required"]


# -- what each shape says about one tool ----------------------------------------------------------------


def test_shapes_of_one_tool() -> None:
    schema = tool_schema(BookFlight)
    description = "Book a flight for one or more passengers."
    assert openai_chat(schema) == {"type": "function", "function": {
        "name": "BookFlight", "description": description, "parameters": schema.parameters}}
    assert openai_responses(schema) == {"type": "function", "name": "BookFlight",
                                        "description": description,
                                        "parameters": schema.parameters, "strict": False}
    assert anthropic(schema) == {"name": "BookFlight", "description": description,
                                 "input_schema": schema.parameters}
    assert mcp(schema) == {"name": "BookFlight", "description": description,
                           "inputSchema": schema.parameters}
    assert mcp(schema, permissions="w")["annotations"] == {
        "readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
    assert mcp(schema, permissions="r")["annotations"]["readOnlyHint"] is True
    assert mcp(schema, permissions="rx")["annotations"]["openWorldHint"] is True
    # a tool that reads from other systems says so without needing x
    assert mcp(schema, permissions="r", open_world=True)["annotations"] == {
        "readOnlyHint": True, "destructiveHint": False, "openWorldHint": True}


def test_gemini_translation_of_one_tool() -> None:
    declaration = gemini(tool_schema(BookFlight))
    p = declaration["parameters"]["properties"]
    assert declaration["parameters"]["required"] == ["origin", "destination", "passengers"]
    assert p["origin"] == {"type": "STRING", "description": "IATA code of the departure airport."}
    assert p["cabin"] == {"type": "STRING", "description": "Cabin class.", "format": "enum",
                          "enum": ["economy", "business"]}
    assert p["stops"]["type"] == "INTEGER" and "enum" not in p["stops"]
    assert "0, 1, 2" in p["stops"]["description"]
    assert p["meal"]["enum"] == ["veg", "fish", "meat"]
    assert p["flexible_days"] == {"type": "INTEGER", "nullable": True,
                                  "description": "Days of flexibility around the date."}
    passenger = p["passengers"]["items"]
    assert passenger["type"] == "OBJECT"
    assert passenger["required"] == ["name", "age"]
    assert passenger["properties"]["age"]["type"] == "INTEGER"
    assert p["code"]["anyOf"] == [{"type": "INTEGER"}, {"type": "STRING"}]
    assert "parameters" not in gemini(tool_schema(Ping))



def test_gemini_sends_free_form_objects_as_json_text(registry: Registry) -> None:
    declaration = gemini(tool_schema(Tag))
    labels = declaration["parameters"]["properties"]["labels"]
    assert labels == {"type": "STRING",
                      "description": "Label names to values. A JSON object, as a string."}
    mixed = declaration["parameters"]["properties"]["mixed"]
    assert mixed["type"] == "STRING" and "auto, 0" in mixed["description"]
    # What a model following that declaration sends is accepted by dispatch.
    registry.add_tool(Tag)
    result = call_tool("Tag", {"labels": '{"env": "prod"}', "target": "db", "mixed": "0"},
                       registry=registry)
    assert result == {"success": True}
    typed = gemini(registry.schema("Typed"))["parameters"]["properties"]
    assert typed["mapping"]["type"] == "STRING"
    answer = call_tool("Typed", {"count": 1, "mapping": '{"a": 2}'}, registry=registry)
    assert answer["values"]["mapping"] == {"a": 2}
