"""Every advertised schema tells the truth about what dispatch accepts.

Property-based (hypothesis, derandomised). For every tool of every repository toolset
(files, system, skills, gmail, onedrive, and the tools janito-mcp mounts from the suite's
MCP server), with every privilege granted:

- arguments generated from the tool's advertised schema (``registry.schema(name)``,
  its ``groups`` included) are never answered ``invalid_arguments`` or ``invalid_json``:
  they reach the tool;
- arguments that break that schema (one field of a valid call replaced by another JSON
  value, a number just past a bound, a string or list just past its length) either stop
  at dispatch, or reach the tool only as what a documented coercion makes of them
  (docs/dispatch.md, "Coercion rules"): what arrives validates against the schema.

No tool runs: a ``janito_tool_call`` hook called first notes the arguments that arrived
and refuses the call.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import rel_support as rel
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from janito_core import Registry, hookimpl, tool
from janito_core.constraints import Ge
from janito_core.dispatch import call_tool
from janito_core.testing._generate import arguments, json_values

EXAMPLES = int(os.environ.get("JANITO_SCHEMA_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=False)
PATHS = ("probe.txt", "sub", "sub/inner.txt", "new.txt")
STOPPED = "stopped before the tool ran"


class Gate:
    """Called before every other ``janito_tool_call``: keeps what arrived, runs nothing."""

    def __init__(self) -> None:
        self.arrived: list[dict[str, Any]] = []

    @hookimpl(tryfirst=True)
    def janito_tool_call(self, call: Any) -> dict[str, Any]:
        self.arrived.append(dict(call.arguments))
        return dict(call.refuse(STOPPED))


def _registry(workspace: Path, *, mcp_config: Path | None = None) -> tuple[Registry, Gate]:
    registry = rel.make_registry(workspace, "rwx")
    if mcp_config is not None:
        with rel.environment({"JANITO_MCP_CONFIG": str(mcp_config)}):
            registry.add_toolset("mcp")
    gate = Gate()
    error = registry.plugins.register(gate, "schema-truth-gate", None)
    assert error is None, error
    return registry, gate


def _send(registry: Registry, gate: Gate, name: str, args: Any) -> tuple[dict[str, Any],
                                                                     dict[str, Any] | None]:
    gate.arrived.clear()
    result = call_tool(name, args, registry=registry)
    return result, (gate.arrived[-1] if gate.arrived else None)


def _check_valid(registry: Registry, gate: Gate, name: str) -> None:
    schema = registry.schema(name)

    @SETTINGS
    @given(args=arguments(schema.parameters, PATHS, schema.groups))
    def valid(args: dict[str, Any]) -> None:
        result, arrived = _send(registry, gate, name, args)
        assert result.get("error_type") not in ("invalid_arguments", "invalid_json"), (
            f"{name} refused arguments its schema allows: {json.dumps(args)[:300]} -> "
            f"{result.get('error')}")
        assert arrived is not None and result.get("error") == STOPPED, (name, args, result)

    valid()


def _past_bounds(node: Any) -> list[Any]:
    """Values just outside the bounds ``node`` declares."""
    if not isinstance(node, dict):
        return []
    out: list[Any] = []
    for option in node.get("anyOf", ()) or ():
        out += _past_bounds(option)
    for key, step in (("minimum", -1), ("maximum", 1), ("exclusiveMinimum", 0),
                      ("exclusiveMaximum", 0)):
        bound = node.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            out.append(bound + step if step else bound)
            if node.get("type") == "number" and step:
                out.append(bound + step / 2)
    if isinstance(node.get("minLength"), int) and node["minLength"] > 0:
        out.append("x" * (node["minLength"] - 1))
    if isinstance(node.get("maxLength"), int):
        out.append("x" * (node["maxLength"] + 1))
    items = node.get("items") if isinstance(node.get("items"), dict) else {"type": "string"}
    sample = items.get("enum", [None])[0] if "enum" in items else {
        "integer": 1, "number": 1.5, "boolean": True}.get(str(items.get("type")), "a.txt")
    if isinstance(node.get("minItems"), int) and node["minItems"] > 0:
        out.append([sample] * (node["minItems"] - 1))
    if isinstance(node.get("maxItems"), int) and node["maxItems"] < 50:
        out.append([sample] * (node["maxItems"] + 1))
    return out


def _check_broken(registry: Registry, gate: Gate, name: str) -> None:
    schema = registry.schema(name)
    parameters = {**schema.parameters, "type": "object"}
    validator = Draft202012Validator(parameters)
    properties = parameters.get("properties") or {}
    choices: list[tuple[str, st.SearchStrategy[Any]]] = []
    for field, node in properties.items():
        choices.append((field, json_values()))
        bad = _past_bounds(node)
        if bad:
            choices.append((field, st.sampled_from(bad)))
    if not choices:
        choices.append(("_unknown", json_values()))

    @SETTINGS
    @given(base=arguments(schema.parameters, PATHS, schema.groups),
           change=st.sampled_from(choices).flatmap(
               lambda pair: st.tuples(st.just(pair[0]), pair[1])))
    def broken(base: dict[str, Any], change: tuple[str, Any]) -> None:
        field, value = change
        args = {**base, field: value}
        assume(not validator.is_valid(args))
        _, arrived = _send(registry, gate, name, args)
        if arrived is None:
            return
        # reached the tool: only as a documented coercion makes it, valid against the schema
        leftover = {k: v for k, v in arrived.items() if k in properties}
        problems = [e.message for e in validator.iter_errors(json.loads(json.dumps(leftover)))]
        assert not problems, (
            f"{name} received arguments that break its schema: sent {json.dumps(args)[:300]}, "
            f"the tool got {json.dumps(leftover, default=repr)[:300]}: {problems[:3]}")

    broken()


TOOLS = [(name, toolset) for name, toolset in
         [(r.name, r.toolset) for r in rel.make_registry(Path.cwd(), "rwx").records()]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "probe.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    (ws / "sub" / "inner.txt").write_text("inner\n", encoding="utf-8")
    return ws


@pytest.mark.parametrize("name", [name for name, _ in TOOLS])
def test_the_schema_admits_what_dispatch_accepts(name: str, workspace: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    registry, gate = _registry(workspace)
    record = registry.record(name)
    assert record is not None
    if record.status == "skipped":
        # it cannot work here (AskUser without a terminal); nothing runs, so load it anyway
        monkeypatch.setattr(record.cls, "should_load", classmethod(lambda cls: True))
        registry, gate = _registry(workspace)
        record = registry.record(name)
        assert record is not None
    assert record.status == "loaded", (name, record.status, record.reason)
    _check_valid(registry, gate, name)
    _check_broken(registry, gate, name)


def test_mounted_mcp_tools_tell_the_truth(workspace: Path, tmp_path: Path) -> None:
    pytest.importorskip("janito_mcp")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"servers": {"rel": {
        "command": sys.executable, "args": [str(Path(__file__).with_name("rel_mcp_server.py"))],
        "env": {"REL_TOKEN": "${secret:mcp_token}"}, "permissions": "r", "timeout": 20,
    }}}), encoding="utf-8")
    registry, gate = _registry(workspace, mcp_config=config)
    mounted = [r.name for r in registry.records() if r.toolset == "mcp" and r.status == "loaded"]
    assert {"rel__echo", "rel__add", "rel__describe", "rel__fail"} <= set(mounted), (
        mounted, [e.reason for e in registry.load_errors])
    for name in sorted(mounted):
        _check_valid(registry, gate, name)
        _check_broken(registry, gate, name)


def test_the_check_finds_a_schema_that_lies(workspace: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema wider than what dispatch accepts, and one narrower than what reaches the
    tool, each fail the checks above."""
    @tool()
    def count_to(n: Annotated[int, Ge(1)]) -> dict[str, Any]:
        """Count to n.

        Args:
            n: Where to stop.
        """
        return {"success": True}

    registry, gate = _registry(workspace)
    record = registry.add_tool(count_to)
    honest = registry.schema(record.name)
    _check_valid(registry, gate, record.name)
    _check_broken(registry, gate, record.name)

    def told(minimum: int | None, maximum: int | None) -> Any:
        node = {k: v for k, v in honest.parameters["properties"]["n"].items()
                if k not in ("minimum", "maximum")}
        node.update({k: v for k, v in (("minimum", minimum), ("maximum", maximum))
                     if v is not None})
        return honest._replace(parameters={**honest.parameters, "properties": {"n": node}})

    monkeypatch.setattr(registry, "schema", lambda name: told(None, None))
    with pytest.raises(AssertionError, match="refused arguments its schema allows"):
        _check_valid(registry, gate, record.name)
    monkeypatch.setattr(registry, "schema", lambda name: told(1, 3))
    with pytest.raises(AssertionError, match="received arguments that break its schema"):
        _check_broken(registry, gate, record.name)
