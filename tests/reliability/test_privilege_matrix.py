"""Privileges: a tool the privileges do not allow can be neither listed nor called.

For every tool of every toolset in the repository (files, system, skills, gmail,
onedrive; gmail and onedrive load because the suite configures credentials for its
loopback servers) and every one of the 8 privilege sets:

- in process: the registry marks it ``denied``, leaves it out of ``names()``, ``tools()``,
  the permissions map and the schemas; ``call_tool`` and ``execute_tool_calls`` (all four
  shapes) answer ``permission_denied`` even to arguments that would be valid, and nothing
  happens: no canary file appears, the mail and Graph servers see no request;
- through the command: ``janito tools --json`` lists it as ``denied`` (never ``loaded``),
  ``janito schema`` leaves it out, and ``janito run`` exits 1 with ``permission_denied``.

The command grants privileges with -r/-w/-x and grants everything when no flag is given,
so it can express 7 of the 8 sets (all but the empty one, which the in-process checks
cover); the run without flags is checked to equal -r -w -x.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel
from rel_support import allows, plausible_arguments

from janito_core import Privileges
from janito_core.dispatch import call_tool, execute_tool_calls

CLI_SETS = {"r": ["-r"], "w": ["-w"], "x": ["-x"], "rw": ["-r", "-w"], "rx": ["-r", "-x"],
            "wx": ["-w", "-x"], "rwx": ["-r", "-w", "-x"], "(no flag)": []}
AUTOLOAD = ("files", "system")


def shapes(name: str, arguments: dict[str, Any]) -> list[tuple[str, Any]]:
    text = json.dumps(arguments)
    return [
        ("openai-chat", [{"id": "c1", "type": "function", "function": {"name": name, "arguments": text}}]),
        ("openai-responses", [{"type": "function_call", "call_id": "c1", "name": name, "arguments": text}]),
        ("anthropic", {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": name,
                                                          "input": arguments}]}),
        ("gemini", {"role": "model", "parts": [{"functionCall": {"name": name, "args": arguments}}]}),
    ]


def result_of(shape: str, item: dict[str, Any]) -> dict[str, Any]:
    if shape == "openai-chat":
        return json.loads(item["content"])
    if shape == "openai-responses":
        return json.loads(item["output"])
    if shape == "anthropic":
        result = json.loads(item["content"])
        assert item["is_error"] is (not result["success"])
        return result
    return item["functionResponse"]["response"]


def _workspace(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "canary.py").write_text("open('canary-file.txt', 'w').write('pwned')\n", encoding="utf-8")
    (path / "probe.txt").write_text("probe\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("privileges", rel.PRIVILEGE_SETS, ids=lambda p: p or "none")
def test_call_tool_and_turns_refuse_denied_tools(privileges: str, inventory: list[dict[str, Any]],
                                                   tmp_path: Path, services: Any) -> None:
    workspace = _workspace(tmp_path / "ws")
    registry = rel.make_registry(workspace, privileges)
    names = set(registry.names())
    permissions_map = registry.get_all_tool_permissions()
    before = rel.snapshot(workspace)
    imap_before, graph_before = services.imap.commands, len(services.identity.requests)
    for tool in inventory:
        name, perms = tool["name"], tool["permissions"]
        record = registry.record(name)
        assert record is not None
        if tool["status"] == "skipped":
            assert record.status == "skipped"
            assert call_tool(name, {}, registry=registry)["error_type"] == "tool_unavailable"
            continue
        rel.count(f"privileges: pairs checked in process ({'denied' if not allows(privileges, perms) else 'allowed'})")
        if allows(privileges, perms):
            assert record.status == "loaded" and name in names, (name, privileges)
            probe = rel.swept(call_tool(name, {"__unknown_field__": 1}, registry=registry), name)
            assert probe["error_type"] == "invalid_arguments", (name, probe)
            continue
        assert record.status == "denied", (name, privileges, record.status)
        assert name not in names and registry.get(name) is None
        assert name not in permissions_map
        assert name not in registry.tools()
        with pytest.raises(KeyError):
            registry.get_function_schema(name)
        arguments = plausible_arguments(name, tool["schema"])
        for sent in ({}, {"__unknown_field__": 1}, arguments, json.dumps(arguments)):
            result = rel.swept(call_tool(name, sent, registry=registry), name)
            assert result["success"] is False and result["error_type"] == "permission_denied", (
                name, privileges, result)
            missing = Privileges.from_string(privileges).missing(perms)
            assert all(f"-{m}" in result["error"] for m in missing), result["error"]
        for shape, turn in shapes(name, arguments):
            items = execute_tool_calls(turn, registry=registry)
            assert len(items) == 1
            result = rel.swept(result_of(shape, items[0]), name)
            assert result["error_type"] == "permission_denied", (shape, name, result)
            rel.count("privileges: denied calls through execute_tool_calls")
    # nothing ran: the workspace is as it was and no server saw a request
    assert rel.diff(before, rel.snapshot(workspace)) == []
    assert services.imap.commands == imap_before
    assert len(services.identity.requests) == graph_before
    rel.count("privilege sets checked in process")


def test_lowering_privileges_on_a_live_registry(inventory: list[dict[str, Any]], tmp_path: Path) -> None:
    """Privileges changed after loading take effect for listing and calling at once."""
    workspace = _workspace(tmp_path / "ws")
    registry = rel.make_registry(workspace, "rwx")
    for privileges in ("r", "", "x", "rwx", "w"):
        registry.privileges = Privileges.from_string(privileges)
        for tool in inventory:
            if tool["status"] != "loaded":
                continue
            allowed = allows(privileges, tool["permissions"])
            assert (tool["name"] in registry.names()) is allowed
            if not allowed:
                result = call_tool(tool["name"], plausible_arguments(tool["name"], tool["schema"]),
                                   registry=registry)
                assert result["error_type"] == "permission_denied", result
            rel.count("privileges: pairs checked after a live change")


def _cli_env(tmp_path: Path) -> dict[str, str]:
    return rel.base_env(tmp_path / "config", secrets=True)


@pytest.fixture(scope="module")
def listings(inventory: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory,
             services: Any) -> dict[str, tuple[list[dict[str, Any]], list[str]]]:
    """``janito tools --json`` rows and ``janito schema`` names for each flag combination."""
    cwd = _workspace(tmp_path_factory.mktemp("cli-ws"))
    env = _cli_env(tmp_path_factory.mktemp("cli"))
    extra = [a for t in rel.ALL_TOOLSETS if t not in AUTOLOAD for a in ("-t", t)]
    commands = []
    for flags in CLI_SETS.values():
        commands.append(["tools", "--json", *flags, *extra])
        commands.append(["schema", "--format", "openai", *flags, *extra])
    done = rel.run_many(commands, env=env, cwd=cwd)
    out = {}
    for index, label in enumerate(CLI_SETS):
        tools, schema = done[2 * index], done[2 * index + 1]
        assert tools.returncode == 0, tools.stderr
        assert schema.returncode == 0, schema.stderr
        names = [item["function"]["name"] for item in rel.json_of(schema)]
        out[label] = (rel.json_of(tools), names)
    return out


@pytest.mark.parametrize("label", list(CLI_SETS))
def test_janito_tools_lists_denied_tools_as_denied(label: str, inventory: list[dict[str, Any]],
                                                    listings: Any) -> None:
    privileges = "rwx" if label == "(no flag)" else label
    rows, schema_names = listings[label]
    by_name = {r["name"]: r for r in rows if r["name"]}
    for tool in inventory:
        row = by_name[tool["name"]]
        if tool["status"] == "skipped":
            assert row["status"] == "skipped"
            continue
        if allows(privileges, tool["permissions"]):
            assert row["status"] == "loaded", row
            assert tool["name"] in schema_names
        else:
            assert row["status"] == "denied", row
            assert "not granted" in row["reason"], row
            assert tool["name"] not in schema_names, (label, tool["name"])
        rel.count("privileges: pairs checked in janito tools and janito schema")
    assert not [r for r in rows if r["status"] == "error"], rows
    if label == "(no flag)":
        assert rows == listings["rwx"][0]


def test_janito_run_refuses_every_denied_pair(inventory: list[dict[str, Any]], tmp_path: Path,
                                              services: Any) -> None:
    """``janito run FLAGS TOOL`` with arguments that would be valid: exit 1, permission_denied."""
    cwd = _workspace(tmp_path / "ws")
    env = _cli_env(tmp_path)
    before = rel.snapshot(cwd)
    imap_before = services.imap.commands
    pairs, commands = [], []
    for label, flags in CLI_SETS.items():
        privileges = "rwx" if label == "(no flag)" else label
        for tool in inventory:
            if tool["status"] != "loaded" or allows(privileges, tool["permissions"]):
                continue
            extra = [] if tool["toolset"] in AUTOLOAD else ["-t", tool["toolset"]]
            arguments = json.dumps(plausible_arguments(tool["name"], tool["schema"]))
            pairs.append((label, tool["name"]))
            commands.append(["run", *flags, *extra, tool["name"], "--args", arguments])
    # one allowed run per toolset shows the same command does reach the tool's validation
    allowed = {}
    for tool in inventory:
        if tool["status"] == "loaded" and tool["toolset"] not in allowed and tool["permissions"]:
            allowed[tool["toolset"]] = tool
    for tool in allowed.values():
        flags = [f"-{p}" for p in tool["permissions"]]
        extra = [] if tool["toolset"] in AUTOLOAD else ["-t", tool["toolset"]]
        pairs.append(("allowed", tool["name"]))
        commands.append(["run", *flags, *extra, tool["name"], "--args", '{"__unknown_field__": 1}'])
    done = rel.run_many(commands, env=env, cwd=cwd)
    for (label, name), result in zip(pairs, done, strict=True):
        assert result.returncode == 1, (label, name, result.stdout, result.stderr)
        data = rel.json_of(result)
        expected = "invalid_arguments" if label == "allowed" else "permission_denied"
        assert data["success"] is False and data["error_type"] == expected, (label, name, data)
        if label != "allowed":
            rel.count("privileges: denied pairs refused by janito run")
    assert rel.diff(before, rel.snapshot(cwd)) == []
    assert services.imap.commands == imap_before
