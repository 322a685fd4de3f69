"""``janito mcp serve``: the SDK's own client lists and calls janito tools over stdio and HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SERVE, HttpServer, child_env, run_async, serve_env, stdio_params
from jsonschema import Draft202012Validator
from mcp.client import Client
from mcp.client.stdio import stdio_client

READ_ONLY = {"CountSteps", "DoWork", "EchoText", "FailAlways", "Ping", "RaiseError", "ReadFile"}


def _structured(result: Any) -> dict[str, Any]:
    """The structured content, after checking the text block carries the same JSON."""
    assert result.structured_content is not None
    assert len(result.content) == 1 and result.content[0].type == "text"
    assert json.loads(result.content[0].text) == result.structured_content
    assert bool(result.is_error) is (not result.structured_content["success"])
    return dict(result.structured_content)


async def _exercise(client: Client, workspace: Path) -> None:
    """What every transport must do: list, call, fail, refuse, report."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == READ_ONLY

    from janito_core import Registry
    from janito_core.formats import mcp as mcp_format

    registry = Registry(autoload=())
    registry.add_toolset("mcptest")
    expected = mcp_format(registry.schema("EchoText"), permissions="r")
    echo = listed["EchoText"]
    assert echo.input_schema == expected["inputSchema"]
    assert echo.description == expected["description"]
    assert echo.annotations is not None and echo.annotations.read_only_hint is True
    # its result type: the SDK client checks every answer that is not an error against it
    assert echo.output_schema == expected["outputSchema"]
    assert listed["Ping"].output_schema is None  # a plain dict declares nothing

    result = _structured(await client.call_tool("EchoText", {"text": "ab", "times": "2"}))
    assert result == {"success": True, "text": "abab", "times": 2}

    (workspace / "note.txt").write_text("inside", encoding="utf-8")
    result = _structured(await client.call_tool("ReadFile", {"filepath": "note.txt"}))
    assert result["content"] == "inside"

    failed = await client.call_tool("FailAlways", {"name": "x.txt"})
    assert failed.is_error is True
    assert "x.txt does not exist" in failed.content[0].text
    assert _structured(failed)["error_type"] == "not_found"

    broken = _structured(await client.call_tool("RaiseError", {}))
    assert broken["error_type"] == "tool_exception"
    assert "the tool broke" in broken["error"]

    invalid = _structured(await client.call_tool("EchoText", {"text": [1], "bogus": 1}))
    assert invalid["error_type"] == "invalid_arguments"
    assert {d["field"] for d in invalid["details"]} == {"text", "bogus"}
    # MCP does not exempt errors from the output schema; the SDK does not check them
    Draft202012Validator(echo.output_schema).validate(invalid)

    unknown = _structured(await client.call_tool("Nope", {}))
    assert unknown["error_type"] == "unknown_tool"

    denied = _structured(await client.call_tool("WriteNote", {"filepath": "w.txt", "text": "x"}))
    assert denied["error_type"] == "permission_denied"
    assert not (workspace / "w.txt").exists()
    denied = _structured(await client.call_tool("ShoutText", {"text": "x"}))
    assert denied["error_type"] == "permission_denied"

    escape = _structured(await client.call_tool("ReadFile", {"filepath": "../../etc/passwd"}))
    assert escape["error_type"] == "outside_workspace"


def _client(server: Any, mode: str, logs: list[Any]) -> Client:
    async def on_log(params: Any) -> None:
        logs.append(params)

    return Client(server, mode=mode, log_level="info", logging_callback=on_log)


async def _progress(client: Client, logs: list[Any]) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    result = await client.call_tool("CountSteps", {"steps": 3}, progress_callback=on_progress)
    assert _structured(result) == {"success": True, "steps": 3}
    messages = ["step 1 of 3", "step 2 of 3", "step 3 of 3", "counting is over"]
    assert [m for _, _, m in progress] == messages
    assert [v for v, _, _ in progress] == [1, 2, 3, 4]
    tail = [(p.level, p.data) for p in logs if p.logger == "janito.CountSteps"]
    assert tail == [("info", m) for m in messages[:3]] + [("warning", "counting is over")]

    await client.call_tool("EchoText", {"text": "x"})
    assert ("janito.EchoText", "Echoing done") in [(p.logger, p.data) for p in logs]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio(mode: str, workspace: Path, config_dir: Path) -> None:
    async def main() -> None:
        logs: list[Any] = []
        async with _client(stdio_client(stdio_params(workspace, config_dir)), mode, logs) as client:
            await _exercise(client, workspace)
            await _progress(client, logs)

    run_async(main)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_http(mode: str, http_server: HttpServer, config_dir: Path) -> None:
    assert http_server.url.startswith("http://127.0.0.1:")

    async def main() -> None:
        logs: list[Any] = []
        async with _client(http_server.url, mode, logs) as client:
            await _exercise(client, http_server.workspace)
            await _progress(client, logs)

    run_async(main)


def test_http_banner(http_server: HttpServer) -> None:
    banner = "\n".join(http_server.banner)
    assert "serving 7 tools over streamable HTTP with privileges r" in banner
    assert ("not exposed, privileges not granted: ShoutText (x), WaitForCancel (w), "
            "WriteNote (w)") in banner
    assert "private network addresses (loopback, private, link-local, metadata) are refused" \
        in banner


def test_write_and_execute_only_when_granted(workspace: Path, config_dir: Path) -> None:
    async def main() -> None:
        params = stdio_params(workspace, config_dir, "-w")
        async with Client(stdio_client(params)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == READ_ONLY | {"WaitForCancel", "WriteNote"}
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["WriteNote"].annotations.read_only_hint is False
            assert tools["WriteNote"].annotations.destructive_hint is True
            result = await client.call_tool("WriteNote", {"filepath": "w.txt", "text": "hello"})
            assert result.is_error is False
            assert (workspace / "w.txt").read_text(encoding="utf-8") == "hello"
            shout = _structured(await client.call_tool("ShoutText", {"text": "x"}))
            assert shout["error_type"] == "permission_denied"

        params = stdio_params(workspace, config_dir, "-x")
        async with Client(stdio_client(params)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == READ_ONLY | {"ShoutText"}
            shout = _structured(await client.call_tool("ShoutText", {"text": "x"}))
            assert shout == {"success": True, "text": "X"}

    run_async(main)


def test_stdio_prints_exposure_on_stderr_only(workspace: Path, config_dir: Path) -> None:
    done = subprocess.run([*SERVE, "-t", "mcptest", "-w"], cwd=workspace, env=serve_env(config_dir),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "serving 9 tools over stdio with privileges rw" in done.stderr
    assert "WriteNote" in done.stderr and "not exposed, privileges not granted: ShoutText (x)" in done.stderr


def test_unknown_toolset_is_a_usage_error(workspace: Path, config_dir: Path) -> None:
    done = subprocess.run([*SERVE, "-t", "nosuchtoolset"], cwd=workspace, env=child_env(config_dir),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "nosuchtoolset" in done.stderr
    assert done.stdout == ""


def test_missing_workspace_is_a_usage_error(tmp_path: Path, config_dir: Path) -> None:
    done = subprocess.run([*SERVE, "--workspace", str(tmp_path / "absent")], cwd=tmp_path,
                          env=child_env(config_dir), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "is not a folder" in done.stderr and done.stdout == ""


def test_busy_port_is_reported(workspace: Path, config_dir: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run([*SERVE, "--transport", "http", "--port", str(port)], cwd=workspace,
                              env=child_env(config_dir), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_janito_command_serves(workspace: Path, config_dir: Path) -> None:
    """``janito mcp serve`` (the core's command, through the command hook) is the same server."""
    pytest.importorskip("janito_core.cli")
    command = [sys.executable, "-m", "janito_core.cli", "mcp", "serve"]

    async def main() -> None:
        params = stdio_params(workspace, config_dir, "-x", command=command)
        async with Client(stdio_client(params)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == READ_ONLY | {"ShoutText"}
            shout = _structured(await client.call_tool("ShoutText", {"text": "hey"}))
            assert shout["text"] == "HEY"

    run_async(main)


def test_concurrent_calls_get_their_own_progress(config_dir: Path, workspace: Path) -> None:
    """In process (the SDK's direct transport): reports never cross from one call to another."""
    import anyio
    from janito_mcp._serve import JanitoServer

    from janito_core import Privileges, Registry, Workspace, hookimpl

    call_ids: list[str | None] = []

    class Audit:
        @hookimpl
        def janito_tool_call(self, call: Any) -> None:
            call_ids.append(call.id)

    registry = Registry(privileges=Privileges(read=True, write=False, execute=False), autoload=(),
                        workspace=Workspace(workspace))
    registry.add_toolset("mcptest")
    registry.plugins.register(Audit(), "test-audit", None)
    served = JanitoServer(registry)

    async def main() -> None:
        seen: dict[int, list[str | None]] = {}

        async with Client(served.server) as client:
            async def count(steps: int) -> None:
                messages: list[str | None] = []
                seen[steps] = messages

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    messages.append(message)

                result = await client.call_tool("CountSteps", {"steps": steps},
                                                progress_callback=on_progress)
                assert _structured(result) == {"success": True, "steps": steps}

            async with anyio.create_task_group() as group:
                for steps in range(1, 9):
                    group.start_soon(count, steps)
            denied = _structured(await client.call_tool("WriteNote", {"filepath": "a", "text": "b"}))
            assert denied["error_type"] == "permission_denied"

        for steps, messages in seen.items():
            assert messages == [f"step {n} of {steps}" for n in range(1, steps + 1)] + [
                "counting is over"]
        # each call reaches the call hook with its own id, made from the MCP request id
        assert len(call_ids) == 8 and len(set(call_ids)) == 8
        assert all(str(i).startswith("mcp-") for i in call_ids)
        assert not served.forwarder.channels

    run_async(main)


@pytest.mark.parametrize("allowed", [False, True])
def test_calls_run_under_the_server_s_private_network_policy(allowed: bool, workspace: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """In process: what a tool sees as the private-network policy is the server's, whatever
    the environment says (the command combines --allow-private-network and the environment)."""
    from janito_mcp._serve import JanitoServer

    from janito_core import BaseTool, Privileges, Registry, Workspace, tool
    from janito_core.network import private_network_allowed

    @tool(permissions="r")
    class Policy(BaseTool):
        """Say whether private addresses may be reached."""

        open_world = True

        def run(self) -> dict[str, Any]:
            """Say."""
            return {"success": True, "allowed": private_network_allowed()}

    monkeypatch.setenv("JANITO_PRIVATE_NETWORK", "refuse" if allowed else "allow")
    registry = Registry(privileges=Privileges(read=True, write=False, execute=False), autoload=(),
                        workspace=Workspace(workspace))
    registry.add_tool(Policy, toolset="t", distribution="t")
    served = JanitoServer(registry, allow_private_network=allowed)

    async def main() -> dict[str, Any]:
        async with Client(served.server) as client:
            listed = (await client.list_tools()).tools
            hints = listed[0].annotations
            assert (hints.read_only_hint, hints.open_world_hint) == (True, True)
            return _structured(await client.call_tool("Policy", {}))

    assert run_async(main) == {"success": True, "allowed": allowed}


@pytest.mark.parametrize(("flags", "env", "banner"), [
    ((), {}, "are refused to the tools"),
    (("--allow-private-network",), {}, "are reachable by the tools"),
    ((), {"JANITO_PRIVATE_NETWORK": "allow"}, "are reachable by the tools"),
])
def test_the_private_network_policy_is_announced(flags: tuple[str, ...], env: dict[str, str],
                                                 banner: str, workspace: Path,
                                                 config_dir: Path) -> None:
    done = subprocess.run([*SERVE, "-t", "mcptest", *flags], cwd=workspace,
                          env=child_env(config_dir, **env), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert banner in done.stderr


def test_an_unreadable_private_network_setting_is_a_usage_error(workspace: Path,
                                                                config_dir: Path) -> None:
    done = subprocess.run([*SERVE, "-t", "mcptest"], cwd=workspace,
                          env=child_env(config_dir, JANITO_PRIVATE_NETWORK="maybe"),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "JANITO_PRIVATE_NETWORK='maybe'" in done.stderr


@pytest.mark.parametrize("journal", [True, False])
def test_served_calls_are_journaled_with_their_client_and_undone(
        journal: bool, workspace: Path, config_dir: Path) -> None:
    from janito_core.journal import Journal

    flags = ("-w",) if journal else ("-w", "--no-journal")

    async def main() -> None:
        async with Client(stdio_client(stdio_params(workspace, config_dir, *flags)),
                          mode="legacy") as client:
            for text in ("one", "two"):
                result = await client.call_tool("WriteNote", {"filepath": "n.txt",
                                                              "text": text})
                assert result.is_error is False
            await client.call_tool("WriteNote", {"filepath": "../out.txt", "text": "x"})

    run_async(main)
    assert (workspace / "n.txt").read_text() == "two"
    recorded = Journal(config_dir / "journal")
    entries = recorded.entries(str(workspace))
    if not journal:
        assert entries == [] and recorded.log() == []
        return
    assert [entry.tool for entry in entries] == ["WriteNote", "WriteNote"]
    caller = entries[0].header["caller"]
    assert caller["kind"] == "mcp" and caller["client"], caller
    lines = recorded.log()
    assert [line["tool"] for line in lines] == ["WriteNote"] * 3
    assert lines[0]["success"] is False and lines[0]["caller"] == caller
    assert all(line["call_id"].startswith("mcp-") for line in lines)
    recorded.undo([entry.id for entry in entries])
    assert not (workspace / "n.txt").exists()
