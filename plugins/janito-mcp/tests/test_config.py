"""The configuration file, schema conversion and result mapping, without any server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import child_env, write_config
from janito_mcp._config import ConfigError, config_path, expand, load_config, parse_server
from janito_mcp._remote import declared_schema, make_tool_class
from janito_mcp._results import result_dict


def test_location(config_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert config_path() == config_dir / "mcp.json"
    monkeypatch.setenv("JANITO_MCP_CONFIG", str(tmp_path / "elsewhere.json"))
    assert config_path() == tmp_path / "elsewhere.json"


def test_entries(tmp_path: Path) -> None:
    path = write_config(tmp_path / "mcp.json", {
        "local": {"command": "srv", "args": ["--x"], "env": {"A": "1"}},
        "remote": {"url": "https://example.test/mcp", "permissions": "rw", "timeout": 5,
                   "headers": {"Authorization": "Bearer ${secret:token}"}},
        "off": {"command": "srv", "disabled": True},
        "bad": {"command": "srv", "url": "http://x"},
        "typo": {"comand": "srv"},
    })
    config = load_config(path)
    local, remote = config.servers
    assert (local.name, local.transport, local.permissions, local.target) == (
        "local", "stdio", "x", "srv --x")
    assert (remote.transport, remote.permissions, remote.timeout) == ("http", "rw", 5.0)
    assert remote.permissions_of("anything") == "rw"
    assert set(config.errors) == {"bad", "typo"}
    assert "either" in config.errors["bad"] and "comand" in config.errors["typo"]


def test_mcpservers_key_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}), encoding="utf-8")
    assert [s.name for s in load_config(path).servers] == ["a"]


@pytest.mark.parametrize("entry, problem", [
    ({"command": ""}, "non-empty"),
    ({"url": "file:///etc/passwd"}, "http"),
    ({"command": "x", "args": "a b"}, "list of strings"),
    ({"command": "x", "env": {"A": 1}}, "strings to strings"),
    ({"command": "x", "timeout": 0}, "positive"),
    ({"command": "x", "permissions": "rr"}, "repeated"),
    ({"command": "x", "tool_permissions": {"t": "z"}}, "invalid permission"),
    ("command", "JSON object"),
])
def test_bad_entries(entry: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_server("srv", entry)


@pytest.mark.parametrize("name", ["a__b", "_a", "a b", "a.b", "", "x" * 41])
def test_bad_names(name: str) -> None:
    with pytest.raises(ValueError, match="invalid server name"):
        parse_server(name, {"command": "x"})


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(ConfigError, match="JSON object"):
        load_config(path)
    assert load_config(tmp_path / "absent.json").exists is False


def test_expand(config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_API_TOKEN", "s3cret")
    monkeypatch.setenv("SOME_VAR", "v")
    assert expand("Bearer ${secret:api_token} ${env:SOME_VAR} $HOME") == "Bearer s3cret v $HOME"
    with pytest.raises(ValueError, match="not set"):
        expand("${secret:absent_one}")
    used: set[str] = set()
    expand("${secret:api_token}${env:SOME_VAR}", used)
    assert used == {"s3cret"}
    from janito_core.scrub import Scrubber

    scrubber = Scrubber()
    expand("${secret:api_token}", scrubber)
    assert scrubber.text("a s3cret b") == "a [redacted] b"


class _Config:
    @staticmethod
    def permissions_of(tool: str) -> str:
        return "r"


class _Remote:
    """What a generated class needs of a mounted server: it records the calls instead."""

    name = "s"
    config = _Config()
    janito_peer = False

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def clean(self, text: str) -> str:
        return text

    def scrubbed(self, value: Any) -> Any:
        return value

    async def call(self, tool: str, arguments: dict[str, Any], report: Any,
                   *, local_name: str | None = None) -> dict[str, Any]:
        self.calls.append((tool, arguments))
        return {"success": True, "server": self.name, "tool": local_name}


class _Definition:
    def __init__(self, input_schema: Any, description: str = "A tool.") -> None:
        self.name = "t"
        self.description = description
        self.input_schema = input_schema


def _generated(input_schema: Any, description: str = "A tool.") -> tuple[Any, _Remote]:
    from janito_core import Registry

    remote = _Remote()
    cls = make_tool_class(remote, _Definition(input_schema, description), "s__t", __name__)  # type: ignore[arg-type]
    registry = Registry(autoload=())
    registry.add_tool(cls, toolset="mcp", distribution="janito-mcp")
    return registry, remote


def test_declared_schema() -> None:
    source = {"type": "object", "properties": {"n": {"type": "integer"}},
              "required": ["n", "ghost", 3]}
    schema = declared_schema(source)
    assert schema == {"type": "object", "properties": {"n": {"type": "integer"}},
                      "required": ["n"], "additionalProperties": False}
    assert source["required"] == ["n", "ghost", 3]  # the server's schema is left alone
    assert declared_schema(None) == {"type": "object", "properties": {}, "required": [],
                                     "additionalProperties": False}
    assert declared_schema({"properties": [], "required": "n"})["properties"] == {}
    assert declared_schema({"additionalProperties": True})["additionalProperties"] is True
    assert declared_schema({"additionalProperties": {"type": "string"}})["additionalProperties"] == {
        "type": "string"}


def test_schema_validation_matches_native_tools() -> None:
    """Dispatch validates a remote tool's arguments with the converters of native tools."""
    from janito_core._convert import INVALID
    from janito_core.dispatch import call_tool

    registry, remote = _generated({
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "mode": {"enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": ["string", "null"]},
        },
        "required": ["n", "ghost"],
    })
    schema = registry.schema("s__t")
    assert schema.parameters["required"] == ["n"]
    assert schema.parameters["additionalProperties"] is False
    assert schema.strict_parameters is None and schema.strict_problem
    assert not schema.open
    params = schema.params
    errors: list[dict[str, str]] = []
    assert params["n"].info.convert("50", "n", errors) == 50
    assert params["mode"].info.convert("medium", "mode", errors) is INVALID
    assert params["tags"].info.convert('["a"]', "tags", errors) == ["a"]
    assert params["note"].info.nullable is True
    assert [e["field"] for e in errors] == ["mode"]
    assert params["n"].required and not params["mode"].required

    ok = call_tool("s__t", {"n": "7", "tags": '["x"]', "note": None}, registry=registry)
    assert ok == {"success": True, "server": "s", "tool": "s__t"}
    bad = call_tool("s__t", {"mode": "medium", "nn": 1}, registry=registry)
    assert bad["error_type"] == "invalid_arguments"
    assert {d["field"] for d in bad["details"]} == {"n", "mode", "nn"}
    assert remote.calls == [("t", {"n": 7, "tags": ["x"], "note": None})]


def test_an_open_server_schema_receives_undeclared_arguments() -> None:
    from janito_core.dispatch import call_tool

    registry, remote = _generated({"type": "object", "properties": {"n": {"type": "integer"}},
                                   "additionalProperties": True})
    assert registry.schema("s__t").open
    assert call_tool("s__t", {"n": "1", "extra": [1]}, registry=registry)["success"] is True
    assert remote.calls == [("t", {"n": 1, "extra": [1]})]


def test_the_whole_description_reaches_the_model() -> None:
    registry, _ = _generated({}, "Fetch a URL.\n\nReturns the page as  markdown.\n")
    assert registry.schema("s__t").description == "Fetch a URL.\n\nReturns the page as  markdown."
    assert registry.record("s__t").description == "Fetch a URL."  # what `janito tools` shows
    record = registry.record("s__t")
    assert record is not None and record.permissions == "r"
    assert record.cls.description == "Fetch a URL.\n\nReturns the page as  markdown."


class _Text:
    type = "text"

    def __init__(self, text: str) -> None:
        self.text = text


class _Result:
    def __init__(self, content: list[Any], structured: Any = None, is_error: bool = False) -> None:
        self.content = content
        self.structured_content = structured
        self.is_error = is_error


def test_results() -> None:
    plain = result_dict(_Result([_Text("hello")]), "s", "t", "s__t")
    assert plain == {"success": True, "server": "s", "tool": "s__t", "text": "hello"}
    structured = result_dict(_Result([_Text('{"a": 1}')], {"a": 1}), "s", "t")
    assert structured == {"success": True, "server": "s", "tool": "t", "result": {"a": 1}}
    error = result_dict(_Result([_Text("no  such\nfile")], is_error=True), "s", "t")
    assert error == {"success": False, "error": "no such file", "error_type": "remote_error",
                     "server": "s", "tool": "t"}
    janito_shaped = {"success": False, "error": "gone", "error_type": "not_found"}
    assert result_dict(_Result([], janito_shaped, True), "s", "t", janito_peer=True) == janito_shaped
    lying = result_dict(_Result([_Text("bad")], {"success": True}, True), "s", "t",
                        janito_peer=True)
    assert lying["success"] is False and lying["error_type"] == "remote_error"


@pytest.mark.parametrize("structured, is_error, error", [
    ({"success": False, "message": "quota exceeded"}, False, "quota exceeded"),
    ({"success": False, "error": {"code": 7}}, False, "the tool said no"),
    ({"success": False, "error": "gone", "error_type": "not_found"}, True, "gone"),
    ({"success": False, "error_type": 3}, True, "the tool said no"),
])
def test_a_third_party_success_key_still_gets_janito_s_failure_shape(
        structured: dict[str, Any], is_error: bool, error: str) -> None:
    """Only another janito's results pass through as they are: a third-party server whose
    structured content happens to carry ``success`` gets janito's failure shape, with its
    own content kept under ``result``."""
    out = result_dict(_Result([_Text("the tool said no")], structured, is_error), "s", "t", "s__t")
    assert out == {"success": False, "error": error, "error_type": "remote_error",
                   "server": "s", "tool": "s__t", "result": structured}
    third_party_ok = result_dict(_Result([], {"success": True, "n": 1}), "s", "t", "s__t")
    assert third_party_ok == {"success": True, "server": "s", "tool": "s__t",
                              "result": {"success": True, "n": 1}}


def test_servers_command(tmp_path: Path, config_dir: Path) -> None:
    path = write_config(tmp_path / "mcp.json", {
        "local": {"command": "srv", "args": ["a"], "permissions": "r"},
        "bad__name": {"command": "x"},
    })
    done = subprocess.run([sys.executable, "-m", "janito_mcp", "servers", "--json"],
                          env=child_env(config_dir, JANITO_MCP_CONFIG=str(path)),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows[0] == {"name": "local", "transport": "stdio", "target": "srv a",
                       "permissions": "r", "tool_permissions": {}, "oauth": False}
    assert rows[1]["name"] == "bad__name" and "invalid server name" in rows[1]["error"]
    table = subprocess.run([sys.executable, "-m", "janito_mcp", "servers"],
                           env=child_env(config_dir, JANITO_MCP_CONFIG=str(path)),
                           capture_output=True, text=True, timeout=60)
    assert "local" in table.stdout and "srv a" in table.stdout


def test_janito_mcp_without_subcommand_is_a_usage_error(config_dir: Path) -> None:
    pytest.importorskip("janito_core.cli")
    done = subprocess.run([sys.executable, "-m", "janito_core.cli", "mcp"],
                          env=child_env(config_dir), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "serve" in done.stderr
