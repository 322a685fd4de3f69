"""Converters: a value a model sent, checked and coerced, or the errors naming each bad field.

Coercion rules (applied identically everywhere, documented in docs/dispatch.md):

- ``int``: a JSON integer; a float with no fractional part (``3.0``); a string of an
  optionally signed decimal integer (``"50"``). Never a boolean.
- ``float``: a JSON number or a numeric string; never a boolean; never NaN or infinity.
  An integer beyond a float's range becomes the largest float of its sign.
- ``bool``: ``true``/``false``, or the strings ``"true"``/``"false"`` in any case.
- ``str``: a string; an integer or float becomes its JSON text. Never a boolean, list
  or object. An unpaired surrogate in a string becomes U+FFFD.
- ``list``/``tuple``/``set``: a JSON array, or a string holding a JSON array.
- ``dict``, dataclasses, TypedDicts: a JSON object, or a string holding a JSON object.
- ``Literal``/``Enum``: one of the listed values (an Enum parameter receives the member).
- ``T | None``: ``null`` gives None.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Mapping
from typing import Any, Callable, Protocol

Errors = list[dict[str, str]]


Converter = Callable[[Any, str, Errors], Any]


class _Invalid:
    __slots__ = ()

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Any = _Invalid()


def describe(value: Any) -> str:
    """A short description of a JSON value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean " + ("true" if value else "false")
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def fail(errors: Errors, path: str, message: str) -> Any:
    errors.append({"field": path, "error": message})
    return INVALID


def convert_str(value: Any, path: str, errors: Errors) -> Any:
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return without_surrogates(value)
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        import json

        return json.dumps(value)
    return fail(errors, path, f"expected a string, got {describe(value)}")


def without_surrogates(text: str) -> str:
    """``text`` with each unpaired surrogate (JSON text may escape one: ``"\\ud800"``)
    replaced by U+FFFD, the replacement character, as a UTF-8 decoder does with a bad byte:
    no program can write the string out as it is."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def convert_int(value: Any, path: str, errors: Errors) -> Any:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return fail(errors, path, f"expected an integer, got {describe(value)}")
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isdigit() and digits.isascii() and len(digits) <= 4300:
            return int(text)
    return fail(errors, path, f"expected an integer, got {describe(value)}")


def convert_float(value: Any, path: str, errors: Errors) -> Any:
    if isinstance(value, bool):
        return fail(errors, path, f"expected a number, got {describe(value)}")
    if isinstance(value, int):
        if abs(value) < 2**1023:
            return float(value)
        # JSON numbers have no upper bound; a float has: the nearest one is the largest
        return sys.float_info.max if value > 0 else -sys.float_info.max
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return fail(errors, path, "expected a finite number")
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return number
    return fail(errors, path, f"expected a number, got {describe(value)}")


def convert_bool(value: Any, path: str, errors: Errors) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered == "true":
            return True
        if lowered == "false":
            return False
    return fail(errors, path, f"expected true or false, got {describe(value)}")


def convert_any(value: Any, path: str, errors: Errors) -> Any:
    return value


def convert_null(value: Any, path: str, errors: Errors) -> Any:
    if value is None:
        return None
    return fail(errors, path, f"expected null, got {describe(value)}")


def maybe_json(value: Any, expected: type) -> Any:
    """A model sometimes sends an array or object JSON-encoded inside a string."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "[{":
            import json

            try:
                decoded = json.loads(text)
            except ValueError:
                return value
            if isinstance(decoded, expected):
                return decoded
    return value


def path_converter(path_type: type) -> Converter:
    def convert(value: Any, path: str, errors: Errors) -> Any:
        if isinstance(value, str):
            return path_type(value)
        return fail(errors, path, f"expected a path string, got {describe(value)}")

    return convert


def array_converter(item: Converter, build: Callable[[list[Any]], Any] = list) -> Converter:
    """A converter for a JSON array whose items ``item`` converts, made into ``build``."""

    def convert(value: Any, path: str, errors: Errors) -> Any:
        value = maybe_json(value, list)
        if not isinstance(value, list):
            return fail(errors, path, f"expected an array, got {describe(value)}")
        before = len(errors)
        out = []
        for index, element in enumerate(value):
            seen = len(errors)
            out.append(item(element, path, errors))
            if len(errors) != seen:
                # the item path is built only for the items that fail
                for error in errors[seen:]:
                    error["field"] = f"{path}[{index}]" + error["field"][len(path):]
        if len(errors) != before:
            return INVALID
        try:
            return build(out)
        except TypeError:
            return fail(errors, path, "array items cannot form a set")

    return convert


_JSON_KIND = {"string": str, "boolean": bool, "array": list, "object": dict}


def exact_match(schema: dict[str, Any], value: Any) -> bool:
    kind = schema.get("type")
    if kind == "integer":
        return type(value) is int
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    expected = _JSON_KIND.get(kind) if isinstance(kind, str) else None
    return expected is not None and isinstance(value, expected)


def schema_word(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {"integer": "an integer", "number": "a number", "string": "a string",
                "boolean": "a boolean", "array": "an array", "object": "an object",
                "null": "null"}.get(kind, kind)
    if "enum" in schema:
        import json

        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    return "a value"


class Refused(Exception):
    """What an object's ``build`` raises when the value breaks its type's own rules (a
    pydantic model's validators): one (where below the object, what is wrong) per bad
    field, where is ``""`` for the object itself or ``".name"``, ``"[2]"``..."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{where}: {what}" for where, what in problems))
        self.problems = problems


class Field(Protocol):
    """What an object converter needs of a field: its converter, and whether null is a value."""

    convert: Converter
    takes_null: bool


def object_converter(fields: Mapping[str, Field], required: Collection[str], *, closed: bool,
                      build: Callable[[dict[str, Any]], Any] | None = None,
                      owner: str = "") -> Converter:
    """A converter for a JSON object whose known fields are ``fields``.

    Unknown keys are errors when ``closed``, else passed through as they are. null for an
    optional field that cannot be null means "not given", as it does for a parameter.
    ``build`` turns the converted fields into the value (a dataclass, say); its failure is
    reported as ``cannot build <owner>``, or field by field when it raises ``Refused``.
    """

    def convert(raw: Any, path: str, errors: Errors) -> Any:
        raw = maybe_json(raw, dict)
        if not isinstance(raw, dict):
            return fail(errors, path, f"expected an object, got {describe(raw)}")
        before = len(errors)
        out: dict[str, Any] = {}
        for key, value in raw.items():
            info = fields.get(key)
            if info is None:
                if closed:
                    fail(errors, f"{path}.{key}", _unknown_field(key, fields))
                else:
                    out[key] = value
                continue
            if value is None and key not in required and not info.takes_null:
                continue
            out[key] = info.convert(value, f"{path}.{key}", errors)
        for key in required:
            if key not in raw:
                fail(errors, f"{path}.{key}", "missing required field")
        if len(errors) != before:
            return INVALID
        if build is None:
            return out
        try:
            return build(out)
        except Refused as refused:
            for where, problem in refused.problems or [("", f"{owner} refused the value")]:
                fail(errors, path + where, problem)
            return INVALID
        except Exception as exc:
            return fail(errors, path, f"cannot build {owner}: {exc}")

    return convert


def _unknown_field(key: Any, known: Collection[str]) -> str:
    import difflib

    close = difflib.get_close_matches(str(key), list(known), n=1)
    return f"unknown field (did you mean {close[0]!r}?)" if close else "unknown field"


def first_that_fits(forms: list[tuple[dict[str, Any], Converter]],
                     expected: str = "no allowed form matches") -> Converter:
    """A converter trying each form (its schema, its converter) in turn.

    An exact JSON type match wins before any coercion, so "5" stays a string in str | int.
    """

    def convert(value: Any, path: str, errors: Errors) -> Any:
        # the complaint of a form whose JSON type the value has (a string too short for
        # ``Annotated[str, MinLen(1)] | list[str]``) says more than "expected a or b"
        closest: Errors | None = None
        for schema, form in forms:
            if exact_match(schema, value):
                trial: Errors = []
                result = form(value, path, trial)
                if not trial:
                    return result
                closest = closest or trial
        for _schema, form in forms:
            trial = []
            result = form(value, path, trial)
            if not trial:
                return result
        if closest is not None:
            errors.extend(closest)
            return INVALID
        return fail(errors, path, f"{expected}, got {describe(value)}")

    return convert
