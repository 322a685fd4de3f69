"""A tool's call plan: its compiled argument decoder reads a call exactly as janito's own
parsing and converters do, or leaves it to them (whatever it accepts, they accept and turn
into the same arguments; refusals are never its to answer), and a plan never outlives the
``run()`` or the schema it was made from."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from janito_core import BaseTool, Registry, _call, _plans, tool
from janito_core._arguments import _parse_json, _validate
from janito_core.constraints import Ge, MinLen
from janito_core.dispatch import call_tool
from janito_core.schema import _PLAN_ATTR, forget_schema, tool_schema
from janito_core.workspace import Workspace

msgspec = pytest.importorskip("msgspec")  # janito-core[fast]; every nox session of core has it


@tool(permissions="r")
class Mixed(BaseTool):
    """Take one parameter of every type a decoder reads."""

    def run(self, text: str, count: int, ratio: float, flag: bool, names: list[str],
            numbers: list[float], counts: list[int], flags: list[bool],
            mode: Literal["fast", "slow"] = "fast",
            label: Annotated[str, "A label."] = "none", limit: int = 10,
            scale: float = 1.5, strict: bool = False, weight: float = 2) -> dict[str, Any]:
        """Take them.

        Args:
            text: A string.
            count: An integer.
            ratio: A number.
            flag: A boolean.
            names: Strings.
            numbers: Numbers.
            counts: Integers.
            flags: Booleans.
            mode: One of two.
            label: A label.
            limit: An integer with a default.
            scale: A number with a default.
            strict: A boolean with a default.
            weight: A number whose default is an integer.
        """
        given = dict(locals())
        del given["self"]
        return {"success": True, "given": repr(sorted(given.items()))}


def _decoder(cls: type) -> Any:
    """What ``cls``'s compiled decoder reads a JSON text as (run()'s arguments by name), or
    None when it refuses the text; None when ``cls`` gets no decoder."""
    tool_schema(cls)
    plan = _plans.plan_of(cls)
    assert plan is not None
    plan._compile()
    decode, unpack = plan.decode, plan.unpack
    if decode is None:
        return None

    def read(text: str) -> dict[str, Any] | None:
        try:
            values = unpack(decode(text))
        except Exception:
            return None
        return dict(zip(plan.names, values, strict=True)) if plan.positional else values

    return read


DECODE = _decoder(Mixed)
MIXED = Registry(autoload=())
MIXED.tracing = False  # untraced, as in the fixture
MIXED_RECORD = MIXED.add_tool(Mixed)
DEFAULTS = {"mode": "fast", "label": "none", "limit": 10, "scale": 1.5, "strict": False,
            "weight": 2}

numbers_as_text = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["-0", "-0.0", "0.0", "1e400", "-1e400", "1E5", "1e-400", "4.9e-325",
                     "1.0000000000000001e308", "1.7976931348623157e308", "9" * 309,
                     "-" + "9" * 309, "8" * 308, "1" + "0" * 308, "-1" + "0" * 308, "9" * 308,
                     "9" * 4300, "9" * 4301, "5.0", "2.5e0",
                     "123456789012345678901234567890", "9007199254740993", "1e20", "01",
                     "1.", ".5", "+1", "NaN", "Infinity", "-Infinity"]),
)
strings_as_text = st.one_of(
    st.text(max_size=8).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.text(max_size=8).map(json.dumps),
    st.sampled_from(['"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"a\x01"', '"\\u0000"',
                     '"fast"', '"slow"', '"FAST"', '" fast"', '"true"', '"5"', '"[1]"',
                     '"\x7f"', '"\\/"', "'x'"]),
)
values_as_text = st.recursive(
    st.one_of(numbers_as_text, strings_as_text,
              st.sampled_from(["true", "false", "null", "[]", "{}"])),
    lambda inner: st.lists(inner, max_size=4).map(lambda items: "[" + ",".join(items) + "]"),
    max_leaves=8,
)
KEYS = ["text", "count", "ratio", "flag", "names", "numbers", "counts", "flags", "mode",
        "label", "limit", "scale", "strict", "other", "Text"]


VALID = {"text": ['"hi"', '"héllo"', '""'], "count": ["3", "-7", "0", "12345678901234567890"],
         "ratio": ["2.5", "3", "-0.0", "1e10", "0.1"], "flag": ["true", "false"],
         "names": ['["a", "b"]', "[]"], "numbers": ["[1, 2.5]", "[]", "[-0]"],
         "counts": ["[1, 2]", "[]"], "flags": ["[true]", "[]"], "mode": ['"fast"', '"slow"'],
         "label": ['"x"'], "limit": ["5"], "scale": ["0.5", "2"], "strict": ["true"],
         "weight": ["0.25", "3"]}
REQUIRED = ("text", "count", "ratio", "flag", "names", "numbers", "counts", "flags")


@st.composite
def call_texts(draw: st.DrawFn) -> str:
    """The JSON text of a call: mostly valid, every part of it sometimes not."""
    members: list[tuple[str, str]] = []
    for key, values in VALID.items():
        roll = draw(st.integers(0, 19))
        if roll == 0 or (roll < 8 and key not in REQUIRED):
            continue  # a required one missing now and then; an optional one often left out
        value = draw(values_as_text) if roll in (1, 2) else draw(st.sampled_from(values))
        members.append((json.dumps(key), value))
    if draw(st.integers(0, 9)) == 0:
        members.append((draw(st.sampled_from(['"other"', '"Text"', '"te\\u0078t"'])),
                        draw(values_as_text)))
    if members and draw(st.integers(0, 7)) == 0:
        members.append(draw(st.sampled_from(members)))  # a key given twice
    members = draw(st.permutations(members))
    space = draw(st.sampled_from(["", "", " ", "\n\t", "\u00a0"]))
    text = "{" + ",".join(f"{space}{key}{space}:{space}{value}" for key, value in members) + "}"
    return draw(st.sampled_from([text, text, text, f" {text}\n", text + ",", "\ufeff" + text,
                                 text[:-1]]))


def strictly_equal(left: Any, right: Any) -> bool:
    """Equal, with equal types all the way down, and floats equal to the bit (-0.0, 0.0)."""
    if type(left) is not type(right):
        return False
    if type(left) is float:
        return left.hex() == right.hex() or (math.isnan(left) and math.isnan(right))
    if type(left) is list:
        return len(left) == len(right) and all(map(strictly_equal, left, right))
    if type(left) is dict:
        return left.keys() == right.keys() and all(strictly_equal(v, right[k]) for k, v in left.items())
    return bool(left == right)


@settings(max_examples=3000, deadline=None)
@given(text=call_texts())
def test_what_the_decoder_accepts_janito_reads_alike(text: str) -> None:
    decoded = DECODE(text)
    if decoded is None:
        return  # refused: janito's own reading answers the call
    parsed, problem = _parse_json(text)
    assert problem is None and type(parsed) is dict, (text, decoded)
    expected = _validate(MIXED_RECORD, parsed)
    assert type(expected) is dict, (text, decoded, expected)
    # an optional parameter left out: run() gets its default from its signature
    assert strictly_equal(decoded, {**DEFAULTS, **expected}), (text, decoded, expected)


def test_the_decoder_reads_what_the_model_usually_sends() -> None:
    text = json.dumps({"text": "héllo 😀", "count": 5, "ratio": 2, "flag": True,
                       "names": ["a"], "numbers": [1, 2.5], "counts": [3], "flags": [False],
                       "mode": "slow"})
    assert DECODE(text) == {"text": "héllo 😀", "count": 5, "ratio": 2.0, "flag": True,
                            "names": ["a"], "numbers": [1.0, 2.5], "counts": [3],
                            "flags": [False], "mode": "slow", "label": "none", "limit": 10,
                            "scale": 1.5, "strict": False, "weight": 2}


BASE = '"text": "a", "count": 1, "ratio": 1, "flag": true, "names": [], "numbers": [], "counts": [], "flags": []'
HUGE = "1" + "0" * 308  # an integer above 2**1023: janito reads the largest float


@pytest.mark.parametrize("changed", [
    '"text": 5', '"count": "5"', '"count": 5.0', '"ratio": ' + "9" * 309, f'"ratio": {HUGE}',
    f'"numbers": [2, -{HUGE}]', '"mode": null', '"text": "\\ud800"', '"names": "[\\"a\\"]"',
    '"extra": 1',
])
def test_janitos_coercions_are_left_to_janito(changed: str) -> None:
    """Calls janito reads with a coercion, or refuses: the decoder refuses each, so the
    converters decide (a string for a number, an integer too large for a float, ...)."""
    text = "{" + BASE + ", " + changed + "}"  # the last of a key given twice counts
    assert DECODE(text) is None
    assert _parse_json(text)[1] is None


class _Base(BaseTool):
    def run(self) -> dict[str, Any]:
        """Run."""
        return {"success": True}


def _tool_taking(annotation: Any, default: Any = ...) -> type:
    namespace: dict[str, Any] = {"__doc__": "A tool."}
    if default is ...:
        def run(self: Any, value: Any) -> dict[str, Any]:
            """Run.

            Args:
                value: A value.
            """
            return {"success": True}
    else:
        def run(self: Any, value: Any = default) -> dict[str, Any]:
            """Run.

            Args:
                value: A value.
            """
            return {"success": True}
    run.__annotations__ = {"value": annotation, "return": dict[str, Any]}
    namespace["run"] = run
    return tool(permissions="r")(type("Taking", (BaseTool,), namespace))


@pytest.mark.parametrize(("annotation", "default"), [
    (str | None, None), (Path, ...), (Any, ...), (dict[str, int], ...), (tuple[int, int], ...),
    (Annotated[int, Ge(0)], ...), (Annotated[list[str], MinLen(1)], ...), (Literal[1, 2], ...), (list[str], ("a",)),
    (list[list[str]], ...), (int | str, ...), (str, None),
])
def test_parameters_janito_reads_its_own_way_get_no_decoder(annotation: Any, default: Any) -> None:
    assert _decoder(_tool_taking(annotation, default)) is None


def test_a_tool_without_parameters_gets_no_decoder() -> None:
    assert _decoder(tool(permissions="r")(type("Bare", (_Base,), {"__doc__": "A tool."}))) is None


def test_the_import_waits_until_calls_have_paid_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    tool_schema(Mixed)
    plan = _plans.plan_of(Mixed)
    assert plan is not None
    compiled: list[int | None] = []
    monkeypatch.setattr(_plans.Plan, "_compile", lambda self: compiled.append(self.calls))
    monkeypatch.delitem(sys.modules, "msgspec")
    for _ in range(_plans.COLD_CALLS - 1):
        plan.counted()
    assert not compiled
    plan.counted()
    assert compiled == [None] and plan.calls is None  # decided once, never counted again
    monkeypatch.setitem(sys.modules, "msgspec", msgspec)
    plan.calls = 0
    for _ in range(_plans.WARM_CALLS):
        plan.counted()
    assert compiled == [None, None]


def test_a_decoder_for_run_s_own_order_calls_it_by_position() -> None:
    tool_schema(Mixed)
    plan = _plans.plan_of(Mixed)
    assert plan is not None
    plan._compile()
    assert plan.positional and plan.decode is not None


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    registry = Registry(autoload=(), workspace=Workspace(tmp_path))
    # the short way is for untraced calls: whatever provider an earlier test of the
    # process set, these calls are not traced
    registry.tracing = False
    registry.add_tool(Mixed)
    return registry


CALL = json.dumps({"text": "a", "count": 1, "ratio": 0.5, "flag": True, "names": ["x"],
                   "numbers": [], "counts": [], "flags": []})


def _warmed(registry: Registry) -> _plans.Plan:
    """Mixed's plan, its decoder built by calls (as many as it takes, msgspec imported)."""
    for _ in range(_plans.WARM_CALLS + 2):
        answer = call_tool("Mixed", CALL, registry=registry)
        assert answer["success"], answer
    plan = Mixed.__dict__[_PLAN_ATTR]
    assert plan.decode is not None and plan.calls is None
    return plan


def test_calls_take_the_decoder_once_it_is_due(registry: Registry,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    forget_schema(Mixed)  # a new plan, its calls counted from none
    answer = call_tool("Mixed", CALL, registry=registry)
    assert Mixed.__dict__.get(_PLAN_ATTR) is None  # the full path built the schema
    plan = _warmed(registry)
    seen: list[str] = []
    decode = plan.decode
    assert decode is not None
    monkeypatch.setattr(plan, "decode", lambda text: seen.append(text) or decode(text))
    assert call_tool("Mixed", CALL, registry=registry) == answer
    assert seen == [CALL]
    refused = call_tool("Mixed", '{"text": "a"}', registry=registry)
    assert refused["error_type"] == "invalid_arguments" and seen[-1] == '{"text": "a"}'


def test_a_schema_forgotten_takes_its_plan_along(registry: Registry) -> None:
    before = _warmed(registry)
    forget_schema(Mixed)
    assert _PLAN_ATTR not in Mixed.__dict__
    assert call_tool("Mixed", CALL, registry=registry)["success"]  # the schema built again
    assert call_tool("Mixed", CALL, registry=registry)["success"]
    after = Mixed.__dict__[_PLAN_ATTR]
    assert after is not before and after.schema is tool_schema(Mixed)


def test_a_new_run_gets_a_new_plan(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _warmed(registry)

    def run(self: Any, text: str, count: int, ratio: float, flag: bool, names: list[str],
            numbers: list[float], counts: list[int], flags: list[bool], mode: str = "fast",
            label: str = "none", limit: int = 10, scale: float = 1.5, strict: bool = False,
            weight: float = 2) -> dict[str, Any]:
        return {"success": True, "replaced": count}

    monkeypatch.setattr(Mixed, "run", run)
    assert call_tool("Mixed", CALL, registry=registry) == {"success": True, "replaced": 1}
    assert Mixed.__dict__[_PLAN_ATTR] is not plan
    assert Mixed.__dict__[_PLAN_ATTR].run is run


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=call_texts())
def test_calls_answer_alike_with_and_without_the_decoder(registry: Registry, text: str) -> None:
    _warmed(registry)
    with_decoder = call_tool("Mixed", text, registry=registry)
    without = _call._full_way("Mixed", text, registry, None, None, None, None, None)
    assert with_decoder == without


@tool(permissions="r")
class KeywordsOnly(BaseTool):
    """Take two parameters by keyword only."""

    def run(self, *, second: int, first: str = "one") -> dict[str, Any]:
        """Take them.

        Args:
            second: A number.
            first: A string.
        """
        return {"success": True, "first": first, "second": second}


def test_a_run_whose_parameters_cannot_go_by_position_gets_them_by_name(tmp_path: Path) -> None:
    registry = Registry(autoload=(), workspace=Workspace(tmp_path))
    registry.tracing = False  # untraced, as in the fixture
    registry.add_tool(KeywordsOnly)
    for _ in range(_plans.WARM_CALLS + 2):
        assert call_tool("KeywordsOnly", '{"second": 2}', registry=registry) == {
            "success": True, "first": "one", "second": 2}
    plan = KeywordsOnly.__dict__[_PLAN_ATTR]
    assert plan.decode is not None and not plan.positional
    assert call_tool("KeywordsOnly", '{"first": "a", "second": 3}', registry=registry) == {
        "success": True, "first": "a", "second": 3}
