"""Signature and docstrings -> JSON Schema, every schema checked against Draft 2020-12."""

from __future__ import annotations

import dataclasses
import enum
import json
import pathlib
import sys
from typing import Annotated, Any, Dict, List, Literal, Optional, Set, Tuple, TypedDict, Union

import jsonschema
import pytest

from janito_core import BaseTool, Failure, failure, tool
from janito_core.schema import AnnotationError, parse_param_docs, tool_schema

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired, Required

VALIDATOR = jsonschema.Draft202012Validator


def checked(cls: type) -> Any:
    """The tool's schema, after checking both variants against the 2020-12 metaschema."""
    schema = tool_schema(cls)
    VALIDATOR.check_schema(schema.parameters)
    if schema.strict_parameters is not None:
        VALIDATOR.check_schema(schema.strict_parameters)
    return schema


def props(cls: type) -> dict[str, Any]:
    return checked(cls).parameters["properties"]


def accepts(schema: dict[str, Any], instance: Any) -> bool:
    return VALIDATOR(schema).is_valid(instance)


# -- optional parameters -------------------------------------------------------------------------


@tool()
class Optionals(BaseTool):
    """Optional parameters written every way."""

    def run(self, a: int | None, b: Optional[int], c: int | None = None,
            d: Optional[str] = None, e: float | None = None, f: int = 3) -> dict[str, Any]:
        """Take optionals.

        Args:
            a: A.
            b: B.
            c: C.
            d: D.
            e: E.
            f: F.
        """
        return {"success": True}


def test_optional_types_are_nullable_and_not_required() -> None:
    schema = checked(Optionals)
    p = schema.parameters["properties"]
    assert p["a"] == {"type": ["integer", "null"], "description": "A."}
    assert p["b"] == {"type": ["integer", "null"], "description": "B."}
    assert p["c"] == {"type": ["integer", "null"], "description": "C."}
    assert p["d"] == {"type": ["string", "null"], "description": "D."}
    assert p["e"] == {"type": ["number", "null"], "description": "E."}
    assert p["f"] == {"type": "integer", "description": "F.", "default": 3}
    assert schema.parameters["required"] == []
    assert schema.params["a"].none_if_omitted and not schema.params["f"].none_if_omitted


# -- containers ----------------------------------------------------------------------------------


@tool()
class Containers(BaseTool):
    """Arrays of every spelling."""

    def run(self, a: list[int], b: List[str], c: tuple[float, ...], d: set[str],
            e: Set[int], f: list[list[bool]], g: Tuple[int, str], h: list = [],  # noqa: B006
            ) -> dict[str, Any]:
        """Take arrays.

        Args:
            a: A.
            b: B.
            c: C.
            d: D.
            e: E.
            f: F.
            g: G.
            h: H.
        """
        return {"success": True}


def test_sequences_become_arrays_with_item_types() -> None:
    p = props(Containers)
    assert p["a"] == {"type": "array", "items": {"type": "integer"}, "description": "A."}
    assert p["b"] == {"type": "array", "items": {"type": "string"}, "description": "B."}
    assert p["c"] == {"type": "array", "items": {"type": "number"}, "description": "C."}
    assert p["d"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True,
                      "description": "D."}
    assert p["e"]["uniqueItems"] is True and p["e"]["items"] == {"type": "integer"}
    assert p["f"]["items"] == {"type": "array", "items": {"type": "boolean"}}
    assert p["g"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert (p["g"]["minItems"], p["g"]["maxItems"]) == (2, 2)
    assert p["h"] == {"type": "array", "items": {}, "description": "H.", "default": []}
    assert accepts(p["g"], [1, "x"]) and not accepts(p["g"], [1])


# -- free-form objects ----------------------------------------------------------------------------


@tool()
class FreeForm(BaseTool):
    """Take a mapping."""

    def run(self, labels: dict[str, int], extra: Dict[str, Any] | None = None,
            name: str = "") -> dict[str, Any]:
        """Take them.

        Args:
            labels: Label to count.
            extra: Anything else.
            name: A name.
        """
        return {"success": True}


def test_dict_becomes_an_object_with_no_strict_schema_and_a_diagnostic() -> None:
    schema = checked(FreeForm)
    p = schema.parameters["properties"]
    assert p["labels"] == {"type": "object", "additionalProperties": {"type": "integer"},
                           "description": "Label to count."}
    assert p["extra"] == {"type": ["object", "null"], "description": "Anything else."}
    assert schema.strict_parameters is None
    assert "labels" in (schema.strict_problem or "")
    assert "dict[str, T]" in (schema.strict_problem or "")
    (diagnostic,) = [d for d in schema.diagnostics if "strict" in d]
    assert diagnostic.startswith("no strict schema: parameter 'labels'")
    assert diagnostic.endswith("the non-strict schema is used")
    assert schema.function(strict=True)["parameters"] == schema.parameters


def test_dict_keys_must_be_strings() -> None:
    @tool()
    class IntKeys(BaseTool):
        def run(self, table: dict[int, str]) -> dict[str, Any]:
            return {"success": True}

    with pytest.raises(AnnotationError, match="keys must be str"):
        tool_schema(IntKeys)


# -- Literal and Enum ------------------------------------------------------------------------------


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@tool()
class Choices(BaseTool):
    """Pick from lists."""

    def run(self, mode: Literal["fast", "slow"], shade: Shade = Shade.DARK,
            level: Level = Level.LOW, size: Literal[1, 2, 3] = 2,
            mixed: Literal["auto", 0] = "auto") -> dict[str, Any]:
        """Pick.

        Args:
            mode: Mode.
            shade: Shade.
            level: Level.
            size: Size.
            mixed: Mixed.
        """
        return {"success": True}


def test_literal_and_enum_become_enum() -> None:
    schema = checked(Choices)
    p = schema.parameters["properties"]
    assert p["mode"] == {"type": "string", "enum": ["fast", "slow"], "description": "Mode."}
    assert p["shade"] == {"type": "string", "enum": ["light", "dark"], "description": "Shade.",
                          "default": "dark"}
    assert p["level"] == {"type": "integer", "enum": [1, 2], "description": "Level.",
                          "default": 1}
    assert p["size"] == {"type": "integer", "enum": [1, 2, 3], "description": "Size.",
                         "default": 2}
    assert p["mixed"] == {"enum": ["auto", 0], "description": "Mixed.", "default": "auto"}
    assert schema.parameters["required"] == ["mode"]


# -- nested objects --------------------------------------------------------------------------------


@dataclasses.dataclass
class Address:
    """A postal address.

    Args:
        street: Street and number.
        city: City name.
        country: ISO country code.
    """

    street: str
    city: str
    country: str = "PT"


class Person(TypedDict):
    """A person.

    Attributes:
        name: Full name.
        age: Age in years.
        home: Where the person lives.
    """

    name: str
    age: NotRequired[int]
    home: Address


class Flags(TypedDict, total=False):
    """Flags.

    Args:
        verbose: Say more.
        mode: Required despite total=False.
    """

    verbose: bool
    mode: Required[str]


@tool()
class Nested(BaseTool):
    """Take structured values."""

    def run(self, person: Person, flags: Flags | None = None,
            stops: list[Address] | None = None) -> dict[str, Any]:
        """Take them.

        Args:
            person: Who.
            flags: How.
            stops: Where to stop.
        """
        return {"success": True}


def test_dataclasses_and_typed_dicts_become_nested_objects_with_field_descriptions() -> None:
    schema = checked(Nested)
    person = schema.parameters["properties"]["person"]
    address = {
        "type": "object",
        "properties": {
            "street": {"type": "string", "description": "Street and number."},
            "city": {"type": "string", "description": "City name."},
            "country": {"type": "string", "description": "ISO country code.", "default": "PT"},
        },
        "required": ["street", "city"],
        "additionalProperties": False,
    }
    assert person == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Full name."},
            "age": {"type": "integer", "description": "Age in years."},
            "home": {**address, "description": "Where the person lives."},
        },
        "required": ["name", "home"],
        "additionalProperties": False,
        "description": "Who.",
    }
    flags = schema.parameters["properties"]["flags"]
    assert flags["required"] == ["mode"]
    assert flags["properties"]["verbose"]["description"] == "Say more."
    assert schema.parameters["properties"]["stops"]["items"] == address
    assert accepts(person, {"name": "Ana", "home": {"street": "R 1", "city": "Porto"}})
    assert not accepts(person, {"name": "Ana", "home": {"street": "R 1", "city": "P", "x": 1}})


def test_a_not_required_typed_dict_key_under_postponed_annotations() -> None:
    # This module uses 'from __future__ import annotations', where Person.__required_keys__
    # lists 'age' (the class only saw strings); the schema follows the resolved marker.
    assert "age" not in tool_schema(Nested).parameters["properties"]["person"]["required"]


# -- descriptions ------------------------------------------------------------------------------------


@tool()
class GoogleDoc(BaseTool):
    """Google style."""

    def run(self, path: str, limit: int = 10) -> dict[str, Any]:
        """Read a file.

        Args:
            path: Where the file is,
                relative to the workspace.
            limit (int): How many lines.

        Returns:
            The lines.
        """
        return {"success": True}


@tool()
class NumpyDoc(BaseTool):
    """NumPy style."""

    def run(self, path: str, limit: int = 10) -> dict[str, Any]:
        """Read a file.

        Parameters
        ----------
        path : str
            Where the file is.
        limit : int, optional
            How many lines.
        """
        return {"success": True}


@tool()
class RestDoc(BaseTool):
    """reST style."""

    def run(self, path: str, limit: int = 10) -> dict[str, Any]:
        """Read a file.

        :param path: Where the file is.
        :param int limit: How many lines.
        :returns: The lines.
        """
        return {"success": True}


@tool()
class ClassDoc(BaseTool):
    """Documented on the class.

    Args:
        path: Where the file is (from the class).
        limit: How many lines (from the class).
    """

    def run(self, path: str, limit: int = 10) -> dict[str, Any]:
        """Read a file.

        Args:
            path: Where the file is (from run).
        """
        return {"success": True}


@tool()
class AnnotatedDoc(BaseTool):
    """Documented with Annotated."""

    def run(self, path: Annotated[str, "Where the file is (annotated)."],
            limit: Annotated[int, "How many lines (annotated)."] = 10,
            mode: Annotated[Literal["a", "b"], "Which mode."] = "a") -> dict[str, Any]:
        """Read a file.

        Args:
            path: Where the file is (docstring wins).
        """
        return {"success": True}


@pytest.mark.parametrize("cls", [GoogleDoc, NumpyDoc, RestDoc])
def test_run_docstrings_in_every_style(cls: type) -> None:
    schema = checked(cls)
    p = schema.parameters["properties"]
    assert p["path"]["description"].startswith("Where the file is")
    assert p["limit"]["description"] == "How many lines."
    assert not [d for d in schema.diagnostics if "document" in d]


def test_google_continuation_lines_are_joined() -> None:
    assert props(GoogleDoc)["path"]["description"] == (
        "Where the file is, relative to the workspace.")


def test_run_docstring_first_then_class_docstring_then_annotated() -> None:
    p = props(ClassDoc)
    assert p["path"]["description"] == "Where the file is (from run)."
    assert p["limit"]["description"] == "How many lines (from the class)."
    p = props(AnnotatedDoc)
    assert p["path"]["description"] == "Where the file is (docstring wins)."
    assert p["limit"]["description"] == "How many lines (annotated)."
    assert p["mode"] == {"type": "string", "enum": ["a", "b"], "description": "Which mode.",
                         "default": "a"}


def test_parse_param_docs_recognises_no_style_in_plain_prose() -> None:
    assert parse_param_docs("Just a sentence about path and limit.") == {}
    assert parse_param_docs(None) == {}


def test_tool_description_is_the_first_line_of_the_class_docstring_else_run() -> None:
    @tool()
    class OnlyRun(BaseTool):
        def run(self) -> dict[str, Any]:
            """

            Describe from run.

            More text.
            """
            return {"success": True}

    assert tool_schema(GoogleDoc).description == "Google style."
    assert tool_schema(ClassDoc).description == "Documented on the class."
    assert tool_schema(OnlyRun).description == "Describe from run."


# -- diagnostics ----------------------------------------------------------------------------------


@tool()
class Sloppy(BaseTool):
    """Documentation that drifted."""

    def run(self, path: str, count: int = 1, *rest: str, **options: Any) -> dict[str, Any]:
        """Do it.

        Args:
            path: The path.
            ghost: A parameter run() does not take.
        """
        return {"success": True}


def test_diagnostics_name_phantom_and_undocumented_parameters() -> None:
    schema = checked(Sloppy)
    assert "the docstring documents 'ghost', which run() does not take" in schema.diagnostics
    assert "parameter 'count' is not documented in run()'s docstring" in schema.diagnostics
    assert "*rest cannot be sent by a model and is ignored" in schema.diagnostics
    assert "**options cannot be described to a model and is ignored" in schema.diagnostics
    assert not [d for d in schema.diagnostics if "'path'" in d]
    assert list(schema.parameters["properties"]) == ["path", "count"]


def test_a_tool_without_any_docstring_is_diagnosed() -> None:
    @tool()
    class Bare(BaseTool):
        def run(self, x: int) -> dict[str, Any]:
            return {"success": True}

    schema = checked(Bare)
    assert schema.description == ""
    assert any("no docstring" in d for d in schema.diagnostics)
    assert "parameter 'x' is not documented in run()'s docstring" in schema.diagnostics


def test_a_parameter_without_annotation_accepts_anything() -> None:
    @tool()
    class Untyped(BaseTool):
        """Untyped."""

        def run(self, value, flag: bool = False) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            """Run.

            Args:
                value: Anything.
                flag: A flag.
            """
            return {"success": True}

    schema = checked(Untyped)
    assert schema.parameters["properties"]["value"] == {"description": "Anything."}
    assert "parameter 'value' has no type annotation: any value is accepted" in schema.diagnostics
    assert schema.strict_parameters is None


def test_positional_only_parameters_cannot_be_sent() -> None:
    @tool()
    class PositionalOnly(BaseTool):
        def run(self, x: int, /) -> dict[str, Any]:
            return {"success": True}

    with pytest.raises(AnnotationError, match="positional-only"):
        tool_schema(PositionalOnly)


# -- defaults, required, additionalProperties -----------------------------------------------------


SENTINEL = object()


@tool()
class Defaults(BaseTool):
    """Defaults of every kind."""

    def run(self, a: str, b: int = 0, c: float = 1.5, d: bool = False, e: str = "x",
            f: list[str] | None = None, g: Shade = Shade.LIGHT, h: Any = SENTINEL,
            i: tuple[int, ...] = (1, 2)) -> dict[str, Any]:
        """Run.

        Args:
            a: A.
            b: B.
            c: C.
            d: D.
            e: E.
            f: F.
            g: G.
            h: H.
            i: I.
        """
        return {"success": True}


def test_defaults_are_emitted_when_json_can_carry_them() -> None:
    schema = checked(Defaults)
    p = schema.parameters["properties"]
    assert [p[k].get("default") for k in "abcdeg"] == [None, 0, 1.5, False, "x", "light"]
    assert "default" not in p["f"]  # None means "not given"
    assert "default" not in p["h"]  # an object() default cannot be JSON
    assert json.loads(json.dumps(p["i"]["default"])) == [1, 2]
    assert schema.parameters["required"] == ["a"]
    assert schema.parameters["additionalProperties"] is False
    assert schema.parameters["type"] == "object"
    assert accepts(schema.parameters, {"a": "x"})
    assert not accepts(schema.parameters, {"a": "x", "zz": 1})
    assert not accepts(schema.parameters, {})


def test_a_tool_with_no_parameters() -> None:
    @tool()
    class NoParams(BaseTool):
        """Nothing to send."""

        def run(self) -> dict[str, Any]:
            return {"success": True}

    schema = checked(NoParams)
    assert schema.parameters == {"type": "object", "properties": {}, "required": [],
                                 "additionalProperties": False}
    assert schema.strict_parameters == schema.parameters


# -- strict variant ---------------------------------------------------------------------------------


def test_strict_makes_every_property_required_and_optional_ones_nullable() -> None:
    schema = checked(Choices)
    strict = schema.strict_parameters
    assert strict is not None
    assert strict["required"] == ["mode", "shade", "level", "size", "mixed"]
    assert strict["additionalProperties"] is False
    p = strict["properties"]
    assert p["mode"] == {"type": "string", "enum": ["fast", "slow"], "description": "Mode."}
    assert p["shade"]["type"] == ["string", "null"]
    assert p["shade"]["enum"] == ["light", "dark", None]
    assert p["shade"]["description"] == 'Shade. (null means the default ("dark"))'
    assert "default" not in p["shade"]
    assert accepts(strict, {"mode": "fast", "shade": None, "level": None, "size": None,
                            "mixed": None})
    assert not accepts(strict, {"mode": "fast"})


def test_strict_variant_of_optionals_and_nested_objects() -> None:
    strict = checked(Optionals).strict_parameters
    assert strict is not None
    assert strict["required"] == ["a", "b", "c", "d", "e", "f"]
    assert strict["properties"]["a"] == {"type": ["integer", "null"],
                                         "description": "A. (null means the default)"}
    assert strict["properties"]["f"]["description"] == "F. (null means the default (3))"
    nested = checked(Nested).strict_parameters
    assert nested is not None
    person = nested["properties"]["person"]
    assert person["required"] == ["name", "age", "home"]
    assert person["properties"]["age"]["type"] == ["integer", "null"]
    home = person["properties"]["home"]
    assert home["required"] == ["street", "city", "country"]
    assert home["additionalProperties"] is False
    assert home["properties"]["country"]["type"] == ["string", "null"]
    flags = nested["properties"]["flags"]
    assert flags["type"] == ["object", "null"]
    assert flags["required"] == ["verbose", "mode"]
    assert flags["properties"]["verbose"]["type"] == ["boolean", "null"]
    assert flags["properties"]["mode"]["type"] == "string"
    assert accepts(nested, {"person": {"name": "A", "age": None, "home": {
        "street": "s", "city": "c", "country": None}}, "flags": None, "stops": None})


def test_strict_keeps_array_item_types_without_unsupported_keywords() -> None:
    schema = checked(Containers)
    assert schema.strict_parameters is None  # the fixed tuple g has no strict form
    assert "fixed-length tuple" in (schema.strict_problem or "")


# -- caching ---------------------------------------------------------------------------------------


def test_schemas_are_built_once_per_class() -> None:
    @tool()
    class Cached(BaseTool):
        """Cached."""

        def run(self, x: int) -> dict[str, Any]:
            return {"success": True}

    first = tool_schema(Cached)
    assert tool_schema(Cached) is first
    assert Cached.__dict__["_janito_schema"] is first

    @tool()
    class Child(Cached):
        """A subclass gets its own schema."""

        def run(self, y: str) -> dict[str, Any]:
            return {"success": True}

    assert tool_schema(Child) is not first
    assert list(tool_schema(Child).parameters["properties"]) == ["y"]
    assert tool_schema(Cached) is first


def test_the_registry_serves_the_cached_schema(registry: Any) -> None:
    cls = registry.record("Typed").cls
    assert registry.schema("Typed") is tool_schema(cls) is registry.schema("Typed")


def test_every_testkit_schema_is_valid_json_schema(registry: Any) -> None:
    for record in registry.records():
        if record.status == "loaded":
            checked(record.cls)


# -- the old bug ----------------------------------------------------------------------------------


def test_int_or_none_is_an_integer_not_a_string() -> None:
    p = props(Optionals)
    assert p["a"]["type"] == ["integer", "null"]
    assert accepts({"type": "object", "properties": p}, {"a": None})
    assert accepts({"type": "object", "properties": p}, {"a": 5})
    assert not accepts({"type": "object", "properties": p}, {"a": "5"})


class Counted(TypedDict):
    """What the counters answer.

    Attributes:
        words: How many words.
    """

    words: int


class CountedTyped(TypedDict):
    """What the counters answer.

    Attributes:
        words: How many words.
    """

    success: Literal[True]
    words: int


def test_a_result_declared_with_failure_has_the_schema_of_its_success() -> None:
    """``-> Counted | Failure`` (what a type checker needs, with ``success: Literal[True]``
    in Counted) declares what ``-> Counted`` declares: the failure shape is in every
    output schema already."""
    @tool()
    class Loose(BaseTool):
        """Count."""

        def run(self, text: str) -> Counted:
            """Count.

            Args:
                text: The text.
            """
            return {"words": len(text.split())}

    @tool()
    class Typed(BaseTool):
        """Count."""

        def run(self, text: str) -> CountedTyped | Failure:
            """Count.

            Args:
                text: The text.
            """
            if not text:
                return failure("no text", "invalid_arguments")
            return {"success": True, "words": len(text.split())}

    @tool()
    class Spelled(BaseTool):
        """Count."""

        def run(self, text: str) -> Union[Failure, CountedTyped]:
            """Count.

            Args:
                text: The text.
            """
            return {"success": True, "words": len(text.split())}

    declared = checked(Loose).output_schema
    assert declared is not None
    VALIDATOR.check_schema(declared)
    assert checked(Typed).output_schema == declared
    assert checked(Spelled).output_schema == declared


# -- parameters read without inspect ------------------------------------------------------


def _shapes() -> list[Any]:
    import functools

    def plain(self, a, b: int = 1, *, c, d: str = "x"): ...  # type: ignore[no-untyped-def]
    def star(self, a, /, b, *args, c=3, **kwargs): ...  # type: ignore[no-untyped-def]
    def only_kwargs(self, **options): ...  # type: ignore[no-untyped-def]
    def no_self(): ...  # type: ignore[no-untyped-def]
    def defaults_all(self, a=None, b=(), c=frozenset()): ...  # type: ignore[no-untyped-def]
    def keyword_no_default(self, *, a, b=2, c): ...  # type: ignore[no-untyped-def]
    def with_locals(self, a, b=1):  # type: ignore[no-untyped-def]
        inner = a + b
        return inner

    @functools.wraps(plain)
    def wrapped(*args, **kwargs): ...  # type: ignore[no-untyped-def]

    def declared(self, *anything): ...  # type: ignore[no-untyped-def]

    import inspect

    declared.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
         inspect.Parameter("given", inspect.Parameter.KEYWORD_ONLY, default=5)])
    return [plain, star, only_kwargs, no_self, defaults_all, keyword_no_default, with_locals,
            wrapped, declared, functools.partial(plain, None)]


@pytest.mark.parametrize("function", _shapes(), ids=lambda f: getattr(f, "__name__", "partial"))
def test_parameters_read_from_code_are_those_inspect_sees(function: Any) -> None:
    from janito_core.schema import _inspected, _parameters

    assert _parameters(function) == _inspected(function)


def test_a_schema_is_built_without_importing_inspect() -> None:
    import subprocess

    code = ("import sys\n"
            "from janito_core import BaseTool, tool\n"
            "from janito_core.schema import tool_schema\n"
            "@tool(permissions='r')\n"
            "class Count(BaseTool):\n"
            "    '''Count.'''\n"
            "    def run(self, text: str, limit: int = 3, *, strict: bool = False) -> dict:\n"
            "        '''Count.\n\n        Args:\n            text: The text.\n"
            "            limit: How many.\n            strict: Whether strict.\n        '''\n"
            "        return {'success': True}\n"
            "schema = tool_schema(Count)\n"
            "assert sorted(schema.params) == ['limit', 'strict', 'text'], schema.params\n"
            "print('inspect' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_pathlib_parameters_are_strings_and_arrive_as_paths(tmp_path: Any) -> None:
    """pathlib's classes are defined in pathlib._local from Python 3.13 on: still paths."""
    from janito_core import Registry
    from janito_core.dispatch import call_tool
    from janito_core.workspace import Workspace

    @tool(permissions="r")
    class Where(BaseTool):
        """Say what was given."""

        def run(self, place: pathlib.Path, pure: pathlib.PurePosixPath) -> dict[str, Any]:
            """Say it.

            Args:
                place: A path.
                pure: A pure path.
            """
            return {"success": True, "kinds": [type(place).__name__, type(pure).__name__]}

    assert props(Where) == {"place": {"type": "string", "description": "A path."},
                            "pure": {"type": "string", "description": "A pure path."}}
    registry = Registry(autoload=(), workspace=Workspace(tmp_path))
    registry.add_tool(Where)
    answer = call_tool("Where", '{"place": "a/b", "pure": "c"}', registry=registry)
    assert answer["kinds"][1] == "PurePosixPath" and answer["kinds"][0].endswith("Path"), answer
