"""The ``mcp`` toolset: MCP servers written with the SDK, mounted and called through dispatch."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SITE, HttpServer, calls_seen, child_env, echo_server, write_config
from janito_mcp import _mount

from janito_core import Privileges, Registry, Workspace, hookimpl
from janito_core.dispatch import call_tool
from janito_core.scrub import REDACTED as R


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """One mounted echo server for the tests that need nothing special (it starts once)."""
    folder = tmp_path_factory.mktemp("shared-mount")
    log = folder / "echo-calls.log"
    path = write_config(folder / "mcp.json", {
        "echo": echo_server(log, tool_permissions={"echo": "r"}),
    })
    _mount.reset()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JANITO_MCP_CONFIG", str(path))
        yield path, log
    _mount.reset()


@pytest.fixture
def mounted_config(shared: tuple[Path, Path], config_dir: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(shared[0]))
    shared[1].write_text("", encoding="utf-8")
    return shared[0]


@pytest.fixture
def echo_log(shared: tuple[Path, Path]) -> Path:
    return shared[1]


@pytest.fixture
def fresh() -> Iterator[None]:
    """A test with its own configuration: mount it afresh and stop its servers afterwards."""
    _mount.reset()
    yield
    _mount.reset()


@pytest.fixture
def own_log(tmp_path: Path) -> Path:
    return tmp_path / "echo-calls.log"


def load(workspace: Path, *toolsets: str, privileges: str = "rwx") -> Registry:
    registry = Registry(privileges=Privileges.from_string(privileges), autoload=(), allowed=None,
                        workspace=Workspace(workspace))
    for name in toolsets:
        registry.add_toolset(name)
    return registry


class Captured:
    """A janito_report plugin that keeps what the tools report."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    @hookimpl
    def janito_report(self, event: Any) -> None:
        self.events.append(event)


def test_tools_appear_with_their_own_schemas(mounted_config: Path, workspace: Path) -> None:
    registry = load(workspace, "mcp")
    names = registry.names()
    assert {"echo__echo", "echo__add", "echo__choose", "echo__ReadFile",
            "echo__weird_name_with_spaces"} <= set(names)
    record = registry.record("echo__add")
    assert record is not None
    assert (record.toolset, record.distribution, record.permissions) == ("mcp", "janito-mcp", "x")
    assert record.description == "Add two integers."

    schema = registry.schema("echo__choose")
    properties = schema.parameters["properties"]
    assert properties["colour"]["type"] == "string"
    assert properties["count"] == {"default": 1, "title": "Count", "type": "integer"}
    assert properties["tags"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
    assert schema.parameters["required"] == ["colour"]
    assert schema.strict_parameters is None and schema.strict_problem

    from janito_core.formats import anthropic, gemini, mcp, openai_chat

    assert openai_chat(schema)["function"]["name"] == "echo__choose"
    assert anthropic(schema)["input_schema"]["properties"]["colour"]["type"] == "string"
    assert gemini(schema)["parameters"]["properties"]["count"]["type"] == "INTEGER"
    assert mcp(schema)["inputSchema"] == schema.parameters
    assert list(schema.params) == ["colour", "count", "tags"]
    assert schema.open is False


def test_calls_go_through_dispatch(mounted_config: Path, workspace: Path, echo_log: Path) -> None:
    registry = load(workspace, "mcp")
    result = call_tool("echo__add", '{"a": 2, "b": "3"}', registry=registry)
    assert result == {"success": True, "server": "echo", "tool": "echo__add", "result": {"sum": 5}}

    result = call_tool("echo__choose", {"colour": "red", "tags": '["a", "b"]'}, registry=registry)
    assert result["result"] == {"colour": "red", "count": 1, "tags": ["a", "b"]}

    invalid = call_tool("echo__add", {"a": "two", "c": 1}, registry=registry)
    assert invalid["error_type"] == "invalid_arguments"
    assert {d["field"] for d in invalid["details"]} == {"a", "b", "c"}

    failed = call_tool("echo__fail", {}, registry=registry)
    assert failed["success"] is False
    assert failed["error_type"] == "remote_error"
    assert failed["error"] == "Error executing tool fail"

    assert calls_seen(echo_log) == ["add", "choose", "fail"]


def test_progress_and_logs_become_reports(mounted_config: Path, workspace: Path) -> None:
    registry = load(workspace, "mcp")
    captured = Captured()
    registry.plugins.register(captured, "test-capture", None)
    result = call_tool("echo__work", {"steps": 2}, registry=registry)
    assert result["success"] is True
    assert result["result"] == {"result": "did 2 steps"}
    messages = [(e.tool, e.message) for e in captured.events]
    assert messages == [("echo__work", "step 1 of 2"), ("echo__work", "log line 1"),
                        ("echo__work", "step 2 of 2"), ("echo__work", "log line 2")]


def test_privileges_gate_remote_tools(mounted_config: Path, workspace: Path, echo_log: Path) -> None:
    registry = load(workspace, "mcp", privileges="r")
    assert "echo__echo" in registry.names()
    assert registry.record("echo__add").status == "denied"
    readfile = registry.record("echo__ReadFile")
    assert readfile.status == "denied" and readfile.permissions == "x"

    denied = call_tool("echo__add", {"a": 1, "b": 2}, registry=registry)
    assert denied["error_type"] == "permission_denied"
    denied = call_tool("echo__ReadFile", {"filepath": "x"}, registry=registry)
    assert denied["error_type"] == "permission_denied"
    assert call_tool("echo__echo", {"text": "hi"}, registry=registry)["text"] == "hi"
    assert calls_seen(echo_log) == ["echo"]

    registry.privileges = Privileges.from_string("rx")
    assert call_tool("echo__add", {"a": 1, "b": 2}, registry=registry)["result"] == {"sum": 3}


def test_remote_names_cannot_hijack_builtin_tools(mounted_config: Path, workspace: Path,
                                                  echo_log: Path) -> None:
    (workspace / "a.txt").write_text("local content", encoding="utf-8")
    for order in (("mcptest", "mcp"), ("mcp", "mcptest")):
        registry = load(workspace, *order)
        record = registry.record("ReadFile")
        assert record is not None and record.toolset == "mcptest"
        result = call_tool("ReadFile", {"filepath": "a.txt"}, registry=registry)
        assert result == {"success": True, "filepath": "a.txt", "content": "local content"}
        assert registry.record("echo__ReadFile").toolset == "mcp"
        assert not [e for e in registry.load_errors if e.kind == "clash"]
    assert "ReadFile" not in calls_seen(echo_log)


def test_names_are_cleaned_and_unique() -> None:
    from janito_mcp._remote import local_name

    taken: set[str] = set()
    assert local_name("s", "weird.name/with spaces", taken) == "s__weird_name_with_spaces"
    assert local_name("s", "weird name/with.spaces", taken) == "s__weird_name_with_spaces_2"
    assert local_name("s", "../../ReadFile", taken) == "s__ReadFile"
    long = local_name("server", "x" * 200, taken)
    assert len(long) == 64 and long.startswith("server__xxx")
    assert local_name("s", "", taken) == "s__tool"


def test_server_names_cannot_forge_prefixes(fresh: None, tmp_path: Path, config_dir: Path,
                                            workspace: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``a__b`` + tool ``c`` would collide with ``a`` + tool ``b__c``: such names are refused."""
    path = write_config(tmp_path / "mcp.json", {"echo__x": echo_server(), "ReadFile": {"url": "ftp://x"}})
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    assert registry.names() == []
    forged, ftp = registry.load_errors
    assert {(e.toolset, e.distribution, e.kind) for e in (forged, ftp)} == {
        ("mcp", "janito-mcp", "toolset")}
    assert "MCP server 'echo__x'" in forged.reason and "invalid server name" in forged.reason
    assert "MCP server 'ReadFile'" in ftp.reason and "http://" in ftp.reason


def test_restart_after_death(mounted_config: Path, workspace: Path) -> None:
    registry = load(workspace, "mcp")
    first = call_tool("echo__pid", {}, registry=registry)["result"]["pid"]
    starts = _mount.mounted().servers["echo"].starts
    died = call_tool("echo__die", {}, registry=registry)
    assert died["success"] is False
    assert died["error_type"] == "connection_failed"
    assert "stopped during the call" in died["error"] and "restarted on the next call" in died["error"]
    assert "(stderr: dying on purpose)" in died["error"]
    assert died["server"] == "echo" and died["tool"] == "echo__die"
    again = call_tool("echo__pid", {}, registry=registry)
    assert again["success"] is True
    assert again["result"]["pid"] != first
    assert _mount.mounted().servers["echo"].starts == starts + 1


def test_failed_start_is_a_load_error_naming_the_server(fresh: None, tmp_path: Path,
                                                         config_dir: Path, workspace: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    crash = [sys.executable, "-c", "import sys; sys.stderr.write('cannot open the database\\n'); sys.exit(1)"]
    path = write_config(tmp_path / "mcp.json", {
        "echo": echo_server(),
        "missing": {"command": str(tmp_path / "no-such-program")},
        "crash": {"command": crash[0], "args": crash[1:]},
    })
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    assert "echo__add" in registry.names()
    assert not any(name.startswith(("missing__", "crash__")) for name in registry.names())
    missing, crash = registry.load_errors
    for error in (missing, crash):
        assert (error.toolset, error.distribution, error.kind) == ("mcp", "janito-mcp", "toolset")
        assert "failed to start" in error.reason
    assert "MCP server 'missing'" in missing.reason and "command not found" in missing.reason
    assert "crash" not in missing.reason
    assert "MCP server 'crash'" in crash.reason and "cannot open the database" in crash.reason
    assert "missing" not in crash.reason
    assert call_tool("echo__add", {"a": 1, "b": 1}, registry=registry)["result"] == {"sum": 2}


def test_janito_tools_lists_one_error_row_per_server(tmp_path: Path, config_dir: Path,
                                                     workspace: Path) -> None:
    pytest.importorskip("janito_core.cli")
    crash = "import sys; sys.stderr.write('no licence\\n'); sys.exit(2)"
    path = write_config(tmp_path / "mcp.json", {
        "gone": {"command": str(tmp_path / "no-such-program")},
        "crash": {"command": sys.executable, "args": ["-c", crash]},
        "broken": {"command": "x", "permissions": "q"},
    })
    done = subprocess.run([sys.executable, "-m", "janito_core.cli", "tools", "--json", "-t", "mcp"],
                          cwd=workspace, env=child_env(config_dir, JANITO_MCP_CONFIG=str(path)),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = [row for row in json.loads(done.stdout) if row["status"] == "error"]
    assert [(row["name"], row["toolset"], row["distribution"], row["kind"]) for row in rows] == [
        (None, "mcp", "janito-mcp", "toolset")] * 3
    reasons = sorted(row["reason"] for row in rows)
    assert reasons[0].startswith("MCP server 'broken'") and "permission" in reasons[0]
    assert reasons[1].startswith("MCP server 'crash'") and "no licence" in reasons[1]
    assert reasons[2].startswith("MCP server 'gone'") and "command not found" in reasons[2]


def test_janito_run_names_the_server_that_would_not_start(tmp_path: Path, config_dir: Path,
                                                          workspace: Path) -> None:
    """A tool of a server that did not start is unknown; the answer says why."""
    pytest.importorskip("janito_core.cli")
    path = write_config(tmp_path / "mcp.json",
                        {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}})
    no_programs = tmp_path / "empty-bin"
    no_programs.mkdir()  # so `uvx` is found nowhere, as on a machine without uv
    done = subprocess.run(
        [sys.executable, "-m", "janito_core.cli", "run", "-t", "mcp", "fetch__fetch",
         "--url", "https://example.org"],
        cwd=workspace, capture_output=True, text=True, timeout=60,
        env=child_env(config_dir, JANITO_MCP_CONFIG=str(path), PATH=str(no_programs)))
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["error_type"] == "unknown_tool"
    failed = "toolset 'mcp' (janito-mcp): MCP server 'fetch' (uvx mcp-server-fetch) failed to start"
    assert result["error"].startswith(f"there is no tool called 'fetch__fetch'; it may be "
                                      f"missing because a toolset failed to load: {failed}: ")
    assert "command not found" in result["error"]
    [error] = result["load_errors"]
    assert (error["toolset"], error["distribution"], error["kind"]) == ("mcp", "janito-mcp",
                                                                      "toolset")
    said = done.stderr.splitlines()
    assert said[0].startswith(f"janito: error: {failed}: "), done.stderr
    assert said[-1] == f"janito: {result['error']}"
    # With nothing configured, the note says why no tool of a server is there.
    nothing = subprocess.run(
        [sys.executable, "-m", "janito_core.cli", "run", "-t", "mcp", "fetch__fetch"],
        cwd=workspace, capture_output=True, text=True, timeout=60,
        env=child_env(config_dir, JANITO_MCP_CONFIG=str(tmp_path / "none.json")))
    assert nothing.returncode == 1, nothing.stderr
    assert nothing.stderr.startswith("janito: note: toolset 'mcp' (janito-mcp): no MCP servers "
                                     "are configured"), nothing.stderr


@pytest.mark.parametrize("content, expected", [
    (None, "no MCP servers are configured"),
    ('{"servers": {}}', "lists no MCP servers"),
])
def test_nothing_to_mount_is_a_note_not_an_error(fresh: None, content: str | None, expected: str,
                                                 tmp_path: Path, config_dir: Path,
                                                 workspace: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mcp.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    assert registry.names() == [] and registry.load_errors == []
    [note] = registry.notes
    assert expected in note.reason and note.distribution == "janito-mcp"


def test_servers_that_offer_no_tool_are_a_note(fresh: None, tmp_path: Path, config_dir: Path,
                                               workspace: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A server may offer only resources or prompts: the toolset is not "empty" by fault."""
    bare = ("import warnings; warnings.simplefilter('ignore'); "
            "from mcp.server.mcpserver import MCPServer; MCPServer('bare').run()")
    path = write_config(tmp_path / "mcp.json",
                        {"bare": {"command": sys.executable, "args": ["-c", bare]}})
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    assert registry.names() == [] and registry.load_errors == []
    [note] = registry.notes
    assert note.reason == f"the MCP servers of {path} offer no tools (bare)"


@pytest.mark.parametrize("content, expected", [
    ("{not json", "is not valid JSON"),
    ('{"servers": []}', "must be an object"),
    ('{"servers": {"a": {"command": "x", "permissions": "rq"}}}', "invalid permission letter"),
])
def test_configuration_problems_are_load_errors(fresh: None, content: str | None, expected: str,
                                                tmp_path: Path,
                                                config_dir: Path, workspace: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mcp.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    assert registry.names() == []
    [error] = registry.load_errors
    assert expected in error.reason and error.distribution == "janito-mcp"


def test_default_location_is_the_config_dir(fresh: None, config_dir: Path, workspace: Path) -> None:
    write_config(config_dir / "mcp.json", {"echo": echo_server()})
    registry = load(workspace, "mcp")
    assert "echo__echo" in registry.names()
    assert registry.record("echo__echo").permissions == "x"


def test_timeout_cancels_and_the_session_survives(fresh: None, tmp_path: Path, config_dir: Path,
                                                  workspace: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path / "mcp.json", {"echo": echo_server(timeout=1)})
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    slow = call_tool("echo__sleep", {"seconds": 30}, registry=registry)
    assert slow["error_type"] == "timeout" and "within 1 s" in slow["error"]
    assert call_tool("echo__echo", {"text": "still here"}, registry=registry)["text"] == "still here"
    assert _mount.mounted().servers["echo"].starts == 1


def test_secrets_and_env_are_expanded(fresh: None, tmp_path: Path, config_dir: Path,
                                      workspace: Path, own_log: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_ECHO_LOG", str(own_log))
    path = write_config(tmp_path / "mcp.json", {
        "echo": echo_server(None, env={"ECHO_SERVER_LOG": "${secret:echo_log}"}),
    })
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    call_tool("echo__pid", {}, registry=registry)
    assert calls_seen(own_log) == ["pid"]


def test_secrets_never_appear_in_errors(fresh: None, tmp_path: Path, config_dir: Path,
                                        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_API_TOKEN", "tok-4f9a8b7c")
    leak = "import sys; sys.stderr.write('bad token ' + sys.argv[1] + '\\n'); sys.exit(1)"
    path = write_config(tmp_path / "mcp.json", {
        "leaky": {"command": sys.executable, "args": ["-c", leak, "${secret:api_token}"]},
        "unset": {"command": sys.executable, "args": ["${secret:not_there}"]},
    })
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    leaky, unset = registry.load_errors
    assert "tok-4f9a8b7c" not in leaky.reason + unset.reason
    assert "MCP server 'leaky'" in leaky.reason and "bad token [redacted]" in leaky.reason
    assert "MCP server 'unset'" in unset.reason
    assert "secret 'not_there' is not set" in unset.reason


LEAKY_STDERR = r"""
import base64, json, sys
from urllib.parse import quote_plus
secret = sys.argv[1]
sys.stderr.write("config: " + json.dumps({"token": secret}) + "\n")
sys.stderr.write("auth: " + base64.b64encode(("user:" + secret).encode()).decode() + "\n")
sys.stderr.write("url: https://x.test/?t=" + quote_plus(secret) + "\n")
sys.exit(1)
"""


@pytest.mark.parametrize("form", ["table", "json"])
def test_a_secret_echoed_transformed_on_stderr_never_reaches_janito_tools(
        form: str, tmp_path: Path, config_dir: Path, workspace: Path) -> None:
    """A mounted server that fails to start, writing its secret JSON-escaped, inside a
    base64 payload and URL-encoded on stderr: ``janito tools`` shows the failure and the
    stderr lines, never the secret."""
    import base64
    from urllib.parse import quote_plus

    token = 'tok-"q\\uo/té+d 9f3a'
    path = write_config(tmp_path / "mcp.json", {
        "leaky": {"command": sys.executable, "args": ["-c", LEAKY_STDERR, "${secret:api_token}"]},
    })
    env = child_env(config_dir, JANITO_MCP_CONFIG=str(path), JANITO_SECRET_API_TOKEN=token)
    command = [sys.executable, "-m", "janito_core.cli", "tools", "-t", "mcp"]
    done = subprocess.run(command + (["--json"] if form == "json" else []), cwd=workspace,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    assert "leaky" in shown and "config: " in shown and "auth: " in shown, shown
    assert shown.count(R) >= 3, shown
    forms = {token, json.dumps(token)[1:-1], json.dumps(json.dumps(token))[1:-1],
             base64.b64encode(("user:" + token).encode()).decode(), quote_plus(token)}
    for leaked in forms:
        assert leaked not in shown, leaked
    if form == "json":
        rows = json.loads(done.stdout)
        assert any(row["status"] == "error" and "leaky" in row["reason"] for row in rows)


def test_secrets_never_reach_the_model_from_results(fresh: None, tmp_path: Path,
                                                    config_dir: Path, workspace: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A server started with a secret in its environment and returning it: successful
    results (structured and text), failures and reports are all cleaned of it."""
    token = "tok-7e2d91c4aa"
    monkeypatch.setenv("JANITO_SECRET_API_TOKEN", token)
    path = write_config(tmp_path / "mcp.json", {
        "echo": echo_server(None, env={"ECHO_TOKEN": "${secret:api_token}"}),
    })
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp")
    captured = Captured()
    registry.plugins.register(captured, "test-capture", None)
    ok = call_tool("echo__environ", {"name": "ECHO_TOKEN"}, registry=registry)
    failed = call_tool("echo__environ", {"name": "ECHO_TOKEN", "fail": True}, registry=registry)
    text = call_tool("echo__echo", {"text": f"say {token} twice {token}"}, registry=registry)
    assert ok["success"] is True, ok
    assert ok["result"] == {"name": "ECHO_TOKEN", "value": R, "nested": [{"quoted": f"<{R}>"}],
                            R: "a key"}
    assert failed["success"] is False and failed["error_type"] == "remote_error"
    assert f"refusing to show {R}" in failed["error"]
    assert text["text"] == f"say {R} twice {R}"
    reports = " ".join(e.message for e in captured.events)
    assert f"ECHO_TOKEN is {R}" in reports and f"read {R}" in reports
    everything = json.dumps([ok, failed, text, registry.schema("echo__environ").parameters])
    assert token not in everything + reports


def test_self_mounting_stops(fresh: None, tmp_path: Path, config_dir: Path, workspace: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path / "mcp.json", {"echo": echo_server()})
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    monkeypatch.setenv("JANITO_MCP_DEPTH", "3")
    registry = load(workspace, "mcp")
    assert registry.names() == []
    [error] = registry.load_errors
    assert "levels deep" in error.reason


def test_janito_served_over_http_is_mounted(fresh: None, http_server: HttpServer,
                                            tmp_path: Path, config_dir: Path, workspace: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """janito mounts another janito over streamable HTTP; janito results pass through intact."""
    server = http_server
    path = write_config(tmp_path / "mcp.json", {"peer": {"url": server.url, "permissions": "r"}})
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp", privileges="r")
    assert set(registry.names()) == {"peer__CountSteps", "peer__DoWork", "peer__EchoText",
                                     "peer__FailAlways", "peer__Ping", "peer__RaiseError",
                                     "peer__ReadFile"}
    assert registry.schema("peer__EchoText").parameters["properties"]["times"]["default"] == 1
    result = call_tool("peer__EchoText", {"text": "hi", "times": 2}, registry=registry)
    assert result == {"success": True, "text": "hihi", "times": 2}
    # another janito's answers pass through, and so does the schema that describes them
    from janito_mcptest.echo_text import EchoText

    from janito_core.schema import tool_schema

    mounted = registry.get("peer__EchoText")
    assert mounted is not None
    assert mounted.tool_class.output_schema == json.loads(
        json.dumps(tool_schema(EchoText).output_schema))
    failed = call_tool("peer__FailAlways", {}, registry=registry)
    assert failed == {"success": False, "error": "missing.txt does not exist",
                      "error_type": "not_found", "name": "missing.txt"}
    captured = Captured()
    registry.plugins.register(captured, "test-capture", None)
    call_tool("peer__CountSteps", {"steps": 2}, registry=registry)
    # a janito server sends each report as progress and as a log line: it is shown once
    assert [e.message for e in captured.events].count("step 2 of 2") == 1


def test_janito_served_over_stdio_is_mounted(fresh: None, tmp_path: Path, config_dir: Path,
                                             workspace: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path / "mcp.json", {"peer": {
        "command": sys.executable, "args": ["-m", "janito_mcp", "serve", "-t", "mcptest", "-w"],
        "env": {"PYTHONPATH": str(SITE), "JANITO_CONFIG_DIR": str(config_dir)},
        "cwd": str(workspace), "permissions": "rw",
    }})
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))
    registry = load(workspace, "mcp", privileges="rw")
    result = call_tool("peer__WriteNote", {"filepath": "n.txt", "text": "via peer"}, registry=registry)
    assert result["success"] is True
    assert (workspace / "n.txt").read_text(encoding="utf-8") == "via peer"
    assert "peer__ShoutText" not in registry.names()


def test_a_registry_that_mounted_and_restarted_servers_can_still_be_collected(
        fresh: None, tmp_path: Path, config_dir: Path, workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The servers outlive every registry; their event loops must not keep the registry
    # that happened to mount or restart them (a loop keeps the context it was made in).
    import gc
    import weakref

    path = write_config(tmp_path / "mcp.json", {"echo": echo_server(tmp_path / "log")})
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(path))

    def used_registry() -> weakref.ref[Registry]:
        registry = load(workspace, "mcp")
        assert call_tool("echo__add", {"a": 1, "b": 2}, registry=registry)["success"] is True
        assert call_tool("echo__die", {}, registry=registry)["success"] is False
        assert call_tool("echo__add", {"a": 1, "b": 2}, registry=registry)["success"] is True
        return weakref.ref(registry)

    mounting = used_registry()  # mounts the servers, then restarts one
    restarting = used_registry()  # the servers are mounted: restarts one
    gc.collect()
    assert mounting() is None, gc.get_referrers(mounting())
    assert restarting() is None
    assert call_tool("echo__add", {"a": 2, "b": 2}, registry=load(workspace, "mcp"))[
        "result"] == {"sum": 4}
