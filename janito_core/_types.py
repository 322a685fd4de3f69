"""One type annotation -> its JSON Schema, its strict schema and its converter.

The coercion rules the converters apply are those of ``janito_core._convert``; a value
described by a declared JSON Schema rather than a type is ``janito_core._jsonschema``'s.
"""

from __future__ import annotations

import enum
import math
import sys
import types
import typing
from typing import Any, Callable, Literal, Union

from . import _constraints
from ._convert import (
    INVALID,
    Converter,
    Errors,
    Refused,
    array_converter,
    convert_any,
    convert_bool,
    convert_float,
    convert_int,
    convert_null,
    convert_str,
    describe,
    fail,
    first_that_fits,
    maybe_json,
    object_converter,
    path_converter,
    schema_word,
)

_NONE_TYPE = type(None)


_UNION_TYPES: tuple[Any, ...] = (Union, types.UnionType)


class UnsupportedType(TypeError):
    pass


class TypeInfo:
    """What a type annotation becomes: its schema, strict schema and converter."""

    __slots__ = ("convert", "nullable", "schema", "strict_problem", "strict_schema", "takes_null")

    def __init__(self, schema: dict[str, Any], convert: Converter,
                 strict_schema: dict[str, Any] | None, strict_problem: str | None = None,
                 nullable: bool = False, takes_null: bool = False) -> None:
        self.schema = schema
        self.convert = convert
        self.strict_schema = strict_schema
        self.strict_problem = strict_problem
        #: ``T | None``: null is a value, and the parameter need not be given.
        self.nullable = nullable
        #: ``Any``: null is one of its values (its schema says so), but a parameter without
        #: a default must still be given.
        self.takes_null = takes_null or nullable


def _strip_annotated(tp: Any) -> tuple[Any, str | None, list[Any]]:
    """(the type inside ``Annotated``, its description, the rest of its metadata)."""
    if typing.get_origin(tp) is typing.Annotated:
        base, *meta = typing.get_args(tp)
        text = next((m for m in meta if isinstance(m, str)), None)
        inner, inner_text, inner_meta = _strip_annotated(base)
        return inner, text or inner_text, [*inner_meta, *meta]
    return tp, None, []


def annotated(tp: Any, metadata: list[Any]) -> Any:
    """``Annotated[tp, *metadata]``, or ``tp`` itself when there is no metadata."""
    if not metadata:
        return tp
    arguments = (tp, *metadata)
    return typing.Annotated[arguments]


def annotated_metadata(tp: Any) -> list[Any]:
    """The metadata of ``tp``'s outer ``Annotated`` layers (none for a plain type)."""
    return _strip_annotated(tp)[2]


def type_info(tp: Any, field_docs: Callable[[type], dict[str, str]] | None = None) -> TypeInfo:
    """Translate ``tp`` (already resolved, extras included) into schema and converter."""
    tp, note, meta = _strip_annotated(tp)
    info = _type_info(tp, field_docs)
    if meta:
        rules = _constraints.read(meta)
        if rules:
            info = constrained(info, rules)
        note = note or _constraints.documentation(meta)
    if note:
        info.schema = {**info.schema, "description": note}
        if info.strict_schema is not None:
            info.strict_schema = {**info.strict_schema, "description": note}
    return info


def constrained(info: TypeInfo, rules: _constraints.Rules) -> TypeInfo:
    """``info`` with the rules in its schemas and checked after its conversion."""
    try:
        check = _constraints.checker(rules)
    except ValueError as exc:
        raise UnsupportedType(str(exc)) from None
    inner = info.convert

    def convert(value: Any, path: str, errors: Errors) -> Any:
        out = inner(value, path, errors)
        if out is INVALID or out is None:
            return out
        problem = check(out)
        return out if problem is None else fail(errors, path, problem)

    strict = None if info.strict_schema is None else _constraints.apply(info.strict_schema, rules)
    return TypeInfo(_constraints.apply(info.schema, rules), convert, strict, info.strict_problem,
                    info.nullable, info.takes_null)


def _scalar(kind: str, conv: Converter) -> TypeInfo:
    return TypeInfo({"type": kind}, conv, {"type": kind})


def _type_info(tp: Any, field_docs: Callable[[type], dict[str, str]] | None) -> TypeInfo:
    if tp is str:
        return _scalar("string", convert_str)
    if tp is bool:
        return _scalar("boolean", convert_bool)
    if tp is int:
        return _scalar("integer", convert_int)
    if tp is float:
        return _scalar("number", convert_float)
    if tp is Any or tp is object:
        # {} takes every JSON value, null included, and so does the converter
        return TypeInfo({}, convert_any, None, "a parameter of any type has no strict schema",
                        takes_null=True)
    if tp is None or tp is _NONE_TYPE:
        return TypeInfo({"type": "null"}, convert_null, {"type": "null"})
    if isinstance(tp, type) and str(getattr(tp, "__module__", "")).partition(".")[0] == "pathlib":
        # pathlib's classes live in pathlib._local from Python 3.13 on
        return TypeInfo({"type": "string"}, path_converter(tp), {"type": "string"})

    origin = typing.get_origin(tp)
    args = typing.get_args(tp)

    if origin in _UNION_TYPES:
        return _union_info(args, field_docs)
    if origin is Literal:
        return literal_info(args)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_info(tp)
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset) or (
        origin is not None and _is_abc_sequence(origin)
    ):
        return _array_info(tp, origin or tp, args, field_docs)
    if origin is dict or tp is dict or (origin is not None and _is_abc_mapping(origin)):
        return _dict_info(args, field_docs)
    if isinstance(tp, type) and hasattr(tp, "__dataclass_fields__"):
        return _dataclass_info(tp, field_docs)
    if is_typeddict(tp):
        return _typeddict_info(tp, field_docs)
    if is_model(tp):
        return _model_info(tp, field_docs)
    raise UnsupportedType(f"the type {tp!r} cannot be expressed as JSON Schema")


def is_typeddict(tp: Any) -> bool:
    """Whether ``tp`` is a TypedDict class, typing's or typing_extensions' (which
    ``typing.is_typeddict`` does not recognise, 3.13 included)."""
    if not isinstance(tp, type) or not issubclass(tp, dict):
        return False
    if typing.is_typeddict(tp):
        return True
    extensions = sys.modules.get("typing_extensions")  # a class of it implies the import
    return extensions is not None and bool(extensions.is_typeddict(tp))


def is_model(tp: Any) -> bool:
    """Whether ``tp`` is a pydantic model class; pydantic is never imported to find out
    (a model class cannot exist unless ``pydantic.main`` was imported)."""
    main = sys.modules.get("pydantic.main")
    base = getattr(main, "BaseModel", None)
    return base is not None and isinstance(tp, type) and issubclass(tp, base)


def _is_abc_sequence(origin: Any) -> bool:
    import collections.abc as cabc

    return origin in (cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection,
                      cabc.Set, cabc.MutableSet)


def _is_abc_mapping(origin: Any) -> bool:
    import collections.abc as cabc

    return origin in (cabc.Mapping, cabc.MutableMapping)


def _union_info(args: tuple[Any, ...], field_docs: Any) -> TypeInfo:
    members = [a for a in args if a is not _NONE_TYPE and a is not None]
    nullable = len(members) != len(args)
    if len(members) == 1:
        inner = type_info(members[0], field_docs)
        if not nullable:
            return inner
        # null is a value here, so every schema says so, strict or not (a model told to
        # send null for "no limit" must be allowed to)
        out = with_null(inner, True)
        out.schema = nullable_schema(inner.schema)
        if inner.strict_schema is not None:
            out.strict_schema = nullable_schema(inner.strict_schema)
        return out
    infos = [type_info(m, field_docs) for m in members]
    null_form = [{"type": "null"}] if nullable else []
    schema = {"anyOf": [*(i.schema for i in infos), *null_form]}
    strict = None
    problem = next((i.strict_problem for i in infos if i.strict_problem), None)
    if problem is None:
        strict = {"anyOf": [*(i.strict_schema for i in infos), *null_form]}

    kinds = " or ".join(schema_word(i.schema) for i in infos)
    first_fit = first_that_fits([(i.schema, i.convert) for i in infos], f"expected {kinds}")

    def convert_union(value: Any, path: str, errors: Errors) -> Any:
        if value is None and nullable:
            return None
        return first_fit(value, path, errors)

    return TypeInfo(schema, convert_union, strict, problem, nullable)


def literal_info(values: tuple[Any, ...]) -> TypeInfo:
    allowed = list(values)
    kinds = sorted({_json_type(v) for v in allowed})
    schema: dict[str, Any] = {"enum": allowed}
    if len(kinds) == 1:
        schema = {"type": kinds[0], "enum": allowed}
    import json

    text = ", ".join(json.dumps(v) for v in allowed)

    def convert(value: Any, path: str, errors: Errors) -> Any:
        for option in allowed:
            if value == option and type(value) is type(option):
                return option
        if type(value) is float or type(value) is int:
            # JSON does not tell 1.0 from 1: a number equal to a numeric option is that option
            for option in allowed:
                kind = type(option)
                if (kind is int or kind is float) and value == option:
                    return option
        if isinstance(value, str):
            for option in allowed:
                if isinstance(option, (int, float)) and not isinstance(option, bool):
                    if value.strip() == json.dumps(option):
                        return option
        return fail(errors, path, f"expected one of {text}, got {describe(value)}")

    return TypeInfo(schema, convert, dict(schema))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "string"


def _enum_info(enum_type: type[enum.Enum]) -> TypeInfo:
    members = list(enum_type)
    values = [m.value for m in members]
    literal = literal_info(tuple(values))
    by_value = {(type(m.value), m.value): m for m in members}
    by_name = {m.name: m for m in members}

    def convert(value: Any, path: str, errors: Errors) -> Any:
        trial: Errors = []
        raw = literal.convert(value, path, trial)
        if not trial:
            return by_value[(type(raw), raw)]
        if isinstance(value, str) and value in by_name:
            return by_name[value]
        errors.extend(trial)
        return INVALID

    return TypeInfo(literal.schema, convert, literal.strict_schema)


def _array_info(tp: Any, container: Any, args: tuple[Any, ...], field_docs: Any) -> TypeInfo:
    is_tuple = container is tuple
    is_set = container in (set, frozenset) or ((not isinstance(container, type)) and "Set" in str(
        container
    ))
    if is_tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        if args == ((),):
            args = ()
        return _fixed_tuple_info(args, field_docs)
    item_type = args[0] if args else Any
    item = type_info(item_type, field_docs)
    schema: dict[str, Any] = {"type": "array", "items": item.schema}
    strict: dict[str, Any] | None = (
        {"type": "array", "items": item.strict_schema} if item.strict_schema is not None else None
    )
    if is_set:
        schema["uniqueItems"] = True
    build: Callable[[list[Any]], Any]
    if is_tuple:
        build = tuple
    elif is_set:
        build = frozenset if container is frozenset else set
    else:
        build = list
    return TypeInfo(schema, array_converter(item.convert, build), strict, item.strict_problem)


def _fixed_tuple_info(args: tuple[Any, ...], field_docs: Any) -> TypeInfo:
    items = [type_info(a, field_docs) for a in args]
    schema = {
        "type": "array",
        "prefixItems": [i.schema for i in items],
        "minItems": len(items),
        "maxItems": len(items),
    }

    def convert(value: Any, path: str, errors: Errors) -> Any:
        value = maybe_json(value, list)
        if not isinstance(value, list) or len(value) != len(items):
            return fail(errors, path, f"expected an array of {len(items)} items, got {describe(value)}")
        before = len(errors)
        out = tuple(i.convert(v, f"{path}[{n}]", errors) for n, (i, v) in enumerate(zip(items, value, strict=True)))
        return INVALID if len(errors) != before else out

    return TypeInfo(schema, convert, None, "a fixed-length tuple has no strict schema")


def _dict_info(args: tuple[Any, ...], field_docs: Any) -> TypeInfo:
    key_type, value_type = (*args, Any, Any)[:2] if args else (str, Any)
    if key_type not in (str, Any):
        raise UnsupportedType(f"dict keys must be str to become JSON, not {key_type!r}")
    value = type_info(value_type, field_docs)
    schema: dict[str, Any] = {"type": "object"}
    if value.schema:
        schema["additionalProperties"] = value.schema
    value_convert = value.convert

    def convert(raw: Any, path: str, errors: Errors) -> Any:
        raw = maybe_json(raw, dict)
        if not isinstance(raw, dict):
            return fail(errors, path, f"expected an object, got {describe(raw)}")
        before = len(errors)
        out = {k: value_convert(v, f"{path}.{k}", errors) for k, v in raw.items()}
        return INVALID if len(errors) != before else out

    return TypeInfo(
        schema, convert, None,
        "a free-form object (dict[str, T]) cannot be expressed in strict mode",
    )


def object_info(
    owner: str,
    fields: dict[str, TypeInfo],
    docs: dict[str, str],
    required: set[str],
    defaults: dict[str, Any],
    build: Callable[[dict[str, Any]], Any],
    closed: bool = True,
) -> TypeInfo:
    """An object whose keys are ``fields`` (in order), described by ``docs``, built by
    ``build``; ``closed`` refuses keys that are not fields (``additionalProperties: false``),
    else they are passed on to ``build`` and the object has no strict schema."""
    properties: dict[str, Any] = {}
    strict_properties: dict[str, Any] = {}
    problem = None if closed else f"{owner} takes fields it does not name, which strict mode cannot say"
    for name, info in fields.items():
        prop = dict(info.schema)
        if name in docs and "description" not in prop:
            prop["description"] = docs[name]
        if name in defaults:
            default = defaults[name]
            if json_safe(default):
                prop["default"] = default.value if isinstance(default, enum.Enum) else default
        properties[name] = prop
        if info.strict_schema is None:
            problem = problem or info.strict_problem
        else:
            strict_prop = dict(info.strict_schema)
            if "description" in prop:
                strict_prop["description"] = prop["description"]
            if name not in required:
                strict_prop = nullable_schema(strict_prop)
            strict_properties[name] = strict_prop
    # in the fields' order, so missing ones are named in the same order every time
    ordered = [n for n in fields if n in required]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": ordered,
    }
    if closed:
        schema["additionalProperties"] = False
    strict = None
    if problem is None:
        strict = {
            "type": "object",
            "properties": strict_properties,
            "required": list(fields),
            "additionalProperties": False,
        }

    convert = object_converter(fields, ordered, closed=closed, build=build, owner=owner)
    return TypeInfo(schema, convert, strict, problem)


def _dataclass_info(dc: type, field_docs: Any) -> TypeInfo:
    import dataclasses

    hints = typing.get_type_hints(dc, include_extras=True)
    fields = [f for f in dataclasses.fields(dc) if f.init]
    required = {
        f.name for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    return object_info(
        dc.__name__, {f.name: type_info(hints[f.name], field_docs) for f in fields},
        field_docs(dc) if field_docs else {}, required, defaults,
        lambda values: dc(**values),
    )


_KEY_QUALIFIERS = ("Required", "NotRequired", "ReadOnly")


def _key_type(tp: Any) -> tuple[Any, bool | None]:
    """(the type of a TypedDict key without ``Required``, ``NotRequired`` and ``ReadOnly``,
    wherever they stand among ``Annotated`` layers; True or False when one of the first two
    says whether the key is required, else None)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        inner, required = _key_type(base)
        return (annotated(inner, meta) if inner is not base else tp), required
    marker = getattr(origin, "_name", None) if origin is not None else None
    if marker in _KEY_QUALIFIERS:
        inner, required = _key_type(typing.get_args(tp)[0])
        if marker != "ReadOnly":
            required = marker == "Required"
        return inner, required
    return tp, None


def _typeddict_info(td: type, field_docs: Any) -> TypeInfo:
    hints = typing.get_type_hints(td, include_extras=True)
    required = set(getattr(td, "__required_keys__", set(hints)))
    fields = {}
    for name, hint in hints.items():
        # Under ``from __future__ import annotations`` the class saw strings and counts a
        # NotRequired key as required (and typing's TypedDict on 3.10 knows no
        # NotRequired at all): the resolved hint says what the key is.
        tp, key_required = _key_type(hint)
        if key_required is True:
            required.add(name)
        elif key_required is False:
            required.discard(name)
        fields[name] = type_info(tp, field_docs)
    return object_info(td.__name__, fields, field_docs(td) if field_docs else {}, required, {}, dict)


class SelfReference(UnsupportedType):
    """A model that contains itself (a tree of nodes): its schema would never end."""


def _model_info(model: Any, field_docs: Any) -> TypeInfo:
    """A pydantic model: its fields as a dataclass's, then built by the model itself, so
    its validators run. Unknown fields are refused unless the model allows extra ones."""
    from . import _models

    try:
        fields = _models.fields_of(model, field_docs(model) if field_docs else {})
        if _models.is_root(model):
            return _root_model_info(model, fields[0], field_docs)
    except _models.Undescribed as exc:
        raise UnsupportedType(str(exc)) from None
    infos: dict[str, TypeInfo] = {}
    for field in fields:
        try:
            infos[field.key] = _field_info(model, field, field_docs)
        except RecursionError:
            raise SelfReference(f"{model.__name__} contains itself, which janito cannot "
                                "describe without references") from None
    return object_info(
        model.__name__, infos, {f.key: f.description for f in fields if f.description},
        {f.key for f in fields if f.required},
        {f.key: f.default for f in fields if _models.has_default(f)},
        _models.builder(model), closed=not _models.takes_extra_fields(model),
    )


def _field_info(model: Any, field: Any, field_docs: Any) -> TypeInfo:
    """A model's field by janito's types, else by pydantic's schema of it, any value then
    left to the model's validation."""
    from . import _models

    try:
        return type_info(field.annotation, field_docs)
    except SelfReference:
        raise
    except UnsupportedType:
        pass
    try:
        schema, strict = _models.pydantic_schema(model.__name__, field)
    except _models.Undescribed as exc:
        raise UnsupportedType(str(exc)) from None
    problem = None if strict else f"{model.__name__}.{field.name} has a type strict mode cannot describe"
    nullable = schema.get("type") == "null" or any(
        isinstance(o, dict) and o.get("type") == "null" for o in schema.get("anyOf", []))
    return TypeInfo(schema, convert_any, schema if strict else None, problem, nullable)


def _root_model_info(model: Any, field: Any, field_docs: Any) -> TypeInfo:
    """A ``RootModel``: the schema of its root, then the model built from the value."""
    from . import _models

    inner = _field_info(model, field, field_docs)
    convert_root = inner.convert
    build = _models.builder(model)

    def convert(value: Any, path: str, errors: Errors) -> Any:
        converted = convert_root(value, path, errors)
        if converted is INVALID:
            return INVALID
        try:
            return build(converted)
        except Refused as refused:
            for where, problem in refused.problems or [("", f"{model.__name__} refused the value")]:
                fail(errors, path + where, problem)
            return INVALID

    return TypeInfo(inner.schema, convert, inner.strict_schema, inner.strict_problem, inner.nullable,
                    inner.takes_null)


def nullable_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also admits null (OpenAI strict mode's way to make a field optional);
    a schema that admits null already is returned as it is."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        if any(isinstance(o, dict) and o.get("type") == "null" for o in options):
            return schema
        return {**schema, "anyOf": [*options, {"type": "null"}]}
    kind = schema.get("type")
    if "enum" in schema and isinstance(schema["enum"], list):
        out = dict(schema)
        if None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        if isinstance(kind, str) and kind != "null":
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        return out
    if isinstance(kind, str) and "const" not in schema:
        return schema if kind == "null" else {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "const" not in schema:
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    description = schema.get("description")
    inner = {k: v for k, v in schema.items() if k != "description"}
    out = {"anyOf": [inner, {"type": "null"}]}
    if description:
        out["description"] = description
    return out


def json_safe(value: Any) -> bool:
    """Whether ``value`` (an Enum by its value) can be written as JSON without NaN."""
    if isinstance(value, enum.Enum):
        value = value.value
    kind = type(value)
    if value is None or kind is str or kind is int or kind is bool:
        return True
    if kind is float:
        return math.isfinite(value)
    import json

    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def with_null(info: TypeInfo, nullable: bool) -> TypeInfo:
    if not nullable:
        return info
    inner = info.convert

    def convert(value: Any, path: str, errors: Errors) -> Any:
        return None if value is None else inner(value, path, errors)

    return TypeInfo(info.schema, convert, info.strict_schema, info.strict_problem, nullable=True)
