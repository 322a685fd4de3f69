"""What a served janito lets a caller reach: GetUrl and the private-network policy.

``janito mcp serve`` (the real command, the MCP SDK's client over stdio) refuses GetUrl
calls to this machine's loopback server unless ``--allow-private-network`` is given,
while the local command (``janito run``) reaches it; GetUrl is offered as a read-only tool
that reaches the open world. Only 127.0.0.1 is ever connected to: the addresses the
policy refuses without connecting (metadata, private ranges) are covered by janito-core's
own tests of the classification.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel


class _Page(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        body = b"the loopback page"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def loopback_page() -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _serve(workspace: Path, env: dict[str, str], *flags: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    command = rel.janito_command()
    return StdioServerParameters(command=command[0],
                                 args=[*command[1:], "mcp", "serve", *flags],
                                 cwd=str(workspace), env=env)


@pytest.mark.parametrize("allowed", [False, True], ids=["default", "allow-private-network"])
def test_served_get_url_and_loopback(allowed: bool, loopback_page: Any, tmp_path: Path) -> None:
    pytest.importorskip("janito_mcp")
    pytest.importorskip("janito_system")
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import stdio_client

    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = rel.base_env(tmp_path / "config", secrets=True)
    url = f"http://127.0.0.1:{loopback_page.server_address[1]}/inside"
    flags = ["--allow-private-network"] if allowed else []
    errlog = tmp_path / "stderr.txt"

    async def main() -> dict[str, Any]:
        with errlog.open("w", encoding="utf-8") as err:
            async with Client(stdio_client(_serve(workspace, env, *flags), errlog=err)) as client:
                listed = {tool.name: tool for tool in (await client.list_tools()).tools}
                hints = listed["GetUrl"].annotations
                assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == (
                    True, False, True)
                assert listed["ReadFile"].annotations.open_world_hint is False
                result = await client.call_tool("GetUrl", {"url": url})
                data = result.structured_content or json.loads(result.content[0].text)
                return dict(data)

    result = rel.swept(anyio.run(main), "served GetUrl")
    rel.SWEEP.check(errlog.read_text(encoding="utf-8", errors="replace"), "mcp server stderr")
    if allowed:
        assert result["success"] is True and result["content"] == "the loopback page", result
        assert loopback_page.paths == ["/inside"]
    else:
        assert result["error_type"] == "address_refused", result
        assert "127.0.0.1 is a loopback address" in result["error"]
        assert loopback_page.paths == []
    rel.count("serving: GetUrl calls checked against the private-network policy")


def test_the_local_command_reaches_loopback(loopback_page: Any, tmp_path: Path) -> None:
    pytest.importorskip("janito_system")
    env = rel.base_env(tmp_path / "config")
    url = f"http://127.0.0.1:{loopback_page.server_address[1]}/local"
    done = rel.run_janito(["run", "GetUrl", "--args", json.dumps({"url": url})], env=env,
                          cwd=tmp_path)
    assert json.loads(done.stdout)["content"] == "the loopback page", done.stdout + done.stderr
    refused = rel.run_janito(["run", "GetUrl", "--args", json.dumps({"url": url})],
                             env={**env, "JANITO_PRIVATE_NETWORK": "refuse"}, cwd=tmp_path)
    assert json.loads(refused.stdout)["error_type"] == "address_refused"
    assert loopback_page.paths == ["/local"]


def test_schema_marks_tools_that_reach_other_systems(tmp_path: Path) -> None:
    env = rel.base_env(tmp_path / "config", secrets=True)
    done = rel.run_janito(["schema", "--format", "mcp", "-t", "gmail", "-t", "onedrive"], env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    hints = {entry["name"]: entry["annotations"] for entry in json.loads(done.stdout)}
    assert hints["GetUrl"] == {"readOnlyHint": True, "destructiveHint": False,
                               "openWorldHint": True}
    assert hints["ReadFile"]["openWorldHint"] is False
    assert hints["ReadEmails"]["openWorldHint"] is True
    share = hints["GetOneDriveShareLink"]
    assert (share["readOnlyHint"], share["destructiveHint"], share["openWorldHint"]) == (
        False, True, True)
