"""A remote MCP tool as a janito tool class, and an MCP tool result as janito's result dict.

A remote tool has a JSON input schema instead of a typed ``run()``. Each generated class
declares it as ``input_schema`` (janito-core's extension point for parameters known only
at run time), so janito builds the schema the model sees and the per-property
converters from it, and dispatch validates and coerces arguments exactly as it does for
a native tool (unknown fields, missing required fields, wrong types).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from janito_core import BaseTool, failure, tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._client import RemoteServer

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


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


def declared_schema(input_schema: Any) -> dict[str, Any]:
    """A server's ``inputSchema`` as a generated class declares it.

    Always an object schema with a ``properties`` object and a ``required`` list naming
    only declared properties. Only the declared properties are accepted unless the server
    opens the schema explicitly (``additionalProperties`` true or a schema): a schema that
    merely leaves ``additionalProperties`` out gets ``false``, so a misspelt argument is
    an error the model sees instead of a value the server silently ignores.
    """
    schema = copy.deepcopy(input_schema) if isinstance(input_schema, dict) else {}
    properties = schema.get("properties")
    schema["type"] = "object"
    schema["properties"] = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    schema["required"] = [
        r for r in (required if isinstance(required, list) else [])
        if isinstance(r, str) and r in schema["properties"]
    ]
    extra = schema.get("additionalProperties")
    if extra is not True and not isinstance(extra, dict):
        schema["additionalProperties"] = False
    return schema


def make_tool_class(remote: RemoteServer, definition: Any, name: str, module: str) -> type:
    """A ``@tool`` class named ``name`` that calls ``definition`` on ``remote``."""
    remote_name = str(definition.name)
    description = remote.clean((definition.description or getattr(definition, "title", None)
                                or f"Tool {remote_name} of the MCP server {remote.name}.").strip())

    def run(self: BaseTool, **kwargs: Any) -> dict[str, Any]:
        def report(level: str, message: str) -> None:
            if level in ("error", "critical", "alert", "emergency"):
                self.report_error(message)
            elif level == "warning":
                self.report_warning(message)
            else:
                self.report_progress(message)

        return remote.call(remote_name, kwargs, report, local_name=name)

    run.__qualname__ = f"{name}.run"
    run.__module__ = module
    namespace = {
        "__doc__": description,
        "description": description,
        "__module__": module,
        "__qualname__": name,
        "run": run,
        "input_schema": remote.scrubbed(declared_schema(definition.input_schema)),
        "mcp_server": remote.name,
        "mcp_tool": remote_name,
        "open_world": True,  # another server, whatever it does, is beyond this host
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


def result_dict(result: Any, server: str, tool_name: str, local: str | None = None,
                clean: Callable[[str], str] | None = None) -> dict[str, Any]:
    """janito's result for an MCP ``CallToolResult``.

    A structured result that already has janito's shape (``success`` and, on failure,
    ``error``/``error_type``, as another janito serves it) is returned as it is. ``clean``
    removes secrets from an error text before it is shortened (the caller scrubs the rest).
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
        shown = clean(text) if clean is not None else text
        message = " ".join(shown.split())[:2000] or f"{tool_name} reported an error without a message"
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
