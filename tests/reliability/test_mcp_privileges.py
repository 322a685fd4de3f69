"""Privileges through the MCP server: ``janito mcp serve`` (janito-mcp) and the SDK's client.

The server is started as a real subprocess over stdio with each privilege set it can
express (read is always granted: ``-w`` and ``-x`` add write and execute, so r, rw, rx and
rwx), with every repository toolset loaded. The MCP SDK's own client lists the tools:
exactly the tools those privileges allow are offered, and calling any other one (with
arguments that would be valid) fails with ``permission_denied`` without running it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel
from rel_support import allows, plausible_arguments

SERVE_SETS = {"r": [], "rw": ["-w"], "rx": ["-x"], "rwx": ["-w", "-x"]}


def _serve_available(env: dict[str, str], cwd: Path) -> str | None:
    """Why ``janito mcp serve`` cannot be used here, or None."""
    if importlib.util.find_spec("janito_mcp") is None:
        return "janito-mcp is not installed"
    try:
        from mcp.client import Client  # noqa: F401
        from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: F401
    except ImportError as exc:
        return f"the MCP SDK client is not importable: {exc}"
    done = rel.run_janito(["mcp", "serve", "--help"], env=env, cwd=cwd)
    if done.returncode != 0:
        return f"`janito mcp serve --help` exited {done.returncode}: {done.stderr.strip()[:200]}"
    return None


def _structured(result: Any) -> dict[str, Any]:
    data = result.structured_content
    if data is None:
        data = json.loads(result.content[0].text)
    assert isinstance(data, dict) and isinstance(data.get("success"), bool), data
    assert bool(result.is_error) is (not data["success"])
    return dict(data)


@pytest.mark.parametrize("label", list(SERVE_SETS))
def test_mcp_server_offers_and_runs_only_allowed_tools(label: str, inventory: list[dict[str, Any]],
                                                       tmp_path: Path, services: Any) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "canary.py").write_text("open('canary-file.txt', 'w').write('x')\n", encoding="utf-8")
    (workspace / "probe.txt").write_text("probe\n", encoding="utf-8")
    env = rel.base_env(tmp_path / "config", secrets=True)
    reason = _serve_available(env, workspace)
    if reason is not None:
        pytest.skip(reason)

    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    extra = [a for t in rel.ALL_TOOLSETS if t not in ("files", "system") for a in ("-t", t)]
    command = rel.janito_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "mcp", "serve", *extra, *SERVE_SETS[label], "--workspace", str(workspace)],
        cwd=str(workspace), env=env)
    loaded = [t for t in inventory if t["status"] == "loaded"]
    expected = {t["name"] for t in loaded if allows(label, t["permissions"])}
    denied = [t for t in loaded if not allows(label, t["permissions"])]
    assert denied or label == "rwx"
    before = rel.snapshot(workspace)
    imap_before = services.imap.commands
    errlog_path = tmp_path / "server-stderr.txt"

    async def main() -> None:
        with errlog_path.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                assert listed == expected, (sorted(listed - expected), sorted(expected - listed))
                for tool in denied:
                    arguments = plausible_arguments(tool["name"], tool["schema"])
                    result = _structured(await client.call_tool(tool["name"], arguments))
                    rel.swept(result, f"mcp {tool['name']}")
                    assert result["success"] is False
                    assert result["error_type"] in ("permission_denied", "unknown_tool"), result
                    rel.count("privileges: denied pairs refused by the MCP server")
                for name in sorted(expected):
                    result = _structured(await client.call_tool(name, {"__unknown_field__": 1}))
                    assert result["error_type"] == "invalid_arguments", (name, result)
                    rel.count("privileges: allowed pairs reaching validation over MCP")

    anyio.run(main)
    rel.SWEEP.check(errlog_path.read_text(encoding="utf-8", errors="replace"), "mcp server stderr")
    assert rel.diff(before, rel.snapshot(workspace)) == []
    assert services.imap.commands == imap_before
    rel.count("privilege sets served over MCP")


def test_mcp_server_cannot_drop_read(tmp_path: Path) -> None:
    """The server has no way to withhold read: the sets without r are not expressible there."""
    env = rel.base_env(tmp_path / "config")
    reason = _serve_available(env, tmp_path)
    if reason is not None:
        pytest.skip(reason)
    done = subprocess.run([*rel.janito_command(), "mcp", "serve", "-w"], env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "privileges rw" in done.stderr, done.stderr
