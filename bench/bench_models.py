"""pydantic models as parameters: one call through dispatch, and the first schema build.

Two tools take the same shape, a person with a nested address, a list and a date: one as
pydantic models, one as dataclasses (the baseline, measured in the same run). A call is
`call_tool` with the arguments as JSON text, as a model sends them; the model's call also
runs pydantic's `model_validate` (its validators) after janito's own checks. Beside them,
for scale: pydantic's own `model_validate_json` of the same text, what a framework that
validates with pydantic alone pays. Targets: a call at most 1.5x the dataclass call; a
first schema build at most 3x the dataclass tool's.

    python bench/bench_models.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from _common import alternate_calls, exit_status, load_note, verdict
from pydantic import BaseModel, Field

from janito_core import Registry, tool
from janito_core.decorator import tool_class
from janito_core.dispatch import call_tool
from janito_core.schema import forget_schema, tool_schema

TARGET_CALL = 1.5
TARGET_SCHEMA = 3.0


class AddressModel(BaseModel):
    street: str
    city: str = Field(min_length=2)
    country: str = "PT"


class PersonModel(BaseModel):
    name: str = Field(max_length=40)
    age: int = Field(ge=0, le=150)
    home: AddressModel
    tags: list[str] = []


@dataclasses.dataclass
class Address:
    street: str
    city: str
    country: str = "PT"


@dataclasses.dataclass
class Person:
    name: str
    age: int
    home: Address
    tags: list[str] = dataclasses.field(default_factory=list)


@tool()
def with_model(person: PersonModel) -> dict[str, object]:
    """Take a person as a model.

    Args:
        person: Who.
    """
    return {"success": True, "name": person.name}


@tool()
def with_dataclass(person: Person) -> dict[str, object]:
    """Take a person as a dataclass.

    Args:
        person: Who.
    """
    return {"success": True, "name": person.name}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    registry = Registry(autoload=(), reports="off")
    registry.add_tool(with_model)
    registry.add_tool(with_dataclass)
    person = {"name": "Ana", "age": 30, "home": {"street": "Rua 1", "city": "Porto"},
              "tags": ["a", "b"]}
    text = json.dumps({"person": person})
    inner = json.dumps(person)
    for name in ("WithModel", "WithDataclass"):
        answer = call_tool(name, text, registry=registry)
        if answer != {"success": True, "name": "Ana"}:
            raise SystemExit(f"{name} answered {answer}")
    classes = {"model": tool_class(with_model), "dataclass": tool_class(with_dataclass)}

    def build(cls: type) -> None:
        forget_schema(cls)
        tool_schema(cls)

    calls = alternate_calls({
        "model through dispatch": lambda: call_tool("WithModel", text, registry=registry),
        "dataclass through dispatch": lambda: call_tool("WithDataclass", text, registry=registry),
        "pydantic model_validate_json": lambda: PersonModel.model_validate_json(inner),
    }, 200, args.repeat)
    builds = alternate_calls({f"{kind} tool": (lambda c=cls: build(c)) for kind, cls in classes.items()},
                             20, args.repeat)
    print(f"pydantic models as parameters, medians of {args.repeat} repeats; {load_note()}")
    base = calls["dataclass through dispatch"]
    for name, value in calls.items():
        print(f"  call, {name:<30} {value.cpu * 1e6:8.1f} µs CPU {value.ratio(base).cpu:5.2f}x   "
              f"{value.wall * 1e6:8.1f} µs wall")
    schema_base = builds["dataclass tool"]
    for name, value in builds.items():
        print(f"  first schema build, {name:<16} {value.cpu * 1e6:8.1f} µs CPU "
              f"{value.ratio(schema_base).cpu:5.2f}x")
    call_ratio = calls["model through dispatch"].ratio(base).cpu
    schema_ratio = builds["model tool"].ratio(schema_base).cpu
    print(f"a model argument: {call_ratio:.2f}x the dataclass call in CPU time (target "
          f"{TARGET_CALL}x): {verdict(call_ratio, TARGET_CALL)}")
    print(f"a model tool's first schema build: {schema_ratio:.2f}x the dataclass tool's (target "
          f"{TARGET_SCHEMA}x): {verdict(schema_ratio, TARGET_SCHEMA)}")
    return exit_status(verdict(call_ratio, TARGET_CALL), verdict(schema_ratio, TARGET_SCHEMA))


if __name__ == "__main__":
    sys.exit(main())
