"""A remote MCP tool as a janito tool class (its result becomes janito's in ``_results``).

The classes are async tools (``async def run()``): ``janito mcp serve`` and
``acall_tool`` await them on their own loop, ``call_tool`` on their registry's background loop.

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


MAX_INLINE_DEPTH = 16
OUTPUT_SCHEMA_IN_DESCRIPTION = 800
"""An output schema whose JSON is at most this long is shown to the model in the description."""


def declared_schema(input_schema: Any) -> dict[str, Any]:
    """A server's ``inputSchema`` as a generated class declares it.

    Always an object schema with a ``properties`` object and a ``required`` list naming
    only declared properties. Only the declared properties are accepted unless the server
    opens the schema explicitly (``additionalProperties`` true or a schema): a schema that
    merely leaves ``additionalProperties`` out gets ``false``, so a misspelt argument is
    an error the model sees instead of a value the server silently ignores.

    Local ``$ref``s (``#/$defs/...``, ``#/definitions/...``) are written out in place, so
    the objects they name are coerced and checked field by field like any other, and
    providers that do not follow ``$ref`` (Gemini) see the whole shape; a recursive one is
    left as a ``$ref`` with its definitions kept.
    """
    schema = copy.deepcopy(input_schema) if isinstance(input_schema, dict) else {}
    schema = inline_refs(schema)
    properties = schema.get("properties")
    schema["type"] = "object"
    schema["properties"] = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    schema["required"] = [
        r for r in (required if isinstance(required, list) else [])
        if isinstance(r, str) and r in schema["properties"]
    ]
    for value in schema["properties"].values():
        _close_objects(value)
    extra = schema.get("additionalProperties")
    if extra is not True and not isinstance(extra, dict):
        schema["additionalProperties"] = False
    return schema


def _close_objects(node: Any) -> None:
    """Nested objects follow the top level's rule: one that declares ``properties`` and
    says nothing of others accepts only those, so a misspelt nested field is an error the
    model sees rather than something the server drops. ``allOf`` branches are left open
    (each names only part of the fields)."""
    if isinstance(node, list):
        for item in node:
            _close_objects(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key not in ("allOf", "$defs", "definitions", "not"):
            _close_objects(value)
    if isinstance(node.get("properties"), dict) and "additionalProperties" not in node \
            and "patternProperties" not in node and "unevaluatedProperties" not in node:
        node["additionalProperties"] = False


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local, non-recursive ``$ref``s replaced by what they point to."""
    unresolved: list[str] = []

    def target(ref: str) -> Any:
        if not ref.startswith("#/"):
            return None
        node: Any = schema
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node if isinstance(node, dict) else None

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            found = target(ref)
            if found is None or ref in seen or len(seen) >= MAX_INLINE_DEPTH:
                unresolved.append(ref)
                return {k: walk(v, seen) for k, v in node.items()}
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**found, **siblings}, (*seen, ref))
        return {k: (v if k in ("$defs", "definitions") else walk(v, seen))
                for k, v in node.items()}

    out = walk(schema, ())
    if not unresolved:
        out.pop("$defs", None)
        out.pop("definitions", None)
    return dict(out)


def output_schema(definition: Any) -> dict[str, Any] | None:
    """The server's ``outputSchema`` of a tool, or None."""
    declared = getattr(definition, "output_schema", None)
    return copy.deepcopy(declared) if isinstance(declared, dict) and declared else None


def _description(remote: RemoteServer, definition: Any, remote_name: str) -> tuple[str, str]:
    """The server's description, and a sentence on its output schema (may be empty).

    The output schema is shown when it names fields (an object with ``properties``): a
    model then knows what ``result`` will hold. A free-form object says nothing worth
    the words.
    """
    text = remote.clean((definition.description or getattr(definition, "title", None)
                         or f"Tool {remote_name} of the MCP server {remote.name}.").strip())
    declared = output_schema(definition)
    properties = declared.get("properties") if declared is not None else None
    if not isinstance(properties, dict) or not properties or _wraps_a_plain_value(properties):
        return text, ""
    shown = json.dumps(inline_refs(declared), ensure_ascii=False, separators=(",", ":"))
    if len(shown) <= OUTPUT_SCHEMA_IN_DESCRIPTION:
        return text, f"Its result (the `result` of the answer) follows this JSON Schema: {shown}"
    return text, ("Its result (the `result` of the answer) follows a JSON Schema the server "
                  "declares.")


def _wraps_a_plain_value(properties: dict[str, Any]) -> bool:
    """``{"result": <a string, number...>}``: how SDK servers wrap a plain return value."""
    if list(properties) != ["result"] or not isinstance(properties["result"], dict):
        return False
    return properties["result"].get("type") in ("string", "integer", "number", "boolean")


def make_tool_class(remote: RemoteServer, definition: Any, name: str, module: str) -> type:
    """A ``@tool`` class named ``name`` that calls ``definition`` on ``remote``."""
    remote_name = str(definition.name)

    async def run(self: BaseTool, **kwargs: Any) -> dict[str, Any]:
        cls = type(self)
        where = {"server": remote.name, "tool": name}
        if getattr(cls, "mcp_removed", False):
            return failure(f"the MCP server {remote.name!r} no longer offers {remote_name}",
                           "unknown_tool", **where)
        problems = check_arguments(cls, kwargs)
        if problems:
            return failure(
                "invalid arguments: " + "; ".join(f"{p['field']}: {p['error']}" for p in problems),
                "invalid_arguments", details=problems, **where)

        def report(level: str, message: str) -> None:
            if level in ("error", "critical", "alert", "emergency"):
                self.report_error(message)
            elif level == "warning":
                self.report_warning(message)
            else:
                self.report_progress(message)

        return await remote.call(remote_name, kwargs, report, local_name=name)

    run.__qualname__ = f"{name}.run"
    run.__module__ = module
    namespace = {
        "__module__": module,
        "__qualname__": name,
        "run": run,
        "mcp_server": remote.name,
        "mcp_tool": remote_name,
        "mcp_removed": False,
        "open_world": True,  # another server, whatever it does, is beyond this host
    }
    cls = type(name, (BaseTool,), namespace)
    describe_tool(cls, remote, definition)
    return tool(remote.config.permissions_of(remote_name))(cls)


def describe_tool(cls: type, remote: RemoteServer, definition: Any) -> None:
    """Give ``cls`` what the server now says of its tool: description, schemas.

    Called when the class is made and again when the server's tool list changes; janito's
    cached schema of the class is dropped so the next look sees the new one.
    """
    text, note = _description(remote, definition, str(definition.name))
    description = f"{text} {note}" if note else text
    raw = remote.scrubbed(definition.input_schema if isinstance(definition.input_schema, dict)
                          else {})
    declared_output = output_schema(definition)
    # The first line of __doc__ is what `janito tools` lists; the model reads `description`.
    cls.__doc__ = f"{text}\n\n{note}" if note else text
    cls.description = description  # type: ignore[attr-defined]
    cls.input_schema = remote.scrubbed(declared_schema(raw))  # type: ignore[attr-defined]
    checked = dict(raw)
    if isinstance(checked.get("required"), list):
        # janito drops the required names the schema does not declare; so does the check
        properties = checked.get("properties") if isinstance(checked.get("properties"), dict) else {}
        checked["required"] = [r for r in checked["required"] if r in properties]
    cls.mcp_input_schema = checked  # type: ignore[attr-defined]
    if declared_output is not None:
        declared_output = remote.scrubbed(declared_output)
    cls.mcp_output_schema = declared_output  # type: ignore[attr-defined]
    cls.output_schema = answer_schema(  # type: ignore[attr-defined]
        declared_output, janito_peer=remote.janito_peer)
    cls.mcp_validator = None  # type: ignore[attr-defined]
    from janito_core.schema import forget_schema

    forget_schema(cls)


def answer_schema(declared: dict[str, Any] | None, *,
                  janito_peer: bool) -> dict[str, Any] | None:
    """The schema of every answer janito gives for a tool whose server declares
    ``declared`` as its output schema, in the shape of the output schemas of janito's own
    tools: a success (``server``, ``tool``, the structured content under ``result``, and
    any ``text`` and ``content`` besides) or janito's failure (its ``result``, if any, is
    whatever the server sent with its error). Another janito's answers are passed on as
    they are: its schema is already that shape."""
    if declared is None or janito_peer:
        return declared
    from janito_core.schema import answer_schema as janito_answer

    inner = copy.deepcopy(declared)
    shape: dict[str, Any] = {
        "type": "object",
        "properties": {
            "server": {"type": "string"}, "tool": {"type": "string"}, "result": inner,
            "text": {"type": "string"},
            "content": {"type": "array", "items": {"type": "object"}},
        },
        # the SDK refuses a result without structured content from a tool that declares
        # an output schema, and one that breaks it: a success always has a good `result`
        "required": ["server", "tool", "result"],
        "additionalProperties": False,
    }
    for key in ("$defs", "definitions"):
        # references are written from the root of the document: keep them resolvable there
        if key in inner:
            shape[key] = inner.pop(key)
    return janito_answer(shape)


def check_arguments(cls: type, arguments: dict[str, Any]) -> list[dict[str, str]]:
    """Every way ``arguments`` (already coerced by dispatch) break the server's own input
    schema, checked with jsonschema: the keywords janito's coercion does not look at
    (``minItems``, ``pattern``, ``minimum``, ``format`` assertions, ``$ref``'d recursive
    objects, ``allOf``, ...) are enforced too. A schema jsonschema cannot use is not held
    against the caller."""
    schema = getattr(cls, "mcp_input_schema", None)
    if not isinstance(schema, dict) or not schema:
        return []
    validator = getattr(cls, "mcp_validator", None)
    if validator is None:
        from jsonschema import SchemaError
        from jsonschema.validators import validator_for

        try:
            kind = validator_for(schema)
            kind.check_schema(schema)
            validator = kind(schema)
        except SchemaError:
            validator = False
        except Exception:
            validator = False
        cls.mcp_validator = validator  # type: ignore[attr-defined]
    if validator is False:
        return []
    problems: list[dict[str, str]] = []
    try:
        for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path)):
            problems.append({"field": _field(error.absolute_path) or "(arguments)",
                             "error": _short(error.message)})
            if len(problems) >= 20:
                break
    except Exception:
        return []  # an unresolvable $ref and the like: the server's schema, not the call
    return problems


def _field(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short(text: str) -> str:
    return text if len(text) <= 300 else text[:297] + "..."
