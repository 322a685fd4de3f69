"""Every janito-files tool that takes a path declares it (reads_paths, writes_paths), so a
policy's path rules decide on the call before it runs: ``janito policy check`` answers
deny for a denied file whatever its spelling, and the call is refused without the file's
content in its answer."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from janito_core import Registry, _gate
from janito_core.dispatch import call_tool
from janito_core.policy import Policy
from janito_core.privileges import Privileges
from janito_core.workspace import Workspace

SECRET = "API_KEY=sk-do-not-show-4711"
POLICY = """\
mode = "full-auto"

[[rules]]
action = "deny"
paths = [".env", "secrets/"]
reason = "credentials stay with the person"
"""

# The parameter names that hold workspace paths in this toolset.
PATH_PARAMETERS = {"filepath", "filepaths", "paths", "directory", "source", "destination"}

# (tool, arguments with PATH where the path goes)
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ReadFile", {"filepath": "PATH"}),
    ("WordCount", {"filepath": "PATH"}),
    ("ReadMultipleFiles", {"filepaths": ["notes.txt", "PATH"]}),
    ("SearchText", {"paths": ["notes.txt", "PATH"], "query": "API_KEY"}),
    ("SearchRegex", {"paths": "PATH", "pattern": "API_\\w+"}),
    ("FindFiles", {"paths": "PATH", "pattern": "*"}),
    ("ListFiles", {"directory": "PATH"}),
    ("CreateFile", {"filepath": "PATH", "content": "overwritten", "overwrite": True}),
    ("ReplaceTextInFile", {"filepath": "PATH", "old_str": "API_KEY", "new_str": "X"}),
    ("DeleteFile", {"filepath": "PATH"}),
    ("MoveFile", {"source": "PATH", "destination": "moved.txt"}),
    ("MoveFile", {"source": "notes.txt", "destination": "PATH", "overwrite": True}),
    ("CreateDirectory", {"directory": "PATH"}),
    ("RemoveDirectory", {"directory": "PATH", "recursive": True}),
]

FOLDER_TOOLS = {"ListFiles", "CreateDirectory", "RemoveDirectory", "FindFiles"}

# Spellings of the denied file, and of the denied folder: each names it, by way of
# dots, a detour, a link inside the workspace.
FILE_SPELLINGS = [".env", "./.env", "d/../.env", "d/./../.env", "alias", "d/alias-up",
                  "secrets/key.txt", "./secrets//key.txt"]
FOLDER_SPELLINGS = ["secrets", "./secrets/", "d/../secrets", "secrets-link", "secrets/inner"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    (root / "secrets" / "inner").mkdir(parents=True)
    (root / ".env").write_text(SECRET + "\n")
    (root / "secrets" / "key.txt").write_text(SECRET + "\n")
    (root / "secrets" / "inner" / "deep.txt").write_text(SECRET + "\n")
    (root / "notes.txt").write_text("nothing secret\n")
    (root / "alias").symlink_to(".env")
    (root / "d" / "alias-up").symlink_to("../.env")
    (root / "secrets-link").symlink_to("secrets")
    return root


def _registry(root: Path) -> Registry:
    registry = Registry(workspace=Workspace(str(root)), autoload=(), allowed=None,
                        reports="off", privileges=Privileges.from_string("rw"),
                        policy=Policy.from_toml(POLICY, "policy.toml"))
    registry.add_toolset("files")
    return registry


def _decision(registry: Registry, record: Any, arguments: dict[str, Any]) -> Any:
    """What the policy decides for a call on the paths its tool declares (resolved as the
    workspace resolves them), before the call runs."""
    assert registry.policy is not None
    return registry.policy.decide(_gate.facts(record), arguments,
                                  _gate.uses(record.cls, arguments, registry.workspace))


def _with(arguments: dict[str, Any], path: str) -> dict[str, Any]:
    def put(value: Any) -> Any:
        if value == "PATH":
            return path
        if isinstance(value, list):
            return [put(v) for v in value]
        return value
    return {key: put(value) for key, value in arguments.items()}


def _state(root: Path) -> dict[str, str]:
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = (
                "link:" + os.readlink(path) if os.path.islink(path)
                else "dir" if os.path.isdir(path) else Path(path).read_text())
    return found


def test_every_tool_that_takes_a_path_declares_it(workspace: Path) -> None:
    registry = _registry(workspace)
    checked = 0
    for name in {tool for tool, _ in CALLS} | {"FindFiles", "ListFiles"}:
        cls = registry.record(name).cls
        parameters = set(inspect.signature(cls.run).parameters) & PATH_PARAMETERS
        declared = set(cls.reads_paths or ()) | set(cls.writes_paths or ())
        assert parameters <= declared, (name, parameters - declared)
        if "w" not in registry.record(name).permissions:
            # a tool that only reads says so: the policy sees its paths as reads
            assert parameters <= set(cls.reads_paths or ()), name
        checked += 1
    assert checked == 13


@pytest.mark.parametrize(("tool", "arguments"), CALLS,
                         ids=[f"{t}-{next(iter(a))}" if t != "MoveFile" else
                              f"{t}-{'source' if a['source'] == 'PATH' else 'destination'}"
                              for t, a in CALLS])
def test_a_denied_path_is_denied_before_the_call_in_every_spelling(
        workspace: Path, tool: str, arguments: dict[str, Any]) -> None:
    registry = _registry(workspace)
    record = registry.record(tool)
    before = _state(workspace)
    spellings = FOLDER_SPELLINGS if tool in FOLDER_TOOLS else FILE_SPELLINGS
    if tool == "FindFiles":
        spellings = FOLDER_SPELLINGS + FILE_SPELLINGS
    for spelling in spellings:
        call = _with(arguments, spelling)
        decision = _decision(registry, record, call)
        assert decision.action == "deny", (tool, spelling, decision)
        assert decision.rule is not None and decision.rule.source == "policy.toml:3"
        # Run, the call is refused, or (a read of several paths, a walk) answers without
        # what the rule covers: the guard refuses each denied path as the tool reaches it.
        result = call_tool(tool, call, registry=registry)
        assert "sk-do-not-show" not in json.dumps(result), (tool, spelling, result)
        if result["success"] is False:
            assert result["error_type"] == "denied_by_policy", (tool, spelling, result)
        else:
            assert tool in {"ReadMultipleFiles", "SearchText", "SearchRegex", "FindFiles",
                            "ListFiles"}, (tool, spelling, result)
    assert _state(workspace) == before
    # an allowed path runs: the refusal was the rule's, not the tool's
    if tool not in {"MoveFile", "DeleteFile", "CreateDirectory", "RemoveDirectory"}:
        free = "d" if tool in FOLDER_TOOLS else "notes.txt"
        allowed = _with({k: v for k, v in arguments.items()
                         if k not in ("old_str", "new_str")} |
                        ({"old_str": "nothing", "new_str": "no"} if "old_str" in arguments
                         else {}), free)
        if isinstance(allowed.get("filepaths"), list):
            allowed["filepaths"] = ["notes.txt"]
        if isinstance(allowed.get("paths"), list):
            allowed["paths"] = ["notes.txt"]
        assert _decision(registry, record, allowed).action == "allow"
        assert call_tool(tool, allowed, registry=registry)["success"] is True, allowed


def test_janito_policy_check_answers_deny_for_each_file_tool(workspace: Path,
                                                              tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "policy.toml").write_text(POLICY)
    env = {**os.environ, "JANITO_CONFIG_DIR": str(config)}
    janito = [sys.executable, "-m", "janito_core.cli"]
    shown = []
    for tool, arguments in CALLS:
        spelling = "./secrets" if tool in FOLDER_TOOLS else "d/../.env"
        ran = subprocess.run([*janito, "policy", "check", "-t", "files", tool, "--args",
                              json.dumps(_with(arguments, spelling)), "--json"],
                             cwd=workspace, env=env, capture_output=True, text=True,
                             timeout=60, check=False)
        assert ran.returncode == 0, (tool, ran.stderr)
        answer = json.loads(ran.stdout)
        assert answer["decision"] == "deny", (tool, answer)
        assert answer["source"] == f"{config / 'policy.toml'}:3", answer
        shown.append(tool)
    assert len(shown) == len(CALLS)


def test_a_start_path_denied_for_reading_is_refused_as_the_policy_says(workspace: Path) -> None:
    """A deny on reads only: FindFiles and ListFiles refuse the start path with the
    policy's own error type, not as a path that cannot be read."""
    registry = Registry(workspace=Workspace(str(workspace)), autoload=(), allowed=None,
                        privileges=Privileges.from_string("rw"), reports="off",
                        policy=Policy.from_data({"mode": "full-auto", "rules": [
                            {"action": "deny", "paths": [".env", "secrets/"],
                             "access": "read"}]}))
    registry.add_toolset("files")
    for tool, arguments in (("FindFiles", {"paths": ".env", "pattern": "*"}),
                            ("FindFiles", {"paths": "alias", "pattern": "*"}),
                            ("ListFiles", {"directory": "secrets"})):
        result = call_tool(tool, arguments, registry=registry)
        kinds = {result.get("error_type")} | {p.get("error_type")
                                              for p in result.get("errors") or []}
        assert "denied_by_policy" in kinds and "invalid_path" not in kinds, (tool, result)
        assert SECRET not in json.dumps(result)
