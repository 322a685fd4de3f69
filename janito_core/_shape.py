"""A tool's result on its way out: a JSON object with ``success``, UTF-8 safe, cut to size."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import Any

from ._convert import INVALID
from .results import INVALID_RESULT, failure

DEFAULT_MAX_RESULT_CHARS = 100_000


MAX_DEPTH = 64


def _model_base() -> Any:
    """pydantic's ``BaseModel`` when pydantic is imported, else None: a tool cannot have
    made a model otherwise, and janito does not import pydantic to find out."""
    return getattr(sys.modules.get("pydantic.main"), "BaseModel", None)


def as_result(name: str, result: Any) -> Any:
    """What a tool returned, with a pydantic model in place of the JSON object it stands
    for (``model_dump`` in JSON mode, under its aliases); anything else as it is."""
    if type(result) is dict:
        return result
    base = _model_base()
    if base is None or not isinstance(result, base):
        return result
    try:
        from ._models import dump

        return dump(result)
    except Exception as exc:
        return failure(f"{name} returned a {type(result).__name__} that cannot be written as "
                       f"JSON: {_first_line(exc)}", INVALID_RESULT, tool=name)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _models_dumped(value: Any, base: Any, depth: int = 0) -> Any:
    """``value`` with each pydantic model inside it dumped as ``as_result`` does; raises
    what a model that cannot be written as JSON raises."""
    if isinstance(value, base):
        from ._models import dump

        return dump(value)
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: _models_dumped(v, base, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_models_dumped(v, base, depth + 1) for v in value]
    return value


def models_as_json(value: Any) -> Any:
    """``value`` with every pydantic model in it (itself included) as dispatch writes it;
    raises what a model that cannot be written as JSON raises."""
    base = _model_base()
    return value if base is None else _models_dumped(value, base)


def normalise_result(name: str, result: Any, max_chars: int) -> dict[str, Any]:
    """Check a tool's result is a JSON object with ``success``, make every key and string
    of it encodable as UTF-8 (see ``utf8_text``) and cap its size."""
    if type(result) is dict and type(result.get("success")) is bool:
        # Most results are one flat object of a few ASCII scalars: sized here in one loop,
        # which answers exactly as the general path below would.
        size = 2
        for key, item in result.items():
            if type(key) is not str or not key.isascii():
                break
            kind = type(item)
            if kind is bool or item is None or kind is int:
                size += len(key) + 9
            elif kind is str and item.isascii():
                size += len(key) + len(item) + 6
            else:
                break
        else:
            if size <= max_chars:
                return result
    result = as_result(name, result)
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
    try:
        size = _size(result, 0, wide)
    except _NotJSON as problem:
        where: str | None = problem.at("result")
        base = _model_base()
        if base is not None:  # pydantic models inside the result: dumped, sized again
            try:
                result, wide = _models_dumped(result, base), []
            except Exception as exc:
                where = f"result holds a model that cannot be written as JSON ({_first_line(exc)})"
            else:
                where, size = _inspect(result, "result", 0, wide)
        if where is not None:
            return failure(f"{name} returned a result that is not JSON: {where}; "
                           "this is a bug in the tool", INVALID_RESULT, tool=name)
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

    def at(self, path: str) -> str:
        """What is wrong, said from ``path``, the name of the value that was sized."""
        return f"{path}{''.join(reversed(self.steps))} {self.what}"


def _inspect(value: Any, path: str, depth: int, wide: list[str]) -> tuple[str | None, int]:
    """(where the value stops being JSON, or None; its approximate size in characters).

    ``wide`` collects the keys and strings that are not ASCII, so that one encode of them
    all can tell whether a lone surrogate is among them (most results have none at all).
    """
    try:
        return None, _size(value, depth, wide)
    except _NotJSON as problem:
        return problem.at(path), 0


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
    items: Iterable[tuple[Any, Any]]
    if kind is dict or isinstance(value, dict):
        size = 2
        for key in value:
            if type(key) is not str:
                raise _NotJSON(f"has a key {key!r} that is not a string")
            if not key.isascii():
                wide.append(key)
            size += len(key) + 4
        items = value.items()
    elif kind is list or kind is tuple:
        size = 2 + len(value)
        items = enumerate(value)
    else:
        return _other_size(value, kind, wide)
    for step, item in items:
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
                problem.steps.append(f"[{step!r}]")
                raise
    return size


def _other_size(value: Any, kind: type, wide: list[str]) -> int:
    """The size of a subclass of str or int (JSON text of its value); _NotJSON otherwise."""
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
