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

from .schema import ToolSchema

FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "mcp")


def _parameters(schema: ToolSchema, strict: bool) -> tuple[dict[str, Any], bool]:
    if strict and schema.strict_parameters is not None:
        return copy.deepcopy(schema.strict_parameters), True
    return copy.deepcopy(schema.parameters), False


def openai_chat(schema: ToolSchema, *, strict: bool = False) -> dict[str, Any]:
    """Chat Completions ``tools`` entry: ``{"type": "function", "function": {...}}``."""
    parameters, is_strict = _parameters(schema, strict)
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
    return {
        "type": "function",
        "name": schema.name,
        "description": schema.description,
        "parameters": parameters,
        "strict": is_strict,
    }


def anthropic(schema: ToolSchema, *, strict: bool = False) -> dict[str, Any]:
    """Messages API ``tools`` entry: name, description, ``input_schema``."""
    parameters, is_strict = _parameters(schema, strict)
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


def _gemini_schema(node: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema -> the OpenAPI subset Gemini's ``Schema`` object accepts."""
    out: dict[str, Any] = {}
    nullable = False
    kind = node.get("type")
    if isinstance(kind, list):
        nullable = "null" in kind
        rest = [k for k in kind if k != "null"]
        kind = rest[0] if rest else "null"
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        nullable = nullable or len(options) != len(node["anyOf"])
        if len(options) == 1:
            merged = _gemini_schema(options[0])
            if node.get("description"):
                merged["description"] = node["description"]
            if nullable:
                merged["nullable"] = True
            return merged
        out["anyOf"] = [_gemini_schema(o) for o in options]
    if isinstance(kind, str):
        out["type"] = _GEMINI_TYPES.get(kind, "STRING")
    if node.get("description"):
        out["description"] = node["description"]
    if "enum" in node:
        values = [v for v in node["enum"] if v is not None]
        if all(isinstance(v, str) for v in values):
            out["type"] = "STRING"
            out["format"] = "enum"
            out["enum"] = values
        else:
            listed = ", ".join(map(str, values))
            out["description"] = (out.get("description", "") + f" One of: {listed}.").strip()
    if "properties" in node:
        out["properties"] = {k: _gemini_schema(v) for k, v in node["properties"].items()}
        if node.get("required"):
            out["required"] = list(node["required"])
    if "items" in node and isinstance(node["items"], dict):
        out["items"] = _gemini_schema(node["items"])
    if "prefixItems" in node:
        out["items"] = {"anyOf": [_gemini_schema(i) for i in node["prefixItems"]]}
    for key in ("minItems", "maxItems"):
        if key in node:
            out[key] = str(node[key])
    if out.get("type") == "OBJECT" and not out.get("properties"):
        # Gemini rejects an OBJECT without properties (a free-form dict[str, T]); such an
        # object travels as JSON text instead, which dispatch decodes.
        out["type"] = "STRING"
        out.pop("required", None)
        out["description"] = (out.get("description", "") + " A JSON object, as a string.").strip()
    elif "type" not in out and "anyOf" not in out:
        # No single JSON type (Any, a Literal mixing words and numbers): Gemini needs one.
        out["type"] = "STRING"
    if nullable:
        out["nullable"] = True
    return out


def gemini(schema: ToolSchema, *, strict: bool = False) -> dict[str, Any]:
    """A ``functionDeclarations`` entry; Gemini has no strict mode, so ``strict`` is ignored."""
    declaration: dict[str, Any] = {"name": schema.name, "description": schema.description}
    if schema.parameters.get("properties"):
        declaration["parameters"] = _gemini_schema(schema.parameters)
    return declaration


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
