"""Allow, ask or deny: a policy decides inside the privileges, on real paths, and asks.

The tools here are small and real: they read, write, list, rename and remove through the
workspace they are given, as every toolset does. An attacker's spellings of a denied file
go in through every path argument; its content must never come back, and nothing outside
what the policy allows may change.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from janito_core import BaseTool, Privileges, Registry, Workspace, tool
from janito_core.dispatch import acall_tool, call_tool, execute_tool_calls
from janito_core.policy import (
    ApprovalRequest,
    Policy,
    PolicyError,
    Rule,
    ToolFacts,
)

SECRET = "policy-secret-7f3a1c"


@tool(permissions="r", reads_paths=("path",))
class ReadThing(BaseTool):
    """Read a file."""

    def run(self, path: str) -> dict[str, Any]:
        return {"content": self.workspace.read_bytes(path).decode("utf-8", "replace")}


@tool(permissions="r", reads_paths=("folder",))
class WalkThing(BaseTool):
    """Read every file below a folder."""

    def run(self, folder: str = ".") -> dict[str, Any]:
        found = {}
        for entry in self.workspace.walk(folder):
            if entry.kind == "file":
                fd, _ = entry.open_regular()
                try:
                    found[entry.relative] = os.read(fd, 1 << 16).decode("utf-8", "replace")
                finally:
                    os.close(fd)
        return {"files": found, "names": self.workspace.listdir(folder)}


@tool(permissions="w", writes_paths=("path",))
class WriteThing(BaseTool):
    """Write a file."""

    def run(self, path: str, text: str = "changed") -> dict[str, Any]:
        self.workspace.write_file(path, text.encode(), overwrite=True)
        return {"written": path}


@tool(permissions="w", writes_paths=("source", "target"))
class MoveThing(BaseTool):
    """Rename an entry."""

    def run(self, source: str, target: str) -> dict[str, Any]:
        self.workspace.rename(source, target)
        return {"moved": source}


@tool(permissions="w", writes_paths=("folder",))
class RemoveThing(BaseTool):
    """Remove a folder and what it holds."""

    def run(self, folder: str) -> dict[str, Any]:
        self.workspace.rmdir(folder, recursive=True)
        return {"removed": folder}


@tool(permissions="w")
class Notify(BaseTool):
    """Change something outside the workspace (declares no path)."""

    def run(self, message: str) -> dict[str, Any]:
        return {"sent": message}


@tool(permissions="x")
class RunThing(BaseTool):
    """Stand in for a tool that runs code."""

    def run(self, code: str) -> dict[str, Any]:
        return {"ran": code}


@tool(permissions="")
class Clock(BaseTool):
    """Change nothing and read nothing."""

    def run(self) -> dict[str, Any]:
        return {"now": "noon"}


TOOLS = (ReadThing, WalkThing, WriteThing, MoveThing, RemoveThing, Notify, RunThing, Clock)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "secrets").mkdir()
    (folder / ".git").mkdir()
    (folder / ".janito").mkdir()
    (folder / ".env").write_text(f"TOKEN={SECRET}\n")
    (folder / "secrets" / "key.pem").write_text(SECRET)
    (folder / "src" / "app.py").write_text("print('app')\n")
    (folder / "src" / ".env").write_text(f"NESTED={SECRET}\n")
    (folder / ".git" / "config").write_text("[core]\n")
    (folder / ".janito" / "policy.toml").write_text('mode = "full-auto"\n')
    (folder / "notes.txt").write_text("notes\n")
    (folder / "env-link").symlink_to(".env")
    (folder / "abs-link").symlink_to(folder / ".env")
    (folder / "secrets-link").symlink_to("secrets")
    (folder / "src" / "up").symlink_to("..")
    return folder


def _registry(root: Path, policy: Any, **kwargs: Any) -> Registry:
    registry = Registry(workspace=Workspace(root), autoload=(), allowed=None, policy=policy,
                        reports="off", **kwargs)
    for cls in TOOLS:
        registry.add_tool(cls)
    return registry


def _tree(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            out[str(path.relative_to(root))] = path.read_bytes()
        else:
            out[str(path.relative_to(root))] = b"<dir>"
    return out


DENY_SECRETS = {"rules": [{"action": "deny", "paths": [".env", "secrets/**"]}]}

SPELLINGS = [
    ".env", "./.env", ".//.env", "src/../.env", "src/./../.env", "src/up/.env",
    "src/up/src/up/.env", "env-link", "abs-link", "{root}/.env", "{root}/src/../.env",
    "{root}//.env", "src/.env", "./src/.env", "src/up/src/.env", "secrets/key.pem",
    "./secrets/key.pem", "secrets//key.pem", "secrets-link/key.pem", "{root}/secrets/key.pem",
    "src/up/secrets/key.pem", "secrets/./key.pem", "secrets/../secrets/key.pem",
    "src/../secrets-link/key.pem", "{root}/secrets-link/key.pem", "src/up/secrets-link/key.pem",
    "secrets/", "secrets-link/", "src/up/.env/", "secrets/../.env",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_no_spelling_of_a_denied_path_is_read_or_written(root: Path, spelling: str) -> None:
    registry = _registry(root, DENY_SECRETS)
    path = spelling.format(root=root)
    before = _tree(root)
    for name, args in (("ReadThing", {"path": path}), ("WriteThing", {"path": path}),
                       ("WalkThing", {"folder": path}), ("RemoveThing", {"folder": path}),
                       ("MoveThing", {"source": path, "target": "moved.txt"}),
                       ("MoveThing", {"source": "notes.txt", "target": path})):
        result = call_tool(name, args, registry=registry)
        assert SECRET not in json.dumps(result), (name, args, result)
        if path.endswith("-link") and name == "MoveThing" and args["source"] == path:
            continue  # renaming a link moves the link, not what it points to
        if name == "WalkThing" and result["success"]:
            # a folder the rules leave open whose content they deny: listed empty
            assert result["files"] == {} and result["names"] == [], result
            continue
        assert result["success"] is False, (name, args, result)
        assert result["error_type"] in ("denied_by_policy", "not_a_directory", "not_found",
                                        "invalid_path", "is_directory", "tool_exception"), result
    after = _tree(root)
    for key, value in before.items():
        if key.startswith((".env", "secrets", "src/.env")):
            assert after.get(key) == value, key


def test_a_walk_of_the_whole_workspace_never_shows_denied_content(root: Path) -> None:
    registry = _registry(root, DENY_SECRETS)
    result = call_tool("WalkThing", {"folder": "."}, registry=registry)
    assert result["success"], result
    assert SECRET not in json.dumps(result)
    assert "src/app.py" in result["files"] and ".env" not in result["names"]
    assert not [p for p in result["files"] if p.endswith(".env") or p.startswith("secrets/")]


def test_renaming_a_folder_that_holds_a_denied_file_is_refused(root: Path) -> None:
    registry = _registry(root, DENY_SECRETS)
    result = call_tool("MoveThing", {"source": "src", "target": "public"}, registry=registry)
    assert result["error_type"] == "denied_by_policy", result
    assert (root / "src" / ".env").exists() and not (root / "public").exists()
    result = call_tool("RemoveThing", {"folder": "src"}, registry=registry)
    assert result["error_type"] == "denied_by_policy", result
    assert (root / "src" / "app.py").exists()


def test_refusals_name_the_rule_and_its_source(root: Path, tmp_path: Path) -> None:
    text = 'mode = "full-auto"\n\n[[rules]]\naction = "deny"\npaths = [".env"]\nreason = "keys"\n'
    policy = Policy.from_toml(text, str(tmp_path / "policy.toml"))
    registry = _registry(root, policy)
    # Refused as the tool opens the path: the error names the rule and its place.
    result = call_tool("ReadThing", {"path": "env-link"}, registry=registry)
    assert result["error_type"] == "denied_by_policy"
    assert f"deny paths .env: keys, {tmp_path / 'policy.toml'}:3" in result["error"]
    # Refused before the tool runs (a write is looked at first): the rule in its fields.
    result = call_tool("WriteThing", {"path": "env-link"}, registry=registry)
    assert result["error_type"] == "denied_by_policy"
    assert result["source"] == f"{tmp_path / 'policy.toml'}:3"
    assert result["rule"] == "deny paths .env: keys"


def test_privileges_stay_the_outer_bound(root: Path) -> None:
    policy = {"rules": [{"action": "allow", "tools": ["*"]}]}
    registry = _registry(root, policy)
    registry.privileges = Privileges.from_string("r")
    assert call_tool("RunThing", {"code": "x"}, registry=registry)["error_type"] \
        in ("permission_denied", "unknown_tool")
    assert call_tool("WriteThing", {"path": "a.txt"}, registry=registry)["error_type"] \
        in ("permission_denied", "unknown_tool")
    assert not (root / "a.txt").exists()


def test_deny_wins_over_ask_and_ask_over_allow(root: Path) -> None:
    policy = {"rules": [
        {"action": "allow", "tools": ["Write*"]},
        {"action": "ask", "tools": ["WriteThing"], "paths": ["src/**"]},
        {"action": "deny", "tools": ["WriteThing"], "paths": ["src/secret*"]},
    ]}
    registry = _registry(root, policy)
    assert call_tool("WriteThing", {"path": "a.txt"}, registry=registry)["success"]
    asked = call_tool("WriteThing", {"path": "src/b.txt"}, registry=registry)
    assert asked["error_type"] == "approval_required", asked
    denied = call_tool("WriteThing", {"path": "src/secret.txt"}, registry=registry)
    assert denied["error_type"] == "denied_by_policy", denied
    assert not (root / "src" / "b.txt").exists() and not (root / "src" / "secret.txt").exists()


@pytest.mark.parametrize("mode, expected", [
    ("read-only", {"ReadThing": "allow", "Clock": "allow", "WriteThing": "deny",
                   "Notify": "deny", "RunThing": "deny"}),
    ("ask", {"ReadThing": "allow", "Clock": "allow", "WriteThing": "ask", "Notify": "ask",
             "RunThing": "ask"}),
    ("auto-edit", {"ReadThing": "allow", "Clock": "allow", "WriteThing": "allow",
                   "Notify": "ask", "RunThing": "ask"}),
    ("full-auto", {"ReadThing": "allow", "Clock": "allow", "WriteThing": "allow",
                   "Notify": "allow", "RunThing": "allow"}),
])
def test_each_mode_decides_what_no_rule_covers(root: Path, mode: str,
                                               expected: dict[str, str]) -> None:
    registry = _registry(root, {"mode": mode})
    arguments = {"ReadThing": {"path": "notes.txt"}, "Clock": {}, "Notify": {"message": "m"},
                 "WriteThing": {"path": "new.txt"}, "RunThing": {"code": "true"}}
    for name, want in expected.items():
        result = call_tool(name, arguments[name], registry=registry)
        got = ("allow" if result["success"] else
               {"denied_by_policy": "deny", "approval_required": "ask"}[result["error_type"]])
        assert got == want, (mode, name, result)


@pytest.mark.parametrize("mode", ["read-only", "ask", "auto-edit", "full-auto"])
def test_janito_folder_is_never_written_and_git_always_asks(root: Path, mode: str) -> None:
    policy = {"mode": mode, "rules": [{"action": "allow", "tools": ["*"]},
                                      {"action": "allow", "paths": [".git/**", ".janito/**"]}]}
    registry = _registry(root, policy, approver=lambda request: True)
    before = (root / ".janito" / "policy.toml").read_bytes()
    for path in (".janito/policy.toml", "./.janito/policy.toml", "src/up/.janito/policy.toml",
                 f"{root}/.janito/policy.toml", ".janito/new.toml"):
        result = call_tool("WriteThing", {"path": path, "text": 'mode = "full-auto"'},
                           registry=registry)
        assert result["error_type"] == "denied_by_policy", (path, result)
    moved = call_tool("MoveThing", {"source": ".janito", "target": "elsewhere"},
                      registry=registry)
    assert moved["success"] is False
    assert (root / ".janito" / "policy.toml").read_bytes() == before
    asked: list[ApprovalRequest] = []
    registry.approver = lambda request: asked.append(request) or False
    result = call_tool("WriteThing", {"path": ".git/config"}, registry=registry)
    assert result["error_type"] == "approval_declined" and asked, result
    assert "a write under .git/ always needs a person's approval" in asked[0].reason
    assert (root / ".git" / "config").read_text() == "[core]\n"
    registry.approver = lambda request: True
    assert call_tool("WriteThing", {"path": ".git/config"}, registry=registry)["success"]


def test_a_tool_writing_git_as_a_side_effect_needs_the_approval_too(root: Path) -> None:
    @tool(permissions="w", writes_paths=("path",))
    def write_and_touch_git(workspace: Workspace, path: str) -> dict[str, Any]:
        """Write a file, and a file under .git as well."""
        workspace.write_file(path, b"x", overwrite=True)
        workspace.write_file(".git/hooks-post", b"#!/bin/sh\n", overwrite=True)
        return {}

    registry = _registry(root, {"mode": "full-auto"})
    registry.add_tool(write_and_touch_git)
    result = call_tool("WriteAndTouchGit", {"path": "a.txt"}, registry=registry)
    assert result["error_type"] == "denied_by_policy", result
    assert not (root / ".git" / "hooks-post").exists()


def test_an_approval_is_for_the_paths_the_person_was_shown(root: Path) -> None:
    """A link swapped in between the ask and the run (by code another call of the turn
    ran) does not carry the approved write to where the person was not shown: .git/ or
    a path an ask rule covers. Through the deferred decision, an approver, and a
    framework's yes."""
    from janito_core.integrations import _bridge

    (root / "deploy").mkdir()
    (root / "deploy" / "prod.yaml").write_text("prod\n")
    policy = {"mode": "ask", "rules": [{"action": "ask", "paths": ["deploy/**"]}]}
    shown: list[ApprovalRequest] = []

    def swap(target: str) -> None:
        (root / "notes.txt").unlink()
        (root / "notes.txt").symlink_to(target)

    def approver(request: ApprovalRequest) -> bool:
        shown.append(request)
        swap(".git/config")  # while the person reads the question
        return True

    for target in (".git/config", "deploy/prod.yaml"):
        for how in ("deferred", "approver", "framework"):
            (root / "notes.txt").unlink()
            (root / "notes.txt").write_text("notes\n")
            registry = _registry(root, policy, approver=approver if how == "approver" else None)
            arguments = {"path": "notes.txt", "text": "pwned"}
            if how == "deferred":
                asked = call_tool("WriteThing", arguments, registry=registry, call_id="c1")
                assert asked["approval"]["paths"] == [
                    {"argument": "path", "path": "notes.txt", "access": "write"}]
                swap(target)
                result = call_tool("WriteThing", arguments, registry=registry, call_id="c1",
                                   approvals={asked["approval"]["id"]: True})
            elif how == "approver":
                if target != ".git/config":
                    continue
                result = call_tool("WriteThing", arguments, registry=registry, call_id="c1")
                assert [p["path"] for p in shown[-1].paths] == ["notes.txt"]
            else:
                request = _bridge.request(registry, "WriteThing", arguments, "c1")
                assert request is not None and request.paths[0]["path"] == "notes.txt"
                swap(target)
                result = _bridge.call(registry, "WriteThing", arguments, "c1", decision=True)
            assert result["success"] is False, (target, how, result)
            assert result["error_type"] == "denied_by_policy", (target, how, result)
            assert (root / ".git" / "config").read_text() == "[core]\n", (target, how)
            assert (root / "deploy" / "prod.yaml").read_text() == "prod\n", (target, how)


def test_deferred_approval_runs_exactly_the_approved_call(root: Path) -> None:
    registry = _registry(root, {"mode": "ask"})
    call = {"id": "call_1", "type": "function",
            "function": {"name": "WriteThing", "arguments": json.dumps({"path": "a.txt"})}}
    [first] = execute_tool_calls([call], registry=registry)
    result = json.loads(first["content"])
    assert result["error_type"] == "approval_required"
    approval = result["approval"]
    assert approval["tool"] == "WriteThing" and approval["arguments"] == {"path": "a.txt"}
    assert approval["paths"] == [{"access": "write", "argument": "path", "path": "a.txt"}]
    assert not (root / "a.txt").exists()
    # The model changed the arguments: the approval does not carry over.
    changed = dict(call, function={"name": "WriteThing",
                                   "arguments": json.dumps({"path": "b.txt"})})
    [other] = execute_tool_calls([changed], registry=registry, approvals={approval["id"]: True})
    assert json.loads(other["content"])["error_type"] == "approval_required"
    assert not (root / "b.txt").exists()
    [ran] = execute_tool_calls([call], registry=registry, approvals={approval["id"]: True})
    assert json.loads(ran["content"])["success"] and (root / "a.txt").read_text() == "changed"
    # A decision is used once.
    (root / "a.txt").unlink()
    [again] = execute_tool_calls([call], registry=registry, approvals={approval["id"]: True})
    assert json.loads(again["content"])["error_type"] == "approval_required"
    assert not (root / "a.txt").exists()


def test_a_forged_or_declined_approval_runs_nothing(root: Path) -> None:
    registry = _registry(root, {"mode": "ask"})
    forged = call_tool("WriteThing", {"path": "a.txt"}, registry=registry,
                       approvals={"ap_" + "0" * 32: True})
    assert forged["error_type"] == "approval_required"
    asked = call_tool("WriteThing", {"path": "a.txt"}, registry=registry)
    declined = call_tool("WriteThing", {"path": "a.txt"}, registry=registry,
                         approvals={asked["approval"]["id"]: False})
    assert declined["error_type"] == "approval_declined", declined
    assert not (root / "a.txt").exists()


def test_an_approver_sees_the_call_and_always_means_always(root: Path) -> None:
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> Any:
        seen.append(request)
        return "always"

    registry = _registry(root, {"rules": [{"action": "ask", "tools": ["WriteThing"],
                                           "reason": "writes need a look"}]},
                         approver=approver)
    assert call_tool("WriteThing", {"path": "src/x.txt"}, registry=registry)["success"]
    assert call_tool("WriteThing", {"path": "src/y.txt"}, registry=registry)["success"]
    assert len(seen) == 1
    [request] = seen
    assert request.tool == "WriteThing" and request.rule == "ask tools WriteThing: writes need a look"
    assert request.paths == [{"access": "write", "argument": "path", "path": "src/x.txt"}]


def test_an_approver_that_raises_is_a_no(root: Path) -> None:
    def approver(request: ApprovalRequest) -> bool:
        raise RuntimeError("the prompt broke")

    registry = _registry(root, {"mode": "ask"}, approver=approver)
    result = call_tool("WriteThing", {"path": "a.txt"}, registry=registry)
    assert result["error_type"] == "approval_declined" and "the prompt broke" in result["error"]
    assert not (root / "a.txt").exists()


def test_an_async_approver_is_awaited(root: Path) -> None:
    async def approver(request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        return request.arguments["path"] == "yes.txt"

    registry = _registry(root, {"mode": "ask"}, approver=approver)

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return (await acall_tool("WriteThing", {"path": "yes.txt"}, registry=registry),
                await acall_tool("WriteThing", {"path": "no.txt"}, registry=registry))

    yes, no = asyncio.run(both())
    assert yes["success"] and no["error_type"] == "approval_declined"
    # and from a synchronous caller, on the registry's loop
    assert call_tool("WriteThing", {"path": "yes.txt"}, registry=registry)["success"]
    assert (root / "yes.txt").exists() and not (root / "no.txt").exists()


def test_an_asked_call_waits_alone_and_keeps_the_order_of_writes(root: Path) -> None:
    gate = threading.Event()
    asked = threading.Event()

    def approver(request: ApprovalRequest) -> bool:
        asked.set()
        return gate.wait(30)

    registry = _registry(root, {"rules": [{"action": "ask", "tools": ["WriteThing"],
                                           "paths": ["src/**"]}]}, approver=approver)
    calls = [
        {"id": "1", "type": "function", "function": {
            "name": "WriteThing", "arguments": json.dumps({"path": "src/a.txt", "text": "one"})}},
        {"id": "2", "type": "function", "function": {
            "name": "ReadThing", "arguments": json.dumps({"path": "notes.txt"})}},
        {"id": "3", "type": "function", "function": {
            "name": "WriteThing", "arguments": json.dumps({"path": "src/a.txt", "text": "two"})}},
    ]
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.extend(
        execute_tool_calls(calls, registry=registry)))
    runner.start()
    assert asked.wait(30)
    assert not (root / "src" / "a.txt").exists()  # nothing written while the person looks
    gate.set()
    runner.join(60)
    contents = [json.loads(r["content"]) for r in results]
    assert all(c["success"] for c in contents), contents
    assert (root / "src" / "a.txt").read_text() == "two"  # the second write came second


def test_the_project_file_can_only_restrict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            root: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(config))
    (config / "policy.toml").write_text(
        'mode = "auto-edit"\n[[rules]]\naction = "ask"\ntools = ["Notify"]\n')
    (root / ".janito" / "policy.toml").write_text(
        'mode = "full-auto"\n'
        '[[rules]]\naction = "allow"\ntools = ["*"]\n'
        '[[rules]]\naction = "deny"\npaths = ["notes.txt"]\n')
    policy = Policy.load(root)
    assert policy.mode == "auto-edit"
    assert [r.action for r in policy.rules] == ["ask", "deny"]
    registry = _registry(root, policy)
    assert call_tool("Notify", {"message": "m"}, registry=registry)["error_type"] \
        == "approval_required"
    assert call_tool("ReadThing", {"path": "notes.txt"}, registry=registry)["error_type"] \
        == "denied_by_policy"
    (root / ".janito" / "policy.toml").write_text('mode = "read-only"\n')
    assert Policy.load(root).mode == "read-only"


def test_a_new_policy_or_workspace_is_seen_by_the_next_call(root: Path, tmp_path: Path) -> None:
    """A tool whose calls a policy allows alike keeps what it was allowed with; a policy
    or a workspace set on the registry afterwards decides the next call."""
    registry = _registry(root, {"rules": [{"action": "allow", "tools": ["ReadThing"]}]})
    for _ in range(2):
        assert call_tool("ReadThing", {"path": "notes.txt"}, registry=registry)["success"]
    registry.policy = Policy.from_data(
        {"rules": [{"action": "deny", "tools": ["ReadThing"]}]}, source="test")
    assert call_tool("ReadThing", {"path": "notes.txt"},
                     registry=registry)["error_type"] == "denied_by_policy"
    registry.policy = Policy.from_data(DENY_SECRETS, source="test")
    assert call_tool("ReadThing", {"path": "notes.txt"}, registry=registry)["success"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("other notes\n")
    (other / ".env").write_text("OTHER=1\n")
    registry.workspace = Workspace(other)
    assert call_tool("ReadThing", {"path": "notes.txt"},
                     registry=registry)["content"] == "other notes\n"
    assert call_tool("ReadThing", {"path": ".env"},
                     registry=registry)["error_type"] == "denied_by_policy"


@pytest.mark.parametrize("text, problem", [
    ('mode = "yolo"', "mode must be one of"),
    ('[[rules]]\naction = "maybe"\ntools = ["X"]', "action must be one of"),
    ('[[rules]]\naction = "deny"', "a rule must say what it applies to"),
    ('[[rules]]\naction = "deny"\npaths = ["../etc/passwd"]', "climbs"),
    ('[[rules]]\naction = "deny"\npaths = ["[abc"]', "unclosed"),
    ('[[rules]]\naction = "deny"\ntools = ["X"]\nwhen = "always"', "unknown key 'when'"),
    ('[[rules]]\naction = "deny"\npermissions = "rq"', "letters r, w and x"),
    ('colour = "blue"', "unknown key 'colour'"),
    ("mode = ", "is not valid TOML"),
])
def test_a_policy_that_cannot_be_read_says_where(text: str, problem: str) -> None:
    with pytest.raises(PolicyError) as caught:
        Policy.from_toml(text, "/home/me/.config/janito/policy.toml")
    assert problem in str(caught.value)
    assert "/home/me/.config/janito/policy.toml" in str(caught.value)


def test_rules_on_arguments_toolsets_and_permission_letters(root: Path) -> None:
    policy = {"rules": [
        {"action": "deny", "tools": ["RunThing"], "args": {"code": ["rm *", "*sudo*"]}},
        {"action": "ask", "toolsets": ["loc*"], "permissions": "x"},
    ]}
    registry = _registry(root, policy)
    assert call_tool("RunThing", {"code": "rm -rf /"}, registry=registry)["error_type"] \
        == "denied_by_policy"
    assert call_tool("RunThing", {"code": "echo; sudo x"}, registry=registry)["error_type"] \
        == "denied_by_policy"
    assert call_tool("RunThing", {"code": "pytest"}, registry=registry)["error_type"] \
        == "approval_required"
    assert call_tool("ReadThing", {"path": "notes.txt"}, registry=registry)["success"]


def test_a_registry_without_a_policy_keeps_todays_behaviour(root: Path) -> None:
    registry = _registry(root, None)
    assert call_tool("WriteThing", {"path": ".janito/x.toml"}, registry=registry)["success"]
    assert call_tool("ReadThing", {"path": ".env"}, registry=registry)["success"]


def test_tool_level_decisions_are_known_without_arguments() -> None:
    policy = Policy.from_data({"mode": "ask", "rules": [
        {"action": "deny", "tools": ["Run*"]}, {"action": "ask", "tools": ["Clock"]}]})
    assert policy.for_tool(ToolFacts("RunBashCode", "system", "x"))[0].action == "deny"
    assert policy.for_tool(ToolFacts("Clock", "local", ""))[0].action == "ask"
    assert policy.for_tool(ToolFacts("ReadFile", "files", "r"))[0].action == "allow"
    with pytest.raises(PolicyError):
        Rule(action="deny")


def test_the_guard_finds_a_covered_path_as_each_pattern_alone_would() -> None:
    """The guard's index (names in a set, prefixes, suffixes, then regexes) agrees with
    matching every pattern on its own, over patterns and paths that mix them."""
    from itertools import combinations

    from janito_core._globs import path_matches
    from janito_core.policy import PathGuard, Rule

    patterns = [".env", "*.pem", "id_rsa*", ".env.*", "s?cret", "[ab]*.key", "secrets/**",
                "/build", "config/prod.toml", "**/cache", "a/**/b", "x\\*y", "*", "deep/"]
    paths = ["", ".env", "src/.env", ".env/inner", ".envrc", "a.pem", "pem", "k/id_rsa.pub",
             "id_rs", ".env.local", "secret", "sacret/f", "b1.key", "c1.key", "secrets",
             "secrets/x/y", "src/secrets/z", "build", "src/build", "config/prod.toml",
             "x/config/prod.toml", "p/q/cache", "cache", "a/b", "a/m/n/b", "x*y", "xzy",
             "deep/f", "deep", "n/deep/f"]
    rule = Rule.__new__(Rule)
    for size in (1, 2, 3):
        for chosen in combinations(patterns, size):
            if size == 3 and "*" in chosen:
                continue
            guard = PathGuard(tuple((p, frozenset({"read"}), rule) for p in chosen))
            for path in paths:
                parts = [p for p in path.split("/") if p]
                if not parts:
                    continue
                expected = any(path_matches(p, path) for p in chosen)
                assert guard.reads_guarded
                assert guard._index["read"].covers(parts) is expected, (chosen, path)
