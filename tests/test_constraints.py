"""Rules declared on parameters: in every schema, checked by dispatch before run().

Also the values a model may send that JSON allows (1.0 for an integer option, integers
past a float's range, lone surrogates), nullable parameters in every format, Gemini's
resolved references, and TypedDict results offered as MCP ``outputSchema``.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated, Any, Literal, TypedDict

import jsonschema
import pytest

from janito_core import Registry, tool
from janito_core.constraints import (
    AtLeastOneOf,
    AtMostOneOf,
    ExactlyOneOf,
    Format,
    Ge,
    Gt,
    Interval,
    Le,
    Len,
    MaxLen,
    MinLen,
    MultipleOf,
    Pattern,
)
from janito_core.dispatch import call_tool
from janito_core.formats import render
from janito_core.schema import ToolSchema, result_branches


def tool_schema(function: Any) -> ToolSchema:
    """The schema a registry offers for a function tool."""
    registry = Registry(autoload=(), reports="off")
    return registry.schema(registry.add_tool(function).name)


@tool()
def book(
    nights: Annotated[int, Interval(ge=1, le=30)],
    guests: Annotated[int, Gt(0), Le(8)] = 1,
    budget: Annotated[float, Ge(0), MultipleOf(0.5)] = 0.0,
    name: Annotated[str, MinLen(1), MaxLen(20)] = "guest",
    code: Annotated[str, Pattern(r"^[A-Z]{3}$")] = "AAA",
    arrival: Annotated[str, Format("date")] = "2025-01-01",
    rooms: Annotated[list[str], Len(1, 3)] = ["single"],  # noqa: B006 - never changed
    card: Annotated[str | None, ExactlyOneOf("payment")] = None,
    voucher: Annotated[str | None, ExactlyOneOf("payment")] = None,
    note: Annotated[str | None, AtMostOneOf("extra")] = None,
    wish: Annotated[str | None, AtMostOneOf("extra")] = None,
    stars: Literal[1, 2, 3] = 3,
    limit: Annotated[int | None, Ge(1)] = None,
) -> dict[str, Any]:
    """Book a stay.

    Args:
        nights: Nights to stay.
        guests: Guests.
        budget: Budget per night.
        name: Name on the booking.
        code: Airport code.
        arrival: Day of arrival.
        rooms: Room kinds.
        card: Card number.
        voucher: Voucher code.
        note: A note.
        wish: A wish.
        stars: Hotel class.
        limit: Most offers; null for no limit.
    """
    return {"success": True, "nights": nights, "budget": budget, "stars": stars,
            "name": name, "limit": limit}


@pytest.fixture
def registry() -> Registry:
    registry = Registry(autoload=(), reports="off")
    registry.add_tool(book)
    return registry


def test_rules_are_written_into_the_schema() -> None:
    p = tool_schema(book).parameters["properties"]
    assert (p["nights"]["minimum"], p["nights"]["maximum"]) == (1, 30)
    assert p["guests"]["exclusiveMinimum"] == 0 and p["guests"]["maximum"] == 8
    assert p["budget"]["minimum"] == 0 and p["budget"]["multipleOf"] == 0.5
    assert (p["name"]["minLength"], p["name"]["maxLength"]) == (1, 20)
    assert p["code"]["pattern"] == "^[A-Z]{3}$"
    assert p["arrival"]["format"] == "date"
    assert (p["rooms"]["minItems"], p["rooms"]["maxItems"]) == (1, 3)
    assert p["stars"]["enum"] == [1, 2, 3]
    assert p["limit"]["type"] == ["integer", "null"] and p["limit"]["minimum"] == 1
    groups = {(g.kind, g.members) for g in tool_schema(book).groups}
    assert groups == {("exactly", ("card", "voucher")), ("at_most", ("note", "wish"))}


@pytest.mark.parametrize("arguments, field", [
    ({"nights": 0}, "nights"),
    ({"nights": 31}, "nights"),
    ({"guests": 0}, "guests"),
    ({"budget": -1}, "budget"),
    ({"budget": 10.25}, "budget"),
    ({"name": ""}, "name"),
    ({"name": "x" * 21}, "name"),
    ({"code": "abc"}, "code"),
    ({"code": "ABC\n"}, "code"),  # "$" ends the text, as in the published schema
    ({"arrival": "2025-02-30"}, "arrival"),
    ({"rooms": []}, "rooms"),
    ({"rooms": ["a", "b", "c", "d"]}, "rooms"),
    ({"stars": 4}, "stars"),
    ({"limit": 0}, "limit"),
])
def test_dispatch_refuses_a_value_that_breaks_a_rule(registry: Registry,
                                                     arguments: dict[str, Any], field: str) -> None:
    call = {"nights": 2, "card": "4111", **arguments}
    result = call_tool("Book", call, registry=registry)
    assert result["error_type"] == "invalid_arguments", result
    assert [d["field"] for d in result["details"]] == [field]
    assert field in result["error"]  # the sentence names the problem, not only details


@pytest.mark.parametrize("arguments, problem", [
    ({}, "give one of card, voucher; none was given"),
    ({"card": "1", "voucher": "2"}, "give only one of card, voucher, not card and voucher"),
    ({"card": "1", "note": "a", "wish": "b"}, "give only one of note, wish, not note and wish"),
])
def test_groups_are_checked(registry: Registry, arguments: dict[str, Any], problem: str) -> None:
    result = call_tool("Book", {"nights": 1, **arguments}, registry=registry)
    assert result["error_type"] == "invalid_arguments", result
    assert problem in result["error"]


@tool()
def relabel(add: Annotated[list[str] | None, AtLeastOneOf("change")] = None,
            remove: Annotated[list[str] | None, AtLeastOneOf("change")] = None) -> dict[str, Any]:
    """Change labels.

    Args:
        add: Labels to add.
        remove: Labels to remove.
    """
    return {"success": True, "add": add, "remove": remove}


def test_at_least_one_of_a_group() -> None:
    registry = Registry(autoload=(), reports="off")
    registry.add_tool(relabel)
    schema = registry.schema("Relabel")
    assert [(g.kind, g.members) for g in schema.groups] == [("at_least", ("add", "remove"))]
    assert schema.parameters["properties"]["add"]["description"].endswith(
        "Give at least one of add or remove.")
    for given in ({"add": ["a"]}, {"remove": ["b"]}, {"add": ["a"], "remove": ["b"]}):
        assert call_tool("Relabel", given, registry=registry)["success"] is True, given
    for none in ({}, {"add": None, "remove": None}):
        refused = call_tool("Relabel", none, registry=registry)
        assert refused["error_type"] == "invalid_arguments"
        assert "give one of add, remove; none was given" in refused["error"]


def test_values_within_the_rules_reach_the_tool(registry: Registry) -> None:
    result = call_tool("Book", {"nights": 30, "guests": 8, "budget": 10.5, "name": "A",
                                "code": "LIS", "arrival": "2024-02-29", "rooms": ["a", "b"],
                                "voucher": "V", "note": "n", "stars": 1.0, "limit": None},
                       registry=registry)
    assert result["success"] is True, result
    assert result["stars"] == 1 and type(result["stars"]) is int  # 1.0 for an integer option
    assert result["limit"] is None


def test_annotated_types_classes_are_read_the_same_way() -> None:
    annotated_types = pytest.importorskip("annotated_types")

    def count(n: int, word: str = "") -> dict[str, Any]:
        """Count.

        Args:
            n: How many.
            word: A short word.
        """
        return {"success": True}

    # evaluated here (this module's annotations are strings naming no global)
    count.__annotations__ = {"n": Annotated[int, annotated_types.Interval(ge=1, le=5)],
                             "word": Annotated[str, annotated_types.MaxLen(3)],
                             "return": dict[str, Any]}
    count = tool()(count)
    p = tool_schema(count).parameters["properties"]
    assert (p["n"]["minimum"], p["n"]["maximum"], p["word"]["maxLength"]) == (1, 5, 3)
    registry = Registry(autoload=(), reports="off")
    registry.add_tool(count)
    assert call_tool("Count", {"n": 6}, registry=registry)["error_type"] == "invalid_arguments"
    assert call_tool("Count", {"n": 5, "word": "abc"}, registry=registry)["success"] is True


def test_every_format_carries_the_rules_or_says_them_in_words() -> None:
    schema = tool_schema(book)
    openai = render(schema, "openai")["function"]["parameters"]["properties"]
    assert openai["nights"]["minimum"] == 1
    anthropic = render(schema, "anthropic")["input_schema"]["properties"]
    assert anthropic["name"]["maxLength"] == 20
    mcp = render(schema, "mcp")["inputSchema"]["properties"]
    assert mcp["rooms"]["maxItems"] == 3
    gemini = render(schema, "gemini")["parameters"]["properties"]
    assert gemini["nights"]["minimum"] == 1
    strict = render(schema, "openai", strict=True)["function"]["parameters"]["properties"]
    # strict mode drops keywords it refuses; what they said moves into the description
    assert "1 to 30" in strict["nights"]["description"] or strict["nights"].get("minimum") == 1


def test_nullable_parameters_are_nullable_in_every_format() -> None:
    schema = tool_schema(book)
    assert "null" in render(schema, "openai")["function"]["parameters"]["properties"]["limit"]["type"]
    assert "null" in render(schema, "anthropic")["input_schema"]["properties"]["limit"]["type"]
    assert "null" in render(schema, "mcp")["inputSchema"]["properties"]["limit"]["type"]
    assert render(schema, "gemini")["parameters"]["properties"]["limit"]["nullable"] is True
    strict = render(schema, "openai", strict=True)["function"]["parameters"]["properties"]
    assert "null" in str(strict["limit"])


@dataclasses.dataclass
class Stop:
    """A stop.

    Attributes:
        city: Where.
    """

    city: str


@tool()
def route(stops: list[Stop], first: Stop | None = None) -> dict[str, Any]:
    """Plan a route.

    Args:
        stops: The stops.
        first: Where to start.
    """
    return {"success": True}


def test_gemini_resolves_references() -> None:
    schema = tool_schema(route)
    if "$defs" not in schema.parameters:  # references appear when a model type repeats
        schema = schema._replace(parameters={
            **schema.parameters, "$defs": {"Stop": schema.parameters["properties"]["stops"]["items"]},
            "properties": {"stops": {"type": "array", "items": {"$ref": "#/$defs/Stop"}},
                           "first": {"anyOf": [{"$ref": "#/$defs/Stop"}, {"type": "null"}]}}})
    gemini = render(schema, "gemini")["parameters"]
    assert "$ref" not in str(gemini) and "$defs" not in str(gemini)
    item = gemini["properties"]["stops"]["items"]
    assert item["type"] == "OBJECT" and item["properties"]["city"]["type"] == "STRING"
    first = gemini["properties"]["first"]
    assert first["type"] == "OBJECT" and first.get("nullable") is True


@tool()
def measure(width: float, label: str = "") -> dict[str, Any]:
    """Measure.

    Args:
        width: A width.
        label: A label.
    """
    return {"success": True, "width": width, "label": label}


def test_integers_past_a_float_s_range_and_lone_surrogates() -> None:
    registry = Registry(autoload=(), reports="off")
    registry.add_tool(measure)
    for sent in (10 ** 400, -(10 ** 400)):
        result = call_tool("Measure", {"width": sent}, registry=registry)
        assert result["success"] is True and abs(result["width"]) == sys.float_info.max
        assert (result["width"] > 0) == (sent > 0)
    text = call_tool("Measure", '{"width": 1' + "0" * 400 + "}", registry=registry)
    assert text["width"] == sys.float_info.max
    surrogate = call_tool("Measure", '{"width": 1, "label": "a\\ud800b"}', registry=registry)
    assert surrogate["label"] == "a\ufffdb"


class Totals(TypedDict):
    success: bool
    count: int


@tool()
def tally(items: list[str]) -> Totals:
    """Count items.

    Args:
        items: The items.
    """
    return {"success": True, "count": len(items)}


def test_a_typed_dict_result_is_the_mcp_output_schema() -> None:
    mcp = render(tool_schema(tally), "mcp")
    output = mcp["outputSchema"]
    assert output["type"] == "object"
    success, failed = result_branches(output)
    assert success["properties"]["count"]["type"] == "integer"
    assert success["properties"]["success"] == {"const": True}
    # a failure answers with janito's shape, which the same schema admits (MCP's
    # structuredContent of an isError result), and a success without its keys does not
    validator = jsonschema.Draft202012Validator(output)
    assert validator.is_valid({"success": True, "count": 2})
    assert validator.is_valid({"success": False, "error": "no", "error_type": "invalid_arguments",
                               "details": [{"field": "items", "error": "missing"}], "tool": "Tally"})
    assert not validator.is_valid({"success": True})
    assert not validator.is_valid({"success": False, "count": 2})
    assert failed["required"] == ["success", "error", "error_type"]
    assert "outputSchema" not in render(tool_schema(book), "mcp")


def test_google_genai_reads_the_gemini_declarations_with_nothing_lost() -> None:
    """google-genai accepts unknown shapes silently (a $ref became a bare string once):
    what its own objects hold is what janito meant."""
    genai_types = pytest.importorskip("google.genai.types")
    for function in (book, route):
        declaration = render(tool_schema(function), "gemini")
        parsed = genai_types.FunctionDeclaration.model_validate(declaration)
        assert parsed.parameters is not None
        back = parsed.model_dump(exclude_none=True, mode="json")["parameters"]
        for name, node in declaration["parameters"]["properties"].items():
            assert str(back["properties"][name]["type"]).upper().endswith(node["type"]), name
    stops = genai_types.FunctionDeclaration.model_validate(
        render(tool_schema(route), "gemini")).parameters.properties["stops"]
    assert stops.items.properties["city"].type == genai_types.Type.STRING
    nights = genai_types.FunctionDeclaration.model_validate(
        render(tool_schema(book), "gemini")).parameters.properties["nights"]
    assert (nights.minimum, nights.maximum) == (1, 30)


def _groups_kept(groups: Any, args: dict[str, Any]) -> None:
    for group in groups:
        given = [m for m in group.members if args.get(m) is not None]
        assert {"exactly": len(given) == 1, "at_most": len(given) <= 1,
                "at_least": len(given) >= 1}[group.kind], (group, args)


def test_generated_calls_keep_every_kind_of_group() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from janito_core.testing._generate import arguments

    for function in (relabel, book):
        schema = tool_schema(function)
        check = settings(max_examples=40, deadline=None, database=None)(
            given(st.just(schema.groups), arguments(schema.parameters, (), schema.groups))(
                _groups_kept))
        check()
