"""The canonical schema in each provider's shape.

Every function takes a :class:`~janito_core.schema.ToolSchema` (``Registry.schema(name)``)
and returns one tool definition. ``strict=True`` asks for the provider's strict mode
where it has one; a tool whose parameters cannot be strict (a free-form
``dict[str, T]``, ``Any``) gets its ordinary schema with strict mode off, and the reason
is in the schema's diagnostics.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from . import _constraints
from .schema import ToolSchema

FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "mcp")

# The string formats Anthropic's strict tool use accepts (docs "Structured outputs: JSON
# Schema limitations"); Gemini's Schema takes "date-time" (besides its own "enum").
_ANTHROPIC_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email",
                                       "hostname", "uri", "ipv4", "ipv6", "uuid"})
_GEMINI_KEPT = frozenset({"minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems",
                          "minProperties", "maxProperties", "pattern"})


def _parameters(schema: ToolSchema, strict: bool) -> tuple[dict[str, Any], bool]:
    if strict and schema.strict_parameters is not None:
        return copy.deepcopy(schema.strict_parameters), True
    return copy.deepcopy(schema.parameters), False


def _keep_none(key: str, value: Any) -> bool:
    return False


def _keep_for_anthropic_strict(key: str, value: Any) -> bool:
    if key == "format":
        return value in _ANTHROPIC_STRICT_FORMATS
    return key == "minItems" and value in (0, 1)


def _keep_for_gemini(key: str, value: Any) -> bool:
    return key in _GEMINI_KEPT or (key == "format" and value == "date-time")


_CHILD_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_CHILD_NODES = ("items", "additionalProperties", "not", "contains")
_CHILD_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def in_words(node: Any, keep: Callable[[str, Any], bool]) -> Any:
    """A copy of schema ``node`` in which every rule keyword (``minimum``, ``maxLength``,
    ``format``...) that ``keep(key, value)`` refuses is said in its node's description
    instead: what a format cannot carry, the model still reads, and dispatch still checks."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    dropped = []
    for key, value in node.items():
        if key in _constraints.KEYWORDS and not keep(key, value):
            dropped.append(key)
        elif key in _CHILD_MAPS and isinstance(value, dict):
            out[key] = {k: in_words(v, keep) for k, v in value.items()}
        elif key in _CHILD_NODES and isinstance(value, dict):
            out[key] = in_words(value, keep)
        elif key in _CHILD_LISTS and isinstance(value, list):
            out[key] = [in_words(v, keep) for v in value]
        else:
            out[key] = value
    if dropped:
        phrase = _constraints.words(node, dropped)
        if phrase:
            text = out.get("description")
            out["description"] = f"{text} ({phrase})" if text else phrase[0].upper() + phrase[1:]
    return out


def openai_chat(schema: ToolSchema, *, strict: bool = False) -> dict[str, Any]:
    """Chat Completions ``tools`` entry: ``{"type": "function", "function": {...}}``.

    In strict mode the rules (ranges, lengths, formats, patterns) are said in words: the
    strict subset does not take those keywords everywhere."""
    parameters, is_strict = _parameters(schema, strict)
    if is_strict:
        parameters = in_words(parameters, _keep_none)
    function: dict[str, Any] = {
        "name": schema.name,
        "description": schema.description,
        "parameters": parameters,
    }
    if strict:
        function["strict"] = is_strict
    return {"type": "function", "function": function}


def openai_responses(schema: ToolSchema, *, strict: bool = False) -> dict[str, Any]:
    """Responses API ``tools`` entry; ``strict`` is always explicit because it defaults on."""
    parameters, is_strict = _parameters(schema, strict)
    if is_strict:
        parameters = in_words(parameters, _keep_none)
    return {
        "type": "function",
        "name": schema.name,
        "description": schema.description,
        "parameters": parameters,
        "strict": is_strict,
    }


def anthropic(schema: ToolSchema, *, strict: bool = False) -> dict[str, Any]:
    """Messages API ``tools`` entry: name, description, ``input_schema``; in strict mode the
    rules strict tool use refuses (ranges, lengths, patterns) are said in words."""
    parameters, is_strict = _parameters(schema, strict)
    if is_strict:
        parameters = in_words(parameters, _keep_for_anthropic_strict)
    tool: dict[str, Any] = {
        "name": schema.name,
        "description": schema.description,
        "input_schema": parameters,
    }
    if is_strict:
        tool["strict"] = True
    return tool


_GEMINI_TYPES = {
    "string": "STRING", "integer": "INTEGER", "number": "NUMBER", "boolean": "BOOLEAN",
    "array": "ARRAY", "object": "OBJECT", "null": "NULL",
}


def _gemini_schema(node: dict[str, Any], root: dict[str, Any] | None = None,
                   seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """JSON Schema -> the OpenAPI subset Gemini's ``Schema`` object accepts.

    ``$ref`` is resolved against ``root`` (Gemini would read a bare reference as a string);
    a reference back into itself cannot be written out, so that value travels as JSON text.
    """
    root = node if root is None else root
    reference = node.get("$ref")
    if isinstance(reference, str):
        target = _resolve(root, reference)
        if target is None or reference in seen:
            why = "A JSON value, as a string." if target is not None else "A JSON value."
            text = node.get("description")
            return {"type": "STRING", "description": f"{text} {why}" if text else why}
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _gemini_schema(merged, root, (*seen, reference))
    if "oneOf" in node and "anyOf" not in node:
        node = {**{k: v for k, v in node.items() if k != "oneOf"}, "anyOf": node["oneOf"]}
    if isinstance(node.get("allOf"), list):
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for part in node["allOf"]:
            if isinstance(part, dict):
                merged = {**part, **merged}
        node = merged
    if "const" in node and "enum" not in node:
        node = {**node, "enum": [node["const"]]}
    out: dict[str, Any] = {}
    nullable = False
    kind = node.get("type")
    if isinstance(kind, list):
        nullable = "null" in kind
        rest = [k for k in kind if k != "null"]
        kind = rest[0] if rest else "null"
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if not (isinstance(o, dict) and o.get("type") == "null")]
        nullable = nullable or len(options) != len(node["anyOf"])
        if len(options) == 1:
            merged = _gemini_schema(options[0], root, seen)
            if node.get("description"):
                merged["description"] = node["description"]
            if nullable:
                merged["nullable"] = True
            return merged
        out["anyOf"] = [_gemini_schema(o, root, seen) for o in options]
    if isinstance(kind, str):
        out["type"] = _GEMINI_TYPES.get(kind, "STRING")
    if node.get("description"):
        out["description"] = node["description"]
    for key in ("minimum", "maximum", "pattern"):
        if key in node:
            out[key] = node[key]
    if node.get("format") == "date-time" and out.get("type") == "STRING":
        out["format"] = "date-time"
    if "enum" in node:
        values = [v for v in node["enum"] if v is not None]
        nullable = nullable or len(values) != len(node["enum"])
        if all(isinstance(v, str) for v in values):
            out["type"] = "STRING"
            out["format"] = "enum"
            out["enum"] = values
        else:
            listed = ", ".join(map(str, values))
            out["description"] = (out.get("description", "") + f" One of: {listed}.").strip()
    if "properties" in node:
        out["properties"] = {k: _gemini_schema(v, root, seen) for k, v in node["properties"].items()}
        if node.get("required"):
            out["required"] = list(node["required"])
    if "items" in node and isinstance(node["items"], dict):
        out["items"] = _gemini_schema(node["items"], root, seen)
    if "prefixItems" in node:
        out["items"] = {"anyOf": [_gemini_schema(i, root, seen) for i in node["prefixItems"]]}
    for key in ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"):
        if key in node:
            out[key] = str(node[key])  # int64 fields travel as strings in JSON
    if out.get("type") == "OBJECT" and not out.get("properties"):
        # Gemini rejects an OBJECT without properties (a free-form dict[str, T]); such an
        # object travels as JSON text instead, which dispatch decodes.
        out["type"] = "STRING"
        for key in ("required", "minProperties", "maxProperties"):
            out.pop(key, None)
        out["description"] = (out.get("description", "") + " A JSON object, as a string.").strip()
    elif "type" not in out and "anyOf" not in out:
        # No single JSON type (Any, a Literal mixing words and numbers): Gemini needs one.
        out["type"] = "STRING"
    if out.get("type") != "STRING":
        for key in ("minLength", "maxLength", "pattern"):
            out.pop(key, None)
    if out.get("type") != "ARRAY":
        for key in ("minItems", "maxItems"):
            out.pop(key, None)
    if out.get("type") not in ("INTEGER", "NUMBER"):
        for key in ("minimum", "maximum"):
            out.pop(key, None)
    if nullable:
        out["nullable"] = True
    return out


def _resolve(root: dict[str, Any], reference: str) -> dict[str, Any] | None:
    """The node ``reference`` (``#/$defs/Point``, ``#``) points at inside ``root``, or None."""
    if reference == "#":
        return root
    if not reference.startswith("#/"):
        return None
    node: Any = root
    for part in reference[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) else None


def gemini(schema: ToolSchema, *, strict: bool = False) -> dict[str, Any]:
    """A ``functionDeclarations`` entry; Gemini has no strict mode, so ``strict`` is ignored.

    Rules its ``Schema`` cannot carry (exclusive bounds of a number, ``multipleOf``,
    formats other than date-time) are said in words."""
    declaration: dict[str, Any] = {"name": schema.name, "description": schema.description}
    if schema.parameters.get("properties"):
        parameters = in_words(_inclusive_integers(schema.parameters), _keep_for_gemini)
        declaration["parameters"] = _gemini_schema(parameters)
    return declaration


def _inclusive_integers(node: Any) -> Any:
    """``node`` with the exclusive bounds of integers made inclusive (Gemini has none):
    more than 0 is 1 or more."""
    if isinstance(node, list):
        return [_inclusive_integers(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _inclusive_integers(v) for k, v in node.items()}
    declared = out.get("type")
    kinds: list[Any] = declared if isinstance(declared, list) else [declared]
    if "integer" in kinds and "number" not in kinds:
        for word, plain, step in (("exclusiveMinimum", "minimum", 1), ("exclusiveMaximum", "maximum", -1)):
            bound = out.get(word)
            if isinstance(bound, int) and not isinstance(bound, bool):
                del out[word]
                plain_bound = out.get(plain)
                out[plain] = bound + step if plain_bound is None else (
                    max(plain_bound, bound + step) if step > 0 else min(plain_bound, bound + step))
    return out


def mcp(schema: ToolSchema, *, strict: bool = False, permissions: str | None = None,
        open_world: bool = False) -> dict[str, Any]:
    """An MCP ``Tool`` definition: name, description, ``inputSchema``, behaviour hints.

    The hints come from ``permissions``; ``open_world`` (the tool class's ``open_world``)
    marks a tool that reaches other systems although it does not execute.
    """
    parameters, _ = _parameters(schema, False)
    tool: dict[str, Any] = {
        "name": schema.name,
        "description": schema.description,
        "inputSchema": parameters,
    }
    if schema.output_schema is not None:
        tool["outputSchema"] = copy.deepcopy(schema.output_schema)
    if permissions is not None:
        tool["annotations"] = {
            "readOnlyHint": "w" not in permissions and "x" not in permissions,
            "destructiveHint": "w" in permissions or "x" in permissions,
            "openWorldHint": "x" in permissions or bool(open_world),
        }
    return tool


RENDERERS: dict[str, Callable[..., dict[str, Any]]] = {
    "openai": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "mcp": mcp,
}


def render(schema: ToolSchema, format: str = "openai", *, strict: bool = False) -> dict[str, Any]:
    """``schema`` in the shape ``format`` names (one of FORMATS)."""
    try:
        renderer = RENDERERS[format]
    except KeyError:
        raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}") from None
    return renderer(schema, strict=strict)
