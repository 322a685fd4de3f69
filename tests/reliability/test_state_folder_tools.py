"""No tool reads or changes janito's state folder, wherever it lies against the workspace.

The workspace is a home folder and janito's state is its ``.config/janito`` (the default
of a home workspace), or the workspace lies inside the state folder, or is it. Every tool
of the file and skills toolsets that takes a path gets each spelling of a state file in
each of its path arguments, with the other arguments valid; afterwards the state folder is
byte for byte as it was, and no result, report or error shows a state file's content.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel

from janito_core.dispatch import call_tool

STATE_SECRET = "STATE-FOLDER-SECRET-93be"
PATH_WORDS = ("path", "file", "directory", "source", "destination", "folder")
SPELLINGS = (
    ".config/janito/secrets.json", "./.config/janito/secrets.json",
    "sub/../.config/janito/secrets.json", ".config//janito/./secrets.json",
    "to-state/secrets.json", "to-secrets", "to-config/janito/secrets.json",
    "{root}/.config/janito/secrets.json", ".config/janito", "to-state/",
    ".config/janito/config.json", ".config/janito/mcp.json",
    ".config/janito/trusted-skills.json", ".config/janito/new.txt", ".config",
)


def _state_tree(state: Path) -> dict[str, bytes]:
    return {str(p.relative_to(state)): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(state.rglob("*"))}


def _home(root: Path) -> Path:
    state = root / ".config" / "janito"
    state.mkdir(parents=True)
    (state / "secrets.json").write_text(json.dumps({"api_token": STATE_SECRET}))
    (state / "config.json").write_text(json.dumps({"sandbox": "workspace-write",
                                                   "note": STATE_SECRET}))
    (state / "mcp.json").write_text(json.dumps({"servers": {}, "note": STATE_SECRET}))
    (root / "sub").mkdir()
    (root / "probe.txt").write_text("a probe\n")
    (root / "to-state").symlink_to(".config/janito")
    (root / "to-secrets").symlink_to(".config/janito/secrets.json")
    (root / "to-config").symlink_to(root / ".config")
    return state


def _path_params(schema: dict[str, Any]) -> list[str]:
    return [key for key, prop in schema.get("properties", {}).items()
            if any(word in key for word in PATH_WORDS)
            and ("string" in json.dumps(prop.get("type", prop.get("anyOf", ""))))]


def _tools(registry: Any) -> list[tuple[str, list[str], dict[str, Any]]]:
    found = []
    for name in registry.names():
        schema = registry.schema(name).parameters
        params = _path_params(schema)
        if params and name not in rel.CANARY_CODE:
            found.append((name, params, schema))
    return found


def test_no_tool_reaches_the_state_folder_inside_the_workspace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "home"
    state = _home(root)
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(state))
    registry = rel.make_registry(root, "rw", toolsets=("files", "skills"))
    # taken once the registry has loaded: janito keeps its own caches in the state folder
    # (the scan of the entry points, toolsets' manifests); no tool may change it
    before = _state_tree(state)
    tools = _tools(registry)
    assert {"ReadFile", "CreateFile", "SearchText", "FindFiles", "ListFiles", "MoveFile",
            "RemoveDirectory", "ReplaceTextInFile", "DeleteFile"} <= {t[0] for t in tools}
    calls = 0
    for name, params, schema in tools:
        for param in params:
            for spelling in SPELLINGS:
                args = rel.plausible_arguments(name, schema)
                value: Any = spelling.format(root=root)
                if "array" in json.dumps(schema["properties"][param]):
                    value = [value]
                args[param] = value
                if name in ("CreateFile", "ReplaceTextInFile"):
                    args.setdefault("content", '{"sandbox": "off"}')
                result = call_tool(name, args, registry=registry)
                calls += 1
                shown = json.dumps(result)
                assert STATE_SECRET not in shown, (name, param, spelling, result)
                assert _state_tree(state) == before, (name, param, spelling, result)
    rel.count("state folder probes", calls)
    # A whole-workspace search, listing and find see every file but the state folder's.
    for name, args in (("SearchText", {"query": "api_token", "paths": "."}),
                       ("SearchRegex", {"pattern": "api_tok", "paths": "."}),
                       ("FindFiles", {"paths": ".", "pattern": "*.json"}),
                       ("ListFiles", {"directory": ".", "recursive": True})):
        result = call_tool(name, args, registry=registry)
        assert result["success"], result
        assert STATE_SECRET not in json.dumps(result) and "secrets.json" not in json.dumps(result)
    assert _state_tree(state) == before


@pytest.mark.parametrize("placement", ["equal", "above"])
def test_no_tool_works_in_a_workspace_within_the_state_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, placement: str) -> None:
    state = tmp_path / "janito"
    state.mkdir()
    (state / "secrets.json").write_text(json.dumps({"api_token": STATE_SECRET}))
    root = state if placement == "equal" else state / "work"
    root.mkdir(exist_ok=True)
    (root / "probe.txt").write_text("a probe\n")
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(state))
    registry = rel.make_registry(root, "rw", toolsets=("files",))
    before = _state_tree(state)  # once loaded, as above
    for name, args in (("ReadFile", {"filepath": "secrets.json"}),
                       ("ReadFile", {"filepath": "probe.txt"}),
                       ("ListFiles", {"directory": "."}),
                       ("SearchText", {"query": "api_token", "paths": "."}),
                       ("CreateFile", {"filepath": "config.json", "content": "{}"}),
                       ("DeleteFile", {"filepath": "probe.txt"})):
        result = call_tool(name, args, registry=registry)
        assert result["success"] is False and result["error_type"] == "outside_workspace", result
        assert STATE_SECRET not in json.dumps(result)
    assert _state_tree(state) == before


def test_the_janito_command_says_where_the_state_folder_lies(tmp_path: Path) -> None:
    root = tmp_path / "home"
    state = _home(root)
    env = rel.base_env(state)
    done = rel.run_janito(["tools", "--json"], env=env, cwd=root)
    assert done.returncode == 0, done.stderr
    assert f"janito's configuration folder {state} lies inside the workspace" in done.stderr
    done = rel.run_janito(["run", "ReadFile", "--filepath", ".config/janito/secrets.json"],
                          env=env, cwd=root)
    result = rel.json_of(done)
    assert result["error_type"] == "outside_workspace" and STATE_SECRET not in done.stdout
