"""Arguments for the conformance kit's calls, drawn from each tool's own JSON Schema.

Valid arguments are what reach ``run()``, so they are generated from the schema janito
gives the model (``tool_schema(cls).parameters``), not from Python types. Strings are
sometimes paths from the kit's sandbox (files in the workspace, sentinels outside it),
so a tool that mishandles a path a model may send meets one. Numbers stay in a range a
model would plausibly send, so a generated call never asks for gigabytes.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

INT_RANGE = (-1_000, 100_000)
FLOAT_RANGE = (-1e6, 1e6)
MAX_ITEMS = 4
MAX_TEXT = 24
# Every character but surrogates (which JSON text cannot carry). Spelt out because
# hypothesis' default alphabet (codec="utf-8") costs seconds to build on first use.
ALPHABET = st.characters(exclude_categories=["Cs"])


def texts(min_size: int = 0, max_size: int = MAX_TEXT) -> st.SearchStrategy[str]:
    return st.text(ALPHABET, min_size=min_size, max_size=max_size).filter(stays_in_sandbox)


def stays_in_sandbox(text: str) -> bool:
    """Whether ``text``, taken as a path from the workspace (the calls' working folder),
    leads no higher than the kit's own folder: not absolute, not into the home folder,
    not up past one ``..``. A tool under test acts where it is told (removes the path,
    say), so a drawn ``/``, ``~`` or ``../..`` would have it act on the author's machine;
    the paths outside the workspace a call is made with are the kit's own, all inside
    its folder (``_sandbox``)."""
    if text.startswith(("/", "~")):
        return False
    return os.path.normpath(text).split(os.sep)[:2] != ["..", ".."]


def json_values() -> st.SearchStrategy[Any]:
    """Any JSON value, small."""
    scalars = (st.none() | st.booleans() | st.integers(*INT_RANGE)
               | st.floats(*FLOAT_RANGE) | texts())
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=MAX_ITEMS)
        | st.dictionaries(texts(max_size=8), inner, max_size=MAX_ITEMS),
        max_leaves=8,
    )


def _bounds(node: dict[str, Any], low: float, high: float, integer: bool) -> tuple[Any, Any]:
    lo, hi = node.get("minimum"), node.get("maximum")
    exclusive_lo, exclusive_hi = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    step = 1 if integer else 0
    if isinstance(exclusive_lo, (int, float)) and not isinstance(exclusive_lo, bool):
        lo = exclusive_lo + step if lo is None else max(lo, exclusive_lo + step)
    if isinstance(exclusive_hi, (int, float)) and not isinstance(exclusive_hi, bool):
        hi = exclusive_hi - step if hi is None else min(hi, exclusive_hi - step)
    chosen_lo = low if lo is None else max(lo, low)
    chosen_hi = high if hi is None else min(hi, high)
    if chosen_lo > chosen_hi:  # the schema's range lies outside the plausible one: use it
        chosen_lo = lo if lo is not None else chosen_hi
        chosen_hi = hi if hi is not None else chosen_lo
    return chosen_lo, chosen_hi


def strategy(node: Any, paths: Sequence[str] = ()) -> st.SearchStrategy[Any]:
    """Values valid against JSON Schema ``node`` (the subset janito emits, and the common
    keywords of a declared ``input_schema``)."""
    if not isinstance(node, dict) or not node:
        return json_values()
    if "const" in node:
        return st.just(node["const"])
    if isinstance(node.get("enum"), list) and node["enum"]:
        return st.sampled_from(node["enum"])
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and options:
            rest = {k: v for k, v in node.items() if k != key}
            return st.one_of([strategy({**rest, **o} if isinstance(o, dict) else o, paths)
                              for o in options])
    kind = node.get("type")
    if isinstance(kind, list):
        return st.one_of([strategy({**node, "type": k}, paths) for k in kind] or [json_values()])
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(*_bounds(node, *INT_RANGE, integer=True))
    if kind == "number":
        lo, hi = _bounds(node, *FLOAT_RANGE, integer=False)
        # an exclusive bound of a number is left out of the floats and the whole numbers
        open_lo = lo == node.get("exclusiveMinimum")
        open_hi = hi == node.get("exclusiveMaximum")
        first = math.floor(lo) + 1 if open_lo or lo != math.floor(lo) else math.floor(lo)
        last = math.ceil(hi) - 1 if open_hi or hi != math.ceil(hi) else math.ceil(hi)
        floats = st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                           exclude_min=open_lo, exclude_max=open_hi)
        return floats | st.integers(first, last) if first <= last else floats
    if kind == "string":
        return _strings(node, paths)
    if kind == "array":
        return _arrays(node, paths)
    if kind == "object":
        return _objects(node, paths)
    return json_values()


#: One plain value of each format dispatch checks (janito_core.constraints.FORMATS).
FORMAT_EXAMPLES = {
    "date": "2025-01-31", "date-time": "2025-01-31T09:30:00Z", "time": "09:30:00",
    "email": "ann@example.com", "uri": "https://example.com/a", "ipv4": "192.0.2.1",
    "uuid": "123e4567-e89b-12d3-a456-426614174000", "ipv6": "2001:db8::1",
    "hostname": "example.com",
}


def _formatted(name: str) -> st.SearchStrategy[str] | None:
    import datetime

    if name == "date":
        return st.dates().map(lambda d: d.isoformat())
    if name == "date-time":
        return st.datetimes(timezones=st.just(datetime.timezone.utc)).map(
            lambda d: d.replace(microsecond=0).isoformat().replace("+00:00", "Z"))
    if name == "time":
        return st.times().map(lambda t: t.replace(microsecond=0).isoformat())
    if name == "uuid":
        return st.uuids().map(str)
    if name == "ipv4":
        return st.ip_addresses(v=4).map(str)
    if name == "ipv6":
        return st.ip_addresses(v=6).map(str)
    if name in FORMAT_EXAMPLES:
        return st.sampled_from([FORMAT_EXAMPLES[name]])
    return None


def _strings(node: dict[str, Any], paths: Sequence[str]) -> st.SearchStrategy[str]:
    low = node.get("minLength", 0)
    high = node.get("maxLength")
    pattern = node.get("pattern")
    formatted = _formatted(node["format"]) if isinstance(node.get("format"), str) else None
    if formatted is not None:
        return formatted
    fitting = [p for p in paths if low <= len(p) <= (high if high is not None else len(p))]
    if isinstance(pattern, str):
        text = st.from_regex(pattern, fullmatch=True).filter(stays_in_sandbox)
        if low or high is not None:
            text = text.filter(lambda s: low <= len(s) <= (high if high is not None else len(s)))
        # the kit's own paths that fit: a pattern of absolute paths still gets some
        fitting = [p for p in fitting if _fits(pattern, p)]
        return st.one_of(st.sampled_from(fitting), text) if fitting else text
    text = texts(low, high if high is not None else max(low, MAX_TEXT))
    if not fitting:
        return text
    # one draw in three is a sandbox path: often enough to meet each within a few dozen calls
    return st.one_of(st.sampled_from(fitting), text, text)


def _fits(pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:
        return False


def _arrays(node: dict[str, Any], paths: Sequence[str]) -> st.SearchStrategy[list[Any]]:
    prefix = node.get("prefixItems")
    if isinstance(prefix, list):
        return st.tuples(*(strategy(item, paths) for item in prefix)).map(list)
    low = node.get("minItems", 0)
    high = min(node.get("maxItems", MAX_ITEMS), max(low, MAX_ITEMS))
    items = strategy(node.get("items", {}), paths)
    if node.get("uniqueItems"):
        return st.lists(items, min_size=low, max_size=high, unique_by=_identity)
    return st.lists(items, min_size=low, max_size=high)


def _identity(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _chosen_members(group: Any) -> st.SearchStrategy[tuple[str, ...]]:
    """The members of ``group`` a generated call gives: one (exactly), none or one (at
    most), one or more (at least)."""
    members = tuple(group.members)
    if group.kind == "exactly":
        return st.sampled_from(members).map(lambda m: (m,))
    if group.kind == "at_least":
        return st.lists(st.sampled_from(members), min_size=1, unique=True).map(tuple)
    return st.sampled_from(((), *((m,) for m in members)))


def _objects(node: dict[str, Any], paths: Sequence[str],
             groups: Sequence[Any] = ()) -> st.SearchStrategy[dict[str, Any]]:
    properties = node.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = [k for k in node.get("required", []) if k in properties]
    if properties and groups:
        # which member of each group is given is chosen first, so every call keeps them
        choices = [_chosen_members(g) for g in groups]
        members = {m for g in groups for m in g.members}

        def with_chosen(chosen: tuple[Any, ...]) -> st.SearchStrategy[dict[str, Any]]:
            picked = {m for members_of in chosen for m in members_of}
            given = {k: strategy(properties[k], paths).filter(_not_null) for k in picked}
            return st.fixed_dictionaries(
                {**{k: strategy(properties[k], paths) for k in required}, **given},
                optional={k: strategy(v, paths) for k, v in properties.items()
                          if k not in required and k not in members},
            )

        return st.tuples(*choices).flatmap(with_chosen)
    if properties:
        return st.fixed_dictionaries(
            {k: strategy(properties[k], paths) for k in required},
            optional={k: strategy(v, paths) for k, v in properties.items() if k not in required},
        )
    extra = node.get("additionalProperties", True)
    if extra is False:
        return st.just({})
    values = strategy(extra, paths) if isinstance(extra, dict) else json_values()
    return st.dictionaries(texts(max_size=8), values, max_size=3)


def _not_null(value: Any) -> bool:
    return value is not None


def arguments(parameters: dict[str, Any], paths: Sequence[str] = (),
              groups: Sequence[Any] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """Whole argument objects valid against a tool's parameters schema and its ``groups``
    (``ToolSchema.groups``: exactly one, at most one, or at least one of some parameters)."""
    return _objects({**parameters, "type": "object"}, paths, groups)


# -- one value per place, for the calls made with each sandbox path --------------------


def minimal(node: Any) -> Any:
    """A plain valid value for ``node``: the default, else the simplest of its type."""
    if not isinstance(node, dict) or not node:
        return "notes.txt"
    if "default" in node:
        return node["default"]
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return node["enum"][0]
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and options:
            return minimal(options[0])
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer" or kind == "number":
        low, _ = _bounds(node, 1, INT_RANGE[1], integer=True)
        return low
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "string" and node.get("format") in FORMAT_EXAMPLES:
        return FORMAT_EXAMPLES[node["format"]]
    if kind == "array":
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            return [minimal(item) for item in prefix]
        return [minimal(node.get("items", {})) for _ in range(node.get("minItems", 0))]
    if kind == "object":
        properties = node.get("properties") or {}
        return {k: minimal(properties[k]) for k in node.get("required", []) if k in properties}
    return "notes.txt"


def _takes_string(node: Any) -> str | None:
    """"value" when ``node`` accepts a free string, "list" when an array of them, else None."""
    if not isinstance(node, dict) or "enum" in node or "const" in node or "pattern" in node or "format" in node:
        return None
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            forms = [_takes_string(o) for o in node[key]]
            return "value" if "value" in forms else ("list" if "list" in forms else None)
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" in kinds:
        return "value"
    if "array" in kinds and _takes_string(node.get("items")) == "value":
        return "list"
    return None


def with_each_path(parameters: dict[str, Any], paths: Sequence[str],
                   groups: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """One argument object per (string parameter, path): the rest at their plain values.

    A path the parameter's own rules refuse (an empty one where it must not be empty) is
    left out for that parameter, and each group keeps exactly or at most one member."""
    from .._constraints import checker, from_schema

    properties = parameters.get("properties") or {}
    base = minimal({**parameters, "type": "object"})
    for group in groups:
        if group.kind != "at_most" and not any(base.get(m) is not None for m in group.members):
            first = group.members[0]
            base[first] = _minimal_value(properties.get(first, {}))
    calls = []
    for name, node in properties.items():
        form = _takes_string(node)
        if form is None:
            continue
        rules = from_schema(node) if isinstance(node, dict) else None
        check = checker(rules) if rules is not None else None
        others = {m for g in groups if name in g.members for m in g.members if m != name}
        call_base = {k: v for k, v in base.items() if k not in others}
        for path in paths:
            if check is not None and form == "value" and check(path) is not None:
                continue
            calls.append({**call_base, name: path if form == "value" else [path]})
    return calls


def _minimal_value(node: Any) -> Any:
    """``minimal(node)``, but never null."""
    if not isinstance(node, dict):
        return "notes.txt"
    declared = node.get("type")
    kinds: list[Any] = declared if isinstance(declared, list) else [declared]
    kind = next((k for k in kinds if k not in (None, "null")), None)
    plain = {k: v for k, v in node.items() if k != "default"}
    if kind is not None:
        plain["type"] = kind
    value = minimal(plain)
    return "notes.txt" if value is None else value


# -- wrong calls ------------------------------------------------------------------------

# Values dispatch refuses for each JSON type: a number sent for a string would be coerced
# to its text and really run, which a wrong call must never do.
_WRONG_VALUES: dict[str, list[Any]] = {
    "string": [True, [], {"a": 1}, [1, 2]],
    "integer": ["many", True, 2.5, [], {}, "1e400"],
    "number": ["fast", True, [], {}, "nan"],
    "boolean": ["maybe", 2, [], {}],
    "array": [5, {"a": 1}, True],
    "object": [5, [1], True],
}


def _wrong_for(node: dict[str, Any]) -> list[Any]:
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if "enum" in node:
        return ["definitely-not-an-option", 123456, [1]]
    return _WRONG_VALUES.get(kind or "", [])


def wrong_arguments(parameters: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Calls dispatch must refuse before ``run()``: wrong types, unknown fields, not an
    object, broken JSON text."""
    properties = parameters.get("properties") or {}
    pairs = [(k, v) for k, node in properties.items() if isinstance(node, dict)
             for v in _wrong_for(node)]
    options: list[st.SearchStrategy[Any]] = [
        st.dictionaries(texts(max_size=12), json_values(), max_size=4).map(
            lambda d: {f"_{k}": v for k, v in d.items()} or {"_x": 1}),
        json_values().filter(lambda v: not isinstance(v, dict)),
        texts(max_size=30).map(lambda s: "{" + s),
    ]
    if pairs:
        options.insert(0, st.sampled_from(pairs).map(lambda kv: {kv[0]: kv[1]}))
    return st.one_of(options)
