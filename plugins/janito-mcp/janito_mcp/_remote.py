"""A remote MCP tool as a janito tool class, and an MCP tool result as janito's result dict.

janito builds a tool's schema from ``run()``'s signature; a remote tool has a JSON input
schema instead. Each generated class therefore carries its schema precomputed: the
server's ``inputSchema`` as the parameters the model sees, and per property a converter
chosen from its JSON type so dispatch validates and coerces arguments exactly as it does
for a native tool (unknown fields, missing required fields, wrong types).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import inspect
import json
import keyword
import re
from typing import TYPE_CHECKING, Any, Literal, Optional

from janito_core import BaseTool, tool
from janito_core.dispatch import failure

if TYPE_CHECKING:
    from ._client import RemoteServer

MAX_NAME = 64
STRICT_PROBLEM = "the input schema comes from an MCP server and is used as the server gives it"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_SIMPLE: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def local_name(server: str, remote: str, taken: set[str]) -> str:
    """``<server>__<tool>``, cleaned to ``[A-Za-z0-9_-]``, at most 64 characters, unique."""
    clean = _UNSAFE.sub("_", remote).strip("_") or "tool"
    name = f"{server}__{clean}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha1(remote.encode("utf-8")).hexdigest()[:8]
        name = f"{name[:MAX_NAME - 9]}_{digest}"
    unique, counter = name, 2
    while unique in taken:
        suffix = f"_{counter}"
        unique = name[: MAX_NAME - len(suffix)] + suffix
        counter += 1
    taken.add(unique)
    return unique


def annotation_for(schema: Any) -> Any:
    """The Python type whose janito converter matches a JSON Schema property (``Any`` if none)."""
    if not isinstance(schema, dict):
        return Any
    values = schema.get("enum")
    if isinstance(values, list) and values and all(
        v is None or isinstance(v, (str, int, float, bool)) for v in values
    ):
        options = tuple(v for v in values if v is not None)
        if not options:
            return Any
        literal = Literal[options]  # type: ignore[valid-type]
        return Optional[literal] if None in values else literal
    kind = schema.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        base = annotation_for({**schema, "type": rest[0]}) if len(rest) == 1 else Any
        return Optional[base] if "null" in kind and base is not Any else base
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            real = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            if len(real) == 1:
                base = annotation_for(real[0])
                if base is Any:
                    return Any
                return Optional[base] if len(real) != len(options) else base
            return Any
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        item = annotation_for(schema.get("items"))
        return list[item]  # type: ignore[valid-type]
    if kind == "object":
        return dict[str, Any]
    return Any


def missing() -> Any:
    """janito-core's marker for a parameter without a default."""
    from janito_core import schema

    return getattr(schema, "MISSING", dataclasses.MISSING)


def _parameter(name: str, prop: Any, required: bool) -> tuple[Any, Any]:
    """(janito_core Parameter, its annotation) for one property of a remote input schema."""
    from janito_core._types import TypeInfo, type_info
    from janito_core.schema import Parameter

    prop = prop if isinstance(prop, dict) else {}
    annotation = annotation_for(prop)
    base = type_info(annotation)
    info = TypeInfo(copy.deepcopy(prop), base.convert, None, STRICT_PROBLEM, base.nullable)
    description = prop.get("description") if isinstance(prop.get("description"), str) else None
    default = prop["default"] if "default" in prop else missing()
    return Parameter(name, info, required, default, description), annotation


def build_schema(name: str, description: str, input_schema: Any) -> tuple[Any, dict[str, Any]]:
    """(janito_core ToolSchema, annotations by parameter) for a remote tool."""
    from janito_core.schema import ToolSchema

    source = input_schema if isinstance(input_schema, dict) else {}
    parameters = copy.deepcopy(source)
    diagnostics: list[str] = []
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    parameters["type"] = "object"
    parameters["properties"] = properties
    required_names = [r for r in parameters.get("required", []) if isinstance(r, str)]
    parameters["required"] = [r for r in required_names if r in properties]
    if parameters.get("additionalProperties", True) is not False:
        diagnostics.append("only the declared properties are accepted")
    parameters["additionalProperties"] = False
    params = {}
    annotations: dict[str, Any] = {}
    for prop_name, prop in properties.items():
        param, annotation = _parameter(prop_name, prop, prop_name in parameters["required"])
        params[prop_name] = param
        annotations[prop_name] = annotation
    diagnostics.append(f"no strict schema: {STRICT_PROBLEM}")
    schema = ToolSchema(
        name=name,
        description=description,
        parameters=parameters,
        strict_parameters=None,
        strict_problem=STRICT_PROBLEM,
        diagnostics=tuple(diagnostics),
        params=params,
    )
    return schema, annotations


def _signature(params: dict[str, Any], annotations: dict[str, Any]) -> inspect.Signature:
    """``run(self, *, a, b=...)`` when every name can be a Python parameter, else ``**kwargs``."""
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = list(params)
    if all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
        ordered = sorted(names, key=lambda n: not params[n].required)
        parameters = [self_param] + [
            inspect.Parameter(
                n, inspect.Parameter.KEYWORD_ONLY, annotation=annotations[n],
                default=inspect.Parameter.empty if params[n].required else (
                    None if params[n].default is missing() else params[n].default
                ),
            )
            for n in ordered
        ]
    else:
        parameters = [self_param, inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]
    return inspect.Signature(parameters, return_annotation=dict[str, Any])


def make_tool_class(remote: RemoteServer, definition: Any, name: str, module: str) -> type:
    """A ``@tool`` class named ``name`` that calls ``definition`` on ``remote``."""
    remote_name = str(definition.name)
    description = (definition.description or getattr(definition, "title", None) or
                   f"Tool {remote_name} of the MCP server {remote.name}.").strip()
    schema, annotations = build_schema(name, description, definition.input_schema)

    def run(self: BaseTool, **kwargs: Any) -> dict[str, Any]:
        def report(level: str, message: str) -> None:
            if level in ("error", "critical", "alert", "emergency"):
                self.report_error(message)
            elif level == "warning":
                self.report_warning(message)
            else:
                self.report_progress(message)

        return remote.call(remote_name, kwargs, report, local_name=name)

    run.__signature__ = _signature(schema.params, annotations)  # type: ignore[attr-defined]
    run.__annotations__ = {**annotations, "return": dict[str, Any]}
    run.__doc__ = description
    run.__qualname__ = f"{name}.run"
    run.__module__ = module
    namespace = {
        "__doc__": description,
        "__module__": module,
        "__qualname__": name,
        "run": run,
        "mcp_server": remote.name,
        "mcp_tool": remote_name,
        "_janito_schema": schema,
    }
    cls = type(name, (BaseTool,), namespace)
    return tool(remote.config.permissions_of(remote_name))(cls)


def _block(block: Any) -> dict[str, Any]:
    kind = str(getattr(block, "type", "unknown"))
    if kind == "resource":
        resource = block.resource
        out: dict[str, Any] = {"type": kind, "uri": str(resource.uri),
                               "mime_type": getattr(resource, "mime_type", None)}
        if getattr(resource, "text", None) is not None:
            out["text"] = resource.text
        else:
            out["bytes"] = len(getattr(resource, "blob", "") or "") * 3 // 4
        return out
    if kind in ("image", "audio"):
        return {"type": kind, "mime_type": getattr(block, "mime_type", None),
                "bytes": len(getattr(block, "data", "") or "") * 3 // 4}
    if kind == "resource_link":
        return {"type": kind, "uri": str(block.uri), "name": getattr(block, "name", None)}
    return {"type": kind}


def result_dict(result: Any, server: str, tool_name: str, local: str | None = None) -> dict[str, Any]:
    """janito's result for an MCP ``CallToolResult``.

    A structured result that already has janito's shape (``success`` and, on failure,
    ``error``/``error_type``, as another janito serves it) is returned as it is.
    """
    structured = getattr(result, "structured_content", None)
    texts: list[str] = []
    others: list[dict[str, Any]] = []
    for block in getattr(result, "content", None) or []:
        if getattr(block, "type", None) == "text":
            texts.append(block.text)
        else:
            others.append(_block(block))
    text = "\n".join(texts)
    is_error = bool(getattr(result, "is_error", False))
    if isinstance(structured, dict) and isinstance(structured.get("success"), bool):
        out = dict(structured)
        if is_error and out["success"]:
            out["success"] = False
            out.setdefault("error", text or f"{tool_name} reported an error")
            out.setdefault("error_type", "remote_error")
        return out
    where = {"server": server, "tool": local or tool_name}
    if is_error:
        message = " ".join(text.split())[:2000] or f"{tool_name} reported an error without a message"
        extra = {"content": others} if others else {}
        return failure(message, "remote_error", **where, **extra)
    out = {"success": True, **where}
    if structured is not None:
        out["result"] = structured
    if text and not (structured is not None and _same_json(text, structured)):
        out["text"] = text
    if others:
        out["content"] = others
    return out


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False
