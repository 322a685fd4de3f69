"""How many of the conformance kit's generated calls would reach run(), by generator.

For every tool of the installed toolsets (and one local tool with every supported
parameter type), 200 argument objects are drawn from each generator and validated the
way dispatch validates a model's call (``dispatch._validate``); nothing is run. The
generators:

- ``before``: the kit's strategy until issue 20 (wrong fields, unknown fields,
  non-objects, broken JSON, and any JSON value for each declared field);
- ``schema``: ``janito_core.testing._generate.arguments``, drawn from janito's schema;
- ``hypothesis-jsonschema``: ``from_schema`` on the same schema (when installed).

Prints, per generator, the share of drawn calls that would reach ``run()`` and the time
to draw them (the first draw of a generator includes building its strategies).
Target: ``schema`` reaches run() with at least 99% of its calls.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
import time
from typing import Any, Literal, TypedDict

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from janito_core import BaseTool, Registry, tool
from janito_core.dispatch import _validate
from janito_core.schema import tool_schema
from janito_core.testing._generate import arguments

DRAWS = 200
TOOLSETS = ("files", "system", "skills", "onedrive", "gmail")


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Point:
    """A point.

    Attributes:
        x: Column.
        y: Row.
    """

    x: int
    y: int = 0


class Options(TypedDict):
    """Options.

    Attributes:
        depth: Levels.
    """

    depth: int


@tool()
class EveryType(BaseTool):
    """Take every supported parameter type."""

    def run(self, count: int, ratio: float = 1.0, flag: bool = False, name: str = "",
            items: list[int] | None = None, tags: set[str] | None = None,
            mode: Literal["fast", "slow"] = "fast", colour: Colour = Colour.RED,
            point: Point | None = None, options: Options | None = None,
            mapping: dict[str, int] | None = None, pair: tuple[int, str] | None = None,
            either: int | str = 0) -> dict[str, Any]:
        """Take them.

        Args:
            count: An integer.
            ratio: A number.
            flag: A boolean.
            name: A string.
            items: Integers.
            tags: Distinct strings.
            mode: How fast.
            colour: A colour.
            point: A point.
            options: Options.
            mapping: Names to integers.
            pair: An integer and a string.
            either: An integer or a string.
        """
        return {"success": True}


def _json_values() -> st.SearchStrategy[Any]:
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                      max_size=4),
        max_leaves=12,
    )


_WRONG: dict[str, list[Any]] = {
    "string": [True, [], {"a": 1}, [1, 2]], "integer": ["many", True, 2.5, [], {}, "1e400"],
    "number": ["fast", True, [], {}, "nan"], "boolean": ["maybe", 2, [], {}],
    "array": [5, {"a": 1}, True], "object": [5, [1], True],
}


def before(parameters: dict[str, Any]) -> st.SearchStrategy[Any]:
    """The generator of the kit before issue 20, as it was."""
    props: dict[str, Any] = parameters["properties"]

    def wrong_for(prop: dict[str, Any]) -> list[Any]:
        kind = prop.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if "enum" in prop:
            return ["definitely-not-an-option", 123456, [1]]
        return _WRONG.get(kind or "", ["object"])

    json_values = _json_values()
    wrong_field = st.sampled_from(
        [(k, v) for k, prop in props.items() for v in wrong_for(prop)] or [("unexpected", 1)])
    options = [
        st.builds(lambda kv: {kv[0]: kv[1]}, wrong_field),
        st.dictionaries(st.text(max_size=12), json_values, max_size=4).map(
            lambda d: {f"_{k}": v for k, v in d.items()} or {"_x": 1}),
        json_values.filter(lambda v: not isinstance(v, dict)),
        st.text(max_size=30).map(lambda s: "{" + s),
    ]
    if props:
        options.append(st.fixed_dictionaries({}, optional={k: json_values for k in props}))
    return st.one_of(*options)


def draw(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    drawn: list[Any] = []

    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy, st.integers())
    def collect(value: Any, nonce: int) -> None:
        drawn.append(value)

    collect()
    return drawn


class _Record:
    def __init__(self, cls: type) -> None:
        self.cls = cls


def reaches_run(cls: type, value: Any) -> bool:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    if not isinstance(value, dict):
        return False
    return not isinstance(_validate(_Record(cls), value), list)  # type: ignore[arg-type]


def tool_classes() -> list[type]:
    registry = Registry(autoload=(), allowed=None)
    found = registry.toolsets()
    for name in TOOLSETS:
        if name in found:
            registry.add_toolset(name)
    classes = [r.cls for r in registry.records()]  # skipped tools have schemas too
    return [*classes, EveryType]


def main() -> int:
    generators = {"before": before, "schema": lambda p: arguments(p)}
    try:
        from hypothesis_jsonschema import from_schema

        generators["hypothesis-jsonschema"] = from_schema
    except ImportError:
        print("hypothesis-jsonschema is not installed: its column is left out")
    classes = tool_classes()
    print(f"{len(classes)} tools, {DRAWS} draws each")
    shares: dict[str, float] = {}
    for label, make in generators.items():
        started = time.perf_counter()
        reached = total = 0
        worst: tuple[float, str] = (1.0, "")
        broken: list[str] = []
        for cls in classes:
            try:
                values = draw(make(tool_schema(cls).parameters), DRAWS)
            except Exception as exc:  # the generator itself failed: no call at all
                broken.append(f"{cls.__name__} ({type(exc).__name__}: {exc})")
                values = [None] * DRAWS
            ok = sum(reaches_run(cls, v) for v in values)
            reached += ok
            total += len(values)
            worst = min(worst, (ok / max(len(values), 1), cls.__name__))
        seconds = time.perf_counter() - started
        shares[label] = reached / total
        print(f"{label:22} {reached:6}/{total} reach run() ({reached / total:6.1%}); worst tool "
              f"{worst[1]} {worst[0]:.0%}; {seconds:5.1f} s to draw")
        if broken:
            print(f"{'':22} the generator failed on {len(broken)} tools, e.g. {broken[0][:120]}")
    ok = shares["schema"] >= 0.99
    print("target (schema >= 99%):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
