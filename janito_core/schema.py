"""A tool class -> its canonical schema: name, description, JSON Schema parameters.

Parameter types come from ``run()``'s type hints; descriptions from ``run()``'s
docstring (Google, NumPy or reST), else the class docstring's parameter section, else
``Annotated[T, "text"]``. The result is built once per class and kept on the class.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, NamedTuple

from . import _constraints
from ._annotations import type_hints
from ._jsonschema import json_schema_info
from ._text import first_line as first_line  # where it was: janito_core.schema
from ._types import (
    _UNION_TYPES,
    TypeInfo,
    UnsupportedType,
    annotated_metadata,
    is_model,
    is_typeddict,
    json_safe,
    nullable_schema,
    type_info,
)
from .results import Failure


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_MISSING = MISSING
_CACHE_ATTR = "_janito_schema"
_HINTS_ATTR = "_janito_hints"
#: What dispatch derives from the schema once (``janito_core._plans``), forgotten with it.
_PLAN_ATTR = "_janito_plan"  # read by name on dispatch's short way (_call.call_tool)


class AnnotationError(TypeError):
    """A tool's ``run()`` annotations cannot be resolved or expressed as JSON Schema."""


class Parameter(NamedTuple):
    """One parameter of ``run()``: its type information, whether required, its default."""

    name: str
    info: TypeInfo
    required: bool
    default: Any
    description: str | None
    none_if_omitted: bool = False
    """``T | None`` without a default in ``run()``: not required, so dispatch passes None."""


class Group(NamedTuple):
    """Parameters that go together: ``kind`` "exactly" (a call gives exactly one of them),
    "at_most" (at most one) or "at_least" (one or more), declared with
    ``ExactlyOneOf(name)``/``AtMostOneOf(name)``/``AtLeastOneOf(name)``."""

    kind: str
    name: str
    members: tuple[str, ...]

    def sentence(self) -> str:
        listed = ", ".join(self.members[:-1]) + " or " + self.members[-1]
        said = {"exactly": "exactly", "at_most": "at most", "at_least": "at least"}[self.kind]
        return f"Give {said} one of {listed}."


class ToolSchema(NamedTuple):
    """Everything janito derives from a tool class's signature and docstrings."""

    name: str
    description: str
    parameters: dict[str, Any]
    strict_parameters: dict[str, Any] | None
    strict_problem: str | None
    diagnostics: tuple[str, ...]
    params: dict[str, Parameter]
    #: Undeclared arguments are passed through to run() (a declared schema that allows them).
    open: bool = False
    #: Parameters that go together (``ExactlyOneOf``, ``AtMostOneOf``); no provider accepts
    #: them at the root of a parameters schema, so each member's description says it.
    groups: tuple[Group, ...] = ()
    #: The JSON Schema of every answer of a tool whose ``run()`` is annotated to return a
    #: ``TypedDict`` or a pydantic model (MCP's ``outputSchema``): that success shape or
    #: janito's failure shape (``result_branches``); None when the tool declares none.
    output_schema: dict[str, Any] | None = None

    def function(self, *, strict: bool = False) -> dict[str, Any]:
        """The provider-neutral function: name, description, parameters."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.strict_parameters if strict and self.strict_parameters else self.parameters,
        }


def parse_param_docs(doc: str | None) -> dict[str, str]:
    """{parameter name: description} documented in ``doc`` (Google, NumPy or reST style)."""
    # Imported on first use: its patterns cost about 1.5 ms to compile, which the start-up
    # of a command that never builds a schema should not pay.
    from ._docstrings import parse_param_docs as parse

    return parse(doc)


def _field_docs(owner: type) -> dict[str, str]:
    return {k: v for k, v in parse_param_docs(owner.__doc__).items() if v}


def resolve_hints(cls: type) -> dict[str, Any]:
    """``run()``'s resolved type hints, or AnnotationError naming the failing annotation.

    Resolved once per class and kept on it: the registry resolves them when it gates the
    tool at load time, and the schema build reuses them instead of evaluating every
    annotation string again. A failure is not kept, so a later call tries again.
    """
    cached = cls.__dict__.get(_HINTS_ATTR)
    if cached is not None:
        return typing.cast("dict[str, Any]", cached)
    run = cls.run  # type: ignore[attr-defined]
    try:
        hints = type_hints(run)
    except Exception as exc:
        raise AnnotationError(
            f"{cls.__name__}.run() has an annotation that cannot be resolved: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    setattr(cls, _HINTS_ATTR, hints)
    return hints


def tool_schema(cls: type) -> ToolSchema:
    """The schema of tool class ``cls``, built on first use and cached on the class."""
    cached = cls.__dict__.get(_CACHE_ATTR)
    if cached is not None:
        return typing.cast(ToolSchema, cached)
    built = _build(cls)
    setattr(cls, _CACHE_ATTR, built)
    return built


def forget_schema(cls: type) -> None:
    """Drop the schema cached on ``cls``, whose declared ``input_schema`` or description
    changed (a mounted MCP server's tool after the server's tool list changed)."""
    for derived in (_CACHE_ATTR, _PLAN_ATTR):
        if derived in cls.__dict__:
            delattr(cls, derived)


def _build(cls: type) -> ToolSchema:
    explicit = cls.__dict__.get("input_schema")
    if isinstance(explicit, dict):
        return _from_json_schema(cls, explicit)
    hints = resolve_hints(cls)
    run = cls.run  # type: ignore[attr-defined]
    signature = _parameters(run)
    diagnostics: list[str] = []
    run_docs = parse_param_docs(run.__doc__)
    class_docs = parse_param_docs(cls.__doc__)

    description = first_line(cls.__doc__) or first_line(run.__doc__)
    if not description:
        diagnostics.append(f"{cls.__name__} has no docstring: the model sees no description")

    params: dict[str, Parameter] = {}
    grouped: dict[str, list[tuple[str, str, bool]]] = {}
    for index, (name, kind, default) in enumerate(signature):
        if index == 0 and name in ("self", "cls"):
            continue
        if kind == _VAR_POSITIONAL:
            diagnostics.append(f"*{name} cannot be sent by a model and is ignored")
            continue
        if kind == _VAR_KEYWORD:
            diagnostics.append(f"**{name} cannot be described to a model and is ignored")
            continue
        if kind == _POSITIONAL_ONLY:
            raise AnnotationError(f"{cls.__name__}.run() parameter {name!r} is positional-only")
        if name not in hints:
            diagnostics.append(f"parameter {name!r} has no type annotation: any value is accepted")
        try:
            info = type_info(hints.get(name, Any), _field_docs)
        except UnsupportedType as exc:
            raise AnnotationError(f"{cls.__name__}.run() parameter {name!r}: {exc}") from None
        doc = run_docs.get(name) or class_docs.get(name) or info.schema.get("description")
        if not doc:
            diagnostics.append(f"parameter {name!r} is not documented in run()'s docstring")
        required = default is _MISSING and not info.nullable
        rules = _constraints.read(annotated_metadata(hints[name])) if name in hints else None
        if rules is not None:
            for kind, label in rules.groups:
                grouped.setdefault(label, []).append((kind, name, required))
            for unread in rules.unread:
                diagnostics.append(f"parameter {name!r}: {unread} is neither in the schema nor "
                                   "checked by janito")
            if rules and _breaks(info, default):
                diagnostics.append(f"parameter {name!r}: its default {default!r} breaks its own rules")
        params[name] = Parameter(name, info, required, default, doc or None,
                                 default is _MISSING and info.nullable)

    groups = _groups(cls, grouped)
    for group in groups:
        for member in group.members:
            p = params[member]
            text = f"{p.description} {group.sentence()}" if p.description else group.sentence()
            params[member] = p._replace(description=text)

    supplied = getattr(cls, "_injected", None) or {}  # a function tool's workspace, reporter...
    taken = {name for name, _, _ in signature}
    for documented in sorted((set(run_docs) | set(class_docs)) - set(params)):
        if documented in taken or documented in supplied:
            continue
        diagnostics.append(f"the docstring documents {documented!r}, which run() does not take")

    properties: dict[str, Any] = {}
    strict_properties: dict[str, Any] = {}
    strict_problem: str | None = None
    for name, p in params.items():
        prop = dict(p.info.schema)
        if p.description:
            prop["description"] = p.description
        if p.default is not _MISSING and p.default is not None:
            default = p.default.value if isinstance(p.default, enum.Enum) else p.default
            if json_safe(default):
                prop["default"] = default
        properties[name] = prop
        if p.info.strict_schema is None:
            problem = p.info.strict_problem or "unsupported in strict mode"
            strict_problem = strict_problem or f"parameter {name!r}: {problem}"
            continue
        strict_prop = dict(p.info.strict_schema)
        if p.description:
            strict_prop["description"] = p.description
        if not p.required:
            strict_prop = nullable_schema(strict_prop)
            if p.info.nullable and "default" in prop:
                # null is a real value here (None), so strict mode cannot ask for the default
                note = f"default {_short_json(prop['default'])}; null means none"
            else:
                note = "null means the default"
                if "default" in prop:
                    note += f" ({_short_json(prop['default'])})"
            strict_prop["description"] = (
                f"{strict_prop['description']} ({note})" if strict_prop.get("description")
                else note[0].upper() + note[1:]
            )
        strict_properties[name] = strict_prop
    if strict_problem:
        diagnostics.append(f"no strict schema: {strict_problem}; the non-strict schema is used")

    parameters = {
        "type": "object",
        "properties": properties,
        "required": [n for n, p in params.items() if p.required],
        "additionalProperties": False,
    }
    strict_parameters = None
    if strict_problem is None:
        strict_parameters = {
            "type": "object",
            "properties": strict_properties,
            "required": list(params),
            "additionalProperties": False,
        }
    return ToolSchema(
        name=cls.__name__,
        description=description,
        parameters=parameters,
        strict_parameters=strict_parameters,
        strict_problem=strict_problem,
        diagnostics=tuple(diagnostics),
        params=params,
        groups=groups,
        output_schema=_result_schema(hints.get("return"), diagnostics),
    )


_POSITIONAL_ONLY = "positional-only"
_VAR_POSITIONAL = "*"
_KEYWORD = "keyword"
_VAR_KEYWORD = "**"
_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def _parameters(function: Any) -> list[tuple[str, str, Any]]:
    """(name, kind, default or MISSING) of each parameter of ``function``, in order.

    A plain function's are read from its code, without importing ``inspect`` (about a
    tenth of ``janito``'s start-up); anything else (a wrapped or bound function, a
    callable object, a declared ``__signature__``) is read by ``inspect.signature``, which
    knows every way a callable can say what it takes.
    """
    code = getattr(function, "__code__", None)
    if (type(function) is not types.FunctionType or code is None
            or "__wrapped__" in function.__dict__ or "__signature__" in function.__dict__):
        return _inspected(function)
    names = code.co_varnames
    positional = code.co_argcount
    keyword_only = code.co_kwonlyargcount
    defaults = function.__defaults__ or ()
    keyword_defaults = function.__kwdefaults__ or {}
    first_default = positional - len(defaults)
    found: list[tuple[str, str, Any]] = []
    for index in range(positional):
        kind = _POSITIONAL_ONLY if index < code.co_posonlyargcount else _KEYWORD
        default = defaults[index - first_default] if index >= first_default else _MISSING
        found.append((names[index], kind, default))
    extra = positional + keyword_only
    if code.co_flags & _CO_VARARGS:
        found.append((names[extra], _VAR_POSITIONAL, _MISSING))
        extra += 1
    for name in names[positional:positional + keyword_only]:
        found.append((name, _KEYWORD, keyword_defaults.get(name, _MISSING)))
    if code.co_flags & _CO_VARKEYWORDS:
        found.append((names[extra], _VAR_KEYWORD, _MISSING))
    return found


def _inspected(function: Any) -> list[tuple[str, str, Any]]:
    import inspect

    kinds: dict[Any, str] = {inspect.Parameter.POSITIONAL_ONLY: _POSITIONAL_ONLY,
                             inspect.Parameter.VAR_POSITIONAL: _VAR_POSITIONAL,
                             inspect.Parameter.VAR_KEYWORD: _VAR_KEYWORD}
    return [(name, kinds.get(param.kind, _KEYWORD),
             _MISSING if param.default is param.empty else param.default)
            for name, param in inspect.signature(function).parameters.items()]


def _breaks(info: TypeInfo, default: Any) -> bool:
    """Whether a plain default (a number or a string) fails the parameter's own check."""
    if default is _MISSING or default is None or type(default) not in (int, float, str):
        return False
    problems: list[dict[str, str]] = []
    info.convert(default, "default", problems)
    return bool(problems)


def _groups(cls: type, grouped: dict[str, list[tuple[str, str, bool]]]) -> tuple[Group, ...]:
    out = []
    for name, members in grouped.items():
        kinds = {kind for kind, _, _ in members}
        names = tuple(member for _, member, _ in members)
        if len(kinds) != 1:
            raise AnnotationError(f"{cls.__name__}.run(): group {name!r} is declared with "
                                  "more than one of ExactlyOneOf, AtMostOneOf, AtLeastOneOf")
        if len(names) < 2:
            raise AnnotationError(f"{cls.__name__}.run(): group {name!r} has one parameter "
                                  f"({names[0]}); a group needs two or more")
        required = [member for _, member, is_required in members if is_required]
        if required:
            raise AnnotationError(f"{cls.__name__}.run(): parameter {required[0]!r} of group "
                                  f"{name!r} is required; give it a default")
        out.append(Group(kinds.pop(), name, names))
    return tuple(out)


#: What janito itself may add to any answer: ``truncated`` when the size limit cut it, and
#: ``not_undoable`` when the journal could not keep what the call changed.
ADDED_BY_JANITO: dict[str, Any] = {
    "truncated": {"type": "boolean"},
    "not_undoable": {"type": "array", "items": {"type": "string"}},
}

#: Every failure janito or a tool answers: ``success`` false, one sentence in ``error``, its
#: ``error_type``, for invalid arguments ``details`` naming each field, and whatever else
#: the tool says (the path it was given, say).
FAILURE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The call failed.",
    "properties": {
        "success": {"const": False},
        "error": {"type": "string"},
        "error_type": {"type": "string"},
        "details": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "error": {"type": "string"}},
                "required": ["field", "error"],
            },
        },
        **ADDED_BY_JANITO,
    },
    "required": ["success", "error", "error_type"],
}


def _result_schema(annotation: Any, diagnostics: list[str]) -> dict[str, Any] | None:
    """The output schema of a tool whose result ``run()`` declares as a TypedDict or a
    pydantic model (see ``answer_schema``)."""
    if annotation is None:
        return None
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in _UNION_TYPES:
        # ``Counted | Failure``: the failure shape is in every output schema already
        declared = [a for a in typing.get_args(annotation) if a is not Failure]
        annotation = declared[0] if len(declared) == 1 else annotation
    try:
        if is_typeddict(annotation):
            schema = type_info(annotation, _field_docs).schema
        elif is_model(annotation):
            from ._models import result_schema

            schema = result_schema(annotation)
        else:
            return None
    except (UnsupportedType, TypeError, ValueError) as exc:  # pydantic's errors are of these
        diagnostics.append(f"the result type cannot be described: {exc}")
        return None
    return answer_schema(schema)


def answer_schema(shape: dict[str, Any]) -> dict[str, Any]:
    """The output schema of a tool whose successful results have ``shape`` (a JSON Schema
    object): every answer as dispatch delivers it, that shape with ``success`` true (and
    what janito adds, and any list possibly cut short by a last item that is a string
    saying so), or janito's failure shape. ``result_branches`` gives the two apart."""
    declared = {k: v for k, v in shape.get("properties", {}).items() if k != "success"}
    properties = {"success": {"const": True}, **declared, **ADDED_BY_JANITO}
    required = ["success", *(r for r in shape.get("required", []) if r != "success")]
    success = _cut_lists({**shape, "properties": properties, "required": required})
    shaped: dict[str, Any] = {"type": "object", "anyOf": [success, FAILURE_SCHEMA]}
    for key in ("$defs", "definitions"):
        # references are written from the root of the document: keep them resolvable there
        if key in success:
            shaped[key] = success.pop(key)
    return shaped


def result_branches(output_schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the success shape, the failure shape) of an ``output_schema``, each a whole schema
    (with the definitions its references need)."""
    success, failed = output_schema["anyOf"]
    shared = {k: output_schema[k] for k in ("$defs", "definitions") if k in output_schema}
    return {**success, **shared}, {**failed, **shared}


def _cut_lists(node: Any) -> Any:
    if isinstance(node, list):
        return [_cut_lists(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _cut_lists(v) for k, v in node.items()}
    items = out.get("items")
    kind = out.get("type")
    if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and isinstance(items, dict):
        if items.get("type") != "string":
            out["items"] = {"anyOf": [items, {"type": "string"}]}
    return out


_short_encoder: Any = None


def _short_json(value: Any) -> str:
    global _short_encoder
    if _short_encoder is None:
        import json

        _short_encoder = json.JSONEncoder(ensure_ascii=False)  # what json.dumps(..., ensure_ascii=False) builds
    text: str = _short_encoder.encode(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _from_json_schema(cls: type, input_schema: dict[str, Any]) -> ToolSchema:
    """The schema of a tool that declares ``input_schema`` instead of typed parameters."""
    properties = input_schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = {k for k in input_schema.get("required", []) if isinstance(k, str)}
    params: dict[str, Parameter] = {}
    for name, node in properties.items():
        info = json_schema_info(node)
        description = node.get("description") if isinstance(node, dict) else None
        default = node.get("default", _MISSING) if isinstance(node, dict) else _MISSING
        params[name] = Parameter(name, info, name in required, default,
                                 description if isinstance(description, str) else None)
    parameters = {"type": "object", **input_schema, "properties": dict(properties)}
    declared = cls.__dict__.get("description")
    description = declared.strip() if isinstance(declared, str) and declared.strip() else first_line(cls.__doc__)
    return ToolSchema(
        name=cls.__name__,
        description=description,
        parameters=parameters,
        strict_parameters=None,
        strict_problem="the tool declares its own JSON Schema",
        diagnostics=("no strict schema: the tool declares its own JSON Schema",),
        params=params,
        open=input_schema.get("additionalProperties", True) is not False,
    )
