"""Mounting servers written with the SDK: SSE, streamable HTTP and stdio, VS Code's file
form, results that break their own schemas, schemas janito must enforce whole, and tool
lists that change while janito runs."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ECHO_SERVER, HERE, calls_seen, child_env, echo_server, write_config
from janito_mcp import _mount

from janito_core import Privileges, Registry, Workspace
from janito_core.dispatch import call_tool

RAW_SERVER = HERE / "servers" / "raw_server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


class Started:
    """A server process of the tests, stopped at the end."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.port = free_port()
        self.process = subprocess.Popen([*argv, str(self.port)] if "{port}" not in argv else
                                        [a.replace("{port}", str(self.port)) for a in argv],
                                        env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_port(self.port, self.process)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def fresh() -> Iterator[None]:
    _mount.reset()
    yield
    _mount.reset()


def load(workspace: Path, privileges: str = "rwx") -> Registry:
    registry = Registry(privileges=Privileges.from_string(privileges), autoload=(), allowed=None,
                        workspace=Workspace(workspace))
    registry.add_toolset("mcp")
    return registry


def mount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Path,
          servers: dict[str, Any]) -> Registry:
    path = write_config(tmp_path / "mcp.json", servers)
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    return load(workspace)


# -- transports ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sse", "http"])
def test_remote_transports(kind: str, fresh: None, tmp_path: Path, config_dir: Path,
                           workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``"type": "sse"`` speaks SSE (an SSE-only server answers), ``"type": "http"``
    streamable HTTP; progress and log lines come through both."""
    log = tmp_path / "calls.log"
    server = Started([sys.executable, str(ECHO_SERVER), f"--{kind}"],
                     child_env(config_dir, ECHO_SERVER_LOG=str(log)))
    try:
        path = "/sse" if kind == "sse" else "/mcp"
        registry = mount(tmp_path, monkeypatch, workspace, {
            "echo": {"type": kind, "url": f"http://127.0.0.1:{server.port}{path}"}})
        assert not registry.load_errors, registry.load_errors
        assert call_tool("echo__echo", {"text": "over " + kind}, registry=registry)["text"] == \
            "over " + kind
        from test_mount import Captured

        captured = Captured()
        registry.plugins.register(captured, "capture", None)
        assert call_tool("echo__work", {"steps": 2}, registry=registry)["success"] is True
        assert "step 2 of 2" in [e.message for e in captured.events]
        assert calls_seen(log) == ["echo", "work"]
    finally:
        server.stop()


def test_an_sse_server_is_not_spoken_to_as_streamable_http(
        fresh: None, tmp_path: Path, config_dir: Path, workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    server = Started([sys.executable, str(ECHO_SERVER), "--sse"], child_env(config_dir))
    try:
        registry = mount(tmp_path, monkeypatch, workspace, {
            "echo": {"url": f"http://127.0.0.1:{server.port}/sse", "startup_timeout": 10}})
        [error] = registry.load_errors
        assert "MCP server 'echo'" in error.reason and "failed to start" in error.reason
    finally:
        server.stop()


def test_vs_code_form_with_env_file_and_variables(fresh: None, tmp_path: Path,
                                                  config_dir: Path, workspace: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """VS Code's ``mcp.json``: comments, ``inputs``, ``type``, ``envFile`` read relative to the
    file, ``${VAR}`` and ``${env:VAR}`` in the command and arguments."""
    log = tmp_path / "calls.log"
    (tmp_path / "echo.env").write_text(
        f"# the log\nexport ECHO_SERVER_LOG=\"{log}\"\nUNUSED='x'\n", encoding="utf-8")
    monkeypatch.setenv("ECHO_PYTHON", sys.executable)
    monkeypatch.setenv("ECHO_DIR", str(ECHO_SERVER.parent))
    path = tmp_path / "mcp.json"
    path.write_text("""{
      // VS Code's own file, as it is
      "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
      "servers": {
        "echo": {
          "type": "stdio",
          "command": "${ECHO_PYTHON}",
          "args": ["${env:ECHO_DIR}/echo_server.py"],
          "envFile": "echo.env",
        },
        "asks": {"type": "stdio", "command": "x", "env": {"KEY": "${input:key}"}},
      },
    }""", encoding="utf-8")
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace)
    assert call_tool("echo__pid", {}, registry=registry)["success"] is True
    assert calls_seen(log) == ["pid"]
    [error] = registry.load_errors
    assert "MCP server 'asks'" in error.reason
    assert '"env".KEY uses ${input:key}' in error.reason and "${secret:NAME}" in error.reason


def test_an_unset_variable_names_the_server(fresh: None, tmp_path: Path, config_dir: Path,
                                            workspace: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    registry = mount(tmp_path, monkeypatch, workspace, {
        "echo": {"command": sys.executable, "args": ["${NOT_SET_ANYWHERE}"]}})
    [error] = registry.load_errors
    assert "MCP server 'echo'" in error.reason
    assert "environment variable 'NOT_SET_ANYWHERE' is not set" in error.reason


def test_import_copies_usable_servers(tmp_path: Path, config_dir: Path) -> None:
    source = tmp_path / "vscode" / "mcp.json"
    source.parent.mkdir()
    source.write_text(json.dumps({
        "inputs": [{"type": "promptString", "id": "tok"}],
        "servers": {
            "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"],
                      "envFile": ".env"},
            "remote": {"type": "sse", "url": "https://example.test/sse",
                       "headers": {"Authorization": "Bearer ${input:tok}"}},
            "dotted.name": {"command": "x"},
            "kept": {"command": "new"},
        }}), encoding="utf-8")
    target = config_dir / "mcp.json"
    write_config(target, {"kept": {"command": "old"}})

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "janito_mcp", "import", str(source), *extra],
                              env=child_env(config_dir), capture_output=True, text=True,
                              timeout=60)

    dry = run("--dry-run")
    assert "would import 1 server(s)" in dry.stdout and dry.returncode == 1
    assert json.loads(target.read_text())["servers"] == {"kept": {"command": "old"}}
    done = run()
    assert done.returncode == 1, done.stderr
    assert "imported 1 server(s)" in done.stdout and "fetch" in done.stdout
    assert "left out remote" in done.stderr and "${input:tok}" in done.stderr
    assert "left out dotted.name" in done.stderr and "invalid server name" in done.stderr
    assert "kept kept" in done.stderr
    servers = json.loads(target.read_text())["servers"]
    assert servers["kept"] == {"command": "old"}
    assert servers["fetch"]["envFile"] == str(source.parent / ".env")
    assert set(servers) == {"kept", "fetch"}
    assert (target.stat().st_mode & 0o777) == 0o600 or target.exists()
    replaced = run("--replace")
    assert json.loads(target.read_text())["servers"]["kept"] == {"command": "new"}
    assert replaced.returncode == 1


# -- results and schemas --------------------------------------------------------------------


def test_a_result_breaking_its_own_output_schema_is_that_call_s_error(
        fresh: None, tmp_path: Path, config_dir: Path, workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry = mount(tmp_path, monkeypatch, workspace, {
        "raw": {"command": sys.executable, "args": [str(RAW_SERVER)]}})
    assert call_tool("raw__count", {}, registry=registry)["result"] == {"count": 3}
    broken = call_tool("raw__count", {"broken": True}, registry=registry)
    assert broken["success"] is False and broken["error_type"] == "invalid_result", broken
    assert "breaks its own declaration" in broken["error"] and "'many'" in broken["error"]
    assert (broken["server"], broken["tool"]) == ("raw", "raw__count")
    # the server was neither declared dead nor restarted
    assert call_tool("raw__count", {}, registry=registry)["result"] == {"count": 3}
    assert _mount.mounted().servers["raw"].starts == 1


def test_a_third_party_success_key_gets_janito_s_shape(
        fresh: None, tmp_path: Path, config_dir: Path, workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry = mount(tmp_path, monkeypatch, workspace, {
        "raw": {"command": sys.executable, "args": [str(RAW_SERVER)]}})
    failed = call_tool("raw__quota", {}, registry=registry)
    assert failed == {"success": False, "error": "monthly quota used up",
                      "error_type": "remote_error", "server": "raw", "tool": "raw__quota",
                      "result": {"success": False, "message": "monthly quota used up",
                                 "code": 42}}
    ok = call_tool("raw__quota", {"ok": True}, registry=registry)
    assert ok == {"success": True, "server": "raw", "tool": "raw__quota",
                  "result": {"success": True, "remaining": 7}}


def test_the_whole_input_schema_is_enforced(fresh: None, tmp_path: Path, config_dir: Path,
                                            workspace: Path, own_log: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``$ref``'d objects are coerced and checked like inline ones, ``minItems`` and
    ``minimum`` hold, and an unknown nested field is refused, never dropped."""
    registry = mount(tmp_path, monkeypatch, workspace, {"echo": echo_server(own_log)})
    parameters = registry.schema("echo__plan").parameters
    assert "$defs" not in parameters and "$ref" not in json.dumps(parameters)
    step = parameters["properties"]["plan"]["properties"]["steps"]["items"]
    assert step["properties"]["minutes"]["minimum"] == 1
    assert step["additionalProperties"] is False

    good = {"plan": {"name": "p", "steps": [{"title": "a", "minutes": "5"}]}, "labels": ["x"]}
    assert call_tool("echo__plan", good, registry=registry)["result"] == {
        "name": "p", "minutes": 5, "labels": ["x"]}
    cases = {
        "plan.steps[0].colour": {"plan": {"name": "p", "steps": [
            {"title": "a", "minutes": 1, "colour": "red"}]}, "labels": ["x"]},
        "labels": {"plan": {"name": "p", "steps": [{"title": "a", "minutes": 1}]},
                   "labels": []},
        "plan.steps": {"plan": {"name": "p", "steps": []}, "labels": ["x"]},
        "plan.steps[0].minutes": {"plan": {"name": "p", "steps": [{"title": "a", "minutes": 0}]},
                                  "labels": ["x"]},
    }
    for field, arguments in cases.items():
        refused = call_tool("echo__plan", arguments, registry=registry)
        assert refused["error_type"] == "invalid_arguments", (field, refused)
        assert field in [d["field"] for d in refused["details"]], (field, refused)
    assert calls_seen(own_log) == ["plan"]


@pytest.fixture
def own_log(tmp_path: Path) -> Path:
    return tmp_path / "echo-calls.log"


def test_a_changed_tool_list_is_mounted_again(fresh: None, tmp_path: Path, config_dir: Path,
                                              workspace: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``notifications/tools/list_changed``: a new tool appears in the registry that loaded
    the toolset, a removed one answers ``unknown_tool``."""
    registry = mount(tmp_path, monkeypatch, workspace, {"echo": echo_server()})
    assert "echo__extra_hop" not in registry.names()
    assert call_tool("echo__grow", {"word": "hop"}, registry=registry)["success"] is True
    deadline = time.monotonic() + 20
    while "echo__extra_hop" not in registry.names() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert registry.record("echo__extra_hop").description == "Say hop."
    assert call_tool("echo__extra_hop", {"times": 2}, registry=registry)["text"] == "hophop"
    call_tool("echo__grow", {"word": "hop", "remove": True}, registry=registry)
    deadline = time.monotonic() + 20
    removed: dict[str, Any] = {}
    while time.monotonic() < deadline:
        removed = call_tool("echo__extra_hop", {}, registry=registry)
        if removed.get("error_type") == "unknown_tool":
            break
        time.sleep(0.05)
    assert removed["error_type"] == "unknown_tool" and "no longer offers" in removed["error"]
    assert _mount.mounted().servers["echo"].starts == 1


def test_output_schemas_reach_the_model_and_janito_s_clients(
        fresh: None, tmp_path: Path, config_dir: Path, workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry = mount(tmp_path, monkeypatch, workspace, {
        "raw": {"command": sys.executable, "args": [str(RAW_SERVER)]}})
    schema = registry.schema("raw__count")
    assert '"count":{"type":"integer"}' in schema.description
    assert registry.record("raw__count").description == \
        "Count things; breaks its own output schema when asked."
    from janito_mcp._serve import JanitoServer
    from jsonschema import Draft202012Validator
    from mcp.client import Client

    from janito_core.schema import result_branches

    served = JanitoServer(registry)
    output = served.tools["raw__count"].output_schema
    # the shape of janito's own tools' output schemas: janito's success, or its failure
    success, failed = result_branches(output)
    assert success["properties"]["result"]["properties"]["count"] == {"type": "integer"}
    assert failed["properties"]["success"] == {"const": False}
    assert "raw__quota" in served.tools and served.tools["raw__quota"].output_schema is None

    async def main() -> tuple[Any, Any]:
        async with Client(served.server) as client:
            await client.list_tools()
            # the SDK client checks an answer that is not an error against the schema
            good = await client.call_tool("raw__count", {})
            return good, await client.call_tool("raw__count", {"broken": True})

    good, broken = anyio.run(main)
    assert good.structured_content == {"success": True, "server": "raw", "tool": "raw__count",
                                       "result": {"count": 3}}
    assert broken.is_error and broken.structured_content["error_type"] == "invalid_result"
    Draft202012Validator(output).validate(broken.structured_content)
