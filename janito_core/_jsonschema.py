"""A value described by a declared JSON Schema rather than a type hint -> its converter.

For tools whose parameters are known only at run time (a mounted MCP server's tools):
the same coercion rules as typed parameters (``janito_core._convert``).
"""

from __future__ import annotations

from typing import Any

from ._constraints import from_schema
from ._convert import (
    array_converter,
    convert_any,
    convert_bool,
    convert_float,
    convert_int,
    convert_null,
    convert_str,
    first_that_fits,
    object_converter,
)
from ._types import TypeInfo, constrained, literal_info, with_null


def json_schema_info(node: Any) -> TypeInfo:
    """A converter for a value described by a JSON Schema rather than a type hint.

    Used for tools whose parameters are only known at run time (a mounted MCP server's
    tools). The same coercion rules apply, and the same rules as a typed parameter's
    (ranges, lengths, the formats janito knows, patterns Python can read); other keywords
    are passed through to the schema but not enforced.
    """
    info = _json_schema_info(node)
    rules = from_schema(node) if isinstance(node, dict) else None
    if rules is None:
        return info
    checked = constrained(info, rules)
    checked.schema = info.schema  # the declared node, as it was
    checked.strict_schema = info.strict_schema
    return checked


def _json_schema_info(node: Any) -> TypeInfo:
    if not isinstance(node, dict) or not node:
        return TypeInfo(node if isinstance(node, dict) else {}, convert_any, None,
                        "a parameter of any type has no strict schema")
    if "enum" in node and isinstance(node["enum"], list):
        info = literal_info(tuple(v for v in node["enum"] if v is not None))
        nullable = None in node["enum"]
        return with_null(TypeInfo(node, info.convert, None), nullable)
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            options = [o for o in node[key] if not (isinstance(o, dict) and o.get("type") == "null")]
            nullable = len(options) != len(node[key])
            infos = [json_schema_info(o) for o in options]
            if len(infos) == 1:
                return with_null(TypeInfo(node, infos[0].convert, None), nullable)
            return with_null(TypeInfo(node, first_that_fits([(i.schema, i.convert) for i in infos]), None), nullable)
    kind = node.get("type")
    if isinstance(kind, list):
        nullable = "null" in kind
        kinds = [k for k in kind if k != "null"]
        infos = [json_schema_info({**node, "type": k}) for k in kinds]
        if len(infos) == 1:
            return with_null(TypeInfo(node, infos[0].convert, None), nullable)
        return with_null(TypeInfo(node, first_that_fits([(i.schema, i.convert) for i in infos]), None), nullable)
    simple = {"string": convert_str, "integer": convert_int, "number": convert_float,
              "boolean": convert_bool, "null": convert_null}
    if kind in simple:
        return TypeInfo(node, simple[kind], None)
    if kind == "array":
        return TypeInfo(node, array_converter(json_schema_info(node.get("items", {})).convert), None)
    if kind == "object" or "properties" in node:
        declared = node.get("properties")
        properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
        fields = {k: json_schema_info(v) for k, v in properties.items()}
        required = [k for k in node.get("required", []) if isinstance(k, str)]
        closed = node.get("additionalProperties") is False
        convert_object = object_converter(fields, required, closed=closed)
        return TypeInfo(node, convert_object, None)
    return TypeInfo(node, convert_any, None, takes_null=True)  # no type: any value, null too
