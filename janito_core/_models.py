"""What janito reads of a pydantic model, and how the model builds and writes its values.

pydantic is never imported here before a tool hands janito a model class, which cannot
exist unless pydantic was imported already (``_types.is_model``). ``_types`` turns the
fields read here into a schema and a converter exactly as it does a dataclass's; the
model is then built by ``model_validate``, so its own validators run, and what they
refuse comes back field by field. A field of a type janito does not describe itself (a
datetime, a URL) is described by pydantic's schema for it and checked by pydantic alone.
"""

from __future__ import annotations

import typing
from typing import Any, Callable, NamedTuple

from ._convert import Refused

_MISSING: Any = object()


class Undescribed(TypeError):
    """A field whose type neither janito nor pydantic can write as a plain JSON Schema."""


class ModelField(NamedTuple):
    """One field of a model as the model's callers see it."""

    name: str
    key: str  # what a value is sent under: the validation alias, else the name
    annotation: Any  # its type, with the rules Field(...) took out of it as Annotated metadata
    description: str | None
    required: bool
    default: Any  # _MISSING when there is none to show (required, or a default_factory)


def fields_of(model: Any, docs: dict[str, str]) -> list[ModelField]:
    """The fields of ``model``; ``docs`` are descriptions from its docstring by name."""
    by_alias = model.model_config.get("validate_by_alias", True) is not False
    out = []
    for name, field in model.model_fields.items():
        metadata = list(field.metadata)
        annotation = field.annotation
        if metadata:
            arguments = (annotation, *metadata)
            annotation = typing.Annotated[arguments]
        required = field.is_required()
        default = _MISSING if required or field.default_factory is not None else field.default
        out.append(ModelField(name, _key(model, name, field) if by_alias else name, annotation,
                              field.description or docs.get(name), required, default))
    return out


def has_default(field: ModelField) -> bool:
    return field.default is not _MISSING


def takes_extra_fields(model: Any) -> bool:
    return bool(model.model_config.get("extra") == "allow")


def is_root(model: Any) -> bool:
    """Whether ``model`` is a ``RootModel``, whose one field ``root`` is the whole value."""
    return bool(getattr(model, "__pydantic_root_model__", False))


def _key(model: Any, name: str, field: Any) -> str:
    """The key a field is given under: its validation alias (the first of several), else
    its alias, else its name."""
    alias = field.validation_alias
    if alias is None:
        alias = field.alias
    choices = getattr(alias, "choices", None)
    if choices is not None:
        alias = choices[0] if choices else None
    if alias is None:
        return name
    if not isinstance(alias, str):
        raise Undescribed(f"{model.__name__}.{name} is read from a path of keys (AliasPath), "
                          "which janito cannot describe")
    return alias


def builder(model: Any) -> Callable[[Any], Any]:
    """``model_validate`` of ``model``, raising ``Refused`` with one problem per error."""
    from pydantic import ValidationError

    def build(value: Any) -> Any:
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            raise Refused([(where(error["loc"]), said(error))
                           for error in exc.errors(include_url=False)]) from None

    return build


# What a field's schema may hold, taken from pydantic, for it to count in strict mode: a
# scalar with its rules, or a list or union of such (no objects, no references).
_STRICT_KEYWORDS = frozenset({"type", "format", "pattern", "enum", "const", "description",
                              "anyOf", "items", "minLength", "maxLength", "minimum", "maximum",
                              "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems",
                              "maxItems", "uniqueItems"})


def pydantic_schema(owner: str, field: ModelField) -> tuple[dict[str, Any], bool]:
    """(pydantic's schema of a field janito does not describe, whether strict mode can take
    it as it is)."""
    from pydantic import PydanticUserError, TypeAdapter

    try:
        schema = _untitled(TypeAdapter(field.annotation).json_schema())
    except (PydanticUserError, TypeError, ValueError) as exc:
        raise Undescribed(f"{owner}.{field.name}: {exc}") from None
    if "$defs" in schema or "$ref" in str(schema):
        raise Undescribed(f"{owner}.{field.name} has a type janito cannot describe "
                          f"({field.annotation!r})")
    return schema, _strict_enough(schema)


_NAMED_CHILDREN = ("properties", "patternProperties", "$defs", "definitions")


def _untitled(node: Any) -> Any:
    """pydantic's schema without the titles it makes up from names (a property called
    ``title`` stays)."""
    if isinstance(node, list):
        return [_untitled(n) for n in node]
    if not isinstance(node, dict):
        return node
    return {k: ({name: _untitled(child) for name, child in v.items()}
                if k in _NAMED_CHILDREN and isinstance(v, dict) else _untitled(v))
            for k, v in node.items() if k != "title"}


def _strict_enough(node: Any) -> bool:
    if not isinstance(node, dict) or not set(node) <= _STRICT_KEYWORDS or node.get("type") == "object":
        return False
    children = [*node.get("anyOf", []), *([node["items"]] if "items" in node else [])]
    return all(_strict_enough(child) for child in children)


def where(loc: tuple[Any, ...]) -> str:
    """A pydantic error's location as janito names fields below a value: ``.a.b[2]``."""
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in loc)


def said(error: Any) -> str:
    """A pydantic error's message; a validator's ``ValueError`` says its own words."""
    message = str(error.get("msg") or error.get("type") or "invalid")
    return message.removeprefix("Value error, ")


def dump(model: Any) -> Any:
    """A model instance as JSON values, under the keys its schema gives (aliases)."""
    return model.model_dump(mode="json", by_alias=True)


def result_schema(model: Any) -> dict[str, Any]:
    """The JSON Schema of what ``dump`` makes of an instance of ``model``."""
    schema: dict[str, Any] = _untitled(model.model_json_schema(mode="serialization", by_alias=True))
    return schema
