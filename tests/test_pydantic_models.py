"""pydantic models as parameters and results: schema, strict schema, every provider format,
validation by janito's rules and by the model's own validators, results as JSON objects
with their output schema."""

from __future__ import annotations

import asyncio
import enum
import json
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    field_serializer,
    field_validator,
    model_validator,
)

from janito_core import Registry, hookimpl, tool
from janito_core.decorator import tool_class
from janito_core.dispatch import call_tool
from janito_core.formats import FORMATS, render
from janito_core.schema import result_branches, tool_schema

VALIDATOR = jsonschema.Draft202012Validator


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


class Address(BaseModel):
    """A postal address.

    Attributes:
        street: Street and number.
        country: ISO country code.
    """

    street: str
    city: str = Field(min_length=2, description="City name.")
    country: str = "PT"


class Person(BaseModel):
    name: str = Field(description="Full name.", max_length=40)
    age: int = Field(ge=0, le=150)
    home: Address
    tags: list[str] = Field(default_factory=list, max_length=3)
    born: datetime | None = None
    kind: Literal["friend", "colleague"] = Field("friend", alias="type")
    size: Size = Size.SMALL
    code: Annotated[str, Field(pattern=r"^[A-Z]{2}\d$")] = "AB1"

    @field_validator("name")
    @classmethod
    def capitalised(cls, value: str) -> str:
        if not value[:1].isupper():
            raise ValueError("must start with a capital letter")
        return value

    @model_validator(mode="after")
    def adults_only_abroad(self) -> Person:
        if self.home.country != "PT" and self.age < 18:
            raise ValueError("a minor must live in PT")
        return self


class Card(BaseModel):
    """A greeting card."""

    model_config = ConfigDict(extra="forbid")

    to: str = Field(serialization_alias="recipient")
    lines: list[str]
    sent: datetime

    @field_serializer("lines")
    def numbered(self, lines: list[str]) -> list[str]:
        return [f"{n}. {line}" for n, line in enumerate(lines, 1)]


@tool()
def greet(person: Person, copies: int = 1) -> Card:
    """Write a greeting card for someone.

    Args:
        person: Who gets the card.
        copies: How many copies.
    """
    assert isinstance(person, Person) and isinstance(person.home, Address)
    when = datetime(2025, 1, 31, 9, 30, tzinfo=timezone.utc)
    return Card(to=person.name, lines=[f"Hello {person.name}"] * copies, sent=when)


class Crowd(BaseModel):
    people: list[Address] = Field(min_length=1)
    labels: dict[str, str] = {}


@tool()
def count_cities(crowd: Crowd) -> dict[str, Any]:
    """Count the cities of a crowd.

    Args:
        crowd: The people.
    """
    return {"success": True, "cities": len({a.city for a in crowd.people})}


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str


@tool()
def take_loose(item: Loose) -> dict[str, Any]:
    """Take an open object.

    Args:
        item: Anything with a name.
    """
    return {"success": True, "extra": item.model_extra}


class Scores(RootModel[list[int]]):
    @model_validator(mode="after")
    def sorted_scores(self) -> Scores:
        if self.root != sorted(self.root):
            raise ValueError("scores must be sorted")
        return self


class Picked(BaseModel):
    value: int = Field(validation_alias=AliasChoices("value", "val"))


@tool()
def rank(scores: Scores, picked: Picked | None = None) -> dict[str, Any]:
    """Rank scores.

    Args:
        scores: Sorted scores.
        picked: One of them.
    """
    return {"success": True, "scores": scores.root, "picked": picked and picked.value}


class Node(BaseModel):
    children: list[Node] = []


@tool()
def walk_tree(root: Node) -> dict[str, Any]:
    """Walk a tree.

    Args:
        root: The tree.
    """
    return {"success": True}


class Broken(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    thing: object = None
    blob: Any = None

    @field_serializer("thing")
    def fails(self, value: object) -> str:
        raise ValueError("no way to write this")


@tool()
def broken_result() -> Broken:
    """Return a model that cannot be written."""
    return Broken(thing=1)


@tool()
def nested_result() -> dict[str, Any]:
    """Return a dict holding models."""
    return {"success": True, "cards": [Card(to="a", lines=["x"], sent=datetime(2025, 1, 1))]}


@tool()
async def greet_later(person: Person) -> Card:
    """Write a card, asynchronously.

    Args:
        person: Who gets the card.
    """
    await asyncio.sleep(0)
    return Card(to=person.name, lines=[], sent=datetime(2025, 1, 1, tzinfo=timezone.utc))


TOOLS = [greet, count_cities, take_loose, rank, broken_result, nested_result, greet_later]


@pytest.fixture
def registry() -> Registry:
    registry = Registry(autoload=(), reports="off")
    for function in TOOLS:
        registry.add_tool(function)
    return registry


def call(registry: Registry, name: str, **arguments: Any) -> dict[str, Any]:
    return call_tool(name, json.dumps(arguments), registry=registry)


ANA = {"name": "Ana", "age": 30, "home": {"street": "Rua 1", "city": "Porto"}}


# -- schema ------------------------------------------------------------------------------


def test_a_model_is_a_nested_object_as_a_dataclass_is() -> None:
    schema = tool_schema(tool_class(greet))
    VALIDATOR.check_schema(schema.parameters)
    person = schema.parameters["properties"]["person"]
    assert person["description"] == "Who gets the card."
    assert person["additionalProperties"] is False
    assert person["required"] == ["name", "age", "home"]
    fields = person["properties"]
    assert fields["name"] == {"type": "string", "maxLength": 40, "description": "Full name."}
    assert fields["age"] == {"type": "integer", "minimum": 0, "maximum": 150}
    assert fields["home"] == {
        "type": "object",
        "properties": {
            "street": {"type": "string", "description": "Street and number."},
            "city": {"type": "string", "minLength": 2, "description": "City name."},
            "country": {"type": "string", "description": "ISO country code.", "default": "PT"},
        },
        "required": ["street", "city"],
        "additionalProperties": False,
    }
    assert fields["tags"] == {"type": "array", "items": {"type": "string"}, "maxItems": 3}
    assert fields["type"] == {"type": "string", "enum": ["friend", "colleague"], "default": "friend"}
    assert "kind" not in fields  # the model reads the alias
    assert fields["size"] == {"type": "string", "enum": ["small", "large"], "default": "small"}
    assert fields["code"] == {"type": "string", "pattern": r"^[A-Z]{2}\d$", "default": "AB1"}
    # a type janito does not describe itself is described by pydantic
    assert fields["born"] == {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
                              "default": None}
    assert schema.diagnostics == ()


def test_a_model_has_a_strict_schema_where_its_fields_allow_one() -> None:
    schema = tool_schema(tool_class(greet))
    strict = schema.strict_parameters
    assert strict is not None
    VALIDATOR.check_schema(strict)
    person = strict["properties"]["person"]
    assert person["required"] == list(person["properties"])
    assert person["properties"]["tags"]["type"] == ["array", "null"]
    assert person["properties"]["name"]["type"] == "string"
    assert person["properties"]["home"]["properties"]["country"]["type"] == ["string", "null"]


def test_a_model_that_strict_mode_cannot_say_gets_the_diagnostic() -> None:
    crowd = tool_schema(tool_class(count_cities))
    assert crowd.strict_parameters is None
    assert "dict[str, T]" in (crowd.strict_problem or "")
    assert any("no strict schema" in d for d in crowd.diagnostics)
    loose = tool_schema(tool_class(take_loose))
    assert loose.strict_parameters is None
    assert "Loose takes fields it does not name" in (loose.strict_problem or "")
    assert "additionalProperties" not in loose.parameters["properties"]["item"]


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("strict", [False, True])
def test_every_format_renders_models(format: str, strict: bool) -> None:
    from test_formats import (
        check_anthropic,
        check_gemini,
        check_mcp,
        check_openai_chat,
        check_openai_responses,
    )

    for function in (greet, count_cities, take_loose, rank):
        schema = tool_schema(tool_class(function))
        entry = render(schema, format, strict=strict)
        if format == "openai":
            check_openai_chat(entry, strict)
        elif format == "openai-responses":
            check_openai_responses(entry)
        elif format == "anthropic":
            check_anthropic(entry)
        elif format == "gemini":
            check_gemini(entry, schema)
        else:
            check_mcp(entry)
    said = render(tool_schema(tool_class(greet)), "openai", strict=True)["function"]
    assert said["strict"] is True
    assert "at most 40 characters" in json.dumps(said["parameters"])  # the rule in words


def test_a_model_that_contains_itself_makes_the_tool_unavailable_with_the_reason() -> None:
    registry = Registry(autoload=(), reports="off")
    record = registry.add_tool(walk_tree)
    assert record.status != "loaded"
    assert "Node contains itself" in (record.reason or "")


# -- validation ------------------------------------------------------------------------------


def test_a_model_argument_follows_janito_s_coercion_rules(registry: Registry) -> None:
    result = call(registry, "Greet", person={**ANA, "age": "30", "born": "2020-02-29T10:00:00Z",
                                            "type": "colleague", "size": "LARGE"}, copies="2")
    assert result["success"] is True, result
    text = call_tool("Greet", json.dumps({"person": json.dumps(ANA)}), registry=registry)
    assert text["success"] is True, text  # an object sent as JSON text


def test_each_bad_field_of_a_model_is_named(registry: Registry) -> None:
    result = call(registry, "Greet", person={"name": "Ana", "age": -1, "agee": 3,
                                            "home": {"street": "R", "city": "P"}, "kind": "friend"})
    assert result["error_type"] == "invalid_arguments"
    assert result["details"] == [
        {"field": "person.age", "error": "must be from 0 to 150, got -1"},
        {"field": "person.agee", "error": "unknown field (did you mean 'age'?)"},
        {"field": "person.home.city", "error": "must hold at least 2 characters, got 1"},
        {"field": "person.kind", "error": "unknown field"},  # the model reads its alias, type
    ]
    missing = call(registry, "Greet", person={"name": "Ana"})
    assert {d["field"] for d in missing["details"]} == {"person.age", "person.home"}


def test_the_model_s_own_validators_run_and_say_which_field(registry: Registry) -> None:
    lower = call(registry, "Greet", person={**ANA, "name": "ana"})
    assert lower["error_type"] == "invalid_arguments"
    assert lower["details"] == [{"field": "person.name", "error": "must start with a capital letter"}]
    assert "person.name: must start with a capital letter" in lower["error"]
    minor = call(registry, "Greet", person={**ANA, "age": 12,
                                            "home": {"street": "Main St", "city": "York", "country": "GB"}})
    assert minor["details"] == [{"field": "person", "error": "a minor must live in PT"}]
    when = call(registry, "Greet", person={**ANA, "born": "yesterday"})
    assert when["details"][0]["field"] == "person.born"
    assert "datetime" in when["details"][0]["error"]


def test_models_inside_lists_name_the_item(registry: Registry) -> None:
    result = call(registry, "CountCities", crowd={"people": [{"street": "A", "city": "Porto"},
                                                             {"street": "B", "city": "X"}]})
    assert result["details"] == [{"field": "crowd.people[1].city",
                                  "error": "must hold at least 2 characters, got 1"}]
    empty = call(registry, "CountCities", crowd={"people": []})
    assert empty["details"][0]["field"] == "crowd.people"
    good = call(registry, "CountCities", crowd={"people": [{"street": "A", "city": "Porto"}] * 2})
    assert good == {"success": True, "cities": 1}


def test_a_model_that_allows_extra_fields_receives_them(registry: Registry) -> None:
    result = call(registry, "TakeLoose", item={"name": "x", "colour": "red"})
    assert result == {"success": True, "extra": {"colour": "red"}}


def test_root_models_and_alias_choices(registry: Registry) -> None:
    assert call(registry, "Rank", scores=[1, "2", 3], picked={"value": 2}) == {
        "success": True, "scores": [1, 2, 3], "picked": 2}
    unsorted = call(registry, "Rank", scores=[3, 1])
    assert unsorted["details"] == [{"field": "scores", "error": "scores must be sorted"}]
    bad_item = call(registry, "Rank", scores=[1, "x"])
    assert bad_item["details"][0]["field"] == "scores[1]"
    assert tool_schema(tool_class(rank)).parameters["properties"]["scores"]["type"] == "array"


# -- results ---------------------------------------------------------------------------------------


def test_a_model_result_is_its_json_object_with_success(registry: Registry) -> None:
    result = call(registry, "Greet", person=ANA, copies=2)
    assert result == {"success": True, "recipient": "Ana", "lines": ["1. Hello Ana", "2. Hello Ana"],
                      "sent": "2025-01-31T09:30:00Z"}


def test_a_model_result_declares_its_output_schema(registry: Registry) -> None:
    schema = tool_schema(tool_class(greet))
    output = render(schema, "mcp")["outputSchema"]
    VALIDATOR.check_schema(output)
    success, _ = result_branches(output)
    assert {"success", "recipient", "lines", "sent"} <= set(success["properties"])
    assert "title" not in json.dumps(output)
    result = call(registry, "Greet", person=ANA)
    assert VALIDATOR(output).is_valid(result), list(VALIDATOR(output).iter_errors(result))
    refused = call(registry, "Greet", person={**ANA, "name": "ana"})
    assert refused["success"] is False and VALIDATOR(output).is_valid(refused)


def test_an_async_tool_s_model_and_models_inside_a_result(registry: Registry) -> None:
    later = call(registry, "GreetLater", person=ANA)
    assert later["success"] is True and later["recipient"] == "Ana"
    nested = call(registry, "NestedResult")
    assert nested == {"success": True, "cards": [{"recipient": "a", "lines": ["1. x"],
                                                  "sent": "2025-01-01T00:00:00"}]}


def test_a_model_that_cannot_be_written_is_an_invalid_result(registry: Registry) -> None:
    result = call(registry, "BrokenResult")
    assert result["success"] is False
    assert result["error_type"] == "invalid_result"
    assert "Broken" in result["error"] and "no way to write this" in result["error"]


def test_hooks_see_a_model_result_as_its_json_object(registry: Registry) -> None:
    seen: list[Any] = []

    class Watcher:
        @hookimpl(wrapper=True)
        def janito_tool_call(self, call: Any) -> Any:
            result = yield
            seen.append(result)
            return result

    registry.plugins.register(Watcher(), "watcher", "tests")
    call(registry, "Greet", person=ANA)
    assert seen and isinstance(seen[0], dict) and seen[0]["recipient"] == "Ana"


# -- the conformance kit ---------------------------------------------------------------------------

MODEL_TOOLSET = '''
from __future__ import annotations

from pydantic import BaseModel, Field

from janito_core import tool


class Box(BaseModel):
    """A box.

    Attributes:
        width: Width in cm.
        label: What is written on it.
    """

    width: int = Field(ge=1, le=100)
    label: str = Field("", max_length=20)


class Volume(BaseModel):
    cubic_cm: int
    label: str


@tool()
def measure_box(box: Box) -> Volume:
    """Measure a box.

    Args:
        box: The box.
    """
    return Volume(cubic_cm=box.width ** 3, label=box.label)
'''


def test_the_conformance_kit_passes_a_toolset_of_models(sandbox: Any) -> None:
    import importlib
    import sys

    from helpers.distributions import write_distribution

    from janito_core.testing import check

    write_distribution(sandbox, "janito-boxes", toolsets={"boxes": "janito_boxes"},
                       files={"janito_boxes/__init__.py": "", "janito_boxes/boxes.py": MODEL_TOOLSET})
    sys.path.insert(0, str(sandbox))
    importlib.invalidate_caches()
    try:
        report = check("boxes", max_examples=10, seed=1)
    finally:
        sys.path.remove(str(sandbox))
        sys.modules.pop("janito_boxes.boxes", None)
        sys.modules.pop("janito_boxes", None)
    assert report.tools == ["MeasureBox"]
    assert not report.findings, str(report)
    assert report.reached["MeasureBox"] >= 10
