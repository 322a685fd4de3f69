"""Executing what a model asks for.

``call_tool(name, arguments)`` turns one tool call into a result dict and never raises
for anything the model or the tool did. Every result has ``success``; a failure has
``error`` (one sentence), ``error_type`` and, for bad arguments, ``details`` naming each
bad field. ``execute_tool_calls`` does the same for all the calls of one assistant turn
in the OpenAI chat, OpenAI responses, Anthropic or Gemini shape.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._context import active_registry, current_call_id
from ._convert import INVALID
from .cancellation import CallCancelled, CancelToken, _current
from .errors import WorkspaceError
from .registry import default_registry
from .results import (
    CANCELLED,
    INVALID_ARGUMENTS,
    INVALID_JSON,
    INVALID_RESULT,
    OUTSIDE_WORKSPACE,
    PERMISSION_DENIED,
    PLUGIN_ERROR,
    REFUSED,
    TIMEOUT,
    TOOL_EXCEPTION,
    UNAVAILABLE,
    UNKNOWN_TOOL,
    failure,
)
from .schema import tool_schema

if TYPE_CHECKING:
    from .registry import Registry, ToolRecord

DEFAULT_MAX_RESULT_CHARS = 100_000
MAX_DEPTH = 64

__all__ = [
    "CANCELLED", "INVALID_ARGUMENTS", "INVALID_JSON", "INVALID_RESULT", "OUTSIDE_WORKSPACE",
    "PERMISSION_DENIED", "PLUGIN_ERROR", "REFUSED", "TIMEOUT", "TOOL_EXCEPTION", "UNAVAILABLE",
    "UNKNOWN_TOOL", "ToolCall", "call_tool", "execute_tool_calls", "failure", "normalise_result",
    "truncate_result", "utf8_text",
]


class ToolCall:
    """One validated call on its way to the tool, as the ``janito_tool_call`` hook sees it."""

    __slots__ = ("arguments", "id", "name", "raw_arguments", "record", "registry")

    def __init__(self, record: ToolRecord, arguments: dict[str, Any], registry: Registry,
                 raw_arguments: Any = None, call_id: str | None = None) -> None:
        self.name = record.name
        self.record = record
        self.arguments = arguments
        self.registry = registry
        self.raw_arguments = raw_arguments
        self.id = call_id

    @property
    def permissions(self) -> str:
        return self.record.permissions

    def refuse(self, reason: str) -> dict[str, Any]:
        """The result that denies this call, for a hook that decides it must not run."""
        return failure(reason, REFUSED, tool=self.name)

    def run(self) -> dict[str, Any]:
        """Run the tool; an exception it raises becomes a ``tool_exception`` result."""
        try:
            instance = self.record.cls(self.registry.workspace)
            result: dict[str, Any] = instance.run(**self.arguments)
            return result
        except WorkspaceError as exc:
            return failure(str(exc), exc.error_type, tool=self.name)
        except CallCancelled as exc:
            return failure(f"{self.name} stopped: {exc.reason}", CANCELLED, tool=self.name)
        except (Exception, SystemExit) as exc:
            import logging

            logging.getLogger("janito.dispatch").debug(
                "tool %s raised", self.name, exc_info=True
            )
            text = str(exc) or type(exc).__name__
            return failure(f"{self.name} raised {type(exc).__name__}: {text}", TOOL_EXCEPTION,
                           tool=self.name)


def call_tool(
    name: Any,
    arguments: str | bytes | Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
    max_result_chars: int | None = None,
    call_id: str | None = None,
    cancel_token: CancelToken | None = None,
) -> dict[str, Any]:
    """Execute one tool call from a model and return its result dict; never raises.

    ``cancel_token``, when given, is what the tool sees as its cancellation signal
    (``janito_core.cancellation``); a call cancelled before it starts does not run.
    """
    if registry is None:
        registry = default_registry()
    if arguments is None or arguments == "{}":
        parsed: Any = {}
    elif isinstance(arguments, (str, bytes, bytearray)):
        parsed, problem = _parse_json(arguments)
        if problem is not None:
            return _refused(failure(
                f"the arguments are not valid JSON ({problem}); send one JSON object",
                INVALID_JSON, tool=name if isinstance(name, str) else None,
            ))
    else:
        parsed = arguments
    if type(parsed) is not dict and not isinstance(parsed, Mapping):
        return _refused(failure(
            f"the arguments must be a JSON object, got {_json_kind(parsed)}",
            INVALID_ARGUMENTS, tool=name if isinstance(name, str) else None,
            details=[{"field": "(arguments)", "error": f"expected an object, got {_json_kind(parsed)}"}],
        ))
    if not isinstance(name, str):
        return _refused(failure(f"the tool name must be a string, got {_json_kind(name)}", UNKNOWN_TOOL))
    try:
        record = registry.record(name)
    except Exception as exc:  # a registry that cannot initialise still answers
        return _refused(failure(f"the tool registry failed: {exc}", PLUGIN_ERROR, tool=name))
    if record is None:
        return _refused(_unknown_tool(name, registry))
    if record.status == "skipped":
        return _refused(failure(f"{name} is not available here: {record.reason}", UNAVAILABLE, tool=name))
    if record.status == "denied" or not registry.privileges.allows(record.permissions):
        return _refused(failure(
            f"{name} {registry.privileges.denied_reason(record.permissions)}",
            PERMISSION_DENIED, tool=name,
        ))
    kwargs = _validate(record, parsed)
    if isinstance(kwargs, list):
        return _refused(failure(
            f"invalid arguments for {name}: {_said(kwargs)}; see details and call again",
            INVALID_ARGUMENTS, tool=name, details=kwargs,
        ))
    if cancel_token is not None and cancel_token.cancelled:
        return _refused(failure(f"{name} was not run: {cancel_token.reason}", CANCELLED, tool=name))
    call = ToolCall(record, kwargs, registry, arguments, call_id)
    token = active_registry.set(registry)
    call_token = current_call_id.set(call_id) if call_id is not None else None
    cancel_var_token = _current.set(cancel_token) if cancel_token is not None else None
    try:
        if registry.plugins.call_hooks_present():
            try:
                result = registry.plugins.manager.hook.janito_tool_call(call=call)
            except Exception as exc:
                error = registry.plugins.blame(exc, "janito_tool_call")
                return _refused(failure(error.reason, PLUGIN_ERROR, tool=name))
        else:
            result = call.run()
    finally:
        active_registry.reset(token)
        if call_token is not None:
            current_call_id.reset(call_token)
        if cancel_var_token is not None:
            _current.reset(cancel_var_token)
    limit = registry.max_result_chars if max_result_chars is None else max_result_chars
    return normalise_result(name, result, limit)


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
    return failure(f"there is no tool called {name[:100]!r}{hint}", UNKNOWN_TOOL,
                   suggestions=close)


def _validate(record: ToolRecord, arguments: Mapping[str, Any]) -> dict[str, Any] | list[dict[str, str]]:
    """Keyword arguments for ``run()``, or the list of problems, one per bad field."""
    schema = tool_schema(record.cls)
    params = schema.params
    if not arguments:
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
        if value is None and not param.info.nullable:
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
    return errors or kwargs


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


def normalise_result(name: str, result: Any, max_chars: int) -> dict[str, Any]:
    """Check a tool's result is a JSON object with ``success``, make every key and string
    of it encodable as UTF-8 (see ``utf8_text``) and cap its size."""
    if not isinstance(result, dict):
        return failure(
            f"{name} returned {type(result).__name__}, not a dict; this is a bug in the tool",
            INVALID_RESULT, tool=name,
        )
    success = result.get("success", INVALID)
    if success is INVALID:
        result = {"success": True, **result}
    elif not isinstance(success, bool):
        return failure(f"{name} returned success={success!r}, which is not a boolean",
                       INVALID_RESULT, tool=name)
    wide: list[str] = []
    problem, size = _inspect(result, "result", 0, wide)
    if problem is not None:
        return failure(f"{name} returned a result that is not JSON: {problem}; this is a bug in "
                       "the tool", INVALID_RESULT, tool=name)
    if wide and not _encodes("".join(wide)):
        result = _utf8_safe(result)
        size = _inspect(result, "result", 0, [])[1]
    if size > max_chars:
        return truncate_result(result, max_chars)
    checked: dict[str, Any] = result
    return checked


class _NotJSON(Exception):
    """Where a value stops being JSON; ``steps`` is the way down to it, innermost first."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.steps: list[str] = []


def _inspect(value: Any, path: str, depth: int, wide: list[str]) -> tuple[str | None, int]:
    """(where the value stops being JSON, or None; its approximate size in characters).

    ``wide`` collects the keys and strings that are not ASCII, so that one encode of them
    all can tell whether a lone surrogate is among them (most results have none at all).
    """
    try:
        return None, _size(value, depth, wide)
    except _NotJSON as problem:
        return f"{path}{''.join(reversed(problem.steps))} {problem.what}", 0


def _size(value: Any, depth: int, wide: list[str]) -> int:
    """The approximate size of JSON value ``value`` in characters; _NotJSON if it is none.

    Every call pays for this on its result, so scalars are sized in the loops rather than
    by a call each, and the path to a problem is written only when there is one.
    """
    kind = type(value)
    if kind is str:
        if not value.isascii():
            wide.append(value)
        return len(value) + 2
    if kind is bool or value is None or kind is int:
        return 5
    if kind is float:
        if math.isfinite(value):
            return 8
        raise _NotJSON(f"is {value!r}, which JSON cannot carry")
    if depth > MAX_DEPTH:
        raise _NotJSON(f"is nested more than {MAX_DEPTH} levels deep")
    if kind is dict or isinstance(value, dict):
        size = 2
        for key, item in value.items():
            if type(key) is not str:
                raise _NotJSON(f"has a key {key!r} that is not a string")
            if not key.isascii():
                wide.append(key)
            size += len(key) + 4
            kind = type(item)
            if kind is str:
                if not item.isascii():
                    wide.append(item)
                size += len(item) + 2
            elif kind is bool or item is None or kind is int:
                size += 5
            else:
                try:
                    size += _size(item, depth + 1, wide)
                except _NotJSON as problem:
                    problem.steps.append(f"[{key!r}]")
                    raise
        return size
    if kind is list or kind is tuple:
        size = 2 + len(value)
        for index, item in enumerate(value):
            kind = type(item)
            if kind is str:
                if not item.isascii():
                    wide.append(item)
                size += len(item) + 2
            elif kind is bool or item is None or kind is int:
                size += 5
            else:
                try:
                    size += _size(item, depth + 1, wide)
                except _NotJSON as problem:
                    problem.steps.append(f"[{index}]")
                    raise
        return size
    if isinstance(value, str):
        if not value.isascii():
            wide.append(str(value))
        return len(value) + 2
    if isinstance(value, int) and not isinstance(value, bool):
        return 5
    raise _NotJSON(f"is a {kind.__name__}")


def _encodes(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: false only for a lone surrogate, which JSON text
    (a ``\\ud800`` escape), a file name that is not UTF-8 or a ``surrogateescape`` decode
    can put in a Python string."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf8_text(text: str) -> str:
    """``text`` with every lone surrogate written as its escape, six characters such as
    ``\\udcff``; other text is returned as it is."""
    if text.isascii() or _encodes(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _utf8_safe(value: Any) -> Any:
    """A copy of the JSON value ``value`` whose keys and strings all encode as UTF-8."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, dict):
        return {utf8_text(k) if isinstance(k, str) else k: _utf8_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_utf8_safe(v) for v in value]
    return value


def _refused(result: dict[str, Any]) -> dict[str, Any]:
    """A failure dispatch built itself, which may quote the model's keys or the tool name."""
    wide: list[str] = []
    _inspect(result, "result", 0, wide)
    if wide and not _encodes("".join(wide)):
        cleaned: dict[str, Any] = _utf8_safe(result)
        return cleaned
    return result


def _strings(value: Any, path: tuple[Any, ...], out: list[tuple[int, tuple[Any, ...]]]) -> None:
    if isinstance(value, str):
        out.append((len(value), path))
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(item, (*path, key), out)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _strings(item, (*path, index), out)


def _lists(value: Any, path: tuple[Any, ...], out: list[tuple[int, tuple[Any, ...]]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _lists(item, (*path, key), out)
    elif isinstance(value, (list, tuple)):
        out.append((len(value), path))
        for index, item in enumerate(value):
            _lists(item, (*path, index), out)


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = new


def _thaw(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def truncate_result(result: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """A copy of ``result`` cut to about ``max_chars``: longest strings first, then lists."""
    out: dict[str, Any] = _thaw(result)
    max_chars = max(max_chars, 200)
    _, size = _inspect(out, "result", 0, [])
    excess = size - max_chars
    strings: list[tuple[int, tuple[Any, ...]]] = []
    _strings(out, (), strings)
    strings.sort(key=lambda item: item[0], reverse=True)
    for length, path in strings:
        if excess <= 0:
            break
        if not path or length <= 200:
            continue
        keep = max(100, length - excess - 60)
        if keep >= length:
            continue
        text = _get(out, path)
        marker = f"\n[... truncated: {keep} of {length} characters shown]"
        _set(out, path, text[:keep] + marker)
        excess -= length - keep - len(marker)
    if excess > 0:
        lists: list[tuple[int, tuple[Any, ...]]] = []
        _lists(out, (), lists)
        lists.sort(key=lambda item: item[0], reverse=True)
        for length, path in lists:
            if excess <= 0 or length <= 1 or not path:
                continue
            items = _get(out, path)
            keep = length
            while keep > 1 and excess > 0:
                _, item_size = _inspect(items[keep - 1], "", 0, [])
                excess -= item_size + 1
                keep -= 1
            _set(out, path, [*items[:keep], f"[... truncated: {keep} of {length} items shown]"])
    out["truncated"] = True
    return out


# -- one assistant turn ---------------------------------------------------------------


def execute_tool_calls(
    tool_calls: Any,
    *,
    registry: Registry | None = None,
    max_result_chars: int | None = None,
) -> list[dict[str, Any]]:
    """Run every tool call of one assistant turn, in order, and return the result items.

    Accepts the calls (or the whole assistant message / output list) in one of these shapes
    and answers in the same one:

    - OpenAI chat: ``{"id", "type": "function", "function": {"name", "arguments"}}`` ->
      ``{"role": "tool", "tool_call_id", "content"}``
    - OpenAI responses: ``{"type": "function_call", "call_id", "name", "arguments"}`` ->
      ``{"type": "function_call_output", "call_id", "output"}``
    - Anthropic: ``{"type": "tool_use", "id", "name", "input"}`` ->
      ``{"type": "tool_result", "tool_use_id", "content", "is_error"}`` (send them together
      as the content of one user message)
    - Gemini: ``{"functionCall": {"name", "args"}}`` ->
      ``{"functionResponse": {"name", "response"}}``
    """
    results = []
    for item in _calls_of(tool_calls):
        results.append(_execute_one(item, registry, max_result_chars))
    return results


def _calls_of(turn: Any) -> Iterable[Any]:
    if isinstance(turn, Mapping):
        if "tool_calls" in turn:
            return list(turn.get("tool_calls") or [])
        content = turn.get("content")
        if isinstance(content, list) and turn.get("role") == "assistant":
            return [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        parts = turn.get("parts")
        if isinstance(parts, list):
            return [p for p in parts if isinstance(p, Mapping) and "functionCall" in p]
        return [turn]
    if isinstance(turn, (list, tuple)):
        return [
            item for item in turn
            if not (isinstance(item, Mapping) and item.get("type") in ("message", "reasoning", "text"))
        ]
    raise TypeError(f"tool calls must be a list or a message, not {type(turn).__name__}")


def _content(result: dict[str, Any]) -> str:
    # call_tool's results hold no lone surrogate, so this text always encodes as UTF-8
    return json.dumps(result, ensure_ascii=False)


def _echo(value: Any) -> Any:
    """An id or name from the call, repeated in its result item (as UTF-8-safe text)."""
    return utf8_text(value) if isinstance(value, str) else value


def _execute_one(item: Any, registry: Registry | None, limit: int | None) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise TypeError(f"a tool call must be a mapping, not {type(item).__name__}")
    if "function" in item and isinstance(item.get("function"), Mapping):
        function = item["function"]
        result = call_tool(function.get("name"), function.get("arguments"),
                           registry=registry, max_result_chars=limit, call_id=item.get("id"))
        return {"role": "tool", "tool_call_id": _echo(item.get("id")), "content": _content(result)}
    kind = item.get("type")
    if kind == "function_call":
        result = call_tool(item.get("name"), item.get("arguments"),
                           registry=registry, max_result_chars=limit, call_id=item.get("call_id"))
        return {"type": "function_call_output", "call_id": _echo(item.get("call_id")),
                "output": _content(result)}
    if kind == "tool_use":
        result = call_tool(item.get("name"), item.get("input"),
                           registry=registry, max_result_chars=limit, call_id=item.get("id"))
        return {"type": "tool_result", "tool_use_id": _echo(item.get("id")),
                "content": _content(result), "is_error": not result.get("success", False)}
    if isinstance(item.get("functionCall"), Mapping):
        call = item["functionCall"]
        result = call_tool(call.get("name"), call.get("args"),
                           registry=registry, max_result_chars=limit, call_id=call.get("id"))
        response: dict[str, Any] = {"name": _echo(call.get("name")), "response": result}
        if call.get("id") is not None:
            response["id"] = _echo(call["id"])
        return {"functionResponse": response}
    raise TypeError(
        "unrecognised tool call shape: expected OpenAI chat, OpenAI responses, Anthropic or "
        f"Gemini, got keys {sorted(map(str, item))[:8]}"
    )


