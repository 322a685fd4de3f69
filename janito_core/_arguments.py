"""A model's arguments on their way in: JSON decoded, checked against the tool's signature.

Every problem is said per field (``details``), so the model can fix its call; nothing
here runs a tool.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._convert import INVALID
from .results import UNKNOWN_TOOL, failure
from .schema import tool_schema

if TYPE_CHECKING:
    from .registry import Registry, ToolRecord


def _json_number(text: str) -> float | int:
    """A JSON number with a fraction or an exponent; one too large for a float (``1e400``,
    valid JSON) is kept as the integer it is, rather than becoming infinity."""
    number = float(text)
    if math.isinf(number):
        _, _, exponent = text.lower().partition("e")
        if exponent and abs(int(exponent)) <= 4300:  # as far as int() reads digits
            from decimal import Decimal

            exact = Decimal(text)
            if exact == exact.to_integral_value():
                return int(exact)
    return number


_DECODER = json.JSONDecoder(parse_float=_json_number)


def _said(details: list[dict[str, str]]) -> str:
    """The first few problems in one sentence, so a reader of ``error`` alone knows them."""
    said = "; ".join(f"{d['field']}: {d['error']}" for d in details[:3])
    return said + (f"; and {len(details) - 3} more" if len(details) > 3 else "")


def _parse_json(text: str | bytes | bytearray) -> tuple[Any, str | None]:
    """(the decoded value, None) or (None, what is wrong with the text)."""
    try:
        if not text.strip():
            return {}, None
        if isinstance(text, str):
            return _DECODER.decode(text), None
        return json.loads(text, parse_float=_json_number), None
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:
        return None, str(exc)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def _unknown_tool(name: str, registry: Registry) -> dict[str, Any]:
    import difflib

    names = registry.names()
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if not close:
        lowered = {n.lower(): n for n in names}
        close = [lowered[k] for k in difflib.get_close_matches(name.lower(), list(lowered), n=3)]
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    try:
        spec = registry.toolset_offering(name)
    except Exception:  # the search is a courtesy: an odd installation must not break it
        spec = None
    if spec is not None:
        return failure(f"{name} belongs to toolset {spec.name!r} ({spec.distribution}), which "
                       "is installed but not loaded here", UNKNOWN_TOOL,
                       suggestions=close, toolset=spec.name, distribution=spec.distribution)
    try:
        cause, failures = registry.failures_behind(name)
    except Exception:  # a courtesy, like the search above
        cause, failures = None, []
    if failures:
        said = [_failure_text(e) for e in failures]
        extra: dict[str, Any] = {"load_errors": [
            {"toolset": e.toolset, "distribution": e.distribution, "kind": e.kind,
             "reason": e.reason[:_REASON_CHARS]} for e in failures]}
        if cause is not None:
            return failure(f"{name} could not be loaded: {said[0]}", UNKNOWN_TOOL,
                           suggestions=close, **extra)
        more = f" (and {len(failures) - 1} more: see load_errors)" if len(failures) > 1 else ""
        return failure(f"there is no tool called {name[:100]!r}; it may be missing because "
                       f"a toolset failed to load: {said[0]}{more}{hint}", UNKNOWN_TOOL,
                       suggestions=close, **extra)
    return failure(f"there is no tool called {name[:100]!r}{hint}", UNKNOWN_TOOL,
                   suggestions=close)


#: Characters of a load failure's reason an ``unknown_tool`` answer carries.
_REASON_CHARS = 1000


def _failure_text(error: Any) -> str:
    who = f"toolset {error.toolset!r}" if error.toolset else "an installed distribution"
    where = f" ({error.distribution})" if error.distribution else ""
    return f"{who}{where}: {error.reason[:_REASON_CHARS]}"


def _validate(record: ToolRecord, arguments: Mapping[str, Any]) -> dict[str, Any] | list[dict[str, str]]:
    """Keyword arguments for ``run()``, or the list of problems, one per bad field."""
    schema = tool_schema(record.cls)
    params = schema.params
    if not arguments:
        if not params and not schema.groups:
            return {}
        missing = [n for n, p in params.items() if p.required]
        if not missing:
            problems = _group_problems(schema.groups, arguments) if schema.groups else []
            return problems or {n: None for n, p in params.items() if p.none_if_omitted}
        return [{"field": n, "error": "missing required field"} for n in missing]
    errors: list[dict[str, str]] = []
    kwargs: dict[str, Any] = {}
    for key, value in arguments.items():
        param = params.get(key) if isinstance(key, str) else None
        if param is None:
            if schema.open and isinstance(key, str):
                kwargs[key] = value
                continue
            errors.append({"field": str(key)[:100], "error": _unknown_field(record, key, params)})
            continue
        if value is None and not param.info.takes_null:
            if not param.required:
                continue
            errors.append({"field": key, "error": "must not be null"})
            continue
        converted = param.info.convert(value, key, errors)
        if converted is not INVALID:
            kwargs[key] = converted
    for name, param in params.items():
        if param.required:
            if name not in arguments:
                errors.append({"field": name, "error": "missing required field"})
        elif param.none_if_omitted and name not in arguments:
            kwargs[name] = None
    if schema.groups and not errors:
        errors = _group_problems(schema.groups, arguments)
    if errors:
        _add_changes(record, errors)
    return errors or kwargs


def _add_changes(record: ToolRecord, errors: list[dict[str, str]]) -> None:
    """Append to each refused value what the tool's ``changed_parameters`` says changed in
    the values that parameter takes ({name: sentence}), so a call written for the tool's
    earlier meaning is told the new one (``max_depth``: "0 searched no folder before; 1 is
    the folder's own files now")."""
    changed = getattr(record.cls, "changed_parameters", None)
    if not isinstance(changed, Mapping) or not changed:
        return
    for error in errors:
        note = changed.get(error.get("field"))
        if isinstance(note, str) and note and error.get("error") != "missing required field":
            error["error"] = f"{error['error']} ({note})"


def _group_problems(groups: Iterable[Any], arguments: Mapping[str, Any]) -> list[dict[str, str]]:
    """One problem per member of each group the arguments break (null is "not given")."""
    problems: list[dict[str, str]] = []
    for group in groups:
        given = [m for m in group.members if arguments.get(m) is not None]
        if len(given) > 1 and group.kind != "at_least":
            said = f"give only one of {', '.join(group.members)}, not {' and '.join(given)}"
            problems.extend({"field": m, "error": said} for m in given)
        elif not given and group.kind in ("exactly", "at_least"):
            said = f"give one of {', '.join(group.members)}; none was given"
            problems.extend({"field": m, "error": said} for m in group.members)
    return problems


def _unknown_field(record: ToolRecord, key: Any, params: Mapping[str, Any]) -> str:
    """What to tell a model that sent an argument ``run()`` does not take.

    A tool that renamed a parameter says so in ``renamed_parameters`` ({old name: what
    became of it}), so a call written for the old signature is told the new name instead
    of a guess.
    """
    renamed = getattr(record.cls, "renamed_parameters", None)
    note = renamed.get(key) if isinstance(renamed, Mapping) and isinstance(key, str) else None
    if isinstance(note, str) and note:
        return f"unknown field: {note}"
    import difflib

    close = difflib.get_close_matches(str(key), list(params), n=1)
    return f"unknown field (did you mean {close[0]!r}?)" if close else "unknown field"
