"""Arbitrary JSON arguments for every tool: a result with "success", never an exception.

The inputs come from a seeded generator (the same every run): wrong types, huge strings,
deep nesting, NaN, nulls, control characters, surrogates, path-like strings.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from files_helpers import EXPECTED, snapshot

from janito_core.dispatch import execute_tool_calls

PATHLIKE = ["", ".", "..", "/", "/etc/passwd", "../outside/secret.txt", "a.txt", "sub/",
            "\x00", "~", "*", "a" * 300, "sub/../../x", "\ud800", "\\", "C:\\x", "link_out"]


def value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(12)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2**63, -(2**70), 7])
    if kind == 3:
        return rng.choice([0.5, -0.0, math.nan, math.inf, 1e308, 3.0])
    if kind in (4, 5):
        return rng.choice(PATHLIKE)
    if kind == 6:
        return "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(0, 40)))
    if kind == 7:
        return "x" * rng.choice([10_000, 200_000])
    if kind == 8 and depth < 4:
        return [value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if kind == 9 and depth < 4:
        return {str(rng.randrange(5)): value(rng, depth + 1) for _ in range(rng.randrange(3))}
    if kind == 10:
        nested: Any = []
        for _ in range(rng.randrange(1, 200)):
            nested = [nested]
        return nested
    return rng.choice(["*.py", "def", "(", "^$", ".*", "true", "50"])


def arguments(rng: random.Random, names: list[str]) -> Any:
    shape = rng.randrange(10)
    if shape == 0:
        return value(rng)  # not even an object
    if shape == 1:
        return "{not json"
    chosen = {name: value(rng) for name in names if rng.random() < 0.8}
    if rng.random() < 0.2:
        chosen["unexpected"] = value(rng)
    return json.dumps(chosen, allow_nan=True) if rng.random() < 0.5 else chosen


def test_hostile_arguments_never_escape(files: Any, ws: Path, outside: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    (ws / "sub").mkdir()
    (ws / "link_out").symlink_to(outside / "secret.txt")
    before = snapshot(outside)
    rng = random.Random(20240601)
    calls = 0
    for name in sorted(EXPECTED):
        params = list(files.registry.get_function_schema(name)["function"]["parameters"]
                      ["properties"])
        for _ in range(40):
            args = arguments(rng, params)
            result = files.call(name, args) if isinstance(args, (str, dict)) else \
                files.call(name, json.dumps(args, allow_nan=True))
            calls += 1
            assert isinstance(result, dict) and isinstance(result["success"], bool)
            text = json.dumps(result, ensure_ascii=False, allow_nan=False)
            text.encode("utf-8")
            assert "OUTSIDE-SECRET" not in text
            if not result["success"]:
                assert result["error"] and result["error_type"]
                # the tools answer everything themselves: nothing raised out of run()
                assert result["error_type"] != "tool_exception", (name, args, result)
    assert snapshot(outside) == before
    assert calls == 40 * len(EXPECTED)


def test_one_assistant_turn_in_every_provider_shape(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    turn = [
        {"id": "1", "type": "function",
         "function": {"name": "ReadFile", "arguments": '{"filepath": "a.txt"}'}},
        {"id": "2", "type": "function",
         "function": {"name": "CreateFile", "arguments": '{"filepath": "../x", "content": ""}'}},
        {"id": "3", "type": "function", "function": {"name": "SearchText",
                                                     "arguments": '{"paths": 5}'}},
    ]
    out = execute_tool_calls(turn, registry=files.registry)
    results = [json.loads(item["content"]) for item in out]
    assert results[0]["content"] == "alpha\n"
    assert results[1]["error_type"] == "outside_workspace"
    assert results[2]["error_type"] == "invalid_arguments"


VALID = {
    "ReadFile": {"filepath": "a.txt"},
    "ReadMultipleFiles": {"filepaths": ["a.txt"]},
    "WordCount": {"filepath": "a.txt"},
    "ListFiles": {"directory": "."},
    "FindFiles": {"paths": ".", "pattern": "*"},
    "SearchText": {"paths": ".", "query": "a"},
}


def test_extreme_integers(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    for name, base in VALID.items():
        schema = files.registry.get_function_schema(name)["function"]["parameters"]
        numbers = [field for field, spec in schema["properties"].items()
                   if "integer" in json.dumps(spec)]
        assert numbers, name
        for field in numbers:
            for number in (2**70, -(2**70), 2**63, 0, -1, 1):
                result = files.call(name, {**base, field: number})
                assert isinstance(result["success"], bool)
                assert result.get("error_type") != "tool_exception", (name, field, number, result)
